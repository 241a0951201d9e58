/* shape_batch.c - a global batch or one per rank, from past runs' step
 * records: see shape_batch.h.  Core. */
#include "launcher/shape/shape_batch.h" // defines: struct shape_batch, shape_batch_infer
#include "common/sbuf.h"                 // defines: struct sbuf, sbuf_addf

#include <math.h>
#include <string.h>

#define FIELD_TOL 1e-6 /* a logged count: equal is equal */
#define RATE_TOL 0.10  /* a product of two medians: noisy */

/* One point's global batch by source: the logged one, or the samples
 * of one rank's step times the ranks; 0 when the point lacks it. */
static double batch_of(const struct shape_point *p, enum shape_batch_source src)
{
	double w = (double)p->nodes * p->ranks_per_node;

	if (src == SHAPE_BATCH_FIELD)
		return p->global_batch > 0 && isfinite(p->global_batch) ? p->global_batch : 0;
	return p->samples_per_step > 0 && isfinite(p->samples_per_step) ? p->samples_per_step * w
									  : 0;
}

/* The evidence of one source: the world sizes it spans, the batch at
 * the smallest and largest, and whether every point's batch is within
 * tol of the first's.  false when no point has it. */
static bool gather(const struct shape_point *p, size_t n, enum shape_batch_source src, double tol,
		   struct shape_batch *b, bool *equal)
{
	double first = 0;

	*equal = true;
	b->world_sizes = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned w = p[i].nodes * p[i].ranks_per_node;
		double g = w ? batch_of(&p[i], src) : 0;
		bool seen = false;

		if (g <= 0)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = p[j].nodes * p[j].ranks_per_node == w && batch_of(&p[j], src) > 0;
		b->world_sizes += !seen;
		if (!first)
			first = g;
		if (fabs(g - first) > tol * first)
			*equal = false;
		if (!b->lo || w < b->lo)
			b->lo = w, b->at_lo = g;
		if (w > b->hi)
			b->hi = w, b->at_hi = g;
	}
	return first > 0;
}

void shape_batch_infer(const struct shape_point *p, size_t n, struct shape_batch *out)
{
	bool equal;

	memset(out, 0, sizeof(*out));
	if (gather(p, n, SHAPE_BATCH_FIELD, FIELD_TOL, out, &equal)) {
		out->source = SHAPE_BATCH_FIELD;
		out->global = equal;
	} else {
		memset(out, 0, sizeof(*out));
		if (!gather(p, n, SHAPE_BATCH_RATE, RATE_TOL, out, &equal) || out->world_sizes < 2) {
			memset(out, 0, sizeof(*out));
			return;
		}
		out->source = SHAPE_BATCH_RATE;
		out->global = equal;
	}
	/* held: what the largest world size ran with is what it holds */
	if (out->global)
		out->global_batch = out->at_hi;
}

void shape_batch_describe(const struct shape_batch *b, struct sbuf *out)
{
	const char *what = b->source == SHAPE_BATCH_FIELD ? "global_batch in metrics.jsonl"
			   : "samples_per_s x step_ms x world size in metrics.jsonl";

	if (b->source == SHAPE_BATCH_NONE) {
		sbuf_addstr(out, "takes its batch per rank (assumed: no run logged global_batch)");
		return;
	}
	if (!b->global) {
		sbuf_addf(out, "takes its batch per rank (%s differs between world sizes: %.0f "
			  "at %u, %.0f at %u)", what, b->at_lo, b->lo, b->at_hi, b->hi);
		return;
	}
	sbuf_addf(out, "holds a global batch of %.0f (%s", b->global_batch, what);
	if (b->world_sizes > 1)
		sbuf_addf(out, ", the same at world sizes %u %s %u)", b->lo,
			  b->world_sizes == 2 ? "and" : "to", b->hi);
	else
		sbuf_addf(out, "; assumed held: every run had world size %u)", b->lo);
}
