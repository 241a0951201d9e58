/* doctor_exchange.c - doctor's tasks together: the ring, the first
 * node's munge credential read on every other, and every node's result
 * gathered on the first (see doctor_exchange.h).
 * Shell: calls doctor_probe.c's collective MPI functions. */
#include "launcher/doctor/doctor_exchange.h" // defines: doctor_exchange_probe, doctor_exchange_gather
#include "common/sbuf.h"                     // defines: struct sbuf, xcalloc
#include "common/jsonb.h" // defines: jsonb_xdumps
#include "launcher/doctor/doctor_probe.h"    // defines: doctor_probe_ring, doctor_probe_gather

#include <stdlib.h>

/* Everything collective, in the same order on every rank. */
void doctor_exchange_probe(struct doctor_self *s, int rank, int size, double timeout_s)
{
	struct sbuf err = SBUF_INIT;
	char *cred = NULL, *theirs;

	if (size < 2)
		return;
	s->me.ring_gbps = doctor_probe_ring(8 << 20, 3, timeout_s / 2, &err);
	if (s->me.ring_gbps < 0)
		doctor_note(&s->me.cell[DOCTOR_NETWORK], DOCTOR_FAIL, "%s", err.buf);
	sbuf_reset(&err);
	/* A credential of the first node read on every other: one key,
	 * clocks within munge's lifetime. */
	if (rank == 0)
		cred = doctor_munge_encode(s->munge_socket, &err);
	theirs = doctor_probe_bcast_string(cred);
	sbuf_reset(&err);
	if (rank && theirs && doctor_munge_decode(s->munge_socket, theirs, &err))
		doctor_note(&s->me.cell[DOCTOR_SERVICES], DOCTOR_FAIL,
			    "cannot read a munge credential of the first node: %s", err.buf);
	free(cred);
	free(theirs);
	sbuf_release(&err);
}

/* On the first rank: every node's result, graded against the others. */
struct doctor_node *doctor_exchange_gather(const struct doctor_node *me, int rank, int size,
					   size_t *n)
{
	json_t *mine = doctor_node_json(me);
	/* its names are carried escaped (doctor_node_json): NULL is out of memory */
	char *text = jsonb_xdumps(mine, JSON_COMPACT), **all;
	double *offsets = xcalloc((size_t)size, sizeof(double));
	struct doctor_node *nodes = NULL;

	*n = 0;
	json_decref(mine);
	if (size > 1)
		doctor_probe_clocks(offsets);
	all = size > 1 ? doctor_probe_gather(text) : NULL;
	if (rank == 0) {
		nodes = xcalloc((size_t)size, sizeof(*nodes));
		for (int i = 0; i < size; i++) {
			json_t *j = json_loads(all ? all[i] : text, 0, NULL);

			if (!j || doctor_node_from_json(j, &nodes[i])) {
				doctor_node_release(&nodes[i]);
				doctor_node_init(&nodes[i], "?");
				doctor_note(&nodes[i].cell[DOCTOR_SERVICES], DOCTOR_FAIL,
					    "rank %d sent an unreadable result", i);
			}
			json_decref(j);
			nodes[i].clock_offset_s = offsets[i];
			if (all)
				free(all[i]);
		}
		*n = (size_t)size;
	}
	free(all);
	free(text);
	free(offsets);
	return nodes;
}
