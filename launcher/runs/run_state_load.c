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

/* One job's records, loaded once per poll however many points it runs;
 * self is its record of the job id itself (a run's own job), or NULL. */
struct job_cache {
	unsigned long id;
	bool loaded;
	struct hpt_slurm_job *v;
	size_t n;
	const struct hpt_slurm_job *self;
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

static int by_id(const void *a, const void *b)
{
	unsigned long x = ((const struct job_cache *)a)->id, y = ((const struct job_cache *)b)->id;

	return x < y ? -1 : x > y;
}

/* One entry per job id of w's rows, sorted by id, nothing loaded yet;
 * *n gets the count.  O(rows log rows): a sweep may have as many jobs
 * as points (each point rerun on its own), and a scan of the entries
 * per row was O(rows x jobs). */
static struct job_cache *cache_make(const struct run_state *w, size_t *n)
{
	struct job_cache *c = xcalloc(w->n + 1, sizeof(*c));
	size_t k = 0;

	for (size_t i = 0; i < w->n; i++)
		if (w->rows[i].ref->job_id)
			c[k++].id = w->rows[i].ref->job_id;
	if (k > 1)
		qsort(c, k, sizeof(*c), by_id);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || c[*n - 1].id != c[i].id)
			c[(*n)++].id = c[i].id;
	return c;
}

/* id's entry, its records loaded on first use.  0 or a status. */
static int cache_get(struct job_cache *cache, size_t nc, unsigned long id,
		     struct job_cache **out, struct sbuf *err)
{
	struct job_cache key = { .id = id }, *c = bsearch(&key, cache, nc, sizeof(*c), by_id);
	int status;

	*out = c;
	if (!c || c->loaded)
		return 0;
	c->loaded = true;
	status = hpt_slurm_job_all((uint32_t)c->id, &c->v, &c->n, err);
	/* forgotten (MinJobAge): the row says so; anything else fails */
	if (status && status != HPT_EXIT_NO_INPUT)
		return status;
	sbuf_reset(err);
	for (size_t i = 0; !c->self && i < c->n; i++)
		if (c->v[i].job_id == c->id)
			c->self = &c->v[i];
	return 0;
}

static int load_row(struct run_state_row *r, struct job_cache *cache, size_t nc,
		    struct sbuf *err)
{
	const struct hpt_slurm_job *found = NULL;
	struct job_cache *c;
	int status;

	hpt_slurm_job_release(&r->job);
	r->known = false;
	if (r->ref->rd.dir)
		progress_load(r->ref->rd.dir, &r->prog);
	if (!r->ref->job_id)
		return 0;
	if ((status = cache_get(cache, nc, r->ref->job_id, &c, err)) || !c)
		return status;
	if (r->ref->task >= 0)
		found = hpt_slurm_task_in(c->v, c->n, r->ref->task);
	if (!found)
		found = c->self;
	if (found) {
		hpt_slurm_job_copy(&r->job, found);
		r->job.array_task = r->ref->task >= 0 ? r->ref->task : found->array_task;
		r->known = true;
	}
	return 0;
}

int run_state_load_rows(struct run_state *w, struct sbuf *err)
{
	size_t nc;
	struct job_cache *cache = cache_make(w, &nc);
	int status = 0;

	for (size_t i = 0; i < w->n && !status; i++)
		status = load_row(&w->rows[i], cache, nc, err);
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
