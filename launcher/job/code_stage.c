/* code_stage.c - the code snapshot as a data.stage entry: see
 * code_stage.h.  Pure core. */
#include "launcher/job/code_stage.h"       // defines: code_stage_pin
#include "launcher/job/code_list.h"        // defines: struct code_list, CODE_MODE_EXEC
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*
#include "common/sbuf.h"                   // defines: struct sbuf, xstrdup, xrealloc
#include "common/spec/spec.h"              // defines: struct job, SPEC_STAGE_CODE, SPEC_MAX_STAGE

#include <stdlib.h>
#include <string.h>

/* data.stage's entry "code", or -1. */
static long find(const struct job_data *d)
{
	for (size_t i = 0; i < d->nstage; i++)
		if (!strcmp(d->stage[i].name, SPEC_STAGE_CODE))
			return (long)i;
	return -1;
}

static void drop(struct job_data *d, size_t i)
{
	struct job_stage *e = &d->stage[i];

	free(e->name);
	free(e->src);
	free(e->manifest);
	free(e->packed);
	memmove(e, e + 1, (d->nstage - i - 1) * sizeof(*e));
	d->nstage--;
}

/* The stage engine's manifest of the listing: a file 0444, or 0555 as
 * it was executable; a link as a link (its target text); the same the
 * stage step's scan of the snapshot gives (STAGE_SCAN_TREE). */
static int manifest_of(const struct code_list *l, struct stage_manifest *m, struct sbuf *why)
{
	if (!l->n) {
		sbuf_addstr(why, "it holds no file");
		return -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct code_entry *e = &l->v[i];

		if (e->link) {
			stage_manifest_add_link(m, e->path, e->link);
			continue;
		}
		stage_manifest_add(m, e->path, e->size, 0, e->sha256);
		m->v[m->n - 1].exec = e->mode == CODE_MODE_EXEC;
	}
	return stage_manifest_seal(m, why);
}

int code_stage_pin(struct job *job, const struct code_list *l, const char *snapshot,
		   size_t *files, struct sbuf *why)
{
	struct job_data *d = &job->data;
	struct stage_manifest m = { 0 };
	long at = find(d);
	struct job_stage *e;

	if (at >= 0)
		drop(d, (size_t)at); /* a resolved form's, of another digest maybe */
	if (!d->nstage)
		return 0;
	/* one more would make a resolved form the stage step refuses */
	if (d->nstage >= SPEC_MAX_STAGE) {
		sbuf_addf(why, "data.stage holds %d entries, the most", SPEC_MAX_STAGE);
		return -1;
	}
	if (manifest_of(l, &m, why)) {
		stage_manifest_release(&m);
		return -1;
	}
	d->stage = xrealloc(d->stage, (d->nstage + 1) * sizeof(*d->stage));
	e = &d->stage[d->nstage++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(SPEC_STAGE_CODE);
	e->src = xstrdup(snapshot);
	e->manifest = xstrdup(m.hash);
	e->bytes = m.bytes;
	if (files)
		*files = m.n;
	stage_manifest_release(&m);
	return 0;
}
