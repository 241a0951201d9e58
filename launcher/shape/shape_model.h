/* shape_model.h - how long a step takes at a given number of ranks,
 * fitted from a job's past runs: the model under hpctrain plan.
 * Core: points in, a fit and predictions out; no I/O.
 *
 * A data-parallel step at n ranks, each with the spec's batch per rank,
 * takes
 *     t(n) = a + c * g(n)  seconds,  g(n) = 2 (n - 1) / n,
 * a the compute of one rank's step (the same at any n: the per-rank
 * batch does not move) and c * g(n) the gradients' allreduce, whose
 * bytes per rank a ring moves grow as g(n) (0 alone, 1 at 2 ranks,
 * towards 2).  From each past run come its median step time and, where
 * its records split it (comm_ms), its median communication time:
 *   - with communication recorded, a is the median of step - comm over
 *     the runs and c the least-squares slope of comm over g;
 *   - without, a and c are the least-squares line of step over g, when
 *     the runs span two rank counts or more;
 *   - from one rank count and no communication recorded, c is unknown:
 *     it is taken as 0 (linear scaling) and the fit says so.
 * The uncertainty of a predicted step is the fit's relative RMS
 * residual (never under 5%), plus 10% for each doubling of the ranks
 * beyond the largest count measured: an extrapolation is a guess.
 */
#ifndef HPT_SHAPE_MODEL_H
#define HPT_SHAPE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* One past run: its ranks, median step time and communication. */
struct shape_point {
	unsigned ranks;
	double step_s;
	double comm_s; /* < 0: not recorded */
};

struct shape_fit {
	double compute_s;     /* a */
	double comm_s;        /* c: the allreduce's time at g = 1 (2 ranks) */
	double rel_err;       /* relative RMS residual, at least 0.05 */
	unsigned runs;        /* points fitted */
	unsigned rank_counts; /* distinct rank counts among them */
	unsigned max_ranks;   /* the largest */
	bool comm_known;      /* c fitted; else 0, assumed */
};

/* g(n) above. */
double shape_model_ring(unsigned ranks);

/* Fits p[0..n): 0, or -1 when there is nothing to fit (n == 0, or no
 * point with ranks and a positive step time). */
int shape_model_fit(const struct shape_point *p, size_t n, struct shape_fit *out);

/* The predicted step time at ranks, and its relative uncertainty. */
double shape_model_step_s(const struct shape_fit *f, unsigned ranks, double *rel_err);

#endif
