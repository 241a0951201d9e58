/* straggle.h - slow ranks named while the trainer runs: each rank's
 * time per step without the wait for its peers, summarised over a
 * window and judged on rank 0 by common/straggler.h.
 *
 * Shell (MPI, the node's name).  Per rank per step O(1): two figures
 * into a ring of STRAGGLER_WINDOW.  Every window: the median of each
 * ring (compute, own communication) to rank 0 in one MPI_Igather of two
 * doubles a rank, then one MPI_Ibcast of an int (the rank named, or -1)
 * and, when one is named, a broadcast of its node's name from it.  Rank
 * 0 holds 2 x world doubles and the detector's O(world) state; nothing
 * else grows with the ranks.  All on the control communicator, polled
 * by the watchdog like every wait.
 */
#ifndef HPT_STRAGGLE_H
#define HPT_STRAGGLE_H

#include "common/straggler.h" // defines: struct straggler, STRAGGLER_WINDOW

#include <stdbool.h>
#include <stdint.h>

struct comm;
struct metrics;

struct straggle {
	bool on;                  /* more than one rank under MPI */
	int window, n;            /* steps per comparison; figures so far */
	int64_t from;             /* the window's first step (1-based) */
	double compute[STRAGGLER_WINDOW], own[STRAGGLER_WINDOW];
	struct straggler det;     /* rank 0 */
	double *all, *cv, *mv;    /* rank 0: gathered pairs, then split */
};

/* Sets s up for c's ranks and the spec's straggler keys.  0, or -1 out
 * of memory. */
int straggle_init(struct straggle *s, const struct comm *c);
void straggle_release(struct straggle *s);

/* After step (1-based) on every rank: compute_ms and own_ms are this
 * rank's; at a window's end the ranks compare (a collective).  Rank 0
 * says and records (mt) each rank named.  0, or -1 when an MPI call
 * or the record failed. */
int straggle_step(struct straggle *s, struct comm *c, struct metrics *mt, int64_t step,
		  double compute_ms, double own_ms);

#endif
