/* stage_mpi.h - one staging step across the nodes of an allocation: one
 * task per node, one read of each data set, a chain of nodes that lack it.
 * Shell (stage_mpi.c): MPI, the node cache, the source. */
#ifndef HPT_STAGE_MPI_H
#define HPT_STAGE_MPI_H

#include <stdbool.h>

struct sbuf;
struct stage_job;

/* Stages every entry of j into j->cache on every node; mpi: MPI is
 * initialised (else this process is the only node).  Rank 0 scans each
 * source (stage_scan: cached), refuses one whose manifest hash is not the
 * pinned one, and broadcasts the manifests.  Then, in rounds: every node
 * claims each entry in its cache (reuse checks; a damaged copy is removed),
 * the nodes exchange which entries they lack, rank 0 reads each lacking
 * entry once and streams it along the chain of the nodes that lack it
 * (stage_plan.h), each of which verifies and publishes its copy; a node
 * whose copy failed fetches it in the next round, and fails the step the
 * second time.  A source that changes while read fails the step on every
 * node with the same message.  On return, every staged entry of this node
 * is held (a shared use lock) until the process exits, and, with
 * j->max_bytes, the cache was trimmed.  Fills each entry's record fields
 * and the node's totals.  0, or an HPT_EXIT_* status with err (the same
 * on every node when the step fails as a whole; HPT_EXIT_CHANGED when a
 * source moved since its manifest was pinned); log gets what happened
 * along the way (repairs, evictions), one line each. */
int stage_mpi_run(struct stage_job *j, bool mpi, struct sbuf *log, struct sbuf *err);

#endif
