/* resume.c - the plan that holds a global batch on any number of ranks,
 * the slice each rank and micro-step takes, and the batch hash.  Pure
 * core (see resume.h): the trainer's shell (train.c) asks, acts, reports. */
#include "trainer/model/resume.h" // defines: struct resume_plan, resume_*
#include "trainer/model/rng.h"    // defines: rng_mix
#include "common/sbuf.h"    // defines: struct sbuf

/* Rank counts listed in a refusal: divisors up to this many ranks. */
#define RESUME_MAX_LISTED 1024

int resume_plan_make(int64_t global, int world, int batch, struct resume_plan *p,
		     struct sbuf *err)
{
	int64_t per, b;

	if (global < 1 || world < 1 || batch < 1 || global % world) {
		int n = 0;

		sbuf_addf(err, "global batch %lld does not split over %d ranks; rank counts that "
			  "hold it:", (long long)global, world);
		/* O(min(global, 1024)): at most once per run */
		for (int64_t d = 1; d <= global && d <= RESUME_MAX_LISTED; d++)
			if (!(global % d))
				sbuf_addf(err, "%s %lld", n++ ? "," : "", (long long)d);
		return -1;
	}
	per = global / world;
	/* the largest per-rank batch <= batch dividing per: fewest micro-steps */
	for (b = batch < per ? batch : per; per % b; b--)
		;
	p->global = global;
	p->batch = (int)b;
	p->accum = (int)(per / b);
	return 0;
}

int64_t resume_slice_offset(const struct resume_plan *p, int world, int rank, int micro)
{
	return ((int64_t)micro * world + rank) * p->batch;
}

uint64_t resume_batch_hash(const int64_t *idx, int64_t n)
{
	uint64_t h = (uint64_t)n;

	for (int64_t i = 0; i < n; i++)
		h += rng_mix((uint64_t)idx[i] ^ UINT64_C(0x9e3779b97f4a7c15));
	return rng_mix(h);
}
