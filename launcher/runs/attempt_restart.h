/* attempt_restart.h - an attempt the batch script started inside its own
 * job (after a lost node or a crash at start-up): the "in_allocation"
 * of its submit.json, as launcher/doctor/doctor_inplace.c writes it
 * ({"why", "detail", "from_attempt", "nodes", "exclude", "failed_at",
 * "step_ended_at", "restarted_at": times in seconds since the epoch;
 * "last_step": the old attempt's last logged step, or null),
 * read back for status and report with the figures of the recovery
 * that only the new attempt's own records hold (attempt_restart_figures).
 *
 * attempt_restart_load is a shell (reads the files); attempt_restart_format
 * and attempt_restart_figures are pure.
 */
#ifndef HPT_ATTEMPT_RESTART_H
#define HPT_ATTEMPT_RESTART_H

#include <jansson.h>
#include <stddef.h>

struct sbuf;

/* The head of an attempt's metrics.jsonl read for its first records. */
#define ATTEMPT_RESTART_HEAD_BYTES (64 * 1024)

/* dir's submit.json's "in_allocation" (a new reference), with its
 * "job_id" copied in and the figures attempt_restart_figures finds in
 * the head of dir's metrics.jsonl and in dir/ranks/rank-0.json; NULL
 * for an attempt submitted through the queue, or without a readable
 * submit.json. */
json_t *attempt_restart_load(const char *dir);

/* The recovery's figures from what the new attempt logged, set in in
 * (an in_allocation record, with its "restarted_at" and "last_step"),
 * each only when what it comes from is there:
 *   "checkpoint_load_s": load_s of the first "resume" record of the
 *       attempt's metrics (the bundled trainer writes one when it loads
 *       a checkpoint; a program may: hpctrain-program(7));
 *   "first_step": the step of its first step record;
 *   "first_step_at": rank 0's first heartbeat ("first_heartbeat" of its
 *       record rank0: the trainer touches it every step, a program
 *       through hpctrain.Metrics.step), and "first_step_s", the seconds
 *       from "restarted_at" to it;
 *   "lost_steps": the steps the old attempt logged after the checkpoint
 *       the new one resumed from ("checkpoint_step" of the resume
 *       record, else the step before the first one logged), trained
 *       again: last_step less it, never below 0.
 * head: the first len bytes of the metrics (a cut last line is
 * skipped); rank0: rank 0's record, or NULL. */
void attempt_restart_figures(json_t *in, const char *head, size_t len, const json_t *rank0);

/* "attempt 2, in job 12 after a lost node: node2 is down (...); the old
 * step ended 1.20 s after its first rank, the new attempt was made 0.05
 * s later; attempt 1's last step was 12; the checkpoint loaded in 0.01
 * s; the first step 1.90 s after the new attempt was made; 1 step lost"
 * for attempt's in (from attempt_restart_load). */
void attempt_restart_format(const json_t *in, int attempt, struct sbuf *out);

/* The line of attempt_restart_format for attempt directory dir, into
 * out (left empty otherwise).  0, or -1 when dir is no attempt started
 * inside its job. */
int attempt_restart_describe(const char *dir, struct sbuf *out);

#endif
