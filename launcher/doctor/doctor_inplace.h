/* doctor_inplace.h - a failed training step started again inside its
 * own allocation, instead of a trip through the queue.
 *
 * doctor --lost (doctor_lost.c) asks here first, from the batch script,
 * after a step lost a node or crashed before its first step:
 *
 *   - a lost node: the allocation's nodes less every node lost so far
 *     (the attempt's exclude list and these) are counted; when they meet
 *     resources.nodes (its MIN for a range), the next step trains on as
 *     many of them as resources.nodes allows (a spare replaces the lost
 *     node; without one, fewer nodes), counted with the failed
 *     preflights against preflight.max_resubmits;
 *   - a node whose preflight failed: the same, before anything trained;
 *   - a crash at start-up (lost_startup_crash): once per job, on the
 *     same nodes;
 *   - a program's failure (no node lost): supervise.max_restarts times
 *     per job at most (default 0: never), on the same nodes.
 *
 * Either way the next step is a new attempt (rundir_new_attempt: its
 * own logs and records, its checkpoints the run's, so it resumes from
 * the last one with the same global batch; the old attempt's code.json
 * and the Python module, as submit gives them) whose submit.json names the
 * same job and says why ("in_allocation": the reason, the lost nodes,
 * the merged exclude list and the recovery's figures so far, read back
 * by status and report).  The batch script reads the answer: the
 * step's nodes, the nodes srun leaves out, the attempt's directory and
 * the allocation's nodes left (the stage step's, after a failed
 * preflight), one a line.
 *
 * Shell: the run's files, SLURM_JOB_ID and SLURM_JOB_NODELIST, the
 * clock.  Prints nothing; msg says what was decided and why.
 */
#ifndef HPT_DOCTOR_INPLACE_H
#define HPT_DOCTOR_INPLACE_H

#include <stddef.h>

struct job;
struct sbuf;

/* The reasons a step starts again here (submit.json's in_allocation.why). */
#define INPLACE_LOST  "lost node"
#define INPLACE_CRASH "start-up crash"
#define INPLACE_PREFLIGHT "failed preflight"
#define INPLACE_PROGRAM "program failure"

/* Starts attempt dir's run again inside this allocation, without the k
 * nodes in lost (none for a start-up crash), for reason why (one of the
 * above; detail: the line doctor said).  0: a new attempt was made, and
 * answer holds the four lines for the batch script; -1: not here (not
 * inside a Slurm job, too few nodes left, the bound reached, a crash
 * already started again once, a program's failure started again
 * supervise.max_restarts times), with msg saying why when it is worth a
 * line. */
int doctor_inplace(const char *dir, const struct job *job, const char *const *lost, size_t k,
		   const char *why, const char *detail, struct sbuf *answer, struct sbuf *msg);

#endif
