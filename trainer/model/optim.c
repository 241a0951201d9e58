/* optim.c - SGD with momentum/Nesterov, AdamW, and LR schedules.  Core. */
#include "trainer/model/optim.h"  // defines: struct optim, optim_*
#include "trainer/cpu/backend.h" // defines: be_alloc, be_free
#include "common/spec/spec.h"        // defines: struct job_optimizer, enum optimizer_kind, enum lr_schedule

#include <math.h>
#include <string.h>

int optim_init(struct optim *o, const struct job_optimizer *spec, size_t nparams,
	       int64_t steps_per_epoch, int64_t epochs, double scale)
{
	memset(o, 0, sizeof(*o));
	o->name = spec->name;
	o->lr = spec->lr * (spec->lr_scaling == LR_SCALING_LINEAR ? scale : 1);
	o->momentum = spec->momentum;
	o->weight_decay = spec->weight_decay;
	o->beta1 = spec->beta1;
	o->beta2 = spec->beta2;
	o->eps = spec->eps;
	o->nesterov = spec->nesterov;
	o->schedule = spec->schedule;
	o->steps_per_epoch = steps_per_epoch;
	o->total_steps = steps_per_epoch * epochs;
	o->warmup_steps = (int64_t)llround(spec->warmup_epochs * steps_per_epoch);
	o->step_epochs = spec->step_epochs;
	o->step_gamma = spec->step_gamma;
	o->n = nparams;
	o->m = be_alloc(nparams);
	o->v = o->name == OPTIMIZER_ADAMW ? be_alloc(nparams) : NULL;
	return o->m && (o->v || o->name != OPTIMIZER_ADAMW) ? 0 : -1;
}

void optim_release(struct optim *o)
{
	be_free(o->m);
	be_free(o->v);
	memset(o, 0, sizeof(*o));
}

int optim_state_vectors(const struct optim *o)
{
	return o->name == OPTIMIZER_ADAMW ? 2 : 1;
}

double optim_lr(const struct optim *o, int64_t step)
{
	double lr = o->lr;

	if (step < o->warmup_steps)
		return lr * (double)(step + 1) / (double)o->warmup_steps;
	switch (o->schedule) {
	case SCHEDULE_COSINE: {
		double span = (double)(o->total_steps - o->warmup_steps);
		double t = span > 0 ? (double)(step - o->warmup_steps) / span : 1.0;

		return lr * 0.5 * (1.0 + cos(M_PI * (t > 1 ? 1 : t)));
	}
	case SCHEDULE_STEP:
		return lr * pow(o->step_gamma,
				(double)(step / o->steps_per_epoch / (o->step_epochs ? o->step_epochs : 1)));
	default:
		return lr;
	}
}

/* torch.optim.SGD: d = g + wd p; buf = mu buf + d; d = nesterov ? d + mu buf : buf;
 * p -= lr d.  torch.optim.AdamW: p *= 1 - lr wd; m, v moments; p -= lr mhat /
 * (sqrt(vhat) + eps).  Memory-bound: 3-4 arena-sized streams. */
void optim_update(struct optim *o, float *p, const float *g, size_t lo, size_t hi, double lr)
{
	float flr = (float)lr, wd = (float)o->weight_decay, mu = (float)o->momentum;

	if (o->name == OPTIMIZER_ADAMW) {
		float b1 = (float)o->beta1, b2 = (float)o->beta2, eps = (float)o->eps;
		double t = (double)(o->t + 1);
		float bc1 = (float)(1.0 - pow(o->beta1, t));
		float bc2s = (float)sqrt(1.0 - pow(o->beta2, t));
		float decay = 1.0f - flr * wd;

#pragma omp parallel for schedule(static) if (hi - lo > 65536)
		for (size_t i = lo; i < hi; i++) {
			float gi = g[i];

			p[i] *= decay;
			o->m[i] = b1 * o->m[i] + (1.0f - b1) * gi;
			o->v[i] = b2 * o->v[i] + (1.0f - b2) * gi * gi;
			p[i] -= flr / bc1 * (o->m[i] / (sqrtf(o->v[i]) / bc2s + eps));
		}
		return;
	}
#pragma omp parallel for schedule(static) if (hi - lo > 65536)
	for (size_t i = lo; i < hi; i++) {
		float d = g[i];

		if (wd != 0.0f)
			d += wd * p[i];
		if (mu != 0.0f) {
			o->m[i] = mu * o->m[i] + d;
			d = o->nesterov ? d + mu * o->m[i] : o->m[i];
		}
		p[i] -= flr * d;
	}
}

void optim_tick(struct optim *o)
{
	o->t++;
}
