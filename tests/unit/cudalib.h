/* cudalib.h - what the CUDA tests share: skipping without a GPU, device
 * copies, scaled comparisons, and the harness that trains one model on
 * the CPU and on the GPU side by side (struct side, check_training).
 *
 * Bounds of training (check_training): both sides start from the same
 * parameters and see the same batches and dropout keys.  At the first
 * step the logits must agree to the single-op bound (fp32: 1e-5 of the
 * largest logit) and, at fp32, every gradient to 1e-4 of the largest
 * (reductions sum in other orders).  Later steps compare the losses
 * (fp32: 1e-3 relative over 10 to 20 steps of SGD or AdamW: rounding
 * differences of 1e-6 grow with every update), evaluation-mode logits
 * and, at the end, parameters and batch-norm statistics to the same
 * 1e-3 of their largest magnitude (2e-3 over 50 steps).  bf16/fp16
 * compare against the CPU at the same precision (both keep convolutions
 * of fewer than 16 input channels fp32): first-step logits 2e-2 (bf16,
 * unit roundoff 2^-8) and 1e-2 (fp16), losses 5e-2 and 3e-2, or
 * LP_SPREAD_FACTOR times the CPU's own spread, below.
 * Stated from the arithmetic, then run on an H200 (cuDNN 9.19, driver
 * 580): every figure is printed, one line per model and precision, and
 * the largest seen at fp32 were 1.4e-6 (first logits), 1.1e-6 (first
 * gradients), 3e-5 (hepcnn's losses, 50 steps of AdamW). */
#ifndef HPT_CUDALIB_H
#define HPT_CUDALIB_H

#include "tests/unit/trainlib.h"
#include "trainer/cpu/backend.h"
#include "trainer/cuda/backend_cuda.h"
#include "trainer/data/data.h"
#include "trainer/kernels/kernels.h"
#include "trainer/model/model.h"
#include "trainer/cuda/model_cuda.h"
#include "trainer/model/optim.h"
#include "trainer/model/amp.h"
#include "common/sbuf.h"
#include "common/spec/spec.h"

static inline bool have_gpu(void)
{
	static int n = -1;

	if (n < 0)
		n = be_cuda_device_count();
	if (!n)
		print_message("skipped: no GPU\n");
	return n > 0;
}

#ifdef HAVE_CUDA
static float *dev_copy(const float *h, size_t n)
{
	struct sbuf err = SBUF_INIT;
	float *d = be_cuda_alloc(n);

	assert_non_null(d);
	assert_int_equal(be_cuda_upload(d, h, n, &err), 0);
	sbuf_release(&err);
	return d;
}

static float *host_copy(const float *d, size_t n)
{
	struct sbuf err = SBUF_INIT;
	float *h = malloc(n * 4);

	assert_int_equal(be_cuda_download(h, d, n, &err), 0);
	sbuf_release(&err);
	return h;
}

/* The largest difference between a and ref over ref's largest
 * magnitude (over 1 when ref is all zeros); *at: where it is. */
static inline double scaled_error(const float *a, const float *ref, size_t n, size_t *at)
{
	double top = 0, most = 0;

	*at = 0;
	for (size_t i = 0; i < n; i++)
		top = fabs(ref[i]) > top ? fabs(ref[i]) : top;
	for (size_t i = 0; i < n; i++)
		if (!(fabs(a[i] - ref[i]) <= most)) {
			most = fabs(a[i] - ref[i]);
			*at = i;
		}
	return most / (top > 0 ? top : 1);
}

static inline void check_scaled(const float *a, const float *ref, size_t n, double bound)
{
	size_t at;
	double e = scaled_error(a, ref, n, &at);

	if (!(e <= bound))
		fail_msg("[%zu] = %.9g, expected %.9g: off by %.3g of the largest magnitude "
			 "(bound %.0e)", at, a[at], ref[at], e, bound);
}

/* ---- the device model against the CPU model ---- */

