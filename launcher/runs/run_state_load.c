/* run_state_load.c - the rows of hpctrain status from the sweep record,
 * each run's metrics.jsonl and Slurm (see run_state.h).
 * Shell: files and libslurm (launcher/slurm); the states themselves are
 * run_state.c's. */
#include "launcher/runs/run_state.h" // defines: struct run_state, run_state_load_*
#include "common/exitcode.h"         // defines: enum hpt_exit
#include "common/sbuf.h"             // defines: struct sbuf, x* allocators
#include "launcher/runs/progress.h"  // defines: progress_load
#include "launcher/runs/runref.h"    // defines: struct runref, runref_sweep_points
#include "launcher/slurm/slurm.h"    // defines: hpt_slurm_job_all, hpt_slurm_task_in

#include <stdlib.h>
#include <string.h>

/* One job's records, loaded once per poll however many points it runs. */
struct job_cache {
	unsigned long id;
	struct hpt_slurm_job *v;
	size_t n;
};

static void cache_release(struct job_cache *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < c[i].n; k++)
			hpt_slurm_job_release(&c[i].v[k]);
		free(c[i].v);
	}
	free(c);
}

static int load_row(struct run_state_row *r, struct job_cache **cache, size_t *nc,
		    struct sbuf *err)
{
	const struct hpt_slurm_job *found = NULL;
	struct job_cache *c = NULL;
	int status;

	hpt_slurm_job_release(&r->job);
	r->known = false;
	if (r->ref->rd.dir)
		progress_load(r->ref->rd.dir, &r->prog);
	if (!r->ref->job_id)
		return 0;
	for (size_t i = 0; i < *nc && !c; i++)
		if ((*cache)[i].id == r->ref->job_id)
			c = &(*cache)[i];
	if (!c) {
		*cache = xrealloc(*cache, (*nc + 1) * sizeof(**cache));
		c = &(*cache)[(*nc)++];
		c->id = r->ref->job_id;
		status = hpt_slurm_job_all((uint32_t)c->id, &c->v, &c->n, err);
		/* forgotten (MinJobAge): the row says so; anything else fails */
		if (status && status != HPT_EXIT_NO_INPUT)
			return status;
		sbuf_reset(err);
	}
	if (r->ref->task >= 0)
		found = hpt_slurm_task_in(c->v, c->n, r->ref->task);
	for (size_t i = 0; !found && i < c->n; i++)
		if (c->v[i].job_id == r->ref->job_id)
			found = &c->v[i];
	if (found) {
		hpt_slurm_job_copy(&r->job, found);
		r->job.array_task = r->ref->task >= 0 ? r->ref->task : found->array_task;
		r->known = true;
	}
	return 0;
}

int run_state_load_rows(struct run_state *w, struct sbuf *err)
{
	struct job_cache *cache = NULL;
	size_t nc = 0;
	int status = 0;

	for (size_t i = 0; i < w->n && !status; i++)
		status = load_row(&w->rows[i], &cache, &nc, err);
	cache_release(cache, nc);
	return status;
}

int run_state_load_open(const struct runref *ref, struct run_state *w, struct sbuf *err)
{
	size_t n = 1;

	memset(w, 0, sizeof(*w));
	if (ref->kind == RUNREF_SWEEP) {
		int status = runref_sweep_points(ref->sweep, &w->doc, &w->points, &n, err);

		if (status)
			return status;
		w->sweep = json_string_value(json_object_get(w->doc, "sweep"));
		if (!w->sweep)
			w->sweep = ref->sweep;
	}
	w->rows = xcalloc(n, sizeof(*w->rows));
	w->n = n;
	for (size_t i = 0; i < n; i++) {
		w->rows[i].ref = w->points ? &w->points[i] : ref;
		if (w->doc)
			w->rows[i].params = json_object_get(
				json_array_get(json_object_get(w->doc, "points"), i), "params");
	}
	return 0;
}

void run_state_load_release(struct run_state *w)
{
	for (size_t i = 0; i < w->n; i++)
		hpt_slurm_job_release(&w->rows[i].job);
	free(w->rows);
	if (w->points)
		runref_release_all(w->points, w->n);
	json_decref(w->doc);
}
