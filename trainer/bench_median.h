/* bench_median.h - the median of a benchmark's samples, for the bench_*
 * programs: one slow sample from a noisy neighbour must not decide a
 * figure. */
#ifndef HPT_BENCH_MEDIAN_H
#define HPT_BENCH_MEDIAN_H

#include <stdlib.h>

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v[0, n) and returns its middle element. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return v[n / 2];
}

#endif
