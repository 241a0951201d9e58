/* doctor_lost.h - `hpctrain doctor --lost RUN`: after a job's training
 * step failed, tell a lost node from a program error, and resubmit the
 * run without the lost nodes.  Shell (doctor_lost.c). */
#ifndef HPT_DOCTOR_LOST_H
#define HPT_DOCTOR_LOST_H

#include <stdbool.h>

struct job;

/* Whether the controller's nodes less the hostlist exclude are enough
 * for the next attempt (resize_next: resources.nodes's MIN, or its
 * number); says on stderr how many it can have at most, or why not.
 * When the controller cannot say, true: Slurm decides. */
bool doctor_lost_enough_left(const struct job *job, const char *exclude);

/* Reads RUN/ranks/ (the supervised ranks' records); when ranks were
 * killed as a lost node kills them (launcher/doctor/lost.h), records
 * their nodes in the node ledger and RUN/lost.json, and resubmits the
 * run without them while preflight.max_resubmits allows (failed
 * preflights and lost nodes counted together) and enough nodes are left
 * for resources.nodes's MIN.  Says what it did on stderr.  0 when it
 * resubmitted; 1 when no node was lost (the program's own failure: the
 * job ends as it is) or it did not resubmit. */
int doctor_lost_run(const char *run, const struct job *job);

#endif
