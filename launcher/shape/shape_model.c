/* shape_model.c - a step's time against the job's shape, fitted from
 * past runs: see shape_model.h.  Core. */
#include "launcher/shape/shape_model.h" // defines: struct shape_fit, shape_model_fit
#include "common/metrics_line.h"         // defines: METRICS_STEP_MS_MIN, METRICS_STEP_MS_MAX
#include "common/sbuf.h"                 // defines: xcalloc

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REL_ERR 0.05
#define PER_DOUBLING 0.10
#define PER_UNKNOWN 0.10
/* a point's step outside what a record may say (metrics_line.h) is
 * none: one of 1e-303 s made the fit's error infinite */
#define STEP_MIN_S (METRICS_STEP_MS_MIN / 1e3)
#define STEP_MAX_S (METRICS_STEP_MS_MAX / 1e3)

double shape_model_ring(unsigned n)
{
	return n > 1 ? 2.0 * (n - 1) / n : 0.0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Least squares of y over the columns of x (n rows of k <= 3, row
 * major), into b[0..k); columns that are all 0 are left out (b 0) and
 * *used says which were fitted (bit j).  Gaussian elimination on the
 * normal equations; a column the others explain is left out too. */
static void least_squares(const double *x, const double *y, size_t n, size_t k, double *b,
			  unsigned *used)
{
	double m[3][4] = { { 0 } };
	size_t col[3], kk = 0;

	*used = 0;
	for (size_t j = 0; j < k; j++) {
		double ss = 0;

		b[j] = 0;
		for (size_t i = 0; i < n; i++)
			ss += x[i * k + j] * x[i * k + j];
		if (ss > 0)
			col[kk++] = j;
	}
	for (size_t r = 0; r < kk; r++) {
		for (size_t c = 0; c < kk; c++)
			for (size_t i = 0; i < n; i++)
				m[r][c] += x[i * k + col[r]] * x[i * k + col[c]];
		for (size_t i = 0; i < n; i++)
			m[r][kk] += x[i * k + col[r]] * y[i];
	}
	for (size_t p = 0; p < kk; p++) {
		double piv = m[p][p];

		if (fabs(piv) < 1e-12 * (1 + fabs(m[0][0]))) {
			/* explained by the columns before it: leave it out */
			for (size_t r = 0; r < kk; r++)
				m[r][p] = m[p][r] = 0;
			m[p][p] = 1;
			m[p][kk] = 0;
			col[p] = (size_t)-1;
			continue;
		}
		for (size_t r = 0; r < kk; r++) {
			double fct = r == p ? 0 : m[r][p] / piv;

			for (size_t c = p; c <= kk && fct != 0; c++)
				m[r][c] -= fct * m[p][c];
		}
	}
	for (size_t p = 0; p < kk; p++)
		if (col[p] != (size_t)-1) {
			b[col[p]] = m[p][kk] / m[p][p];
			*used |= 1u << col[p];
		}
}

static unsigned distinct_shapes(const struct shape_point *p, size_t n, unsigned *max_ranks)
{
	unsigned count = 0;

	*max_ranks = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < i && !(p[j].nodes == p[i].nodes && p[j].ranks_per_node == p[i].ranks_per_node))
			j++;
		count += j == i;
		if (p[i].nodes * p[i].ranks_per_node > *max_ranks)
			*max_ranks = p[i].nodes * p[i].ranks_per_node;
	}
	return count;
}

static bool column_is_zero(const double *x, size_t n, size_t j)
{
	for (size_t i = 0; i < n; i++)
		if (x[i * 3 + j] != 0)
			return false;
	return true;
}

/* The share of the compute a one-rank step does that falls to one of
 * the point's ranks: all of it for a batch per rank, 1 / W of it for
 * a global batch. */
static double compute_share(const struct shape_fit *f, unsigned nodes, unsigned ranks_per_node)
{
	return f->global_batch > 0 ? 1.0 / ((double)nodes * ranks_per_node) : 1.0;
}

/* The communication terms: from comm where every point recorded it,
 * else with a from the step times. */
