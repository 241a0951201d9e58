/* amp.h - dynamic loss scaling for fp16 mixed precision.
 *
 * fp16 gradients underflow: a loss gradient multiplied by `scale` keeps
 * small values representable through the fp16 backward; the fp32
 * gradients are divided by it again before the optimizer.  Too large a
 * scale overflows: then some gradient is inf or NaN, the step is skipped
 * and the scale halved.  After AMP_GROWTH_INTERVAL clean steps in a row
 * the scale doubles, probing upwards again.  This is PyTorch's
 * GradScaler policy (init 2^16, backoff 0.5, growth 2, interval 2000).
 *
 * Pure core: no I/O, no globals; the scaler's state is two numbers,
 * saved in checkpoints (ckpt.h) so that a resumed run scales exactly as
 * an uninterrupted one.  In data-parallel runs every rank calls
 * amp_unscale on the same averaged gradients (after the allreduce), so
 * all ranks take the same skip decision without a vote.
 *
 * Invariant of an enabled scaler: scale is a power of two in
 * [AMP_MIN_SCALE, AMP_MAX_SCALE] (multiplying by it is exact) and
 * 0 <= good_steps < interval.  A disabled scaler (fp32, bf16: bf16 has
 * fp32's exponent range) has scale 1 and never skips.
 */
#ifndef HPT_AMP_H
#define HPT_AMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AMP_INIT_SCALE 65536.0
#define AMP_GROWTH_INTERVAL 2000
#define AMP_MIN_SCALE 1.0
#define AMP_MAX_SCALE 16777216.0 /* 2^24 */

struct amp_scaler {
	bool enabled;
	double scale;
	int64_t good_steps; /* clean steps since the last change of scale */
	int64_t interval;   /* AMP_GROWTH_INTERVAL; a field so tests can shorten it */
	int64_t skipped;    /* steps skipped in this process (not checkpointed) */
};

/* Enabled: scale AMP_INIT_SCALE; disabled: scale 1, a no-op scaler. */
void amp_init(struct amp_scaler *s, bool enabled);

/* g[0, n) *= scale * k: the loss gradient, before backward.  k carries
 * the gradient's other constant factor (data parallelism's 1/world), so
 * the loss gradient is touched once.  amp_factor is that factor, rounded
 * to float as amp_scale rounds it (for a loss gradient on the GPU). */
void amp_scale(const struct amp_scaler *s, float *g, size_t n, float k);
float amp_factor(const struct amp_scaler *s, float k);

/* g[0, n) /= scale; returns true when any element is inf or NaN (after
 * or before unscaling: the check is on the result).  Checks even when
 * disabled, so a diverging fp32 run is caught the same way. */
bool amp_unscale(const struct amp_scaler *s, float *g, size_t n);

/* Whether a forward whose loss is not finite is an overflow step: with
 * loss scaling (fp16) and the scale above AMP_MIN_SCALE, an inf or NaN
 * is taken for fp16 activations that overflowed (a GPU stores
 * convolution outputs as fp16), so the step goes on with a loss gradient
 * that is not finite either: every rank's amp_unscale then finds it
 * (after the allreduce), the step is skipped and the scale halves, as
 * for an overflow in backward.  False for a finite loss, and where only
 * divergence explains it: no scaler, or a scale at its floor (a forward
 * that overflows step after step halves it down to there). */
bool amp_forward_overflow(const struct amp_scaler *s, double loss);

/* Records the outcome of a step.  overflow: halve the scale (not below
 * AMP_MIN_SCALE), reset the count, return true = skip the update.
 * Else count the clean step, double the scale after interval of them
 * (not above AMP_MAX_SCALE), return false.  A disabled scaler returns
 * overflow unchanged and keeps scale 1. */
bool amp_update(struct amp_scaler *s, bool overflow);

#endif
