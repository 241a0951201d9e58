/* doctor_slow.h - slow nodes into the node ledger: the nodes of the
 * ranks a run's trainer named slow (its "straggler" records, see
 * hpctrain-train(1)) when its spec says straggler.action: exclude, so
 * that the next attempt (a resubmission after a lost node, a rerun, a
 * submit) leaves them out while they cool down.  Shell (doctor_slow.c):
 * reads RUN's metrics.jsonl, writes the ledger. */
#ifndef HPT_DOCTOR_SLOW_H
#define HPT_DOCTOR_SLOW_H

#include <stddef.h>

struct job;
struct sbuf;

/* Records in the ledger, as failed with reason "slow: rank R was X.XXx
 * the median's time per step ...", each node named in a straggler
 * record of dir's metrics.jsonl whose action is exclude (once a node;
 * nothing unless job's straggler.action is exclude, or outside a Slurm
 * job: doctor_record_ledger).  Says each on stderr.  Returns how many
 * nodes were recorded; warn gets why the ledger was not written, if
 * so. */
size_t doctor_slow_record(const char *dir, const struct job *job, struct sbuf *warn);

#endif
