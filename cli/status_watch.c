/* status_watch.c - status of a run or a sweep, with progress and --wait.
 * Shell: see status_watch.h.  One row per run (a sweep's point): its job
 * as Slurm has it, how far it got, and its final test metrics. */
#include "cli/status_watch.h"  // defines: status_watch
#include "cli/ticker.h"        // defines: struct ticker, ticker_show
#include "cli/json_print.h"    // defines: json_print
#include "common/exitcode.h"   // defines: enum hpt_exit
#include "common/sbuf.h"       // defines: struct sbuf
#include "launcher/runs/progress.h" // defines: struct run_progress, progress_load
#include "launcher/runs/runref.h"   // defines: struct runref, runref_sweep_points
#include "launcher/slurm/slurm.h"    // defines: hpt_slurm_job_all, hpt_slurm_task_in

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_POLL_MS 500

struct row {
	const struct runref *ref;  /* RUN */
	json_t *params;            /* a sweep point's values, borrowed; or NULL */
	struct hpt_slurm_job job;
	bool known;                /* Slurm still knows the job */
	struct run_progress prog;
};

struct watch {
	struct row *rows;
	size_t n;
	const char *sweep;         /* the record, or NULL for one run */
	json_t *doc;               /* the record */
	struct runref *points;     /* the sweep's runs */
};

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

static int load_row(struct row *r, struct job_cache **cache, size_t *nc, struct sbuf *err)
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

static int load_rows(struct watch *w, struct sbuf *err)
{
	struct job_cache *cache = NULL;
	size_t nc = 0;
	int status = 0;

	for (size_t i = 0; i < w->n && !status; i++)
		status = load_row(&w->rows[i], &cache, &nc, err);
	cache_release(cache, nc);
	return status;
}

/* Slurm's state, or what the run's files say once Slurm has forgotten. */
static const char *row_state(const struct row *r)
{
	if (r->known)
		return r->job.state;
	if (!r->ref->rd.dir)
		return "NO-RUN";
	if (!r->ref->job_id)
		return "UNSUBMITTED";
	return r->prog.summary_seen ? "ENDED" : "FORGOTTEN";
}

static bool row_done(const struct row *r)
{
	return !r->known || r->job.finished;
}

static bool all_done(const struct watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (!row_done(&w->rows[i]))
			return false;
	return true;
}

static void job_text(const struct row *r, char *buf, size_t len)
{
	if (!r->ref->job_id)
		snprintf(buf, len, "-");
	else
		runref_job_text(r->ref->job_id, r->ref->task, buf, len);
}

/* "lr=0.05 seed=1": each swept key by its last part. */
static void values_text(json_t *params, struct sbuf *out)
{
	const char *key;
	json_t *v;

	json_object_foreach(params, key, v) {
		const char *dot = strrchr(key, '.');
		char *text = json_is_string(v) ? xstrdup(json_string_value(v))
					       : json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));

		sbuf_addf(out, "%s%s=%s", out->len ? " " : "", dot ? dot + 1 : key,
			  text ? text : "?");
		free(text);
	}
}

static void print_rows(const struct watch *w)
{
	if (w->sweep)
		printf("%-6s ", "POINT");
	printf("%-11s %-12s %-12s %-9s %-9s %-9s %s\n", "JOB", "STATE", "STEP", "TEST_ACC",
	       "TEST_LOSS", "SAMPLES/S", w->sweep ? "VALUES" : "RUN");
	for (size_t i = 0; i < w->n; i++) {
		const struct row *r = &w->rows[i];
		char job[40], step[32] = "-", acc[16] = "-", loss[16] = "-", sps[16] = "-";
		double a, l;
		struct sbuf values = SBUF_INIT;

		if (r->params)
			values_text(r->params, &values);
		job_text(r, job, sizeof(job));
		if (r->prog.step_seen && r->prog.total_steps > 0)
			snprintf(step, sizeof(step), "%lld/%lld", (long long)r->prog.step,
				 (long long)r->prog.total_steps);
		else if (r->prog.step_seen)
			snprintf(step, sizeof(step), "%lld", (long long)r->prog.step);
		if (progress_final(&r->prog, &a, &l)) {
			snprintf(acc, sizeof(acc), "%.4f", a);
			snprintf(loss, sizeof(loss), "%.4f", l);
		}
		if (r->prog.summary_seen)
			snprintf(sps, sizeof(sps), "%.0f", r->prog.mean_samples_per_s);
		else if (r->prog.step_seen)
			snprintf(sps, sizeof(sps), "%.0f", r->prog.samples_per_s);
		if (w->sweep)
			printf("%-6zu ", i);
		printf("%-11s %-12s %-12s %-9s %-9s %-9s %s\n", job, row_state(r), step, acc, loss,
		       sps, values.len ? values.buf : r->ref->rd.dir ? r->ref->rd.dir : "-");
		sbuf_release(&values);
	}
}

