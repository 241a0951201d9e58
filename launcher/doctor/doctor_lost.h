/* doctor_lost.h - `hpctrain doctor --lost RUN`: after a job's training
 * step failed, tell a lost node from a program error, and decide on
 * resubmitting the run without the lost nodes.  Shell (doctor_lost.c). */
#ifndef HPT_DOCTOR_LOST_H
#define HPT_DOCTOR_LOST_H

struct job;
struct sbuf;

/* doctor_lost_run's answer: again holds what the batch script reads on
 * doctor's standard output (its go_on, launcher/slurm/render.c): the
 * four lines of a new attempt inside the allocation
 * (doctor_inplace.h), or "status N": the job ends on the program's
 * failure, with the status of the first rank that failed. */
#define DOCTOR_LOST_ANSWER 2

/* Reads RUN/ranks/ (the supervised ranks' records) and asks the
 * controller about their nodes; when it holds some as DOWN or FAIL
 * (launcher/doctor/lost.h), records them in the node ledger and
 * RUN/lost.json, and decides whether the step goes on inside this
 * allocation without them (doctor_inplace.h; DOCTOR_LOST_ANSWER), and
 * when not, whether to resubmit the run without them: while
 * preflight.max_resubmits allows (failed preflights and lost nodes
 * counted together) and enough nodes are left for resources.nodes's
 * MIN.  The nodes RUN's preflight failed (RUN/preflight.json, before any
 * rank ran; already in the ledger) are handled the same way.  Says what
 * it found on stderr.  0 when the run is to be resubmitted: again gets
 * the run's first directory and exclude the nodes to leave out; 1 when
 * it is not to be resubmitted, or when no node was lost and no rank's
 * record says how the step failed.  A step that crashed before its
 * first step with no node lost (lost_startup_crash) goes on inside the
 * allocation once, and one that failed otherwise (the program's failure,
 * said in one line) supervise.max_restarts times; after that, or
 * without restarts, again holds "status N" (DOCTOR_LOST_ANSWER). */
int doctor_lost_run(const char *run, const struct job *job, struct sbuf *again,
		    struct sbuf *exclude);

#endif
