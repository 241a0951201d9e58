/* doctor_lost.h - `hpctrain doctor --lost RUN`: after a job's training
 * step failed, tell a lost node from a program error, and decide on
 * resubmitting the run without the lost nodes.  Shell (doctor_lost.c). */
#ifndef HPT_DOCTOR_LOST_H
#define HPT_DOCTOR_LOST_H

struct job;
struct sbuf;

/* doctor_lost_run's answer: the step goes on inside the allocation. */
#define DOCTOR_LOST_IN_PLACE 2

/* Reads RUN/ranks/ (the supervised ranks' records) and asks the
 * controller about their nodes; when it holds some as DOWN or FAIL
 * (launcher/doctor/lost.h), records them in the node ledger and
 * RUN/lost.json, and decides whether the step goes on inside this
 * allocation without them (doctor_inplace.h; DOCTOR_LOST_IN_PLACE,
 * again holding the batch script's three lines), and when not, whether
 * to resubmit the run without them: while preflight.max_resubmits
 * allows (failed preflights and lost nodes counted together) and enough
 * nodes are left for resources.nodes's MIN.  Says what it found on
 * stderr.  0 when the run is to be resubmitted: again gets the run's
 * first directory and exclude the nodes to leave out; 1 when no node
 * was lost (the program's own failure, said in one line: the job ends
 * as it is) or it is not to be resubmitted.  A step that crashed
 * before its first step with no node lost (lost_startup_crash) goes on
 * inside the allocation once (DOCTOR_LOST_IN_PLACE). */
int doctor_lost_run(const char *run, const struct job *job, struct sbuf *again,
		    struct sbuf *exclude);

#endif
