/* status_json.c - a run and its Slurm job as `hpctrain status --json`
 * shows them (see status_json.h).  Shell: reads the run's records
 * (metrics.jsonl, RUN/stage/, nodes.json, submit.json's plan). */
#include "launcher/job/status_json.h"    // defines: status_json_*, status_plan_check
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/data_read.h"            // defines: data_read_json
#include "common/isotime.h"              // defines: isotime_format, ISOTIME_SIZE
#include "common/sbuf.h"                 // defines: xasprintf
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
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:b, s:s, s:s, s:s, s:i, s:i}", "job_id",
			      (json_int_t)(j->array_job_id ? j->array_job_id : j->job_id), "name", j->name, "state", j->state,
			      "reason", j->reason, "finished", j->finished, "nodes", j->nodes,
			      "partition", j->partition, "run", j->work_dir, "restarts",
			      (int)j->restarts, "tasks", (int)j->tasks);

	json_object_set_new(o, "array_task_id",
			    j->array_task >= 0 ? json_integer(j->array_task) : json_null());
	if (j->array_task >= 0) {
		char *run = status_task_run(j);

		if (run)
			json_object_set_new(o, "run", json_string(run));
		free(run);
	}
	if (j->array_job_id && j->array_task < 0)
		json_object_set_new(o, "array_pending", json_string(j->array_pending));
	json_object_set_new(o, "exit_code", j->finished ? json_integer(j->exit_code) : json_null());
	json_object_set_new(o, "signal", j->finished ? json_integer(j->exit_signal) : json_null());
	json_object_set_new(o, "submit_time", json_time(j->submit_time));
	json_object_set_new(o, "start_time", json_time(j->start_time));
	json_object_set_new(o, "end_time", json_time(j->end_time));
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
	json_object_set_new(o, "step", p.step_seen ? json_integer(p.step) : json_null());
	json_object_set_new(o, "total_steps", p.total_steps ? json_integer(p.total_steps)
							    : json_null());
	json_object_set_new(o, "samples_per_s", p.step_seen ? json_real(p.samples_per_s)
							    : json_null());
	json_object_set_new(o, "eta_s", progress_eta_s(&p) >= 0 && !p.summary_seen
						? json_real(progress_eta_s(&p)) : json_null());
	json_object_set_new(o, "test_accuracy", final ? json_real(acc) : json_null());
	json_object_set_new(o, "test_loss", final ? json_real(loss) : json_null());
	json_object_set_new(o, "data_read", data_read_json(&p.data));
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

