/* status_watch.c - status of a run or a sweep, with progress and --wait.
 * Shell: see status_watch.h.  One row per run (a sweep's point): its job
 * as Slurm has it, how far it got, and its final test metrics; the rows,
 * their states and the --wait line come from launcher/runs/run_state,
 * and this file prints them (a table, JSON, the ticker). */
#include "launcher/job/status_watch.h"  // defines: status_watch
#include "common/say.h" // defines: say
#include "launcher/job/ticker.h"        // defines: struct ticker, ticker_show, TICKER_POLL_MS
#include "common/json_print.h"    // defines: json_print
#include "common/exitcode.h"   // defines: enum hpt_exit
#include "common/sbuf.h"       // defines: struct sbuf, sbuf_add_number, sbuf_add_printable
#include "common/spec/sweep.h" // defines: sweep_params_label
#include "launcher/runs/progress.h"  // defines: struct run_progress, progress_final
#include "launcher/runs/run_state.h" // defines: struct run_state, run_state_*
#include "launcher/runs/runref.h"    // defines: struct runref, runref_job_text
#include "common/strfmt.h" // defines: strfmt_label

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void job_text(const struct run_state_row *r, char *buf, size_t len)
{
	if (!r->ref->job_id)
		strfmt_label(buf, len, "-");
	else
		runref_job_text(r->ref->job_id, r->ref->task, buf, len);
}

static void print_rows(const struct run_state *w)
{
	if (w->sweep)
		printf("%-6s ", "POINT");
	printf("%-11s %-12s %-12s %-9s %-9s %-14s %s\n", "JOB", "STATE", "STEP", "TEST_ACC",
	       "TEST_LOSS", "SAMPLES/S/RANK", w->sweep ? "VALUES" : "RUN");
	for (size_t i = 0; i < w->n; i++) {
		const struct run_state_row *r = &w->rows[i];
		char job[40], step[32] = "-";
		double a = NAN, l = NAN, rate = NAN;
		struct sbuf values = SBUF_INIT, label = SBUF_INIT, acc = SBUF_INIT, loss = SBUF_INIT,
			    sps = SBUF_INIT;

		/* the values and the run's path come from a file: escaped */
		if (r->params)
			sweep_params_label(r->params, NULL, NULL, &label);
		sbuf_add_printable(&values, label.len ? label.buf
					     : r->ref->rd.dir ? r->ref->rd.dir : "-");
		job_text(r, job, sizeof(job));
		if (r->prog.step_seen && r->prog.total_steps > 0)
			strfmt_label(step, sizeof(step), "%lld/%lld", (long long)r->prog.step,
				 (long long)r->prog.total_steps);
		else if (r->prog.step_seen)
			strfmt_label(step, sizeof(step), "%lld", (long long)r->prog.step);
		if (!progress_final(&r->prog, &a, &l))
			a = l = NAN;
		if (r->prog.summary_seen)
			rate = r->prog.mean_samples_per_s;
		else if (r->prog.step_seen)
			rate = r->prog.samples_per_s;
		/* "-" for a figure not there or not finite, %g for a huge one */
		sbuf_add_number(&acc, a, 4);
		sbuf_add_number(&loss, l, 4);
		sbuf_add_number(&sps, rate, 0);
		if (w->sweep)
			printf("%-6zu ", i);
		printf("%-11s %-12s %-12s %-9s %-9s %-14s %s\n", job, run_state_name(r), step, acc.buf,
		       loss.buf, sps.buf, values.buf);
		sbuf_release(&values);
		sbuf_release(&label);
		sbuf_release(&acc);
		sbuf_release(&loss);
		sbuf_release(&sps);
	}
}

/* A number for --json: null when not finite (JSON has no NaN). */
static json_t *number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *row_json(const struct run_state_row *r, size_t i)
{
	double a, l;
	bool final = progress_final(&r->prog, &a, &l);
	json_t *o = json_pack("{s:I, s:s?, s:s, s:b}", "point", (json_int_t)i, "run",
			      r->ref->rd.dir, "state", run_state_name(r), "finished",
			      run_state_row_is_done(r));

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
	/* json_real of a non-finite number is NULL, which dropped the key */
	json_object_set_new(o, "test_accuracy", number(final ? a : NAN));
	json_object_set_new(o, "test_loss", number(final ? l : NAN));
	json_object_set_new(o, "samples_per_s",
			    number(r->prog.summary_seen ? r->prog.mean_samples_per_s
				   : r->prog.step_seen ? r->prog.samples_per_s : NAN));
	return o;
}

static int print_watch(const struct run_state *w, int json)
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

/* Polls until every job has ended, showing the progress line. */
static int wait_all(struct run_state *w, int live, struct sbuf *err)
{
	struct sbuf line = SBUF_INIT, key = SBUF_INIT;
	struct ticker t;
	int status = 0;

	ticker_init(&t, live);
	while (!(status = run_state_load_rows(w, err))) {
		sbuf_reset(&line);
		sbuf_reset(&key);
		run_state_progress_line(w, &line, &key);
		if (live >= 0)
			ticker_show(&t, line.buf, key.buf);
		if (run_state_is_done(w))
			break;
		usleep(TICKER_POLL_MS * 1000);
	}
	ticker_end(&t);
	sbuf_release(&line);
	sbuf_release(&key);
	return status;
}

int status_watch(const struct runref *ref, int json, int wait)
{
	struct sbuf err = SBUF_INIT;
	struct run_state w;
	int status = run_state_load_open(ref, &w, &err);

	if (!status)
		status = wait ? wait_all(&w, json ? -1 : isatty(STDOUT_FILENO), &err)
			      : run_state_load_rows(&w, &err);
	if (!status)
		status = print_watch(&w, json);
	for (size_t i = 0; !status && wait && i < w.n; i++)
		if (!w.rows[i].known || !w.rows[i].job.completed)
			status = HPT_EXIT_FAILURE;
	if (status && status != HPT_EXIT_FAILURE)
		say("%s", err.buf);
	run_state_load_release(&w);
	sbuf_release(&err);
	return status;
}