static const struct job_optimizer sgd_nesterov = {
	.name = OPTIMIZER_SGD, .lr = 0.05, .momentum = 0.9, .nesterov = true, .weight_decay = 1e-4,
	.schedule = SCHEDULE_CONSTANT, .step_epochs = 1, .step_gamma = 0.1,
};
static const struct job_optimizer sgd_plain = {
	.name = OPTIMIZER_SGD, .lr = 0.1, .schedule = SCHEDULE_CONSTANT, .step_epochs = 1,
	.step_gamma = 0.1,
};
static const struct job_optimizer adamw = {
	.name = OPTIMIZER_ADAMW, .lr = 2e-3, .weight_decay = 0.01, .beta1 = 0.9, .beta2 = 0.999,
	.eps = 1e-8, .schedule = SCHEDULE_CONSTANT, .step_epochs = 1, .step_gamma = 0.1,
};

/* One model trained on the CPU, or on the GPU through its mirror. */
struct side {
	struct model m;
	struct optim o;
	struct model_cuda *dev; /* NULL: the CPU */
};

static inline int outputs_of(const struct dataset *d)
{
	return d->loss == LOSS_XENT ? d->classes : d->loss == LOSS_BCE ? 1 : d->label_dim;
}

static inline void side_init(struct side *s, int kind, const struct dataset *d, int batch,
		      enum be_precision prec, const struct job_optimizer *spec, bool gpu)
{
	struct sbuf err = SBUF_INIT;
	struct shape in = { batch, d->h, d->w, d->c };

	memset(s, 0, sizeof(*s));
	if (model_build(&s->m, kind, in, outputs_of(d), d->loss, prec, &err))
		fail_msg("model_build: %s", err.buf);
	model_init(&s->m, 42);
	assert_int_equal(optim_init(&s->o, spec, s->m.narena, 100, 1, 1), 0);
	if (gpu && (!(s->dev = model_cuda_create(&s->m, &s->o, &err)) ||
		    model_cuda_upload(s->dev, &s->o, &err)))
		fail_msg("model_cuda: %s", err.buf);
	sbuf_release(&err);
}

static inline void side_release(struct side *s)
{
	model_cuda_free(s->dev);
	optim_release(&s->o);
	model_release(&s->m);
}

/* The logits end up in model_logits(&s->m) on either side. */
static inline void side_forward(struct side *s, const float *x, bool train, uint64_t key)
{
	struct sbuf err = SBUF_INIT;

	if (s->dev ? model_cuda_forward(s->dev, x, train, key, &err) ||
			     model_cuda_logits(s->dev, &err)
		   : model_forward(&s->m, x, train, key, &err))
		fail_msg("forward: %s", err.buf);
	sbuf_release(&err);
}

/* The loss and its gradient where the side computes. */
static inline double side_loss(struct side *s, const int32_t *labels, const float *targets)
{
	struct sbuf err = SBUF_INIT;
	int64_t correct;
	double loss;

	if (!s->dev)
		return model_loss(&s->m, labels, targets, &correct);
	if (model_cuda_loss(s->dev, labels, targets, &loss, &correct, &err))
		fail_msg("model_cuda_loss: %s", err.buf);
	sbuf_release(&err);
	return loss;
}

/* The arena ranges a backward reported to its grad hook, in order. */
struct ranges {
	size_t v[256][2];
	int n;
};

static inline int record_range(void *ctx, size_t lo, size_t hi)
{
	struct ranges *r = ctx;

	assert_true(r->n < 256);
	r->v[r->n][0] = lo;
	r->v[r->n++][1] = hi;
	return 0;
}

/* Forward, loss, backward (reporting to r); returns the loss. */
static inline double side_step(struct side *s, const float *x, const int32_t *labels,
			const float *targets, uint64_t key, struct ranges *r)
{
	struct grad_hook hook = { record_range, r };
	struct sbuf err = SBUF_INIT;
	double loss;

	r->n = 0;
	side_forward(s, x, true, key);
	loss = side_loss(s, labels, targets);
	if (s->dev ? model_cuda_backward(s->dev, &hook, &err) : model_backward(&s->m, &hook, &err))
		fail_msg("backward: %s", err.buf);
	sbuf_release(&err);
	return loss;
}