static json_t *row_json(const struct row *r, size_t i)
{
	double a, l;
	bool final = progress_final(&r->prog, &a, &l);
	json_t *o = json_pack("{s:I, s:s?, s:s, s:b}", "point", (json_int_t)i, "run",
			      r->ref->rd.dir, "state", row_state(r), "finished", row_done(r));

	if (r->params)
		json_object_set(o, "params", r->params);
	json_object_set_new(o, "job_id", r->ref->job_id ? json_integer((json_int_t)r->ref->job_id)
							: json_null());
	json_object_set_new(o, "array_task_id",
			    r->ref->task >= 0 ? json_integer(r->ref->task) : json_null());
	json_object_set_new(o, "exit_code", r->known && r->job.finished
						    ? json_integer(r->job.exit_code) : json_null());
	json_object_set_new(o, "step", r->prog.step_seen ? json_integer(r->prog.step)
							 : json_null());
	json_object_set_new(o, "total_steps", r->prog.total_steps ? json_integer(r->prog.total_steps)
								  : json_null());
	json_object_set_new(o, "test_accuracy", final ? json_real(a) : json_null());
	json_object_set_new(o, "test_loss", final ? json_real(l) : json_null());
	json_object_set_new(o, "samples_per_s",
			    r->prog.summary_seen ? json_real(r->prog.mean_samples_per_s)
			    : r->prog.step_seen  ? json_real(r->prog.samples_per_s) : json_null());
	return o;
}

static int print_watch(const struct watch *w, int json)
{
	json_t *rows;

	if (!json) {
		if (w->sweep)
			printf("%s: %zu points\n", w->sweep, w->n);
		print_rows(w);
		return 0;
	}
	rows = json_array();
	for (size_t i = 0; i < w->n; i++)
		json_array_append_new(rows, row_json(&w->rows[i], i));
	return json_print(json_pack("{s:s?, s:o}", "sweep", w->sweep, "points", rows));
}

/* The cap an array runs under: M of its spec "0-5%M", 0 for none. */
static size_t array_cap(json_t *doc, unsigned long job_id)
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

/* When the sweep's last point ends: the latest of its arrays' queues,
 * each run under its own cap.  -1 when no point has a pace yet. */
static double sweep_eta_s(const struct watch *w)
{
	struct queued_point *pt = xcalloc(w->n, sizeof(*pt));
	bool *seen = xcalloc(w->n, sizeof(*seen));
	double eta = -1;

	for (size_t i = 0; i < w->n; i++) {
		unsigned long id = w->rows[i].ref->job_id;
		size_t n = 0;
		double e;

		if (seen[i] || !id)
			continue;
		for (size_t j = i; j < w->n; j++) {
			const struct row *r = &w->rows[j];

			if (r->ref->job_id != id)
				continue;
			seen[j] = true;
			pt[n].prog = &r->prog;
			pt[n].done = row_done(r);
			pt[n++].running = r->known && strcmp(r->job.state, "PENDING");
		}
		e = progress_queue_eta_s(pt, n, array_cap(w->doc, id));
		if (e > eta)
			eta = e;
	}
	free(seen);
	free(pt);
	return eta;
}

/* One line: a run's progress, or a sweep's count of states and steps;
 * key gets its states alone. */
static void progress_line(const struct watch *w, struct sbuf *out, struct sbuf *key)
{
	const char *names[16];
	size_t counts[16], nk = 0;
	long long steps = 0, total = 0;
	double eta;

	if (!w->sweep) {
		sbuf_addstr(key, row_state(&w->rows[0]));
		progress_format(row_state(&w->rows[0]), &w->rows[0].prog, out);
		return;
	}
	for (size_t i = 0; i < w->n; i++) {
		const char *s = row_state(&w->rows[i]);
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
	if (!all_done(w) && (eta = sweep_eta_s(w)) > 0) {
		sbuf_addstr(out, "  ETA ");
		progress_add_duration(out, eta);
	}
}

/* Polls until every job has ended, showing the progress line. */
static int wait_all(struct watch *w, int live, struct sbuf *err)
{
	struct sbuf line = SBUF_INIT, key = SBUF_INIT;
	struct ticker t;
	int status = 0;

	ticker_init(&t, live);
	while (!(status = load_rows(w, err))) {
		sbuf_reset(&line);
		sbuf_reset(&key);
		progress_line(w, &line, &key);
		if (live >= 0)
			ticker_show(&t, line.buf, key.buf);
		if (all_done(w))
			break;
		usleep(WAIT_POLL_MS * 1000);
	}
	ticker_end(&t);
	sbuf_release(&line);
	sbuf_release(&key);
	return status;
}

static int setup(const struct runref *ref, struct watch *w, struct sbuf *err)
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

static void release(struct watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		hpt_slurm_job_release(&w->rows[i].job);
	free(w->rows);
	if (w->points)
		runref_release_all(w->points, w->n);
	json_decref(w->doc);
}

int status_watch(const struct runref *ref, int json, int wait)
{
	struct sbuf err = SBUF_INIT;
	struct watch w;
	int status = setup(ref, &w, &err);

	if (!status)
		status = wait ? wait_all(&w, json ? -1 : isatty(STDOUT_FILENO), &err)
			      : load_rows(&w, &err);
	if (!status)
		status = print_watch(&w, json);
	for (size_t i = 0; !status && wait && i < w.n; i++)
		if (!w.rows[i].known || !w.rows[i].job.completed)
			status = HPT_EXIT_FAILURE;
	if (status && status != HPT_EXIT_FAILURE)
		fprintf(stderr, "hpctrain status: %s\n", err.buf);
	release(&w);
	sbuf_release(&err);
	return status;
}
