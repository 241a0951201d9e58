/* again.h - a run trained again: fresh or resumed is the user's choice.
 *
 * A new attempt of a run whose latest attempt completed either trains
 * it again from step 0 into new checkpoints, or goes on from its last
 * checkpoint (for a run that reached its end, only as far as a spec
 * that asks for more steps).  Neither is assumed: submit and rerun of
 * a completed run refuse without --fresh or --resume.  A run that did
 * not complete (failed, cancelled, or not known to have ended) is taken
 * as it always was: submit and rerun start it fresh, rerun --resume and
 * the doctor's resubmissions resume, and so does a requeue.
 *
 * Completed is the run's own record (RUN/end.json,
 * launcher/runs/attempt_end.h), else the controller's word on the job.
 * Shell: files, Slurm (hpt_slurm_init done by the caller).
 */
#ifndef HPT_AGAIN_H
#define HPT_AGAIN_H

struct attempt;
struct rundir;
struct sbuf;

enum job_again { JOB_AGAIN_ASK, JOB_AGAIN_FRESH, JOB_AGAIN_RESUME };

/* 0 when a new attempt of run (its first directory; a missing one is
 * new) may be made as again says; with JOB_AGAIN_ASK and a run that
 * completed, HPT_EXIT_USAGE and err naming the attempt and both options
 * of cmd ("submit", "rerun"). */
int job_again_check(const char *run, enum job_again again, const char *cmd, struct sbuf *err);

/* The run of a (resolved and hashed) under its output.dir: a new attempt
 * of it, or its first, in rd, made as again says (job_again_check
 * first; for RESUME a later attempt's checkpoints link to the run's).
 * 0, HPT_EXIT_USAGE, or HPT_EXIT_IO with err. */
int job_again_create(const struct attempt *a, enum job_again again, const char *cmd,
		     struct rundir *rd, struct sbuf *err);

/* The same for a new attempt of the existing run (its first directory). */
int job_again_attempt(const char *run, enum job_again again, const char *cmd, struct rundir *rd,
		      struct sbuf *err);

#endif
