/* test_trainer.c - the trainer's data, loader, optimizer schedules and
 * checkpoints: round trips, the failure paths (corrupt, truncated and
 * missing files name the file), the sharding contract, a model's
 * synchronised batch norm against one process on the global batch, and
 * the FLOPs a step is credited with. */
#include "tests/unit/trainlib.h"
#include "trainer/cpu/backend.h"
#include "trainer/model/ckpt.h"
#include "trainer/data/data.h"
#include "trainer/model/model.h"
#include "trainer/model/optim.h"
#include "trainer/data/le_bytes.h"
#include "common/exitcode.h"
#include "common/fileio.h"
#include "common/sbuf.h"
#include "common/spec/spec.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[64];

static int setup(void **state)
{
	struct sbuf err = SBUF_INIT;

	(void)state;
	strcpy(tmpdir, "/tmp/hpt-test-trainer-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	backend_init(1, &err);
	sbuf_release(&err);
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	int rc = system(cmd);

	(void)state;
	free(cmd);
	return rc;
}

static void small_set(struct dataset *d, int n)
{
	memset(d, 0, sizeof(*d));
	d->n = n;
	d->h = 3, d->w = 2, d->c = 1, d->label_dim = 1, d->classes = 4, d->loss = LOSS_XENT;
	d->pixels = malloc((size_t)n * 6);
	d->labels = malloc(n);
	for (int i = 0; i < n * 6; i++)
		d->pixels[i] = (uint8_t)(i * 37);
	for (int i = 0; i < n; i++)
		d->labels[i] = (uint8_t)(i % 4);
}

static void trainer__shards_round_trip_and_corruption_names_the_file(void **state)
{
	struct dataset d, tr, te;
	struct sbuf err = SBUF_INIT;
	char *dir = xasprintf("%s/shards", tmpdir), *path;
	FILE *fp;

	(void)state;
	small_set(&d, 10);
	assert_int_equal(data_write_shards(&d, dir, "train", 3, &err), 0);
	assert_int_equal(data_write_shards(&d, dir, "test", 1, &err), 0);
	assert_int_equal(data_load_shards(&tr, &te, dir, &err), 0);
	assert_int_equal(tr.n, 10);
	assert_memory_equal(tr.pixels, d.pixels, 60);
	assert_memory_equal(tr.labels, d.labels, 10);
	assert_int_equal(tr.classes, 4);
	dataset_release(&tr);
	dataset_release(&te);
	/* Flip one payload byte of shard 1: the CRC names it. */
	path = xasprintf("%s/train-00001.hpts", dir);
	fp = fopen(path, "r+b");
	fseek(fp, 70, SEEK_SET);
	fputc(0x55, fp);
	fclose(fp);
	assert_int_equal(data_load_shards(&tr, &te, dir, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "train-00001.hpts: corrupt"));
	assert_int_equal(truncate(path, 40), 0);
	sbuf_reset(&err);
	assert_int_equal(data_load_shards(&tr, &te, dir, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "train-00001.hpts: not an hpctrain shard"));
	sbuf_reset(&err);
	assert_int_equal(data_load_shards(&tr, &te, "/nonexistent", &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "no train shards"));
	dataset_release(&d);
	free(path);
	free(dir);
	sbuf_release(&err);
}

static void write_gz(const char *path, const void *data, size_t len)
{
	gzFile f = gzopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(gzwrite(f, data, (unsigned)len), (int)len);
	gzclose(f);
}

static void trainer__idx_files_load_and_bad_ones_are_named(void **state)
{
	uint8_t img[16 + 2 * 4] = { 0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t lab[8 + 2] = { 0, 0, 8, 1, 0, 0, 0, 2, 3, 1 };
	char *ip = xasprintf("%s/img.gz", tmpdir), *lp = xasprintf("%s/lab.gz", tmpdir);
	struct dataset d;
	struct sbuf err = SBUF_INIT;

	(void)state;
	write_gz(ip, img, sizeof(img));
	write_gz(lp, lab, sizeof(lab));
	assert_int_equal(data_load_idx(&d, ip, lp, &err), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.h, 2);
	assert_int_equal(d.classes, 4);
	assert_int_equal(d.pixels[7], 8);
	dataset_release(&d);
	write_gz(ip, img, sizeof(img) - 3); /* truncated */
	assert_int_equal(data_load_idx(&d, ip, lp, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "img.gz: truncated"));
	sbuf_reset(&err);
	img[3] = 2; /* wrong shape: 2 dimensions */
	write_gz(ip, img, sizeof(img));
	assert_int_equal(data_load_idx(&d, ip, lp, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "img.gz: not an IDX file"));
	sbuf_reset(&err);
	assert_int_equal(data_load_idx(&d, "/nonexistent/x.gz", lp, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "cannot open /nonexistent/x.gz"));
	free(ip);
	free(lp);
	sbuf_release(&err);
}

static void trainer__ranks_get_disjoint_shards_equal_to_one_big_batch(void **state)
{
	struct dataset d;
	struct loader one, r0, r1;
	struct sbuf err = SBUF_INIT;
	int32_t lb[8], l0[4], l1[4];
	float xb[8 * 6], x0[4 * 6], x1[4 * 6], t[8];

	(void)state;
	small_set(&d, 40);
	assert_int_equal(loader_init(&one, &d, 8, 0, 1, 5, &err), 0);
	assert_int_equal(loader_init(&r0, &d, 4, 0, 2, 5, &err), 0);
	assert_int_equal(loader_init(&r1, &d, 4, 1, 2, 5, &err), 0);
	assert_int_equal(one.steps_per_epoch, 5);
	assert_int_equal(r0.steps_per_epoch, 5);
	for (int e = 0; e < 2; e++)
		for (int s = 0; s < 5; s++) {
			loader_batch(&one, e, s, xb, lb, t);
			loader_batch(&r0, e, s, x0, l0, t);
			loader_batch(&r1, e, s, x1, l1, t);
			assert_memory_equal(xb, x0, sizeof(x0));
			assert_memory_equal(xb + 4 * 6, x1, sizeof(x1));
		}
	/* Every sample once per epoch. */
	{
		int seen[40] = { 0 };

		for (int i = 0; i < 40; i++)
			seen[one.perm[i]]++;
		for (int i = 0; i < 40; i++)
			assert_int_equal(seen[i], 1);
	}
	loader_release(&one);
	loader_release(&r0);
	loader_release(&r1);
	dataset_release(&d);
	sbuf_release(&err);
}

static void trainer__synthetic_sets_are_deterministic_and_disjoint(void **state)
{
	struct dataset tr, te;
	float a[64], b[64];
	int32_t la, lb;

	(void)state;
	data_synthetic(&tr, &te, DATA_SYNTHETIC);
	dataset_sample(&tr, 7, a, &la, NULL);
	dataset_sample(&tr, 7, b, &lb, NULL);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(la, lb);
	dataset_sample(&te, 7, b, &lb, NULL);
	assert_memory_not_equal(a, b, sizeof(a));
	assert_true(data_synthetic_bound(DATA_SYNTHETIC) > 0.96);
}

static void trainer__schedules_warm_up_then_follow_cosine_or_steps(void **state)
{
	struct job_optimizer spec = { .name = OPTIMIZER_SGD, .lr = 0.1, .momentum = 0.9,
				      .schedule = SCHEDULE_COSINE, .warmup_epochs = 1,
				      .lr_scaling = LR_SCALING_LINEAR, .step_epochs = 2,
				      .step_gamma = 0.5 };
	struct optim o;

	(void)state;
	assert_int_equal(optim_init(&o, &spec, 4, 10, 5, 2), 0); /* 2 ranks: lr 0.2 */
	assert_float_equal(optim_lr(&o, 0), 0.02, 1e-12);
	assert_float_equal(optim_lr(&o, 9), 0.2, 1e-12);
	assert_float_equal(optim_lr(&o, 10), 0.2, 1e-12);
	assert_float_equal(optim_lr(&o, 30), 0.1, 1e-12); /* halfway through cosine */
	assert_true(optim_lr(&o, 49) < 0.001);
	optim_release(&o);
	spec.schedule = SCHEDULE_STEP;
	spec.warmup_epochs = 0;
	spec.lr_scaling = LR_SCALING_NONE;
	assert_int_equal(optim_init(&o, &spec, 4, 10, 5, 2), 0);
	assert_float_equal(optim_lr(&o, 19), 0.1, 1e-12);
	assert_float_equal(optim_lr(&o, 20), 0.05, 1e-12);
	assert_float_equal(optim_lr(&o, 45), 0.025, 1e-12);
	optim_release(&o);
}

/* Random values in v's tensors, zeros in the arena's alignment gaps (as
 * in every optimizer vector). */
static void fill_tensors(const struct model *m, float *v, uint64_t seed)
{
	memset(v, 0, m->narena * sizeof(*v));
	for (size_t i = 0; i < m->nspans; i++)
		fill_normalf(v + m->spans[i].off, m->spans[i].n, seed + i);
}

static void trainer__checkpoints_round_trip_bit_exact_and_refuse_damage(void **state)
{
	struct model m, m2;
	struct optim o, o2;
	struct job_optimizer spec = { .name = OPTIMIZER_ADAMW, .lr = 1e-3, .beta1 = 0.9,
				      .beta2 = 0.999, .eps = 1e-8 };
	struct ckpt_state st = { .step = 42, .epoch_loss = 1.5, .epoch_correct = 7, .epoch_seen = 9,
				  .global_batch = 4, .world = 1, .batch = 4, .accum = 1 },
			  st2;
	struct sbuf err = SBUF_INIT, path = SBUF_INIT;
	char *dir = xasprintf("%s/ckpt", tmpdir);
	const char *hash = "ab12";

	(void)state;
	assert_int_equal(mkdir(dir, 0777), 0);
	assert_int_equal(model_build(&m, MODEL_RESNET_SMALL, (struct shape){ 2, 8, 8, 1 }, 3, LOSS_XENT, BE_FP32, &err), 0);
	assert_int_equal(model_build(&m2, MODEL_RESNET_SMALL, (struct shape){ 2, 8, 8, 1 }, 3, LOSS_XENT, BE_FP32, &err), 0);
	model_init(&m, 1);
	assert_int_equal(optim_init(&o, &spec, m.narena, 1, 1, 1), 0);
	assert_int_equal(optim_init(&o2, &spec, m.narena, 1, 1, 1), 0);
	fill_tensors(&m, o.m, 3);
	fill_tensors(&m, o.v, 4);
	fill_normalf(m.state, m.nstate, 5);
	o.t = 17;
	for (int s = 1; s <= 4; s++) {
		st.step = s;
		assert_int_equal(ckpt_save(dir, hash, &st, &m, &o, 2, &err), 0);
	}
	assert_int_equal(ckpt_latest(dir, hash, &path, NULL, &err, &err), 0);
	assert_int_equal(err.len, 0);
	assert_non_null(strstr(path.buf, "ckpt-000000000004.bin"));
	assert_int_equal(ckpt_load(path.buf, hash, &st2, &m2, &o2, &err), 0);
	assert_int_equal(st2.step, 4);
	assert_int_equal(o2.t, 17);
	assert_memory_equal(m2.params, m.params, m.narena * 4);
	assert_memory_equal(m2.state, m.state, m.nstate * 4);
	assert_memory_equal(o2.v, o.v, m.narena * 4);
	{ /* the header alone, as every rank sizes its batches from it */
		struct ckpt_meta meta;

		assert_int_equal(ckpt_peek(path.buf, hash, &meta, &err), 0);
		assert_int_equal(meta.version, 3);
		assert_int_equal(meta.step, 4);
		assert_int_equal(meta.global_batch, 4);
		assert_int_equal(meta.world, 1);
		assert_int_equal(meta.batch, 4);
		assert_int_equal(ckpt_peek(path.buf, "other", &meta, &err), HPT_EXIT_NO_INPUT);
		assert_non_null(strstr(err.buf, "written for another spec"));
		sbuf_reset(&err);
	}
	{ /* keep = 2: steps 3 and 4 remain */
		char *p3 = xasprintf("%s/ckpt-000000000003.bin", dir), *p2 = xasprintf("%s/ckpt-000000000002.bin", dir);

		assert_int_equal(access(p3, F_OK), 0);
		assert_int_not_equal(access(p2, F_OK), 0);
		free(p3);
		free(p2);
	}
	assert_int_equal(ckpt_load(path.buf, "other", &st2, &m2, &o2, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "written for another spec"));
	sbuf_reset(&err);
	assert_int_equal(truncate(path.buf, 1000), 0);
	assert_int_equal(ckpt_load(path.buf, hash, &st2, &m2, &o2, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "corrupt checkpoint"));
	sbuf_reset(&err);
	{
		struct ckpt_meta meta;

		assert_int_equal(ckpt_peek(path.buf, hash, &meta, &err), HPT_EXIT_NO_INPUT);
		assert_non_null(strstr(err.buf, "corrupt checkpoint"));
		sbuf_reset(&err);
	}
	{ /* the truncated newest is passed over for step 3, said in warn */
		struct sbuf older = SBUF_INIT, warn = SBUF_INIT;
		char *want = xasprintf("warning: %s: corrupt checkpoint (CRC-32 mismatch); passed "
				       "over for an older checkpoint\n", path.buf);

		assert_int_equal(ckpt_latest(dir, hash, &older, NULL, &warn, &err), 0);
		assert_non_null(strstr(older.buf, "ckpt-000000000003.bin"));
		assert_string_equal(warn.buf, want);
		free(want);
		sbuf_release(&older);
		sbuf_release(&warn);
	}
	{ /* a user's copy is no checkpoint; a new global batch retires the old */
		char *best = xasprintf("%s/ckpt-best.bin", dir);
		char *gone = xasprintf("%s/ckpt-000000000003.bin", dir);
		char *retired = xasprintf("%s/retired-gb4-99/ckpt-000000000003.bin", dir);

		assert_int_equal(fileio_write_atomic(best, "copy", 4, 0600, 1, &err), 0);
		st.step = 2; /* renumbered downward, more samples */
		st.global_batch = 8;
		st.batch = 8;
		st.samples = 99;
		assert_int_equal(ckpt_save(dir, hash, &st, &m, &o, 1, &err), 0);
		assert_int_equal(ckpt_latest(dir, hash, &path, NULL, &err, &err), 0);
		assert_non_null(strstr(path.buf, "ckpt-000000000002.bin"));
		assert_int_equal(access(best, F_OK), 0);
		assert_int_not_equal(access(gone, F_OK), 0);
		assert_int_equal(access(retired, F_OK), 0);
		free(best);
		free(gone);
		free(retired);
	}
	model_release(&m);
	model_release(&m2);
	optim_release(&o);
	optim_release(&o2);
	sbuf_release(&err);
	sbuf_release(&path);
	free(dir);
}

/* The file holds the parameters back to back, without the arena's
 * alignment gaps: the layout of checkpoints written before the arena
 * was aligned, which therefore still load (here: one written by hand in
 * that layout, from the parameters in layer order reversed). */
static void trainer__checkpoints_store_tensors_without_the_arena_gaps(void **state)
{
	struct job_optimizer spec = { .name = OPTIMIZER_SGD, .lr = 0.1, .momentum = 0.9 };
	struct ckpt_state st = { .step = 5, .global_batch = 4, .world = 2, .batch = 2, .accum = 1 },
			  st2 = { 0 };
	const size_t head = 212; /* version 3 */
	struct sbuf buf = SBUF_INIT, old = SBUF_INIT, err = SBUF_INIT;
	struct model m, m2;
	struct optim o, o2;
	float *packed;
	size_t at = 0;

	(void)state;
	assert_int_equal(model_build(&m, MODEL_CNN, (struct shape){ 2, 8, 8, 1 }, 10, LOSS_XENT, BE_FP32, &err), 0);
	assert_int_equal(model_build(&m2, MODEL_CNN, (struct shape){ 2, 8, 8, 1 }, 10, LOSS_XENT, BE_FP32, &err), 0);
	model_init(&m, 1);
	assert_int_equal(optim_init(&o, &spec, m.narena, 1, 1, 1), 0);
	assert_int_equal(optim_init(&o2, &spec, m.narena, 1, 1, 1), 0);
	fill_tensors(&m, o.m, 6);
	assert_true(m.narena > m.nparams);
	ckpt_encode("ab12", &st, &m, &o, &buf);
	assert_int_equal(buf.len, head + 4 * (2 * m.nparams + m.nstate) + 4);
	/* the old writer: each layer's weights then biases, last layer first */
	packed = malloc(m.nparams * sizeof(*packed));
	for (size_t i = m.net.n; i-- > 0;) {
		const struct layer *l = &m.net.v[i];

		if (!l->nw)
			continue;
		memcpy(packed + at, l->w, l->nw * sizeof(float));
		memcpy(packed + at + l->nw, l->b, l->nb * sizeof(float));
		at += l->nw + l->nb;
	}
	assert_int_equal(at, m.nparams);
	sbuf_add(&old, buf.buf, head);
	le_put_floats(&old, packed, m.nparams);
	sbuf_add(&old, buf.buf + head + 4 * m.nparams, buf.len - head - 4 * m.nparams - 4);
	le_put_u32(&old, (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)old.buf, (uInt)old.len));
	assert_memory_equal(old.buf, buf.buf, buf.len);
	assert_int_equal(ckpt_decode(old.buf, old.len, "old.bin", "ab12", &st2, &m2, &o2, &err), 0);
	assert_memory_equal(m2.params, m.params, m.narena * 4);
	assert_memory_equal(o2.m, o.m, m.narena * 4);
	assert_int_equal(st2.global_batch, 4);
	assert_int_equal(st2.world, 2);
	/* a position whose global batch is not ranks x batch x steps is refused */
	st.global_batch = 5;
	sbuf_reset(&buf);
	ckpt_encode("ab12", &st, &m, &o, &buf);
	assert_int_equal(ckpt_decode(buf.buf, buf.len, "bad.bin", "ab12", &st2, &m2, &o2, &err), -1);
	assert_string_equal(err.buf, "bad.bin: global batch 5 is not 2 ranks x 2 x 1 steps");
	free(packed);
	model_release(&m);
	model_release(&m2);
	optim_release(&o);
	optim_release(&o2);
	sbuf_release(&buf);
	sbuf_release(&old);
	sbuf_release(&err);
}

/* A fake world of two ranks that hold the same batch: the allreduce
 * doubles every sum.  Counts its calls; call number fail_at (from 1; 0
 * never) fails as a lost peer would. */
struct twin {
	int calls, fail_at;
};

static int twin_allreduce(void *ctx, double *buf, size_t n, struct sbuf *err)
{
	struct twin *t = ctx;

	if (++t->calls == t->fail_at) {
		sbuf_addstr(err, "the peer went away");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		buf[i] *= 2;
	return 0;
}

/* One rank's half of a batch whose other half is the same samples: with
 * sync batch norm its logits, gradients (which the gradient allreduce
 * would average with an equal twin) and running statistics (unbiased
 * over the global count) are those of one process on both halves. */
static void trainer__sync_batchnorm_rank_equals_one_process_on_the_global_batch(void **state)
{
	enum { B = 4, K = 3, PIX = 64, NBN = 15 }; /* resnet-small: 15 batch-norm layers */
	struct model one, rank;
	struct twin tw = { 0, 0 };
	struct bn_sync sync = { twin_allreduce, &tw };
	struct sbuf err = SBUF_INIT;
	float x[2 * B * PIX];
	int32_t labels[2 * B];
	int64_t right;

	(void)state;
	assert_int_equal(model_build(&one, MODEL_RESNET_SMALL, (struct shape){ 2 * B, 8, 8, 1 }, K,
				     LOSS_XENT, BE_FP32, &err), 0);
	assert_int_equal(model_build(&rank, MODEL_RESNET_SMALL, (struct shape){ B, 8, 8, 1 }, K,
				     LOSS_XENT, BE_FP32, &err), 0);
	model_init(&one, 9);
	model_init(&rank, 9);
	model_set_bn_sync(&rank, &sync);
	fill_normalf(x, B * PIX, 31);
	memcpy(x + B * PIX, x, B * PIX * sizeof(*x));
	for (int i = 0; i < 2 * B; i++)
		labels[i] = (i % B) % K;
	assert_int_equal(model_forward(&one, x, true, 0, &err), 0);
	assert_int_equal(model_forward(&rank, x, true, 0, &err), 0);
	assert_int_equal(tw.calls, NBN);
	assert_close(model_logits(&rank), model_logits(&one), B * K, 1e-6, 1e-5);
	model_loss(&one, labels, NULL, &right);
	model_loss(&rank, labels, NULL, &right);
	assert_int_equal(model_backward(&one, NULL, &err), 0);
	assert_int_equal(model_backward(&rank, NULL, &err), 0);
	assert_int_equal(tw.calls, 2 * NBN);
	assert_close(rank.grads, one.grads, one.narena, 1e-6, 1e-5);
	assert_close(rank.state, one.state, one.nstate, 1e-6, 1e-5);
	/* evaluation uses the running statistics: no allreduce */
	assert_int_equal(model_forward(&rank, x, false, 0, &err), 0);
	assert_int_equal(tw.calls, 2 * NBN);
	/* a failed allreduce fails the pass with its message, forward or backward */
	tw.fail_at = tw.calls + 3;
	assert_int_equal(model_forward(&rank, x, true, 0, &err), -1);
	assert_string_equal(err.buf, "the peer went away");
	sbuf_reset(&err);
	tw.fail_at = tw.calls + NBN + 2;
	assert_int_equal(model_forward(&rank, x, true, 0, &err), 0);
	model_loss(&rank, labels, NULL, &right);
	assert_int_equal(model_backward(&rank, NULL, &err), -1);
	assert_string_equal(err.buf, "the peer went away");
	model_release(&one);
	model_release(&rank);
	sbuf_release(&err);
}

/* The cnn's step FLOPs: forward, weight gradient and input gradient of
 * each convolution and linear layer, except conv1's input gradient, which
 * no step computes. */
static void trainer__flops_count_only_the_products_a_step_computes(void **state)
{
	const double conv1 = 2.0 * 28 * 28 * 32 * 1 * 9, conv2 = 2.0 * 14 * 14 * 64 * 32 * 9,
		     fc1 = 2.0 * 3136 * 128, fc2 = 2.0 * 128 * 10;
	struct sbuf err = SBUF_INIT;
	struct model m;

	(void)state;
	assert_int_equal(model_build(&m, MODEL_CNN, (struct shape){ 2, 28, 28, 1 }, 10, LOSS_XENT,
				     BE_FP32, &err), 0);
	assert_true(model_train_flops_per_sample(&m) == 2 * conv1 + 3 * (conv2 + fc1 + fc2));
	model_release(&m);
	sbuf_release(&err);
}

static void trainer__layer_times_name_each_layer_and_split_the_flops(void **state)
{
	struct sbuf err = SBUF_INIT;
	struct layer_time v[8];
	double flops = 0;
	struct model m;
	size_t n;

	(void)state;
	assert_int_equal(model_build(&m, MODEL_CNN, (struct shape){ 2, 28, 28, 1 }, 10, LOSS_XENT,
				     BE_FP32, &err), 0);
	n = model_layer_times(&m, v, 8);
	/* the first convolution runs inside its max pool: one entry */
	assert_int_equal(n, 6);
	assert_string_equal(v[0].name, "conv+maxpool 3x3 1>32");
	assert_string_equal(v[1].name, "conv 3x3 32>64");
	assert_string_equal(v[2].name, "maxpool 2x2");
	assert_string_equal(v[3].name, "flatten");
	assert_string_equal(v[4].name, "linear 3136>128");
	assert_string_equal(v[5].name, "linear 128>10");
	for (size_t i = 0; i < n; i++) {
		flops += v[i].flops;
		assert_true(v[i].fwd_s == 0 && v[i].bwd_s == 0);
	}
	assert_true(flops == model_train_flops_per_sample(&m));
	model_release(&m);
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trainer__shards_round_trip_and_corruption_names_the_file),
		cmocka_unit_test(trainer__idx_files_load_and_bad_ones_are_named),
		cmocka_unit_test(trainer__ranks_get_disjoint_shards_equal_to_one_big_batch),
		cmocka_unit_test(trainer__synthetic_sets_are_deterministic_and_disjoint),
		cmocka_unit_test(trainer__schedules_warm_up_then_follow_cosine_or_steps),
		cmocka_unit_test(trainer__checkpoints_round_trip_bit_exact_and_refuse_damage),
		cmocka_unit_test(trainer__checkpoints_store_tensors_without_the_arena_gaps),
		cmocka_unit_test(trainer__sync_batchnorm_rank_equals_one_process_on_the_global_batch),
		cmocka_unit_test(trainer__flops_count_only_the_products_a_step_computes),
		cmocka_unit_test(trainer__layer_times_name_each_layer_and_split_the_flops),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
