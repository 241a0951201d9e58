/* amp.c - the dynamic loss scaler (see amp.h).  Pure core.
 *
 * Budget: amp_scale touches |logits| floats, amp_unscale 4*nparams bytes
 * read and written once per step; both are memory-bound and small beside
 * a backward pass (cnn: 0.4 M parameters, 1.7 MB, against 2 GFLOP). */
#include "trainer/model/amp.h" // defines: struct amp_scaler, amp_*

#include <math.h>

void amp_init(struct amp_scaler *s, bool enabled)
{
	s->enabled = enabled;
	s->scale = enabled ? AMP_INIT_SCALE : 1.0;
	s->good_steps = 0;
	s->interval = AMP_GROWTH_INTERVAL;
	s->skipped = 0;
}

float amp_factor(const struct amp_scaler *s, float k)
{
	return s->enabled ? k * (float)s->scale : k;
}

void amp_scale(const struct amp_scaler *s, float *g, size_t n, float k)
{
	k = amp_factor(s, k);
	if (k == 1.0f)
		return;
	for (size_t i = 0; i < n; i++)
		g[i] *= k;
}

bool amp_unscale(const struct amp_scaler *s, float *g, size_t n)
{
	float inv = (float)(1.0 / s->scale); /* exact: scale is a power of two */
	int bad = 0;

	/* One pass, no early exit: the loop vectorises, and every rank
	 * leaves its gradients in the same state. */
	if (s->enabled && inv != 1.0f)
		for (size_t i = 0; i < n; i++)
			g[i] *= inv;
	for (size_t i = 0; i < n; i++)
		bad |= !isfinite(g[i]);
	return bad;
}

bool amp_forward_overflow(const struct amp_scaler *s, double loss)
{
	return !isfinite(loss) && s->enabled && s->scale > AMP_MIN_SCALE;
}

bool amp_update(struct amp_scaler *s, bool overflow)
{
	if (!s->enabled)
		return overflow;
	if (overflow) {
		s->scale = s->scale / 2 < AMP_MIN_SCALE ? AMP_MIN_SCALE : s->scale / 2;
		s->good_steps = 0;
		s->skipped++;
		return true;
	}
	if (++s->good_steps >= s->interval) {
		s->scale = s->scale * 2 > AMP_MAX_SCALE ? AMP_MAX_SCALE : s->scale * 2;
		s->good_steps = 0;
	}
	return false;
}
