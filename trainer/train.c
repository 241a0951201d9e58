/* train.c - the training loop of one rank: its steps, metrics and
 * checkpoints.  Shell: writes the run directory, reads clocks.  See
 * train.h for the hooks; the trainer is built in train_setup.c, the data
 * set opened in train_data.c, the model's passes on its device are
 * train_step.c's and the profile train_profile.c's. */
#include "trainer/train.h"         // defines: train_run, struct train_hooks
#include "common/say.h" // defines: say
#include "common/runfile.h" // defines: RUNFILE_*
#include "trainer/train_internal.h" // defines: struct trainer, train_step_*, train_data_open
#include "trainer/model/amp.h"           // defines: amp_scale, amp_unscale, amp_update
#include "trainer/cpu/backend.h"       // defines: be_alloc, backend_describe, be_tune_*
#include "trainer/cuda/backend_cuda.h"  // defines: be_cuda_describe
#include "trainer/model/ckpt.h"          // defines: ckpt_save, ckpt_load, ckpt_remove_all
#include "trainer/data/data.h"          // defines: struct dataset, struct loader
#include "trainer/metrics.h"       // defines: struct metrics
#include "trainer/model/model.h"         // defines: struct model
#include "trainer/cuda/model_cuda.h"    // defines: struct model_cuda, model_cuda_*
#include "trainer/model/optim.h"         // defines: struct optim
#include "trainer/model/rng.h"           // defines: rng_hash
#include "trainer/train_plan.h"    // defines: struct train_plan, train_plan_make
#include "common/exitcode.h"          // defines: HPT_EXIT_*
#include "common/fileio.h"            // defines: fileio_private_dir
#include "common/sbuf.h"              // defines: struct sbuf
#include "common/software.h"          // defines: software_record_add
#include "common/spec/spec.h"              // defines: struct job, spec_stage_dataset, spec_stage_find
#include "common/monoclock.h"  // defines: monoclock_s

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Removes earlier checkpoints (those of the trainer's naming, not a
 * user's copy beside them: ckpt_remove_all) and metrics for --fresh. */
static int start_fresh(struct trainer *t, const char *metrics, struct sbuf *err)
{
	int rc = ckpt_remove_all(t->ckpt_dir, err);

	if (!rc && unlink(metrics) && errno != ENOENT) {
		sbuf_addf(err, "cannot remove %s: %s", metrics, strerror(errno));
		rc = HPT_EXIT_IO;
	}
	return rc;
}

static int save(struct trainer *t, struct sbuf *err)
{
	if (t->cfg->rank) /* data parallel: rank 0 writes, the others wait (comm.c) */
		return 0;
	if (train_step_sync_to_host(t, err))
		return HPT_EXIT_INTERNAL;
	t->cs.world = t->cfg->world;
	t->cs.batch = t->tp.plan.batch;
	t->cs.accum = t->tp.plan.accum;
	t->cs.global_batch = t->tp.plan.global;
	t->cs.epoch = t->cs.step / t->ld.steps_per_epoch;
	t->cs.epoch_pos = t->cs.step % t->ld.steps_per_epoch * t->cs.global_batch;
	return ckpt_save(t->ckpt_dir, t->cfg->hash, &t->cs, &t->model, &t->opt,
			 (int)t->job->train.checkpoint.keep, err);
}

/* After a checkpoint loaded: its shape must be the one train_plan_make
 * read (else the file changed in between), and with a new global batch
 * the step is where the new batches reach the epoch's next sample:
 * position / new batch, rounded down, so up to G-1 samples of the
 * epoch come round again.  An older checkpoint (no shape) counted
 * steps of this run's global batch: nothing to convert.  The one line
 * on stderr says how a checkpoint of another shape goes on. */
static int take_position(struct trainer *t, const char *path, struct sbuf *err)
{
	struct sbuf line = SBUF_INIT;
	int64_t g = t->tp.plan.global;

	if (t->cs.global_batch != t->tp.ckpt_global) {
		sbuf_addf(err, "%s changed while it was read", path);
		return HPT_EXIT_NO_INPUT;
	}
	if (!t->cs.global_batch)
		t->cs.samples = t->cs.step * g;
	else if (t->cs.global_batch != g)
		t->cs.step = t->cs.epoch * t->ld.steps_per_epoch + t->cs.epoch_pos / g;
	train_plan_describe(&t->tp, t->cfg->world, &line);
	if (line.len)
		say("%s", line.buf);
	sbuf_release(&line);
	return 0;
}

static int open_run(struct trainer *t, struct sbuf *err)
{
	char *metrics = xasprintf("%s/" RUNFILE_METRICS, t->cfg->run_dir);
	const char *latest = t->tp.ckpt_path; /* train_plan_make's pick */
	double load_s = -1;
	int rc = 0;

	if (t->cfg->rank) { /* rank 0's state arrives by broadcast (hooks->on_start) */
		free(metrics);
		return 0;
	}
	t->ckpt_dir = xasprintf("%s/checkpoints", t->cfg->run_dir);
	if (fileio_private_dir(t->ckpt_dir, err)) { /* 0700; another user's is refused */
		rc = HPT_EXIT_IO;
	} else if (t->cfg->fresh) {
		rc = start_fresh(t, metrics, err);
	} else if (latest) {
		load_s = monoclock_s();
		rc = ckpt_load(latest, t->cfg->hash, &t->cs, &t->model, &t->opt, err);
		if (!rc)
			rc = take_position(t, latest, err);
		load_s = monoclock_s() - load_s;
		if (!rc && !t->cfg->quiet)
			say("resuming from %s (step %lld)", latest, (long long)t->cs.step);
	}
	if (!rc && metrics_open(&t->mt, metrics, t->cfg->quiet, t->total_steps, err))
		rc = HPT_EXIT_IO;
	/* the load's time, for a recovery's figures */
	if (!rc && load_s >= 0 && metrics_resume(&t->mt, t->cs.step, load_s))
		rc = HPT_EXIT_IO;
	free(metrics);
	return rc;
}

/* One step done: touch the file launch --supervise named, its sign of
 * progress (a stall is no rank touching it for stall_timeout_s). */
static void heartbeat(void)
{
	static const char *path;
	static int looked;

	if (!looked++)
		path = getenv("HPCTRAIN_HEARTBEAT");
	if (path && *path)
		utimensat(AT_FDCWD, path, NULL, 0);
}

/* Predictions per step over the global batch: one per sample, or one
 * per label of a multi-label loss; what accuracy and the epoch's sample
 * count use.  The same at any world size (record_step sums the ranks). */
static int64_t predictions_per_step(const struct trainer *t)
{
	return t->tp.plan.global * (t->model.loss == LOSS_MULTI ? t->model.outputs : 1);
}

/* Samples one rank computes per step. */
static int rank_samples(const struct trainer *t)
{
	return t->model.input.n * t->tp.plan.accum;
}

/* What one step leaves for the metrics. */
struct step_result {
	double loss, lr, seconds;
	int64_t correct;
	bool fwd_overflow; /* fp16: the forward overflowed, the step was skipped */
};

/* The last micro-step's backward under accumulation: each finished
 * range gets the earlier micro-steps' sum added before the hooks see it
 * (and start its allreduce), so overlap survives accumulation. */
struct acc_hook {
	const struct grad_hook *inner;
	const float *acc;
	float *grads;
};

static int acc_add_then_pass(void *ctx, size_t lo, size_t hi)
{
	struct acc_hook *h = ctx;

	for (size_t i = lo; i < hi; i++)
		h->grads[i] += h->acc[i];
	return h->inner->on_grad_ready ? h->inner->on_grad_ready(h->inner->ctx, lo, hi) : 0;
}

/* Micro-step micro of step: batch, forward, loss, backward.  Under
 * accumulation the loss gradient is scaled by 1/(world*accum), so the
 * sum over micro-steps and ranks is the mean over the global batch; the
 * earlier micro-steps' gradients add up in t->acc, outside the hooks. */
static int micro_step(struct trainer *t, struct grad_hook *gh, int64_t step, int micro,
		      struct step_result *r, struct sbuf *err)
{
	const struct job *job = t->job;
	int64_t spe = t->ld.steps_per_epoch;
	int accum = t->tp.plan.accum;
	uint64_t key = rng_hash((uint64_t)job->train.seed, (uint64_t)step);
	struct grad_hook none = { NULL, NULL }, last = *gh;
	struct acc_hook ah = { gh, t->acc, t->model.grads };
	double loss;
	int64_t correct;
	bool ovf;

	double t0 = monoclock_s();

	loader_micro_batch(&t->ld, step / spe, step % spe, micro, t->x, t->labels, t->targets);
	t->prof.data_s += monoclock_s() - t0;
	/* dropout: micro-step 0 keeps the key a run without accumulation had */
	if (train_step_forward(t, true, micro ? rng_hash(key, (uint64_t)micro) : key, err))
		return HPT_EXIT_INTERNAL;
	t0 = monoclock_s();
	if (train_step_loss(t, &loss, &correct, err))
		return HPT_EXIT_INTERNAL;
	t->prof.loss_s += monoclock_s() - t0;
	ovf = amp_forward_overflow(&t->cs.scaler, loss);
	if (!isfinite(loss) && !ovf) {
		sbuf_addf(err, "step %lld: the loss is %s (lr %.4g); the run diverged, "
			  "lower train.optimizer.lr",
			  (long long)step + 1, isnan(loss) ? "NaN" : "infinite", r->lr);
		return HPT_EXIT_FAILURE;
	}
	r->loss += loss / accum;
	r->correct += correct;
	r->fwd_overflow |= ovf;
	if (accum > 1 && micro + 1 == accum)
		last = (struct grad_hook){ acc_add_then_pass, &ah };
	/* Loss scaling (fp16): scale the loss gradient before backward;
	 * unscale after before_update, which in data-parallel runs has
	 * waited for the gradient allreduce, so every rank checks the
	 * same averaged gradients and skips the same steps. */
	t0 = monoclock_s();
	if (train_step_scale(t, ovf, err))
		return HPT_EXIT_INTERNAL;
	t->prof.loss_s += monoclock_s() - t0;
	if (train_step_backward(t, micro + 1 < accum ? &none : &last, err))
		return HPT_EXIT_INTERNAL;
	if (micro + 1 < accum) {
		/* O(parameters) per micro-step: small beside its backward */
		if (!micro)
			memcpy(t->acc, t->model.grads, t->model.narena * sizeof(float));
		else
			for (size_t i = 0; i < t->model.narena; i++)
				t->acc[i] += t->model.grads[i];
	}
	return HPT_EXIT_OK;
}

/* Step number step: its micro-steps, the hooks (the allreduce),
 * unscale, update.  0 or a status with err. */
static int one_step(struct trainer *t, const struct train_hooks *hooks, struct grad_hook *gh,
		    int64_t step, struct step_result *r, struct sbuf *err)
{
	double t0 = monoclock_s(), t1, t2;
	int skip = 0, overflow, st;

	memset(r, 0, sizeof(*r));
	r->lr = optim_lr(&t->opt, step);
	for (int a = 0; a < t->tp.plan.accum; a++)
		if ((st = micro_step(t, gh, step, a, r, err)))
			return st;
	t1 = monoclock_s();
	if (hooks && hooks->before_update && (skip = hooks->before_update(hooks->ctx, t)) < 0)
		return HPT_EXIT_INTERNAL;
	t2 = monoclock_s();
	t->prof.wait_s += t2 - t1;
	if ((overflow = train_step_unscale(t, err)) < 0)
		return HPT_EXIT_INTERNAL;
	if (!skip && !overflow && train_step_update(t, r->lr, err))
		return HPT_EXIT_INTERNAL;
	if (hooks && hooks->after_update && hooks->after_update(hooks->ctx, t))
		return HPT_EXIT_INTERNAL;
	t->prof.update_s += monoclock_s() - t2;
	r->seconds = monoclock_s() - t0;
	t->cs.samples += t->tp.plan.global;
	if ((t->mt.gpu = t->dev != NULL))
		model_cuda_step_times(t->dev, &t->mt.copy_ms, &t->mt.sync_ms);
	return HPT_EXIT_OK;
}

/* Adds the step to the epoch's sums and logs it every log_every_steps.
 * A skipped step has no loss to count or log. */
static int record_step(struct trainer *t, const struct train_hooks *hooks, int64_t step,
		       const struct step_result *r, struct sbuf *err)
{
	int64_t per = predictions_per_step(t), every = t->job->output.log_every_steps;
	int64_t spe = t->ld.steps_per_epoch;
	int b = rank_samples(t);
	/* the same on every rank, so the hook may be a collective */
	bool logged = !((step + 1) % every) || step + 1 == t->stop_step;
	/* the global batch's loss and right predictions: the same figures at
	 * any world size (2 doubles a step, on the control communicator) */
	double v[2] = { r->loss, (double)r->correct };

	if (t->cfg->world > 1 && hooks && hooks->sum) {
		if (hooks->sum(hooks->ctx, v, 2)) {
			sbuf_addf(err, "step %lld: summing the ranks' losses failed", (long long)step + 1);
			return HPT_EXIT_INTERNAL;
		}
		v[0] /= t->cfg->world;
	}
	if (logged && hooks && hooks->on_log && hooks->on_log(hooks->ctx, t, b / r->seconds)) {
		sbuf_addf(err, "step %lld: gathering the ranks' rates failed", (long long)step + 1);
		return HPT_EXIT_INTERNAL;
	}
	if (r->fwd_overflow)
		return HPT_EXIT_OK;
	t->cs.epoch_loss += v[0];
	t->cs.epoch_correct += (int64_t)v[1];
	t->cs.epoch_seen += per;
	if (!logged)
		return HPT_EXIT_OK;
	if (!t->cfg->rank) /* O(global batch), at logged steps only */
		t->mt.batch_hash = loader_batch_hash(&t->ld, step / spe, step % spe);
	if (metrics_step(&t->mt, step + 1, step / spe, v[0], v[1] / per, r->lr, b / r->seconds,
			 r->seconds * 1e3, true)) {
		sbuf_addf(err, "cannot write %s/" RUNFILE_METRICS, t->cfg->run_dir);
		return HPT_EXIT_IO;
	}
	return HPT_EXIT_OK;
}

/* The epoch that step completes: evaluate, log, reset the sums. */
static int end_epoch(struct trainer *t, int64_t step, double *epoch_busy, struct sbuf *err)
{
	int64_t steps_in = t->cs.epoch_seen / predictions_per_step(t);
	int b = rank_samples(t);
	double tl, ta;

	if (train_step_evaluate(t, &tl, &ta, err))
		return HPT_EXIT_INTERNAL;
	if (metrics_epoch(&t->mt, step / t->ld.steps_per_epoch + 1, step + 1,
			  t->cs.epoch_loss / steps_in, (double)t->cs.epoch_correct / t->cs.epoch_seen,
			  tl, ta, *epoch_busy > 0 ? b * (double)steps_in / *epoch_busy : 0)) {
		sbuf_addf(err, "cannot write %s/" RUNFILE_METRICS, t->cfg->run_dir);
		return HPT_EXIT_IO;
	}
	t->cs.epoch_loss = 0;
	t->cs.epoch_correct = t->cs.epoch_seen = 0;
	*epoch_busy = 0;
	return HPT_EXIT_OK;
}

/* Steps until stop_step, a failure, or the hooks' stop (preemption:
 * a checkpoint, then HPT_EXIT_PREEMPTED).  busy and trained add up the
 * time in steps and the steps run. */
static int train_steps(struct trainer *t, const struct train_hooks *hooks, double *busy,
		       int64_t *trained, struct sbuf *err)
{
	const struct job *job = t->job;
	struct grad_hook gh = { hooks ? hooks->on_grad_ready : NULL, hooks ? hooks->ctx : NULL };
	int64_t every_ckpt = job->train.checkpoint.every_steps;
	double epoch_busy = 0;
	int st;

	for (; t->cs.step < t->stop_step; t->cs.step++) {
		int64_t step = t->cs.step;
		struct step_result r;

		train_profile_step_begins(t, step);
		if ((st = one_step(t, hooks, &gh, step, &r, err)))
			return st;
		train_profile_step_ends(t, step, r.seconds);
		if (hooks && hooks->on_step_time &&
		    hooks->on_step_time(hooks->ctx, t, step + 1, r.seconds)) {
			sbuf_addf(err, "step %lld: comparing the ranks' step times failed",
				  (long long)step + 1);
			return HPT_EXIT_INTERNAL;
		}
		*busy += r.seconds;
		epoch_busy += r.seconds;
		++*trained;
		if ((st = record_step(t, hooks, step, &r, err)))
			return st;
		if ((step + 1) % t->ld.steps_per_epoch == 0 && (st = end_epoch(t, step, &epoch_busy, err)))
			return st;
		/* checkpoints hold the number of steps done, so step + 1 */
		if (every_ckpt && (step + 1) % every_ckpt == 0) {
			t->cs.step++;
			if (save(t, err))
				return HPT_EXIT_IO;
			t->cs.step--;
		}
		heartbeat();
		if (hooks && hooks->should_stop && hooks->should_stop(hooks->ctx, t)) {
			t->cs.step++;
			return save(t, err) ? HPT_EXIT_IO : HPT_EXIT_PREEMPTED;
		}
	}
	return 0;
}

/* The run's one header line: model, data, steps, precision, and the
 * kernels each layer really runs (oneDNN's implementation names, and
 * which layers keep fp32 or emulate the precision, and why). */
static void print_header(const struct trainer *t)
{
	struct sbuf kernels = SBUF_INIT, accum = SBUF_INIT;

	if (t->tp.plan.accum > 1)
		sbuf_addf(&accum, " x %d accumulated", t->tp.plan.accum);
	if (!t->dev)
		model_describe_kernels(&t->model, &kernels);
	say("%s on %s (%lld samples, %dx%dx%d), %zu parameters, "
		"%lld steps of %d%s, %s; %s%s%s",
		train_model_names[t->job->train.model], t->job->train.dataset,
		(long long)t->train.n, t->train.h, t->train.w, t->train.c, t->model.nparams,
		(long long)t->total_steps, t->model.input.n, accum.len ? accum.buf : "",
		train_precision_names[t->job->train.precision],
		t->dev ? be_cuda_describe() : backend_describe(), kernels.len ? "; kernels: " : "",
		kernels.len ? kernels.buf : "");
	sbuf_release(&kernels);
	sbuf_release(&accum);
}

/* Rank 0 adds the trainer's library, instruction set and kernels to
 * the run's software record, where `hpctrain diff` reads them.  A
 * record that cannot be written costs a warning, not the run. */
static void record_software(const struct trainer *t)
{
	struct sbuf kernels = SBUF_INIT, err = SBUF_INIT;
	json_t *fields;

	if (!t->dev)
		model_describe_kernels(&t->model, &kernels);
	fields = t->dev ? json_pack("{s:s}", "kernels", be_cuda_describe())
			: json_pack("{s:s, s:s, s:s}", "onednn", backend_onednn_version(), "isa",
				    backend_isa(), "kernels", kernels.buf ? kernels.buf : "");
	if (software_record_add(t->cfg->run_dir, fields, &err))
		say("warning: the trainer's software was not recorded: %s", err.buf);
	sbuf_release(&kernels);
	sbuf_release(&err);
}

int train_run(const struct train_config *cfg, const struct train_hooks *hooks,
	      struct sbuf *err)
{
	struct trainer t = { 0 };
	double busy = 0, tl = 0, ta = 0;
	int64_t trained = 0, start;
	int rc;

	t.cfg = cfg;
	t.job = cfg->job;
	t.grad_factor = 1.0f;
	rc = train_plan_make(cfg, hooks, &t.tp, err);
	if (!rc)
		rc = train_setup(&t, hooks, err);
	if (!rc)
		rc = open_run(&t, err);
	if (!rc && t.data_path &&
	    metrics_data(&t.mt, t.job->train.dataset, t.data_path, t.data_staged,
			 t.train.bytes_read + t.test.bytes_read, t.data_s)) {
		sbuf_addf(err, "cannot write %s/" RUNFILE_METRICS, cfg->run_dir);
		rc = HPT_EXIT_IO;
	}
	if (!rc && hooks && hooks->on_start && hooks->on_start(hooks->ctx, &t)) {
		sbuf_addstr(err, "cannot start data-parallel training: out of memory");
		rc = HPT_EXIT_INTERNAL;
	}
	/* the device gets the state rank 0 loaded and broadcast */
	if (!rc && t.dev && model_cuda_upload(t.dev, &t.opt, err))
		rc = HPT_EXIT_INTERNAL;
	if (rc)
		goto out;
	start = t.cs.step;
	if (!cfg->quiet && !cfg->rank)
		print_header(&t);
	if (!cfg->rank)
		record_software(&t);
	train_profile_plan(&t, start);
	rc = train_steps(&t, hooks, &busy, &trained, err);
	if (!rc && train_profile_write(&t)) {
		sbuf_addf(err, "cannot write %s/" RUNFILE_METRICS, cfg->run_dir);
		rc = HPT_EXIT_IO;
	}
	if (rc)
		goto out;
	if (t.cs.step > start && save(&t, err)) {
		rc = HPT_EXIT_IO;
		goto out;
	}
	if (train_step_evaluate(&t, &tl, &ta, err)) {
		rc = HPT_EXIT_INTERNAL;
		goto out;
	}
	{
		double sps = busy > 0 ? trained * rank_samples(&t) / busy : 0;
		double gf = sps * model_train_flops_per_sample(&t.model) * 1e-9;

		if (metrics_summary(&t.mt, t.cs.step, t.cs.step / t.ld.steps_per_epoch, tl, ta, sps, gf)) {
			sbuf_addf(err, "cannot write %s/" RUNFILE_METRICS, cfg->run_dir);
			rc = HPT_EXIT_IO;
			goto out;
		}
		if (!cfg->rank)
			printf("test accuracy %.4f, test loss %.4f after %lld steps (%.2f epochs); "
			       "%.0f samples/s, %.1f GFLOP/s; run %s\n",
			       ta, tl, (long long)t.cs.step, (double)t.cs.step / t.ld.steps_per_epoch,
			       sps, gf, cfg->run_dir);
	}
out:
	train_release(&t);
	return rc;
}

void train_average_gradients_over(struct trainer *t, int world)
{
	t->grad_factor = 1.0f / (float)world;
}

struct model *train_get_model(struct trainer *t)
{
	return &t->model;
}

struct optim *train_get_optim(struct trainer *t)
{
	return &t->opt;
}

struct ckpt_state *train_get_ckpt_state(struct trainer *t)
{
	return &t->cs;
}

struct metrics *train_get_metrics(struct trainer *t)
{
	return &t->mt;
}

struct model_cuda *train_get_model_cuda(struct trainer *t)
{
	return t->dev;
}