static inline void side_update(struct side *s, double lr)
{
	struct sbuf err = SBUF_INIT;

	if (!s->dev)
		optim_update(&s->o, s->m.params, s->m.grads, 0, s->m.narena, lr);
	else if (model_cuda_update(s->dev, &s->o, lr, &err))
		fail_msg("model_cuda_update: %s", err.buf);
	optim_tick(&s->o);
	sbuf_release(&err);
}

static float *copy_floats(const float *v, size_t n)
{
	float *c = malloc(n * sizeof(*c));

	memcpy(c, v, n * sizeof(*c));
	return c;
}

/* At bf16 and fp16 the two sides' trajectories part after a few
 * updates however right both are: each step rounds to 8 (or 11) bits in
 * a different order, and training amplifies it (on an H200, 50 steps of
 * the cnn at bf16 left the evaluation logits 68% of their largest value
 * apart).  So the later figures are held to this many times the CPU's
 * own spread between that precision and fp32 over the same steps, or to
 * the stated bound where that is larger: the GPU's low-precision run
 * differs from the CPU's no more than low precision itself makes it
 * differ.  The tightest seen was hepcnn at bf16, 2.8 times its spread
 * (evaluation logits, 50 steps).  The first step is held to the
 * single-op bounds; tests/bench/gpu_bench.sh and a whole run's test
 * accuracy judge the rest. */
#define LP_SPREAD_FACTOR 5.0

/* What check_training measured, each against its bound. */
struct measured {
	const char *what;
	double err, bound;
};

/* One line per model and precision, printed always (the figures are the
 * record of what the GPU did); the test fails when one is over its
 * bound, unless HPT_CUDA_MEASURE=1 asks only for the figures. */
static inline void report_measured(const char *model, enum be_precision prec, int steps,
				   int worst_step, const struct measured *m, int n)
{
	struct sbuf line = SBUF_INIT;
	bool over = false;

	sbuf_addf(&line, "%s %s, %d steps:", model, be_precision_name(prec), steps);
	for (int i = 0; i < n; i++) {
		if (m[i].bound <= 0)
			continue;
		sbuf_addf(&line, " %s %.2g (bound %.0e)%s", m[i].what, m[i].err, m[i].bound,
			  i + 1 < n ? "," : "");
		over |= !(m[i].err <= m[i].bound);
	}
	sbuf_addf(&line, "; the losses differ most at step %d", worst_step);
	print_message("%s%s\n", over ? "over a bound: " : "", line.buf);
	if (over && !getenv("HPT_CUDA_MEASURE"))
		fail_msg("over a bound: %s", line.buf);
	sbuf_release(&line);
}

/* Trains `kind` for `steps` steps on both sides (see the bounds at the
 * top); first: the first step's logit bound, grad: its gradient bound
 * (0: not compared), later: the bound of everything after it. */
