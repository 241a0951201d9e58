/* attempt_end.h - RUN/end.json: how an attempt's batch script ended.
 *
 * The script writes it as it exits, whichever way (render.c): its exit
 * status, whether it requeued the job (a requeue exits 0 and ends
 * nothing), the job id and the restart.  It is the run's own record of
 * its result, there when the controller has forgotten the job, and
 * what tells a run that completed from one that did not: a completed
 * run is never silently trained again (fresh or resumed is the user's
 * choice, launcher/job/again.h).  Shell: reads files.
 */
#ifndef HPT_ATTEMPT_END_H
#define HPT_ATTEMPT_END_H

#include <stdbool.h>

struct hpt_slurm_job;

struct attempt_end {
	int exit_status;
	bool requeued;
	long long job_id, restart;
};

/* Reads DIR/end.json (an attempt directory's).  0, or -1 when there is
 * none or it is not one (a torn or foreign file counts as none). */
int attempt_end_load(const char *dir, struct attempt_end *out);

/* Whether that end is a completion: exit 0, not a requeue.  Pure. */
bool attempt_end_completed(const struct attempt_end *e);

/* DIR's end as status shows a job, for when the controller has forgotten
 * job_id (MinJobAge, no accounting): state COMPLETED, FAILED or
 * REQUEUED, its exit, reason "from the run's record".  0 when DIR's
 * end.json is job_id's; -1 otherwise (out untouched).  Release out with
 * hpt_slurm_job_release. */
int attempt_end_job(const char *dir, unsigned long job_id, struct hpt_slurm_job *out);

#endif
