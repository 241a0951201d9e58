/* lost.h - a failed training step: a lost node, or the program's own
 * failure.
 *
 * A node is lost only when the controller holds it as DOWN or FAIL (it
 * stopped answering, or a person or a health check took it away), or
 * when its preflight fails; doctor_lost.c asks the controller about the
 * nodes of the ranks' records (lost_record_nodes).  Everything a rank's
 * record can show is the program's: a non-zero exit, a signal of its own
 * (SIGSEGV, SIGABRT), and a SIGKILL too, whether from the kernel's OOM
 * killer (the record counts its kills, launcher/supervise/oom.h) or
 * from a person, Slurm or another process.  A program's failure never
 * puts a healthy node in the ledger.
 *
 * Core (pure): the supervised ranks' records (RUN/ranks/rank-N.json,
 * launcher/supervise/liveness.h) in, node names or one line out.
 */
#ifndef HPT_LOST_H
#define HPT_LOST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* Appends to why what ended the failed ranks of ranks[0..n), first
 * failed first (by the record's update time), at most 3 named and the
 * rest counted: "rank 1 on node2 killed by the OOM killer (signal 9);
 * rank 0 on node1 exited 143".  Returns how many ranks failed (exited
 * non-zero, or stalled). */
size_t lost_program_failure(json_t *const *ranks, size_t n, struct sbuf *why);

/* The exit status of the first rank of ranks[0..n) to fail, as its
 * launcher exited (128 + N for signal N; 76 after a stall, 77 with no
 * start, whatever the program it killed then returned), the one a job
 * that ends on the program's failure ends with: the others' are mostly
 * srun ending them after it (143).  -1 when no failed rank has a
 * status of 1..255. */
int lost_first_status(json_t *const *ranks, size_t n);

/* Whether the step crashed while starting: a rank of ranks[0..n) died
 * of a signal of its own (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE,
 * SIGTRAP, SIGSYS: a crash, as Open MPI's start-up under Slurm's PMIx
 * crashes about one start in 25 under load) and no rank ever touched
 * its heartbeat (the bundled trainer does every step: none took its
 * first).  A SIGKILL, a SIGTERM and an exit status are never a crash
 * at start-up: they are a person's, Slurm's, the OOM killer's or the
 * program's; nor is a step the supervisors ended themselves (a rank
 * "stalled" or "unstarted": their SIGABRT asks Python for its stacks).
 * The first crashed rank is described in why. */
bool lost_startup_crash(json_t *const *ranks, size_t n, struct sbuf *why);

/* Fills nodes[0..k) (room for n; borrowed) with the distinct nodes of
 * ranks[0..n), in rank order, and returns k.  A record without a node
 * is skipped. */
size_t lost_record_nodes(json_t *const *ranks, size_t n, const char **nodes);

/* Whether node is one of nodes[0..k). */
bool lost_has_node(const char *const *nodes, size_t k, const char *node);

#endif
