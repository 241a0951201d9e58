/* optim.h - SGD (momentum, Nesterov) and AdamW over the parameter arena,
 * with warm-up, cosine and step schedules and linear LR scaling.
 *
 * Core.  State (momentum, or Adam's two moments) is arena-shaped, so a
 * data-parallel run updates whole buckets and checkpoints store it as
 * vectors.  optim_update() takes an arena range: callers may update
 * bucket by bucket (data parallelism, comm.c) or all at once.  Arithmetic is fp32 in the
 * order PyTorch's torch.optim uses, so the fixtures compare tightly;
 * with mixed precision the arena stays the fp32 master copy.
 */
#ifndef HPT_OPTIM_H
#define HPT_OPTIM_H

#include <stddef.h>
#include <stdint.h>

struct job_optimizer;

struct optim {
	int name; /* enum optimizer_kind */
	double lr; /* after linear scaling */
	double momentum, weight_decay, beta1, beta2, eps;
	int nesterov;
	int schedule; /* enum lr_schedule */
	int64_t warmup_steps, total_steps, steps_per_epoch, step_epochs;
	double step_gamma;
	size_t n;
	float *m, *v; /* SGD: m = momentum buffer; AdamW: m, v moments */
	int64_t t;    /* updates applied (Adam's bias correction) */
};

/* scale = global batch / batch_per_rank: with lr_scaling linear the LR
 * is multiplied by it (the spec's lr is the one for batch_per_rank on
 * one rank).  The global batch, not the ranks: a run resumed on fewer
 * ranks that accumulates to the same global batch keeps its LR. */
int optim_init(struct optim *o, const struct job_optimizer *spec, size_t nparams,
	       int64_t steps_per_epoch, int64_t epochs, double scale);
void optim_release(struct optim *o);

/* The learning rate of update number step (0-based); pure. */
double optim_lr(const struct optim *o, int64_t step);

/* p[lo,hi) -= update(g[lo,hi)) at learning rate lr.  Call
 * optim_tick() once per step after all ranges were updated. */
void optim_update(struct optim *o, float *p, const float *g, size_t lo, size_t hi, double lr);
void optim_tick(struct optim *o);

/* Floats of state per parameter: 1 (SGD) or 2 (AdamW). */
int optim_state_vectors(const struct optim *o);

#endif
