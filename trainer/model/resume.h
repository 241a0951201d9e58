/* resume.h - how a run of W ranks holds a global batch G: the per-rank
 * batch, the gradient-accumulation steps, which slice of a global batch
 * each rank and micro-step takes, and a hash of a global batch's
 * samples.  Pure core: no I/O, no MPI.
 *
 * Sample order: each epoch's permutation comes from (seed, epoch) alone
 * (data.c); global batch k of an epoch is perm[k*G, (k+1)*G).  Rank r at
 * micro-step a takes perm[k*G + (a*W + r)*b, +b).  At a fixed b, W ranks
 * x A micro-steps and W*A ranks x 1 take the same b-sample slices, so a
 * step's gradient is the same sum of slice gradients at any world size
 * (to fp32 rounding of the sum's order).
 */
#ifndef HPT_RESUME_H
#define HPT_RESUME_H

#include <stdint.h>

struct sbuf;

/* How one rank covers its share of a global batch: global = world *
 * batch * accum, always (resume_plan_make guarantees it). */
struct resume_plan {
	int64_t global; /* samples per optimizer step, all ranks */
	int batch;      /* samples per rank and micro-step (the model's N) */
	int accum;      /* micro-steps per optimizer step, >= 1 */
};

/* The plan for global batch global on world ranks whose spec asks for
 * batch per rank: that batch with accumulation when world*batch divides
 * global; else the largest per-rank batch <= batch that divides
 * global/world (more micro-steps); when world*batch is above global, the
 * per-rank batch shrinks to global/world.  When world does not divide
 * global no plan holds it: -1, and err names the rank counts that do
 * (the divisors of global up to 1024). */
int resume_plan_make(int64_t global, int world, int batch, struct resume_plan *p,
		     struct sbuf *err);

/* Offset, within its global batch, of the slice rank takes at micro-step
 * micro: (micro*world + rank) * batch. */
int64_t resume_slice_offset(const struct resume_plan *p, int world, int rank, int micro);

/* A 64-bit hash of the set of sample indices idx[0..n): a sum of mixed
 * indices, so the order within the batch does not change it, and equal
 * sets at any world size give equal hashes. */
uint64_t resume_batch_hash(const int64_t *idx, int64_t n);

#endif
