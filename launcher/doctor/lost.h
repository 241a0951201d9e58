/* lost.h - the nodes a failed training step lost, told apart from a
 * program that failed on its own.
 *
 * Core (pure): the supervised ranks' records (RUN/ranks/rank-N.json,
 * launcher/supervise/liveness.h) in, node names out.  A rank whose
 * program was killed by SIGKILL (the kernel's OOM killer, a node being
 * taken away) or SIGBUS (a memory fault) lost its node; a program that
 * exited non-zero, or died of any other signal (SIGSEGV, SIGABRT: its
 * own bug), did not, and the job ends as it always has.
 *
 * A node that stops answering kills no rank: Slurm finds it (its slurmd
 * silent for SlurmdTimeout), ends the job with NODE_FAIL and requeues
 * it.  The run Slurm starts again reads the earlier run's records for
 * the nodes it ran on (lost_record_nodes); those Slurm holds as failed
 * were lost.
 */
#ifndef HPT_LOST_H
#define HPT_LOST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* Fills nodes[0..k) (room for n; borrowed from the records) with the
 * distinct nodes of ranks[0..n) whose program was killed by SIGKILL or
 * SIGBUS, in rank order, and returns k.  why gets one clause per such
 * rank ("rank 1 on node2 killed by signal 9").  A record without a node
 * is skipped. */
size_t lost_nodes(json_t *const *ranks, size_t n, const char **nodes, struct sbuf *why);

/* Fills nodes[0..k) (room for n; borrowed) with the distinct nodes of
 * ranks[0..n), in rank order, and returns k.  A record without a node
 * is skipped. */
size_t lost_record_nodes(json_t *const *ranks, size_t n, const char **nodes);

/* Whether node is one of nodes[0..k). */
bool lost_has_node(const char *const *nodes, size_t k, const char *node);

#endif
