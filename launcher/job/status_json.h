/* status_json.h - a run and its Slurm job as JSON, for `hpctrain
 * status --json` and its table's extra lines (status_json.c).  Each
 * json_t returned is a new reference. */
#ifndef HPT_STATUS_JSON_H
#define HPT_STATUS_JSON_H

#include "launcher/shape/shape_check.h" // defines: struct shape_check
#include "launcher/slurm/slurm.h"       // defines: struct hpt_slurm_job

#include <jansson.h>

/* The job: ids, state, nodes, times, exit; an array task's run (the
 * link its index names in the array's working directory). */
json_t *status_json_job(const struct hpt_slurm_job *j);
/* An array task's run: the link its index names in the array's working
 * directory (a sweep's array, render_array.c), resolved; NULL for
 * another job.  The caller frees it. */
char *status_task_run(const struct hpt_slurm_job *j);
/* What the run's metrics.jsonl says so far: step, rate, ETA, result. */
json_t *status_json_progress(const char *run);
/* Its staging step summed over the nodes' records, or null. */
json_t *status_json_stage(const char *run);
/* The attempt's size as granted ({nodes, world_size}), or null before
 * its ranks started. */
json_t *status_json_size(const char *run);
/* A run submitted with --shape auto: its prediction (submit.json's
 * plan) against the times Slurm gives its job j (NULL: none).  0, or -1
 * for a run that was not planned. */
int status_plan_check(const char *run, const struct hpt_slurm_job *j, struct shape_check *c);

#endif
