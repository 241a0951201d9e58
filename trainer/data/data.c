/* data.c - samples, normalisation, the synthetic generators and the
 * shuffled, sharded batch loader.  Core: no I/O (data_idx.c and
 * data_shard.c read files). */
#include "trainer/data/data.h" // defines: struct dataset, struct loader
#include "trainer/model/resume.h" // defines: resume_slice_offset, resume_batch_hash
#include "trainer/model/rng.h"  // defines: struct rng, rng_hash
#include "common/sbuf.h"     // defines: struct sbuf

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys of the generated sets: fixed, so the data are the same for every
 * run and seed (the training seed shuffles, it does not change data). */
#define SYNTH_KEY UINT64_C(0x5eed0001)
#define HEP_KEY UINT64_C(0x5eed0002)
#define SYNTH_DIM 64
#define SYNTH_CLASSES 4
#define SYNTH_NOISE 0.05

void dataset_release(struct dataset *d)
{
	free(d->pixels);
	free(d->labels);
	memset(d, 0, sizeof(*d));
}

/* synthetic: x ~ N(0,1)^64 as an 8x8 image, label = argmax(T x) for a
 * teacher T drawn from SYNTH_KEY; 5% of labels uniform instead. */
static void synth_sample(int64_t i, float *x, int32_t *label)
{
	struct rng r, t;
	double best = -INFINITY;
	int arg = 0;

	rng_seed(&r, rng_hash(SYNTH_KEY, (uint64_t)i));
	for (int j = 0; j < SYNTH_DIM; j++)
		x[j] = (float)rng_normal(&r);
	rng_seed(&t, SYNTH_KEY);
	for (int k = 0; k < SYNTH_CLASSES; k++) {
		double s = 0;

		for (int j = 0; j < SYNTH_DIM; j++)
			s += rng_normal(&t) * x[j];
		if (s > best) {
			best = s;
			arg = k;
		}
	}
	if (rng_uniform(&r) < SYNTH_NOISE)
		arg = (int)rng_below(&r, SYNTH_CLASSES);
	*label = arg;
}

/* hep-synthetic: three Gaussian energy deposits at random places with
 * random energies on faint uniform noise; background deposits are wide
 * (sigma 3 px), a signal event has one narrow one (sigma 1.2 px).  The
 * total energy does not tell them apart; the shape does. */
static void hep_sample(int64_t i, float *x, float *target)
{
	struct rng r;
	int signal;

	rng_seed(&r, rng_hash(HEP_KEY, (uint64_t)i));
	signal = rng_uniform(&r) < 0.5;
	for (int p = 0; p < 64 * 64; p++)
		x[p] = (float)(0.1 * rng_uniform(&r));
	for (int b = 0; b < 3; b++) {
		double cy = 6 + 52 * rng_uniform(&r), cx = 6 + 52 * rng_uniform(&r);
		double e = 0.6 + 0.8 * rng_uniform(&r);
		double sig = signal && b == 0 ? 1.2 : 3.0;
		double amp = e / (sig * sig) * 4.0, inv = 1.0 / (2 * sig * sig);
		int y0 = (int)fmax(0, cy - 4 * sig), y1 = (int)fmin(63, cy + 4 * sig);
		int x0 = (int)fmax(0, cx - 4 * sig), x1 = (int)fmin(63, cx + 4 * sig);

		for (int yy = y0; yy <= y1; yy++)
			for (int xx = x0; xx <= x1; xx++) {
				double d2 = (yy - cy) * (yy - cy) + (xx - cx) * (xx - cx);

				x[yy * 64 + xx] += (float)(amp * exp(-d2 * inv));
			}
	}
	*target = (float)signal;
}

void dataset_sample(const struct dataset *d, int64_t i, float *x, int32_t *label,
		    float *target)
{
	size_t per = (size_t)d->h * d->w * d->c;
	int32_t l = 0;
	float t = 0;

	switch (d->gen) {
	case DATA_SYNTHETIC:
		synth_sample(d->gen_offset + i, x, &l);
		break;
	case DATA_HEP_SYNTHETIC:
		hep_sample(d->gen_offset + i, x, &t);
		for (size_t p = 0; p < per; p++)
			x[p] = (x[p] - 0.1f) * 2.0f;
		break;
	case DATA_STORED: {
		const uint8_t *px = d->pixels + (size_t)i * per;
		float scale = 1.0f / (255.0f * d->std), shift = d->mean / d->std;

		for (size_t p = 0; p < per; p++)
			x[p] = px[p] * scale - shift;
		l = d->labels[(size_t)i * d->label_dim];
		t = (float)(l != 0);
		if (d->loss == LOSS_MULTI && target)
			for (int k = 0; k < d->label_dim; k++)
				target[k] = (float)(d->labels[(size_t)i * d->label_dim + k] != 0);
		break;
	}
	}
	if (label)
		*label = l;
	if (target && d->loss != LOSS_MULTI)
		*target = t;
}

