/* doctor_exchange.h - what the tasks of `hpctrain doctor` do together,
 * once each has checked its own node: measure the links between nodes,
 * read the first node's munge credential, and gather every node's
 * result, with its clock offset, on the first task.
 *
 * Shell (doctor_exchange.c) over doctor_probe.c's collective functions
 * (MPI), so only bin/hpctrain-doctor links it.  Every function here is
 * collective when size > 1: every task calls it, in the same order.
 * rank and size are the task's place in MPI_COMM_WORLD (0 and 1 when
 * the doctor runs alone).
 */
#ifndef HPT_DOCTOR_EXCHANGE_H
#define HPT_DOCTOR_EXCHANGE_H

#include "launcher/doctor/doctor.h"      // defines: struct doctor_node
#include "launcher/doctor/doctor_self.h" // defines: struct doctor_self

#include <stddef.h>

/* The ring's speed from this node to the next (s->me.ring_gbps; a
 * network failure when no answer came within timeout_s / 2), and on
 * every task but the first, the first node's munge credential decoded
 * with s->munge_socket (a services failure when it cannot be).  Does
 * nothing when size < 2. */
void doctor_exchange_probe(struct doctor_self *s, int rank, int size, double timeout_s);

/* On the first task, every task's result in rank order (*n = size), as
 * sent (a result that does not parse becomes a node "?" failed for it),
 * with each clock's offset from the first's; NULL (*n = 0) on the
 * others.  The caller releases each node and frees the array. */
struct doctor_node *doctor_exchange_gather(const struct doctor_node *me, int rank, int size,
					   size_t *n);

#endif
