/* train_setup.c - one rank's trainer built and released: the data set,
 * the model (with rank 0's kernels on every rank), the loader, the
 * optimizer and the step's buffers (train_internal.h train_setup,
 * train_release).  Shell: through the data and the backend it reads
 * files and plans kernels. */
#include "trainer/train_internal.h" // defines: struct trainer, train_data_open
#include "trainer/model/amp.h"           // defines: amp_init
#include "trainer/cpu/backend.h"       // defines: be_alloc, be_free, be_tune_export, be_tune_adopt
#include "trainer/data/data.h"          // defines: struct dataset, loader_*
#include "trainer/model/model.h"         // defines: model_build, model_init, model_release
#include "trainer/cuda/model_cuda.h"    // defines: model_cuda_create, model_cuda_free
#include "trainer/model/optim.h"         // defines: optim_init, optim_release
#include "trainer/train.h"         // defines: struct train_hooks
#include "trainer/train_plan.h"    // defines: struct train_plan
#include "common/exitcode.h"       // defines: HPT_EXIT_*
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/spec/spec.h"      // defines: struct job, train_model_names

#include <stdlib.h>

static int outputs_of(const struct dataset *d)
{
	return d->loss == LOSS_XENT ? d->classes : d->loss == LOSS_BCE ? 1 : d->label_dim;
}

static int model_of_job(struct trainer *t, struct shape in, struct sbuf *err)
{
	const struct job_train *tr = &t->job->train;

	if (model_build(&t->model, tr->model, in, outputs_of(&t->train), t->train.loss,
			tr->precision == PRECISION_BF16   ? BE_BF16
			: tr->precision == PRECISION_FP16 ? BE_FP16
							  : BE_FP32,
			err)) {
		sbuf_addf(err, " (model %s, data %dx%dx%d)", train_model_names[tr->model],
			  t->train.h, t->train.w, t->train.c);
		return HPT_EXIT_BAD_SPEC;
	}
	return 0;
}

/* Builds the model so that every rank runs rank 0's kernels: rank 0
 * builds first, choosing them by measurement (backend.h be_tune_*), and
 * shares its choices; the others take them, then build.  Rank 0 shares
 * even when its build failed (nothing then), so no rank waits forever. */
static int build_model(struct trainer *t, const struct train_hooks *hooks, struct shape in,
		       struct sbuf *err)
{
	struct sbuf choices = SBUF_INIT;
	int st = 0;

	if (!hooks || !hooks->share_text || t->cfg->world < 2)
		return model_of_job(t, in, err);
	if (!t->cfg->rank) {
		st = model_of_job(t, in, err);
		if (!st)
			be_tune_export(&choices);
	}
	if (hooks->share_text(hooks->ctx, &choices)) {
		sbuf_release(&choices);
		if (!st)
			sbuf_addstr(err, "cannot share rank 0's kernel choices among the ranks");
		return st ? st : HPT_EXIT_INTERNAL;
	}
	if (t->cfg->rank) {
		be_tune_adopt(choices.buf);
		st = model_of_job(t, in, err);
	}
	sbuf_release(&choices);
	return st;
}

int train_setup(struct trainer *t, const struct train_hooks *hooks, struct sbuf *err)
{
	const struct job_train *tr = &t->job->train;
	struct shape in;
	size_t per;
	int st;

	/* Only fp16 needs a loss scaler: bf16 has fp32's exponent range. */
	amp_init(&t->cs.scaler, tr->precision == PRECISION_FP16);
	st = train_data_open(t, err);
	if (st)
		return st;
	in = (struct shape){ t->tp.plan.batch, t->train.h, t->train.w, t->train.c };
	st = build_model(t, hooks, in, err);
	if (st)
		return st;
	model_init(&t->model, (uint64_t)tr->seed);
	if (loader_init(&t->ld, &t->train, t->tp.plan.batch, t->cfg->rank, t->cfg->world,
			(uint64_t)tr->seed, err) ||
	    loader_set_accum(&t->ld, t->tp.plan.accum, err))
		return HPT_EXIT_BAD_SPEC;
	t->total_steps = t->ld.steps_per_epoch * tr->epochs;
	if (tr->max_steps && tr->max_steps < t->total_steps)
		t->total_steps = tr->max_steps;
	t->stop_step = t->total_steps;
	if (t->cfg->max_steps && t->cfg->max_steps < t->stop_step)
		t->stop_step = t->cfg->max_steps;
	/* lr_scaling follows the global batch, whatever the ranks */
	if (optim_init(&t->opt, &tr->optimizer, t->model.narena, t->ld.steps_per_epoch, tr->epochs,
		       (double)t->tp.plan.global / (double)tr->batch_per_rank)) {
		sbuf_addstr(err, "out of memory");
		return HPT_EXIT_INTERNAL;
	}
	per = (size_t)in.h * in.w * in.c;
	t->x = be_alloc(per * in.n);
	t->labels = calloc(in.n, sizeof(*t->labels));
	t->targets = be_alloc((size_t)in.n * outputs_of(&t->train));
	if (t->tp.plan.accum > 1)
		t->acc = be_alloc(t->model.narena * sizeof(float));
	if (!t->x || !t->labels || !t->targets || (t->tp.plan.accum > 1 && !t->acc)) {
		sbuf_addstr(err, "out of memory");
		return HPT_EXIT_INTERNAL;
	}
	if (t->cfg->cuda && t->tp.plan.accum > 1) {
		sbuf_addf(err, "gradient accumulation (%d steps of %d, to hold global batch %lld) "
			  "runs on the CPU only; resume on more GPUs or with --new-global-batch",
			  t->tp.plan.accum, t->tp.plan.batch, (long long)t->tp.plan.global);
		return HPT_EXIT_BAD_SPEC;
	}
	if (t->cfg->cuda && !(t->dev = model_cuda_create(&t->model, &t->opt, err))) {
		sbuf_addf(err, " (model %s, %s, on the GPU)", train_model_names[tr->model],
			  train_precision_names[tr->precision]);
		return HPT_EXIT_BAD_SPEC;
	}
	return 0;
}

void train_release(struct trainer *t)
{
	model_cuda_free(t->dev);
	model_release(&t->model);
	optim_release(&t->opt);
	loader_release(&t->ld);
	dataset_release(&t->train);
	dataset_release(&t->test);
	be_free(t->x);
	be_free(t->acc);
	free(t->labels);
	be_free(t->targets);
	free(t->ckpt_dir);
	train_plan_release(&t->tp);
	metrics_close(&t->mt);
}
