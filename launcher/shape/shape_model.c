/* shape_model.c - a step's time against the number of ranks, fitted
 * from past runs: see shape_model.h.  Core. */
#include "launcher/shape/shape_model.h" // defines: struct shape_fit, shape_model_fit
#include "common/sbuf.h"                 // defines: xcalloc

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REL_ERR 0.05
#define PER_DOUBLING 0.10

double shape_model_ring(unsigned ranks)
{
	return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0;
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

/* Least squares of y over x: slope and intercept; through the origin
 * when origin is set. */
static void line(const double *x, const double *y, size_t n, bool origin, double *slope,
		 double *icept)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;

	for (size_t i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += x[i] * x[i];
		sxy += x[i] * y[i];
	}
	if (origin) {
		*slope = sxx > 0 ? sxy / sxx : 0;
		*icept = 0;
		return;
	}
	*slope = (n * sxx - sx * sx) != 0 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0;
	*icept = (sy - *slope * sx) / n;
}

static unsigned distinct_ranks(const struct shape_point *p, size_t n, unsigned *max)
{
	unsigned count = 0;

	*max = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < i && p[j].ranks != p[i].ranks)
			j++;
		count += j == i;
		if (p[i].ranks > *max)
			*max = p[i].ranks;
	}
	return count;
}

int shape_model_fit(const struct shape_point *in, size_t n_in, struct shape_fit *out)
{
	size_t cap = n_in ? n_in : 1;
	struct shape_point *p = xcalloc(cap, sizeof(*p));
	double *g = xcalloc(cap, sizeof(*g)), *y = xcalloc(cap, sizeof(*y));
	size_t n = 0, ncomm = 0;
	double sq = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n_in; i++)
		if (in[i].ranks && in[i].step_s > 0 && isfinite(in[i].step_s))
			p[n++] = in[i];
	for (size_t i = 0; i < n; i++)
		ncomm += p[i].comm_s >= 0;
	if (!n) {
		free(p);
		free(g);
		free(y);
		return -1;
	}
	out->runs = (unsigned)n;
	out->rank_counts = distinct_ranks(p, n, &out->max_ranks);
	for (size_t i = 0; i < n; i++)
		g[i] = shape_model_ring(p[i].ranks);
	if (ncomm == n) {
		double ignored;

		for (size_t i = 0; i < n; i++)
			y[i] = p[i].step_s - p[i].comm_s;
		out->compute_s = median(y, n);
		for (size_t i = 0; i < n; i++)
			y[i] = p[i].comm_s;
		line(g, y, n, true, &out->comm_s, &ignored);
		/* alone, a rank communicates nothing: c is known from 2 up */
		out->comm_known = out->max_ranks > 1;
	} else if (out->rank_counts > 1) {
		for (size_t i = 0; i < n; i++)
			y[i] = p[i].step_s;
		line(g, y, n, false, &out->comm_s, &out->compute_s);
		out->comm_known = true;
	} else {
		for (size_t i = 0; i < n; i++)
			y[i] = p[i].step_s;
		out->compute_s = median(y, n);
	}
	if (out->comm_s < 0)
		out->comm_s = 0; /* noise: more ranks are never faster per step */
	for (size_t i = 0; i < n; i++) {
		double t = out->compute_s + out->comm_s * g[i], r = (p[i].step_s - t) / p[i].step_s;

		sq += r * r;
	}
	out->rel_err = fmax(MIN_REL_ERR, sqrt(sq / n));
	free(p);
	free(g);
	free(y);
	return 0;
}

double shape_model_step_s(const struct shape_fit *f, unsigned ranks, double *rel_err)
{
	double err = f->rel_err;

	if (ranks > f->max_ranks && f->max_ranks)
		err += PER_DOUBLING * log2((double)ranks / f->max_ranks);
	if (!f->comm_known && ranks > 1)
		err += PER_DOUBLING; /* communication never measured */
	if (rel_err)
		*rel_err = err;
	return f->compute_s + f->comm_s * shape_model_ring(ranks);
}
