/* shape_model.h - how long a step takes at a job shape (nodes x ranks per
 * node), fitted from a job's past runs: the model under hpctrain plan.
 * Core: points in, a fit and predictions out; no I/O.
 *
 * A data-parallel step on N nodes of R ranks, each rank with the spec's
 * batch, takes
 *     t(N, R) = a + c_node * g(R) + c_net * g(N)  seconds,
 *     g(n) = 2 (n - 1) / n,
 * a the compute of one rank's step (the same at any shape: the per-rank
 * batch does not move), and the gradients' allreduce in two parts, as a
 * hierarchical ring moves them: within a node (shared memory, c_node)
 * and between nodes (the network, c_net), each growing as a ring's
 * bytes per rank do (0 alone, 1 at 2, towards 2).  The two differ by
 * orders of magnitude, so scale-up and scale-out are fitted apart.
 * From each past run come its shape, its median step time and, where
 * its records split it (comm_ms), its median communication time:
 *   - with communication recorded, a is the median of step - comm over
 *     the runs, and c_node and c_net the least-squares fit of comm over
 *     g(R) and g(N);
 *   - without, a, c_node and c_net the least-squares fit of the step
 *     times, as far as the runs' shapes tell them apart.
 * A term no run measured (every run on one node: c_net; one rank a node:
 * c_node) takes the other's value, and, when neither was, 0 (linear
 * scaling); the fit says which.  Runs that had several nodes exactly
 * when they had several ranks a node, in step (1x1 and 2x2), measure
 * only the sum of the two: each is taken as half of it ("together"),
 * and a shape needing one without the other costs the 10% below.
 * A program that holds its global batch B (shape_batch.h) splits it
 * among its ranks, so one rank's compute shrinks with them:
 *     t(N, R) = a / (N R) + c_node * g(R) + c_net * g(N),
 * a then the compute of the whole global batch on one rank, fitted the
 * same two ways with a / W in the place of a (with comm recorded: the
 * median of (step - comm) * W).
 * The uncertainty of a predicted step is the fit's relative RMS
 * residual (never under 5%), plus 10% for each doubling of the ranks
 * beyond the largest count measured, plus 10% for each term it needs
 * that no run measured: an extrapolation is a guess.
 */
#ifndef HPT_SHAPE_MODEL_H
#define HPT_SHAPE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* One past run: its shape, median step time and communication. */
struct shape_point {
	unsigned nodes, ranks_per_node;
	double step_s;
	double comm_s; /* < 0: not recorded */
	double global_batch;     /* samples a step over all ranks, as logged; 0: not logged */
	double samples_per_step; /* one rank's, samples_per_s * step time; 0: not logged */
};

struct shape_fit {
	double compute_s;     /* a; with global_batch, at one rank (a / W at W) */
	double global_batch;  /* > 0: the global batch the program holds; 0: per rank */
	double node_s;        /* c_node: the allreduce within a node, at g = 1 */
	double net_s;         /* c_net: between nodes, at g = 1 */
	double rel_err;       /* relative RMS residual, at least 0.05 */
	unsigned runs;        /* points fitted */
	unsigned shapes;      /* distinct shapes among them */
	unsigned max_ranks;   /* the most ranks among them */
	bool node_known;      /* c_node was measured (a run with R > 1) */
	bool net_known;       /* c_net was measured (a run with N > 1) */
	bool together;        /* only c_node + c_net was measured: each is half */
};

/* g(n) above. */
double shape_model_ring(unsigned n);

/* Fits p[0..n): 0, or -1 when there is nothing to fit (n == 0, or no
 * point with a shape and a positive step time). */
int shape_model_fit(const struct shape_point *p, size_t n, struct shape_fit *out);

/* The same for a program that holds a global batch of global_batch
 * samples (> 0; 0 is shape_model_fit): compute shrinks as 1 / ranks. */
int shape_model_fit_global(const struct shape_point *p, size_t n, double global_batch,
			   struct shape_fit *out);

/* The predicted step time on nodes of ranks_per_node, and its relative
 * uncertainty. */
double shape_model_step_s(const struct shape_fit *f, unsigned nodes, unsigned ranks_per_node,
			  double *rel_err);

#endif
