/* attempt_restart.h - an attempt the batch script started inside its own
 * job (after a lost node or a crash at start-up): the "in_allocation"
 * of its submit.json, as launcher/doctor/doctor_inplace.c writes it
 * ({"why", "detail", "from_attempt", "nodes", "exclude", "failed_at",
 * "step_ended_at", "restarted_at": times in seconds since the epoch;
 * "last_step": the old attempt's last logged step, or null),
 * read back for status.
 *
 * attempt_restart_load is a shell (reads the file); attempt_restart_format
 * is pure.
 */
#ifndef HPT_ATTEMPT_RESTART_H
#define HPT_ATTEMPT_RESTART_H

#include <jansson.h>

struct sbuf;

/* dir's submit.json's "in_allocation" (a new reference), with its
 * "job_id" copied in; NULL for an attempt submitted through the queue,
 * or without a readable submit.json. */
json_t *attempt_restart_load(const char *dir);

/* "attempt 2, in job 12 after a lost node: node2 is down (...); the old
 * step ended 1.20 s after its first rank, the new attempt was made 0.05
 * s later" for attempt's in (from attempt_restart_load). */
void attempt_restart_format(const json_t *in, int attempt, struct sbuf *out);

/* The line of attempt_restart_format for attempt directory dir, into
 * out (left empty otherwise).  0, or -1 when dir is no attempt started
 * inside its job. */
int attempt_restart_describe(const char *dir, struct sbuf *out);

#endif
