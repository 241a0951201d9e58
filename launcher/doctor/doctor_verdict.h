/* doctor_verdict.h - what doctor concludes from its graded nodes: which
 * failed (their names, and the Slurm hostlist an --exclude takes), and
 * the node ledger's event for each node (failed or not, the first
 * failed check's reason, its GEMM speed next to the fastest node's).
 *
 * Core (doctor_verdict.c, pure): nodes in, a verdict out.  The hostlist
 * comes from libslurm's hostlist functions (hpt_slurm_hostlist), which
 * only compute: no configuration, no controller.
 */
#ifndef HPT_DOCTOR_VERDICT_H
#define HPT_DOCTOR_VERDICT_H

#include "common/sbuf.h"            // defines: struct sbuf
#include "launcher/doctor/doctor.h" // defines: struct doctor_node
#include "launcher/doctor/ledger.h" // defines: struct ledger_event

#include <stddef.h>

/* Names and reasons point into the nodes (names) and into reasons
 * (events[i].reason): the verdict is valid while the nodes are and
 * until doctor_verdict_release. */
struct doctor_verdict {
	const char **failed;          /* the failed nodes' names in node order, NULL-ended */
	size_t n_failed;
	struct sbuf exclude;          /* the failed nodes as a hostlist ("node[2-3]"), "" when none */
	struct ledger_event *events;  /* one per node, in node order */
	size_t n;
	struct sbuf *reasons;         /* the text of each event's reason ("" for NULL) */
	struct sbuf job_fault;        /* "" or, when every node failed one check, what it
				       * was: the job's problem, and the above are empty */
};

/* The verdict on n graded nodes (doctor_compare has run).  A node failed
 * when any of its cells is FAIL; its event's reason is the first such
 * cell in check order, "check: reason", and NULL for a node that passed.
 * When two nodes or more all failed, and in the same check first, it
 * is the job's doing (a munge replay, a missing image, a bad path), not
 * the nodes': job_fault says so ("every node failed services first;
 * node1: munge: ..."), and no node is failed, excluded or recorded.
 * Its score is its GEMM GFLOP/s over the fastest node's, or -1 when
 * either is not > 0.  Should libslurm refuse the names, exclude is them
 * joined with ",". */
void doctor_verdict_make(const struct doctor_node *nodes, size_t n, struct doctor_verdict *out);

/* Frees what doctor_verdict_make allocated; accepts a zeroed struct. */
void doctor_verdict_release(struct doctor_verdict *v);

#endif
