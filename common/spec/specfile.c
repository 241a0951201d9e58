/* specfile.c - load a spec argument (file, "-" or template) with overrides.
 * Shell. */
#include "common/spec/specfile.h"     // defines: specfile_load, specfile_overrides_*
#include "common/diag.h"         // defines: diag_add
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/fileio.h"       // defines: fileio_read
#include "common/sbuf.h"         // defines: struct sbuf
#include "common/spec/spec.h"         // defines: spec_load
#include "common/spec/template.h"     // defines: template_override_is_valid
#include "common/spec/template_dir.h" // defines: template_dir_is_name, template_dir_find
#include "common/spec/ynode.h"     // defines: YNODE_MAX_BYTES

#include <stdlib.h>
#include <string.h>

int specfile_overrides_add(struct specfile_overrides *o, const char *arg)
{
	if (!template_override_is_valid(arg))
		return -1;
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n++] = (struct spec_override){ .arg = arg, .where = xasprintf("--set %s", arg) };
	return 0;
}

void specfile_overrides_release(struct specfile_overrides *o)
{
	for (size_t i = 0; i < o->n; i++)
		free((char *)o->v[i].where);
	free(o->v);
	o->v = NULL;
	o->n = 0;
}

int specfile_read(const char *arg, struct sbuf *text, struct sbuf *where, struct diag_list *dl)
{
	struct sbuf err = SBUF_INIT;
	int status = HPT_EXIT_OK;

	sbuf_reset(where);
	if (template_dir_is_name(arg) && template_dir_find(arg, where)) {
		diag_add(dl, DIAG_ERROR, arg, 0, 0, "",
			 "no such file, and no template of that name (see 'hpctrain template list')");
		return HPT_EXIT_NO_INPUT;
	}
	if (!where->len)
		sbuf_addstr(where, strcmp(arg, "-") ? arg : "<stdin>");
	if (fileio_read(strcmp(arg, "-") ? where->buf : "-", YNODE_MAX_BYTES, text, &err)) {
		diag_add(dl, DIAG_ERROR, "", 0, 0, "", "%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	}
	sbuf_release(&err);
	return status;
}

int specfile_load(const char *arg, const struct specfile_overrides *o, struct job *job,
		  struct diag_list *dl, struct sbuf *where)
{
	struct sbuf text = SBUF_INIT;
	int status;

	memset(job, 0, sizeof(*job));
	status = specfile_read(arg, &text, where, dl);
	if (!status && spec_load(where->buf, text.buf, text.len, o ? o->v : NULL, o ? o->n : 0,
				 job, dl))
		status = HPT_EXIT_BAD_SPEC;
	sbuf_release(&text);
	return status;
}

int specfile_load_run(const char *dir, struct job *job, struct diag_list *dl,
		      struct sbuf *where, struct sbuf *text)
{
	struct sbuf path = SBUF_INIT, mine = SBUF_INIT;
	struct sbuf *t = text ? text : &mine;
	int status;

	memset(job, 0, sizeof(*job));
	sbuf_addf(&path, "%s/" SPECFILE_RUN_SPEC, dir);
	status = specfile_read(path.buf, t, where, dl);
	if (!status && spec_load(where->buf, t->buf, t->len, NULL, 0, job, dl))
		status = HPT_EXIT_BAD_SPEC;
	sbuf_release(&path);
	sbuf_release(&mine);
	return status;
}