static inline void check_training(int kind, enum data_gen gen, int batch, enum be_precision prec,
			   const struct job_optimizer *spec, int steps, double first, double grad,
			   double later)
{
	struct sbuf err = SBUF_INIT;
	struct dataset train, test;
	struct loader ld;
	struct side cpu, gpu, ref;
	struct ranges rc, rg, rr;
	size_t per, nlogits, at;
	float *x, *targets, *g, *logits;
	int32_t *labels;
	int worst = 1;
	bool lp = prec != BE_FP32;
	double spread[4] = { 0 }; /* the CPU's own: this precision against fp32 */
	struct measured m[] = { { "first logits", 0, first }, { "first gradients", 0, grad },
				{ "first loss", 0, first },   { "later losses", 0, later },
				{ "eval logits", 0, later },  { "parameters", 0, later },
				{ "batch-norm statistics", 0, 0 } };

	data_synthetic(&train, &test, gen);
	side_init(&cpu, kind, &train, batch, prec, spec, false);
	side_init(&gpu, kind, &train, batch, prec, spec, true);
	if (lp)
		side_init(&ref, kind, &train, batch, BE_FP32, spec, false);
	if (loader_init(&ld, &train, batch, 0, 1, 7, &err))
		fail_msg("loader_init: %s", err.buf);
	per = (size_t)train.h * train.w * train.c;
	nlogits = (size_t)batch * outputs_of(&train);
	x = malloc(per * batch * sizeof(*x));
	labels = calloc(batch, sizeof(*labels));
	targets = calloc(nlogits, sizeof(*targets));
	for (int s = 0; s < steps; s++) {
		uint64_t key = rng_hash(42, (uint64_t)s);
		double lc, lg, d;

		loader_batch(&ld, 0, s, x, labels, targets);
		lc = side_step(&cpu, x, labels, targets, key, &rc);
		lg = side_step(&gpu, x, labels, targets, key, &rg);
		if (lp && s > 0) {
			double lf = side_step(&ref, x, labels, targets, key, &rr);
			double apart = fabs(lf - lc) / fabs(lf);

			spread[0] = apart > spread[0] ? apart : spread[0];
		} else if (lp) {
			side_step(&ref, x, labels, targets, key, &rr);
		}
		if (s == 0) { /* the buckets of data parallelism follow these ranges */
			assert_int_equal(rg.n, rc.n);
			assert_memory_equal(rg.v, rc.v, sizeof(rc.v[0]) * rc.n);
			assert_int_equal(rc.v[rc.n - 1][1], cpu.m.narena);
			m[0].err = scaled_error(model_logits(&gpu.m), model_logits(&cpu.m), nlogits, &at);
			if (grad > 0) {
				g = host_copy(model_cuda_grads(gpu.dev), gpu.m.narena);
				m[1].err = scaled_error(g, cpu.m.grads, cpu.m.narena, &at);
				free(g);
			}
		}
		d = isfinite(lg) ? fabs(lg - lc) / fabs(lc) : INFINITY;
		if (!(d <= m[s ? 3 : 2].err))
			m[s ? 3 : 2].err = d, worst = s ? s + 1 : worst;
		side_update(&cpu, spec->lr);
		side_update(&gpu, spec->lr);
		if (lp)
			side_update(&ref, spec->lr);
	}
	/* evaluation mode: running statistics, no dropout */
	side_forward(&cpu, x, false, 0);
	logits = copy_floats(model_logits(&cpu.m), nlogits);
	side_forward(&gpu, x, false, 0);
	m[4].err = scaled_error(model_logits(&gpu.m), logits, nlogits, &at);
	if (lp) {
		side_forward(&ref, x, false, 0);
		spread[1] = scaled_error(logits, model_logits(&ref.m), nlogits, &at);
		spread[2] = scaled_error(cpu.m.params, ref.m.params, cpu.m.narena, &at);
		if (cpu.m.nstate)
			spread[3] = scaled_error(cpu.m.state, ref.m.state, cpu.m.nstate, &at);
	}
	/* what a checkpoint would hold */
	if (model_cuda_download(gpu.dev, &gpu.o, &err))
		fail_msg("model_cuda_download: %s", err.buf);
	m[5].err = scaled_error(gpu.m.params, cpu.m.params, cpu.m.narena, &at);
	if (cpu.m.nstate) {
		m[6].err = scaled_error(gpu.m.state, cpu.m.state, cpu.m.nstate, &at);
		m[6].bound = later;
	}
	for (int i = 0; lp && i < 4; i++)
		if (LP_SPREAD_FACTOR * spread[i] > m[3 + i].bound)
			m[3 + i].bound = LP_SPREAD_FACTOR * spread[i];
	report_measured(train_model_names[kind], prec, steps, worst, m, 7);
	free(logits);
	free(x);
	free(labels);
	free(targets);
	loader_release(&ld);
	side_release(&cpu);
	side_release(&gpu);
	if (lp)
		side_release(&ref);
	dataset_release(&train);
	dataset_release(&test);
	sbuf_release(&err);
}
#endif

#endif
