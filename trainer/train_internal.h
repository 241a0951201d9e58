/* train_internal.h - one rank's trainer, shared by the files of the
 * training loop: train.c (the loop), train_data.c (the data set opened)
 * and train_step.c (the model's passes on its device).  Not for any
 * other part: train.h is the trainer's interface. */
#ifndef HPT_TRAIN_INTERNAL_H
#define HPT_TRAIN_INTERNAL_H

#include "trainer/model/ckpt.h"          // defines: struct ckpt_state
#include "trainer/data/data.h"          // defines: struct dataset, struct loader
#include "trainer/metrics.h"       // defines: struct metrics, struct step_profile
#include "trainer/model/model.h"         // defines: struct model, struct grad_hook
#include "trainer/cuda/model_cuda.h"    // defines: struct model_cuda
#include "trainer/model/optim.h"         // defines: struct optim
#include "trainer/train.h"         // defines: struct train_config
#include "trainer/train_plan.h"    // defines: struct train_plan

#include <stdbool.h>
#include <stdint.h>

struct job;
struct sbuf;


struct trainer {
	const struct train_config *cfg;
	const struct job *job;
	struct model model;
	struct model_cuda *dev; /* the model's GPU mirror; NULL: the CPU computes */
	struct optim opt;
	struct dataset train, test;
	struct loader ld;
	struct train_plan tp; /* global batch, per-rank batch, accumulation steps */
	float *acc;           /* accum > 1: the earlier micro-steps' gradient sum */
	float *x;
	int32_t *labels;
	float *targets;
	int64_t total_steps, stop_step;
	struct ckpt_state cs;
	struct metrics mt;
	char *ckpt_dir;
	float grad_factor; /* 1/world under data parallelism (train_average_gradients_over) */
	/* a stored data set's read, for metrics.jsonl's "data" record */
	const char *data_path; /* what was read; NULL: a generated set */
	bool data_staged;      /* the node's staged copy (HPCTRAIN_DATA_<NAME>) */
	double data_s;         /* seconds spent loading it */
	struct step_profile prof;
};

/* Builds t for its config (t->cfg, t->job, t->tp set): data, model,
 * loader, optimizer and buffers; with hooks, every rank's model runs
 * rank 0's kernels.  0 or an HPT_EXIT_* status with err.  Release frees
 * what setup made, also after it failed half-way (train_setup.c). */
int train_setup(struct trainer *t, const struct train_hooks *hooks, struct sbuf *err);
void train_release(struct trainer *t);

/* The profile (train_profile.c): it leaves out the first tenth of the
 * steps this run trains from start (at most 20: first-touch memory, the
 * caches, a CPU's clock ramp); a step's begin zeroes every timer when
 * the profiled steps start; its end counts it; write gives rank 0's
 * "profile" record on the CPU (the GPU's layers run elsewhere).  0, or
 * -1 when the record cannot be written. */
void train_profile_plan(struct trainer *t, int64_t start);
void train_profile_step_begins(struct trainer *t, int64_t step);
void train_profile_step_ends(struct trainer *t, int64_t step, double seconds);
int train_profile_write(struct trainer *t);

/* The spec's data set into t->train and t->test (fashion-mnist, a
 * generated one, a staged entry or a directory of shards), timed into
 * t->data_s for metrics.jsonl's "data" record.  0 or an HPT_EXIT_*
 * status with err. */
int train_data_open(struct trainer *t, struct sbuf *err);

/* The model's passes where it computes: the CPU (model.h) or the GPU
 * (model_cuda.h); these are the only places that choose.  0, or -1 with
 * err (train_step_unscale: 1 for an overflow, skip the update). */
int train_step_forward(struct trainer *t, bool train, uint64_t key, struct sbuf *err);
int train_step_loss(struct trainer *t, double *loss, int64_t *correct, struct sbuf *err);
int train_step_scale(struct trainer *t, bool poison, struct sbuf *err);
int train_step_backward(struct trainer *t, const struct grad_hook *gh, struct sbuf *err);
int train_step_unscale(struct trainer *t, struct sbuf *err);
int train_step_update(struct trainer *t, double lr, struct sbuf *err);
int train_step_sync_to_host(struct trainer *t, struct sbuf *err);
/* The test set's loss and accuracy. */
int train_step_evaluate(struct trainer *t, double *loss, double *acc, struct sbuf *err);

#endif