static void fit_terms(const struct shape_point *p, size_t n, bool comm, struct shape_fit *out)
{
	double *x = xcalloc(3 * n, sizeof(*x)), *y = xcalloc(n, sizeof(*y)), b[3];
	unsigned used;

	for (size_t i = 0; i < n; i++) {
		x[i * 3 + 0] = comm ? 0 : compute_share(out, p[i].nodes, p[i].ranks_per_node);
		x[i * 3 + 1] = shape_model_ring(p[i].ranks_per_node);
		x[i * 3 + 2] = shape_model_ring(p[i].nodes);
		y[i] = comm ? p[i].comm_s : p[i].step_s;
	}
	least_squares(x, y, n, 3, b, &used);
	if (comm) {
		for (size_t i = 0; i < n; i++)
			y[i] = (p[i].step_s - p[i].comm_s) /
			       compute_share(out, p[i].nodes, p[i].ranks_per_node);
		out->compute_s = median(y, n);
	} else {
		out->compute_s = b[0];
	}
	out->node_s = b[1] > 0 ? b[1] : 0;
	out->net_s = b[2] > 0 ? b[2] : 0;
	out->node_known = used & 2;
	out->net_known = used & 4;
	if ((used & 6) == 2 && !column_is_zero(x, n, 2)) {
		/* every run that had several ranks a node had several nodes
		 * too, and as many (1x1 and 2x2): the fit saw the sum alone */
		out->together = true;
		out->node_known = false;
		out->node_s = out->net_s = out->node_s / 2;
	}
	free(x);
	free(y);
}

int shape_model_fit(const struct shape_point *p, size_t n, struct shape_fit *out)
{
	return shape_model_fit_global(p, n, 0, out);
}

int shape_model_fit_global(const struct shape_point *in, size_t n_in, double global_batch,
			   struct shape_fit *out)
{
	struct shape_point *p = xcalloc(n_in ? n_in : 1, sizeof(*p));
	size_t n = 0, ncomm = 0;
	double sq = 0;

	memset(out, 0, sizeof(*out));
	out->global_batch = global_batch > 0 && isfinite(global_batch) ? global_batch : 0;
	for (size_t i = 0; i < n_in; i++)
		if (in[i].nodes && in[i].ranks_per_node && in[i].step_s >= STEP_MIN_S &&
		    in[i].step_s <= STEP_MAX_S)
			p[n++] = in[i];
	for (size_t i = 0; i < n; i++)
		ncomm += p[i].comm_s >= 0;
	if (!n) {
		free(p);
		return -1;
	}
	out->runs = (unsigned)n;
	out->shapes = distinct_shapes(p, n, &out->max_ranks);
	fit_terms(p, n, ncomm == n, out);
	if (out->compute_s < 0)
		out->compute_s = 0;
	for (size_t i = 0; i < n; i++) {
		double t = shape_model_step_s(out, p[i].nodes, p[i].ranks_per_node, NULL);
		double r = (p[i].step_s - t) / p[i].step_s;

		sq += r * r;
	}
	out->rel_err = fmax(MIN_REL_ERR, sqrt(sq / n));
	free(p);
	return 0;
}

double shape_model_step_s(const struct shape_fit *f, unsigned nodes, unsigned ranks_per_node,
			  double *rel_err)
{
	/* a term never measured borrows the other's: within a node is
	 * never slower than between nodes, so that bounds it */
	double node = f->node_known ? f->node_s : f->net_known ? f->net_s : 0;
	double net = f->net_known ? f->net_s : f->node_known ? f->node_s : 0;
	unsigned ranks = nodes * ranks_per_node;
	double err = f->rel_err;

	if (f->together) {
		/* each half of the sum measured: a guess only for a shape
		 * that needs one term without the other */
		node = f->node_s;
		net = f->net_s;
		err += (ranks_per_node > 1) != (nodes > 1) ? PER_UNKNOWN : 0;
	}
	if (f->max_ranks && ranks > f->max_ranks)
		err += PER_DOUBLING * log2((double)ranks / f->max_ranks);
	if (ranks_per_node > 1 && !f->node_known && !f->together)
		err += PER_UNKNOWN;
	if (nodes > 1 && !f->net_known && !f->together)
		err += PER_UNKNOWN;
	if (rel_err)
		*rel_err = err;
	return f->compute_s * compute_share(f, nodes, ranks_per_node) +
	       node * shape_model_ring(ranks_per_node) +
	       net * shape_model_ring(nodes);
}
