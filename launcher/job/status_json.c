/* status_json.c - a run and its Slurm job as `hpctrain status --json`
 * shows them (see status_json.h).  Shell: reads the run's records
 * (metrics.jsonl, RUN/stage/, nodes.json, submit.json's plan). */
#include "launcher/job/status_json.h"    // defines: status_json_*, status_plan_check
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/data_read.h"            // defines: data_read_json
#include "common/isotime.h"              // defines: isotime_format, ISOTIME_SIZE
#include "common/sbuf.h"                 // defines: xasprintf
#include "common/jsonb.h" // defines: jsonb_set, jsonb_text
#include "launcher/runs/attempt_size.h"  // defines: attempt_size_load
#include "launcher/runs/progress.h"      // defines: progress_load, progress_final, progress_eta_s
#include "launcher/runs/stage_summary.h" // defines: stage_summary_load, stage_summary_json
#include "launcher/shape/shape_history.h" // defines: shape_history_planned_run

#include <stdbool.h>
#include <stdlib.h>

static json_t *json_time(time_t t)
{
	char buf[ISOTIME_SIZE];

	if (!t)
		return json_null();
	isotime_format(t, buf);
	return json_string(buf);
}

/* An array task's run: the link its index names in the array's working
 * directory (a sweep's array, render_array.c); NULL otherwise. */
char *status_task_run(const struct hpt_slurm_job *j)
{
	char *link, *run;

	if (j->array_task < 0 || !*j->work_dir)
		return NULL;
	link = xasprintf(RUNFILE_TASK_LINK, j->work_dir, (long long)j->array_task);
	run = realpath(link, NULL);
	free(link);
	return run;
}

json_t *status_json_job(const struct hpt_slurm_job *j)
{
	/* what Slurm holds is bytes (a job submitted by hand may be named
	 * anything): carried escaped, never a job left out of the list */
	json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:i, s:i}", "job_id",
			      (json_int_t)(j->array_job_id ? j->array_job_id : j->job_id), "name",
			      jsonb_text(j->name), "state", jsonb_text(j->state), "reason",
			      jsonb_text(j->reason), "finished", j->finished, "nodes",
			      jsonb_text(j->nodes), "partition", jsonb_text(j->partition), "run",
			      jsonb_text(j->work_dir), "restarts", (int)j->restarts, "tasks",
			      (int)j->tasks);

	jsonb_set(&o, "array_task_id",
			    j->array_task >= 0 ? json_integer(j->array_task) : json_null());
	if (j->array_task >= 0) {
		char *run = status_task_run(j);

		if (run)
			jsonb_set(&o, "run", jsonb_text(run));
		free(run);
	}
	if (j->array_job_id && j->array_task < 0)
		jsonb_set(&o, "array_pending", jsonb_text(j->array_pending));
	jsonb_set(&o, "exit_code", j->finished ? json_integer(j->exit_code) : json_null());
	jsonb_set(&o, "signal", j->finished ? json_integer(j->exit_signal) : json_null());
	jsonb_set(&o, "submit_time", json_time(j->submit_time));
	jsonb_set(&o, "start_time", json_time(j->start_time));
	jsonb_set(&o, "end_time", json_time(j->end_time));
	return o;
}

/* What a run's metrics say so far, for its job's JSON. */
json_t *status_json_progress(const char *run)
{
	struct run_progress p;
	double acc, loss;
	bool final;
	json_t *o;

	progress_load(run, &p);
	final = progress_final(&p, &acc, &loss);
	o = json_object();
	jsonb_set(&o, "step", p.step_seen ? json_integer(p.step) : json_null());
	jsonb_set(&o, "total_steps", p.total_steps ? json_integer(p.total_steps)
							    : json_null());
	jsonb_set(&o, "samples_per_s", p.step_seen ? json_real(p.samples_per_s)
							    : json_null());
	jsonb_set(&o, "eta_s", progress_eta_s(&p) >= 0 && !p.summary_seen
						? json_real(progress_eta_s(&p)) : json_null());
	jsonb_set(&o, "test_accuracy", final ? json_real(acc) : json_null());
	jsonb_set(&o, "test_loss", final ? json_real(loss) : json_null());
	jsonb_set(&o, "data_read", data_read_json(&p.data));
	return o;
}

/* The run's "stage" object: the summary, or null without records. */
json_t *status_json_stage(const char *run)
{
	struct stage_summary s;
	json_t *o;

	stage_summary_load(run, &s);
	o = s.n || s.skipped ? stage_summary_json(&s) : json_null();
	stage_summary_release(&s);
	return o;
}

/* The attempt's "size": {"nodes", "world_size"} as granted, or null
 * before its ranks started. */
json_t *status_json_size(const char *run)
{
	int64_t nodes, world;

	if (attempt_size_load(run, &nodes, &world))
		return json_null();
	return json_pack("{s:I, s:I}", "nodes", (json_int_t)nodes, "world_size", (json_int_t)world);
}

/* A run submitted with --shape auto: its prediction (submit.json's
 * plan) against the times Slurm gives its job j.  0, or -1 for a run
 * that was not planned. */
int status_plan_check(const char *run, const struct hpt_slurm_job *j, struct shape_check *c)
{
	struct shape_planned one;

	if (shape_history_planned_run(run, &one))
		return -1;
	*c = one.check;
	if (j) {
		c->start = j->start_time;
		c->end = j->finished ? j->end_time : 0;
	}
	free(one.dir);
	return 0;
}

