/* report_out.c - the files and output of `hpctrain report` (report_out.h).
 * Shell: writes the charts (chart.c draws them), report.md, the manifest
 * of the charts (report_manifest.c) and the --json document. */
#include "launcher/job/report_out.h"        // defines: struct report_out, report_out_*
#include "common/say.h" // defines: say
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/json_print.h"        // defines: json_print
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/fileio.h"         // defines: fileio_open_regular, fileio_mkdirs, fileio_write_atomic
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text
#include "launcher/report/chart.h" // defines: struct chart, chart_write_png
#include "launcher/report/report_data.h"  // defines: struct report_run, report_read
#include "launcher/report/report_manifest.h" // defines: report_manifest_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

json_t *report_out_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

void report_out_skip(struct report_out *o, const char *name, const char *title,
		     const char *why)
{
	char *file = xasprintf("%s.png", name);

	/* an earlier report's, which report.md no longer shows; never a
	 * file report did not write */
	report_manifest_remove(&o->manifest, file);
	free(file);
	if (o->json)
		jsonb_append(&o->charts, json_pack("{s:s, s:n, s:o, s:o}", "name", name, "file",
						   "title", jsonb_text(title), "not_drawn",
						   jsonb_text(why)));
	else
		printf("  %s.png: not drawn: %s\n", name, why);
	sbuf_addf(&o->md, "- %s: not drawn (%s)\n\n", title, why);
}

void report_out_forget(struct report_out *o, const char *name)
{
	char *file = xasprintf("%s.png", name);

	report_manifest_remove(&o->manifest, file);
	free(file);
}

void report_out_emit(struct report_out *o, struct chart *c, const char *name,
		     const char *why_none)
{
	struct sbuf err = SBUF_INIT;
	char *path = xasprintf("%s/%s.png", o->dir, name);

	if (!chart_has_data(c)) {
		report_out_skip(o, name, c->title, why_none);
	} else if (chart_write_png(c, path, &err)) {
		say("%s", err.buf);
		o->status = HPT_EXIT_IO;
	} else {
		char *file = xasprintf("%s.png", name);

		report_manifest_add(&o->manifest, file);
		free(file);
		if (o->json)
			jsonb_append(&o->charts, json_pack("{s:s, s:o, s:o}", "name", name, "file",
							   jsonb_text(path), "title",
							   jsonb_text(c->title)));
		else
			printf("  %s\n", path);
		sbuf_addf(&o->md, "![%s](%s.png)\n\n", c->title, name);
	}
	chart_release(c);
	free(path);
	sbuf_release(&err);
}

void report_out_step_series(const struct report_run *r, struct chart *c, const char *label,
			    size_t field)
{
	double *x = xcalloc(r->nsteps + 1, sizeof(double)), *y = xcalloc(r->nsteps + 1, sizeof(double));

	for (size_t i = 0; i < r->nsteps; i++) {
		x[i] = (double)r->steps[i].step;
		y[i] = *(const double *)((const char *)&r->steps[i] + field);
	}
	chart_add(c, label, x, y, r->nsteps);
	free(x);
	free(y);
}

int report_out_make_dir(struct report_out *o)
{
	struct sbuf err = SBUF_INIT;
	int rc = fileio_mkdirs(o->dir, 0700, &err);

	if (rc)
		say("cannot create %s: %s", o->dir, err.buf);
	else
		report_manifest_load(&o->manifest, o->dir);
	sbuf_release(&err);
	return rc ? HPT_EXIT_IO : 0;
}

int report_out_write_md(struct report_out *o, const char *head)
{
	struct sbuf err = SBUF_INIT, doc = SBUF_INIT;
	char *path = xasprintf("%s/report.md", o->dir);
	int rc;

	sbuf_addf(&doc, "# hpctrain report\n\n```\n%s```\n\n%s", head, o->md.buf);
	rc = fileio_write_atomic(path, doc.buf, doc.len, 0600, 0, &err);
	o->md_written = !rc;
	if (rc)
		say("%s", err.buf);
	else if (!o->json)
		printf("  %s\n", path);
	sbuf_reset(&err);
	/* Only a later report's clean-up depends on it (another user's
	 * manifest in a shared sticky directory cannot be replaced): a
	 * warning, not a failure of this report. */
	if (!rc && report_manifest_save(&o->manifest, &err))
		say("warning: %s; a later report will not remove "
			"these charts", err.buf);
	free(path);
	sbuf_release(&err);
	sbuf_release(&doc);
	return rc ? HPT_EXIT_IO : 0;
}

void report_out_release(struct report_out *o)
{
	sbuf_release(&o->md);
	json_decref(o->charts);
	o->charts = NULL;
	report_manifest_release(&o->manifest);
}

int report_out_print_json(struct report_out *o, json_t *doc)
{
	char *md = xasprintf("%s/report.md", o->dir);

	/* the output folder is the user's, and bytes: carried escaped; a
	 * chart's entry that could not be built dropped o->charts, and so
	 * the document, which json_print then says */
	jsonb_set(&doc, "output", jsonb_text(o->dir));
	jsonb_set(&doc, "report_md", o->md_written ? jsonb_text(md) : json_null());
	jsonb_set(&doc, "charts", json_incref(o->charts));
	free(md);
	return json_print(doc);
}