void data_synthetic(struct dataset *train, struct dataset *test, enum data_gen gen)
{
	struct dataset d = { 0 };

	d.gen = gen;
	if (gen == DATA_SYNTHETIC) {
		d.n = 50000;
		d.h = d.w = 8;
		d.c = 1;
		d.classes = SYNTH_CLASSES;
		d.label_dim = 1;
		d.loss = LOSS_XENT;
	} else {
		d.n = 16384;
		d.h = d.w = 64;
		d.c = 1;
		d.classes = 1;
		d.label_dim = 1;
		d.loss = LOSS_BCE;
	}
	*train = d;
	*test = d;
	test->n = gen == DATA_SYNTHETIC ? 10000 : 4096;
	test->gen_offset = train->n;
}

double data_synthetic_bound(enum data_gen gen)
{
	return gen == DATA_SYNTHETIC ? 1.0 - SYNTH_NOISE * (SYNTH_CLASSES - 1) / SYNTH_CLASSES
				     : 1.0;
}

void dataset_normalise_from(struct dataset *d, const struct dataset *ref)
{
	size_t n = (size_t)ref->n * ref->h * ref->w * ref->c;
	double s = 0, ss = 0;

	for (size_t i = 0; i < n; i++) {
		double v = ref->pixels[i] / 255.0;

		s += v;
		ss += v * v;
	}
	d->mean = n ? (float)(s / n) : 0.0f;
	d->std = n ? (float)sqrt(fmax(ss / n - (s / n) * (s / n), 1e-12)) : 1.0f;
	if (d->std < 1e-6f)
		d->std = 1.0f;
}

int loader_init(struct loader *ld, const struct dataset *d, int batch, int rank, int world,
		uint64_t seed, struct sbuf *err)
{
	memset(ld, 0, sizeof(*ld));
	ld->d = d;
	ld->batch = batch;
	ld->rank = rank;
	ld->world = world;
	ld->seed = seed;
	ld->epoch = -1;
	ld->perm = malloc(d->n * sizeof(*ld->perm));
	if (!ld->perm) {
		sbuf_addstr(err, "out of memory");
		return -1;
	}
	return loader_set_accum(ld, 1, err);
}

int loader_set_accum(struct loader *ld, int accum, struct sbuf *err)
{
	int64_t global = (int64_t)ld->batch * ld->world * accum;

	ld->accum = accum;
	ld->steps_per_epoch = ld->d->n / global;
	if (ld->steps_per_epoch < 1) {
		sbuf_addf(err, "the training set has %lld samples, fewer than one global batch of %lld",
			  (long long)ld->d->n, (long long)global);
		return -1;
	}
	return 0;
}

void loader_release(struct loader *ld)
{
	free(ld->perm);
	memset(ld, 0, sizeof(*ld));
}

static void fill(const struct dataset *d, const int64_t *idx, int n, float *x, int32_t *labels,
		 float *targets)
{
	size_t per = (size_t)d->h * d->w * d->c;
	int tk = d->loss == LOSS_MULTI ? d->label_dim : 1;

#pragma omp parallel for schedule(static)
	for (int j = 0; j < n; j++)
		dataset_sample(d, idx[j], x + j * per, labels ? labels + j : NULL,
			       targets ? targets + (size_t)j * tk : NULL);
}

/* The epoch's permutation, drawn when the epoch changes. */
static void shuffle(struct loader *ld, int64_t epoch)
{
	struct rng r;

	if (ld->epoch == epoch)
		return;
	/* Fisher-Yates, O(n) once per epoch. */
	rng_seed(&r, rng_hash(ld->seed, (uint64_t)epoch));
	for (int64_t i = 0; i < ld->d->n; i++)
		ld->perm[i] = i;
	for (int64_t i = ld->d->n - 1; i > 0; i--) {
		int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1), t = ld->perm[i];

		ld->perm[i] = ld->perm[j];
		ld->perm[j] = t;
	}
	ld->epoch = epoch;
}

static struct resume_plan plan_of(const struct loader *ld)
{
	return (struct resume_plan){ (int64_t)ld->batch * ld->world * ld->accum, ld->batch,
				     ld->accum };
}

void loader_micro_batch(struct loader *ld, int64_t epoch, int64_t step, int micro, float *x,
			int32_t *labels, float *targets)
{
	struct resume_plan p = plan_of(ld);

	shuffle(ld, epoch);
	fill(ld->d, ld->perm + step * p.global + resume_slice_offset(&p, ld->world, ld->rank, micro),
	     ld->batch, x, labels, targets);
}

void loader_batch(struct loader *ld, int64_t epoch, int64_t step, float *x, int32_t *labels,
		  float *targets)
{
	loader_micro_batch(ld, epoch, step, 0, x, labels, targets);
}

uint64_t loader_batch_hash(struct loader *ld, int64_t epoch, int64_t step)
{
	struct resume_plan p = plan_of(ld);

	shuffle(ld, epoch);
	return resume_batch_hash(ld->perm + step * p.global, p.global);
}

int loader_eval_batch(const struct dataset *d, int batch, int64_t b, float *x, int32_t *labels,
		      float *targets)
{
	int64_t idx[batch];
	int real = 0;

	for (int j = 0; j < batch; j++) {
		int64_t i = b * batch + j;

		idx[j] = i < d->n ? i : 0;
		real += i < d->n;
	}
	fill(d, idx, batch, x, labels, targets);
	return real;
}
