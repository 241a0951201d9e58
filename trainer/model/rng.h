/* rng.h - deterministic random numbers for initialisation, shuffling,
 * dropout and the synthetic data sets.
 *
 * Core, header only.  Two kinds:
 *   - struct rng: a splitmix64 stream whose whole state is one uint64_t,
 *     so checkpoints store it verbatim and resume continues the stream;
 *   - rng_hash(): a counter-based draw, a pure function of (key, counter),
 *     for values that must not depend on the order in which they are
 *     drawn (dropout masks per step, synthetic sample i of a data set).
 * Neither is cryptographic; both are the same on every machine.
 */
#ifndef HPT_RNG_H
#define HPT_RNG_H

#include <math.h>
#include <stdint.h>

struct rng {
	uint64_t state;
};

static inline uint64_t rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	r->state = rng_mix(seed ^ UINT64_C(0x6a09e667f3bcc909));
}

static inline uint64_t rng_next(struct rng *r)
{
	r->state += UINT64_C(0x9e3779b97f4a7c15);
	return rng_mix(r->state);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n > 0; the modulo bias is below 2^-32 for
 * the n < 2^32 we use. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

/* Standard normal by Box-Muller (one value per call; the second is
 * dropped so the stream position stays simple to reason about). */
static inline double rng_normal(struct rng *r)
{
	double u1 = rng_uniform(r), u2 = rng_uniform(r);

	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Counter-based: a pure function of key and counter. */
static inline uint64_t rng_hash(uint64_t key, uint64_t counter)
{
	return rng_mix(rng_mix(key ^ UINT64_C(0x3c6ef372fe94f82b)) + counter);
}

static inline float rng_hash_uniform(uint64_t key, uint64_t counter)
{
	return (float)(rng_hash(key, counter) >> 40) * 0x1.0p-24f;
}

#endif
