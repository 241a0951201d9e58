/* attempt.c - one attempt of a run: resolved, hashed and rendered once.
 * Core; see attempt.h. */
#include "launcher/runs/attempt.h"  // defines: struct attempt, attempt_render
#include "common/diag.h"            // defines: struct diag_list
#include "common/exitcode.h"        // defines: enum hpt_exit
#include "common/version.h"         // defines: hpt_version
#include "launcher/runs/resize.h"   // defines: resize_next
#include "launcher/runs/rundir.h"   // defines: struct rundir
#include "launcher/slurm/render.h"  // defines: render_job

#include <stdlib.h>
#include <string.h>

void attempt_init(struct attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->nodes_idle = -1;
	sbuf_init(&a->resolved);
	sbuf_init(&a->script);
}

void attempt_release(struct attempt *a)
{
	if (!a)
		return;
	job_release(&a->job);
	json_decref(a->plan);
	a->plan = NULL;
	json_decref(a->code);
	a->code = NULL;
	json_decref(a->venv);
	a->venv = NULL;
	free(a->exclude);
	a->exclude = NULL;
	render_opts_release(&a->opts);
	sbuf_release(&a->resolved);
	sbuf_release(&a->script);
}

int attempt_resolve(struct attempt *a)
{
	sbuf_reset(&a->resolved);
	if (spec_emit_resolved(&a->job, &a->resolved))
		return HPT_EXIT_INTERNAL;
	spec_hash(a->resolved.buf, a->resolved.len, a->sha256);
	return HPT_EXIT_OK;
}

int attempt_render(struct attempt *a, const char *hpctrain, struct diag_list *dl)
{
	struct render_ctx ctx = { .hpctrain = hpctrain, .version = hpt_version, .sha256 = a->sha256,
				  .exclude = a->exclude };

	/* A shallow copy, read only: the job itself stays as it was hashed. */
	struct job shaped = a->job;
	struct job_resources *r = &shaped.resources;
	struct sbuf why = SBUF_INIT;
	int64_t next;

	/* Slurm grants a range's MIN when MIN fits, idle nodes or not: the
	 * range asks for the largest size the idle nodes allow instead.  The
	 * resolved form (and hash) keep the spec's MIN-MAX. */
	if (r->nodes_min < r->nodes && a->nodes_idle >= r->nodes_min &&
	    !resize_next(r->nodes_min, r->nodes, a->nodes_idle, &next, &why))
		r->nodes_min = next;
	sbuf_release(&why);
	render_opts_release(&a->opts);
	sbuf_reset(&a->script);
	a->renders++;
	if (render_job(&shaped, &ctx, &a->opts, &a->script, dl))
		return HPT_EXIT_BAD_SPEC;
	return HPT_EXIT_OK;
}

int attempt_prepare(struct attempt *a, const char *hpctrain, struct diag_list *dl)
{
	int status = attempt_resolve(a);

	return status ? status : attempt_render(a, hpctrain, dl);
}
