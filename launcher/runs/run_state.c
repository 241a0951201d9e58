/* run_state.c - the state of each run of a sweep, its ETA and its line.
 * Core: see run_state.h (the loader is run_state_load.c). */
#include "launcher/runs/run_state.h" // defines: struct run_state, run_state_*
#include "common/sbuf.h"             // defines: struct sbuf, x* allocators
#include "launcher/runs/progress.h"  // defines: progress_queue_eta_s, progress_format
#include "launcher/runs/runref.h"    // defines: struct runref (its fields)

#include <stdlib.h>
#include <string.h>

const char *run_state_name(const struct run_state_row *r)
{
	if (r->known)
		return r->job.state;
	if (!r->ref->rd.dir)
		return "NO-RUN";
	if (!r->ref->job_id)
		return "UNSUBMITTED";
	return r->prog.summary_seen ? "ENDED" : "FORGOTTEN";
}

bool run_state_row_is_done(const struct run_state_row *r)
{
	return !r->known || r->job.finished;
}

bool run_state_is_done(const struct run_state *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (!run_state_row_is_done(&w->rows[i]))
			return false;
	return true;
}

size_t run_state_array_cap(json_t *doc, unsigned long job_id)
{
	size_t i;
	json_t *a;

	json_array_foreach(json_object_get(doc, "arrays"), i, a) {
		const char *spec = json_string_value(json_object_get(a, "spec"));
		const char *pct = spec ? strchr(spec, '%') : NULL;

		if ((unsigned long)json_integer_value(json_object_get(a, "job_id")) == job_id)
			return pct ? strtoul(pct + 1, NULL, 10) : 0;
	}
	return 0;
}

/* A row by its job, for grouping. */
struct job_row {
	unsigned long id;
	size_t i;
};

static int by_job(const void *a, const void *b)
{
	const struct job_row *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The rows grouped by job (each group in row order) by sorting:
 * O(rows log rows + jobs x arrays).  A scan of the rows per job was
 * O(rows x jobs), and a sweep whose points were each rerun has as many
 * jobs as points. */
double run_state_eta_s(const struct run_state *w)
{
	struct queued_point *pt = xcalloc(w->n + 1, sizeof(*pt));
	struct job_row *jr = xcalloc(w->n + 1, sizeof(*jr));
	double eta = -1;
	size_t k = 0;

	for (size_t i = 0; i < w->n; i++)
		if (w->rows[i].ref->job_id)
			jr[k++] = (struct job_row){ w->rows[i].ref->job_id, i };
	qsort(jr, k, sizeof(*jr), by_job);
	for (size_t g = 0; g < k;) {
		unsigned long id = jr[g].id;
		size_t n = 0;
		double e;

		for (; g < k && jr[g].id == id; g++, n++) {
			const struct run_state_row *r = &w->rows[jr[g].i];

			pt[n].prog = &r->prog;
			pt[n].done = run_state_row_is_done(r);
			pt[n].running = r->known && !r->job.pending;
		}
		e = progress_queue_eta_s(pt, n, run_state_array_cap(w->doc, id));
		if (e > eta)
			eta = e;
	}
	free(jr);
	free(pt);
	return eta;
}

void run_state_progress_line(const struct run_state *w, struct sbuf *out, struct sbuf *key)
{
	const char *names[16];
	size_t counts[16], nk = 0;
	long long steps = 0, total = 0;
	double eta;

	if (!w->sweep) {
		sbuf_addstr(key, run_state_name(&w->rows[0]));
		progress_format(run_state_name(&w->rows[0]), &w->rows[0].prog, out);
		return;
	}
	for (size_t i = 0; i < w->n; i++) {
		const char *s = run_state_name(&w->rows[i]);
		size_t k = 0;

		while (k < nk && strcmp(names[k], s))
			k++;
		if (k == nk && nk < 16) {
			names[nk] = s;
			counts[nk++] = 0;
		}
		if (k < nk)
			counts[k]++;
		steps += w->rows[i].prog.step;
		total += w->rows[i].prog.total_steps;
	}
	for (size_t k = 0; k < nk; k++)
		sbuf_addf(key, " %zu %s%s", counts[k], names[k], k + 1 < nk ? "," : "");
	sbuf_addf(out, "%s:%s", w->sweep, key->buf);
	if (total)
		sbuf_addf(out, "  steps %lld/%lld", steps, total);
	if (!run_state_is_done(w) && (eta = run_state_eta_s(w)) > 0) {
		sbuf_addstr(out, "  ETA ");
		progress_add_duration(out, eta);
	}
}
