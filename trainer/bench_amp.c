/* bench_amp.c - bf16 against fp32 training steps of one model, measured
 * in one process with the steps interleaved (fp32, bf16, fp32, ...), so
 * both precisions meet the same machine: on a shared VM whose speed
 * drifts by 20% from one minute to the next, back-to-back runs of whole
 * trainers cannot resolve a 10% change.  Each step is what the trainer
 * does between loading a batch and logging it: forward, loss, backward,
 * SGD update, on the model and batch shape of tests/bench/amp_cpu.sh.
 *
 *   bench_amp MODEL [STEPS] [THREADS]   MODEL: cnn | hepcnn | resnet-small
 *
 * Prints the median step time of each precision and their ratio, and
 * the goal at the instruction set in use (HPCTRAIN_MAX_CPU_ISA caps it).
 * Inputs are generated (throughput does not depend on their values):
 * the cnn's Fashion-MNIST shape (28x28x1, 10 classes), hep-synthetic's
 * 64x64x1 with one sigmoid output, resnet-small on 32x32x3. */
#include "trainer/cpu/backend.h" // defines: backend_init, be_alloc
#include "trainer/bench_median.h" // defines: bench_median
#include "trainer/kernels/cpu_isa.h" // defines: cpu_isa_level
#include "trainer/model/model.h"   // defines: struct model, model_*
#include "trainer/model/optim.h"   // defines: struct optim, optim_*
#include "trainer/model/rng.h"     // defines: rng_hash
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/spec/spec.h"        // defines: MODEL_*, struct job_optimizer
#include "common/monoclock.h"  // defines: monoclock_s

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 128, WARMUP = 5 };

struct side {
	struct model m;
	struct optim o;
	double *ms;
};

static int setup(struct side *s, int kind, struct shape in, int outputs, enum loss_kind loss,
		 enum be_precision prec, int steps, struct sbuf *err)
{
	struct job_optimizer sgd = { .name = OPTIMIZER_SGD, .lr = 0.01, .momentum = 0.9 };

	if (model_build(&s->m, kind, in, outputs, loss, prec, err))
		return -1;
	model_init(&s->m, 1);
	s->ms = calloc((size_t)steps, sizeof(*s->ms));
	return optim_init(&s->o, &sgd, s->m.narena, 1000, 1, 1) || !s->ms ? -1 : 0;
}

static int step(struct side *s, const float *x, const int32_t *labels, const float *targets,
		int64_t i, struct sbuf *err)
{
	int64_t correct;

	if (model_forward(&s->m, x, true, rng_hash(1, (uint64_t)i), err))
		return -1;
	model_loss(&s->m, labels, targets, &correct);
	if (model_backward(&s->m, NULL, err))
		return -1;
	optim_update(&s->o, s->m.params, s->m.grads, 0, s->m.narena, 0.01);
	optim_tick(&s->o);
	return 0;
}

/* Where the two precisions' steps differ: each layer's forward and
 * backward, mean ms per step over the timed steps (model.h
 * model_layer_times), fp32 beside bf16. */
static void print_layers(struct side *s, int steps)
{
	size_t n = model_layer_times(&s[0].m, NULL, 0);
	struct layer_time *f = calloc(n ? n : 1, sizeof(*f)), *b = calloc(n ? n : 1, sizeof(*b));

	if (!f || !b || model_layer_times(&s[1].m, NULL, 0) != n)
		goto out;
	model_layer_times(&s[0].m, f, n);
	model_layer_times(&s[1].m, b, n);
	printf("    per layer, forward + backward, ms per step:      fp32           bf16\n");
	for (size_t i = 0; i < n; i++)
		printf("      %-24s %12.2f + %5.2f  %7.2f + %5.2f\n", f[i].name,
		       f[i].fwd_s * 1e3 / steps, f[i].bwd_s * 1e3 / steps, b[i].fwd_s * 1e3 / steps,
		       b[i].bwd_s * 1e3 / steps);
out:
	free(f);
	free(b);
}

/* The goal at the instruction set in use: AMX doubles the bf16 rate of
 * AVX512-BF16's dot products; below AVX512-BF16 bf16 is emulated, so
 * the ratio should sit near 1. */
static const char *goal(void)
{
	enum cpu_isa isa = cpu_isa_level();

	if (isa >= CPU_ISA_AVX512_CORE_AMX)
		return "goal 1.74x with AMX";
	if (isa >= CPU_ISA_AVX512_CORE_BF16)
		return "goal 1.5x on AVX512-BF16";
	return "bf16 emulated: no goal";
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "cnn";
	int steps = argc > 2 ? atoi(argv[2]) : 100, threads = argc > 3 ? atoi(argv[3]) : 1;
	int kind = !strcmp(name, "hepcnn") ? MODEL_HEPCNN
		   : !strcmp(name, "resnet-small") ? MODEL_RESNET_SMALL : MODEL_CNN;
	struct shape in = kind == MODEL_HEPCNN ? (struct shape){ BATCH, 64, 64, 1 }
			  : kind == MODEL_RESNET_SMALL ? (struct shape){ BATCH, 32, 32, 3 }
						       : (struct shape){ BATCH, 28, 28, 1 };
	int outputs = kind == MODEL_HEPCNN ? 1 : 10;
	enum loss_kind loss = kind == MODEL_HEPCNN ? LOSS_BCE : LOSS_XENT;
	struct side s[2] = { 0 };
	struct sbuf err = SBUF_INIT;
	size_t nx = (size_t)BATCH * in.h * in.w * in.c;
	float *x = be_alloc(nx), *targets = be_alloc((size_t)BATCH * outputs);
	int32_t labels[BATCH];

	if (steps < 1 || backend_init(threads, &err) ||
	    setup(&s[0], kind, in, outputs, loss, BE_FP32, steps, &err) ||
	    setup(&s[1], kind, in, outputs, loss, BE_BF16, steps, &err)) {
		fprintf(stderr, "bench_amp: %s\n", err.len ? err.buf : "bad arguments");
		return 1;
	}
	for (size_t i = 0; i < nx; i++)
		x[i] = (float)((double)rand() / RAND_MAX - 0.5);
	for (int i = 0; i < BATCH; i++) {
		labels[i] = rand() % 10;
		targets[i] = (float)(rand() & 1);
	}
	for (int i = -WARMUP; i < steps; i++)
		for (int p = 0; p < 2; p++) {
			double t0 = (1e3 * monoclock_s());

			if (!i)
				model_layer_times_reset(&s[p].m);

			if (step(&s[p], x, labels, targets, i + WARMUP, &err)) {
				fprintf(stderr, "bench_amp: %s\n", err.buf);
				return 1;
			}
			if (i >= 0)
				s[p].ms[i] = (1e3 * monoclock_s()) - t0;
		}
	{
		double f = bench_median(s[0].ms, steps), b = bench_median(s[1].ms, steps);

		printf("  %-12s fp32 %7.2f ms  bf16 %7.2f ms per step (median of %d, interleaved)  "
		       "%.2fx (%s)\n", name, f, b, steps, f / b, goal());
	}
	print_layers(s, steps);
	for (int p = 0; p < 2; p++) {
		struct sbuf k = SBUF_INIT;

		model_describe_kernels(&s[p].m, &k);
		printf("    %s kernels: %s\n", p ? "bf16" : "fp32", k.buf);
		sbuf_release(&k);
	}
	for (int p = 0; p < 2; p++) {
		model_release(&s[p].m);
		optim_release(&s[p].o);
		free(s[p].ms);
	}
	be_free(x);
	be_free(targets);
	return 0;
}
