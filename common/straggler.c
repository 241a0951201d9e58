/* straggler.c - slow ranks named (straggler.h).  Pure. */
#include "common/straggler.h" // defines: struct straggler, straggler_*
#include "common/sbuf.h"      // defines: struct sbuf, sbuf_addf, xcalloc

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const straggler_cause_names[] = { "compute", "communication", "rate", NULL };

int straggler_init(struct straggler *s, double threshold, int64_t steps, size_t world)
{
	memset(s, 0, sizeof(*s));
	s->threshold = threshold;
	s->steps = steps < 1 ? 1 : steps;
	s->world = world;
	s->since = malloc((world ? world : 1) * sizeof(*s->since));
	s->sum_ratio = calloc(world ? world : 1, sizeof(*s->sum_ratio));
	s->nobs = calloc(world ? world : 1, sizeof(*s->nobs));
	s->named = calloc(world ? world : 1, sizeof(*s->named));
	s->scratch = malloc((world ? world : 1) * 2 * sizeof(*s->scratch));
	if (!s->since || !s->sum_ratio || !s->nobs || !s->named || !s->scratch) {
		straggler_release(s);
		return -1;
	}
	for (size_t r = 0; r < world; r++)
		s->since[r] = -1;
	return 0;
}

void straggler_release(struct straggler *s)
{
	free(s->since);
	free(s->sum_ratio);
	free(s->nobs);
	free(s->named);
	free(s->scratch);
	memset(s, 0, sizeof(*s));
}

static bool usable(double x)
{
	return isfinite(x) && x >= 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double straggler_median(const double *v, size_t n, double *scratch)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (usable(v[i]))
			scratch[m++] = v[i];
	if (!m)
		return NAN;
	/* O(n log n) every window on one process: 65,536 ranks sort in a
	 * few ms; a quickselect would save that and cost a subtle loop */
	qsort(scratch, m, sizeof(*scratch), cmp_double);
	return scratch[(m - 1) / 2];
}

static double part(const double *v, size_t r)
{
	return v ? v[r] : 0;
}

size_t straggler_observe(struct straggler *s, int64_t from, int64_t to, const double *compute,
			 const double *comm, struct straggler_hit *hits, size_t max)
{
	double *busy = s->scratch + s->world, med, med_c, med_m = 0;
	size_t n = 0, valid = 0;

	for (size_t r = 0; r < s->world; r++) {
		bool ok = usable(compute[r]) && (!comm || usable(comm[r]));

		busy[r] = ok ? compute[r] + part(comm, r) : NAN;
		valid += ok && busy[r] > 0;
	}
	if (valid < 2)
		return 0;
	med = straggler_median(busy, s->world, s->scratch);
	med_c = straggler_median(compute, s->world, s->scratch);
	if (comm) {
		med_m = straggler_median(comm, s->world, s->scratch);
	}
	for (size_t r = 0; r < s->world; r++) {
		double ratio = busy[r] / med;
		struct straggler_hit h;

		if (!usable(busy[r]) || !(ratio > s->threshold)) {
			s->since[r] = -1;
			s->named[r] = false;
			continue;
		}
		if (s->since[r] < 0) {
			s->since[r] = from;
			s->sum_ratio[r] = 0;
			s->nobs[r] = 0;
		}
		s->sum_ratio[r] += ratio;
		s->nobs[r]++;
		if (s->named[r] || to - s->since[r] + 1 < s->steps)
			continue;
		h.rank = (int)r;
		h.from = s->since[r];
		h.to = to;
		h.slower = s->sum_ratio[r] / (double)s->nobs[r];
		h.compute_ms = compute[r];
		h.median_compute_ms = isfinite(med_c) ? med_c : 0;
		h.comm_ms = comm ? comm[r] : NAN;
		h.median_comm_ms = comm ? med_m : NAN;
		h.cause = !comm ? STRAGGLER_RATE
			: comm[r] - med_m > compute[r] - h.median_compute_ms ? STRAGGLER_COMM
			: STRAGGLER_COMPUTE;
		if (n == max)
			continue; /* named at a later observation: its streak goes on */
		hits[n++] = h;
		s->named[r] = true;
	}
	return n;
}

void straggler_describe(const struct straggler_hit *h, const char *node, struct sbuf *out)
{
	sbuf_addf(out, "rank %d", h->rank);
	if (node && *node)
		sbuf_addf(out, " on %s", node);
	sbuf_addf(out, " is %.2fx slower than the median over steps %lld-%lld", h->slower,
		  (long long)h->from, (long long)h->to);
	if (h->cause == STRAGGLER_COMPUTE)
		sbuf_addf(out, ": its compute (%.3g ms a step against %.3g ms)", h->compute_ms,
			  h->median_compute_ms);
	else if (h->cause == STRAGGLER_COMM)
		sbuf_addf(out, ": its own communication (%.3g ms a step against %.3g ms)",
			  h->comm_ms, h->median_comm_ms);
	else
		sbuf_addf(out, ": its rate (%.3g ms a sample against %.3g ms)", h->compute_ms,
			  h->median_compute_ms);
}
