/* test_amp.c - mixed precision on the CPU: the dynamic loss scaler
 * (skip and halve on overflow, an fp16 forward overflow as a skipped
 * step, growth after the interval, state through a checkpoint,
 * version-1 checkpoints still load) and the low-precision
 * convolutions against the fp64 reference within documented bounds. */
#include "tests/unit/convlib.h"
#include "tests/unit/trainlib.h"
#include "trainer/model/amp.h"
#include "trainer/cpu/backend.h"
#include "trainer/model/ckpt.h"
#include "trainer/kernels/cpu_isa.h"
#include "trainer/kernels/kernels.h"
#include "trainer/model/model.h"
#include "trainer/model/optim.h"
#include "trainer/data/le_bytes.h"
#include "common/fileio.h"      // defines: fileio_read
#include "common/sbuf.h"
#include "common/spec/spec.h"

#include <float.h>
#include <string.h>
#include <zlib.h>

static int setup_backend(void **state)
{
	struct sbuf err = SBUF_INIT;
	int rc;

	(void)state;
	setenv("HPCTRAIN_KERNEL_CACHE", "", 1); /* tune, but leave the user's cache alone */
	rc = backend_init(2, &err);
	sbuf_release(&err);
	return rc;
}

static void amp__an_injected_inf_skips_the_step_and_halves_the_scale(void **state)
{
	struct amp_scaler s;
	float g[5] = { 65536.0f, -131072.0f, 0, 32768.0f, 1 };

	(void)state;
	amp_init(&s, true);
	assert_true(s.scale == 65536.0);
	amp_scale(&s, g + 4, 1, 1.0f);
	assert_true(g[4] == 65536.0f);
	/* Clean gradients come back divided by the scale, exactly. */
	assert_false(amp_unscale(&s, g, 5));
	assert_true(g[0] == 1.0f && g[1] == -2.0f && g[3] == 0.5f && g[4] == 1.0f);
	assert_false(amp_update(&s, false));
	assert_int_equal(s.good_steps, 1);
	/* One inf anywhere: skip, halve, restart the count. */
	g[2] = INFINITY;
	assert_true(amp_unscale(&s, g, 5));
	assert_true(amp_update(&s, true));
	assert_true(s.scale == 32768.0);
	assert_int_equal(s.good_steps, 0);
	assert_int_equal(s.skipped, 1);
	g[2] = NAN;
	assert_true(amp_unscale(&s, g, 5));
	assert_true(amp_update(&s, true));
	assert_true(s.scale == 16384.0);
	/* Never below 1. */
	for (int i = 0; i < 40; i++)
		amp_update(&s, true);
	assert_true(s.scale == AMP_MIN_SCALE);
}

/* A forward whose loss is inf under fp16 scaling is an overflow step:
 * train.c poisons the loss gradient, backward carries the NaN into the
 * gradients, the unscale finds it, the step is skipped and the scale
 * halves.  Without a scaler, or at its floor, it is divergence. */
static void amp__an_fp16_forward_overflow_is_a_skipped_step_not_divergence(void **state)
{
	struct amp_scaler s, off;
	struct model m;
	struct sbuf err = SBUF_INIT;
	float x[2 * 16] = { 0 };
	int32_t labels[2] = { 0, 1 };
	int64_t correct;
	double loss;

	(void)state;
	amp_init(&s, true);
	amp_init(&off, false);
	assert_false(amp_forward_overflow(&s, 2.5));
	assert_true(amp_forward_overflow(&s, INFINITY));
	assert_true(amp_forward_overflow(&s, NAN));
	assert_false(amp_forward_overflow(&off, INFINITY));
	assert_int_equal(model_build(&m, MODEL_MLP, (struct shape){ 2, 4, 4, 1 }, 3, LOSS_XENT,
				     BE_FP16, &err),
			 0);
	model_init(&m, 1);
	for (int i = 0; i < 2 * 16; i++)
		x[i] = 1.0f;
	/* the last layer comes first in the arena: a weight past fp16's range */
	for (size_t i = 0; i < m.net.v[m.net.n - 1].nw; i++)
		m.net.v[m.net.n - 1].w[i] = 3e38f;
	assert_int_equal(model_forward(&m, x, true, 0, &err), 0);
	loss = model_loss(&m, labels, NULL, &correct);
	assert_false(isfinite(loss));
	assert_true(amp_forward_overflow(&s, loss));
	amp_scale(&s, m.dlogits, 2 * 3, 1.0f);
	m.dlogits[0] = NAN;
	assert_int_equal(model_backward(&m, NULL, &err), 0);
	assert_true(amp_unscale(&s, m.grads, m.narena));
	assert_true(amp_update(&s, true));
	assert_true(s.scale == AMP_INIT_SCALE / 2);
	/* step after step, down to the floor: then it is divergence */
	while (amp_forward_overflow(&s, loss))
		amp_update(&s, true);
	assert_true(s.scale == AMP_MIN_SCALE);
	model_release(&m);
	sbuf_release(&err);
}

static void amp__doubles_the_scale_after_the_growth_interval(void **state)
{
	struct amp_scaler s;

	(void)state;
	amp_init(&s, true);
	assert_int_equal(s.interval, 2000);
	for (int i = 0; i < 1999; i++)
		assert_false(amp_update(&s, false));
	assert_true(s.scale == 65536.0);
	assert_false(amp_update(&s, false));
	assert_true(s.scale == 131072.0);
	assert_int_equal(s.good_steps, 0);
	/* An overflow in the middle restarts the interval. */
	for (int i = 0; i < 1000; i++)
		amp_update(&s, false);
	amp_update(&s, true);
	for (int i = 0; i < 1999; i++)
		amp_update(&s, false);
	assert_true(s.scale == 65536.0);
	amp_update(&s, false);
	assert_true(s.scale == 131072.0);
	/* Capped at 2^24. */
	s.interval = 1;
	for (int i = 0; i < 30; i++)
		amp_update(&s, false);
	assert_true(s.scale == AMP_MAX_SCALE);
}

static void amp__a_disabled_scaler_changes_nothing(void **state)
{
	struct amp_scaler s;
	float g[2] = { 3.0f, -0.25f };

	(void)state;
	amp_init(&s, false);
	amp_scale(&s, g, 2, 1.0f);
	assert_false(amp_unscale(&s, g, 2));
	assert_true(g[0] == 3.0f && g[1] == -0.25f);
	assert_false(amp_update(&s, false));
	assert_true(s.scale == 1.0);
}

static void build_small(struct model *m, struct optim *o)
{
	struct job_optimizer spec = { .name = OPTIMIZER_SGD, .lr = 0.1, .momentum = 0.9 };
	struct sbuf err = SBUF_INIT;

	assert_int_equal(model_build(m, MODEL_MLP, (struct shape){ 2, 4, 4, 1 }, 3, LOSS_XENT,
				     BE_FP32, &err),
			 0);
	model_init(m, 1);
	assert_int_equal(optim_init(o, &spec, m->narena, 1, 1, 1), 0);
	fill_normalf(o->m, m->narena, 3);
	sbuf_release(&err);
}

static void amp__scaler_state_survives_a_checkpoint_round_trip(void **state)
{
	struct model m, m2;
	struct optim o, o2;
	struct ckpt_state st = { .step = 42, .epoch_loss = 1.5, .epoch_correct = 7, .epoch_seen = 9,
				  .global_batch = 8, .world = 2, .batch = 2, .accum = 2,
				  .samples = 336, .epoch = 1, .epoch_pos = 16 },
			  st2 = { 0 };
	struct sbuf buf = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	build_small(&m, &o);
	build_small(&m2, &o2);
	amp_init(&st.scaler, true);
	amp_update(&st.scaler, true); /* 32768 */
	for (int i = 0; i < 123; i++)
		amp_update(&st.scaler, false);
	ckpt_encode("ab12", &st, &m, &o, &buf);
	amp_init(&st2.scaler, true);
	assert_int_equal(ckpt_decode(buf.buf, buf.len, "x.bin", "ab12", &st2, &m2, &o2, &err), 0);
	assert_true(st2.scaler.enabled);
	assert_true(st2.scaler.scale == 32768.0);
	assert_int_equal(st2.scaler.good_steps, 123);
	assert_int_equal(st2.step, 42);
	/* version 3: the data position at the world size that wrote it */
	assert_int_equal(st2.global_batch, 8);
	assert_int_equal(st2.accum, 2);
	assert_int_equal(st2.samples, 336);
	assert_int_equal(st2.epoch_pos, 16);
	assert_memory_equal(m2.params, m.params, m.narena * 4);

	/* A version-1 file (no scaler fields), written by the version-1
	 * encoder itself (tests/fixtures/PROVENANCE), still loads and leaves
	 * the scaler as initialised. */
	{
		const char *dir = getenv("HPT_FIXTURES");
		char *path = xasprintf("%s/ckpt/ckpt-v1-mlp.bin", dir && *dir ? dir : "tests/fixtures");
		struct sbuf v1 = SBUF_INIT;
		struct model m3;
		struct optim o3;

		build_small(&m3, &o3); /* what the file was made from: seed 1 */
		assert_int_equal(fileio_read(path, 1 << 20, &v1, &err), 0);
		memset(&st2, 0, sizeof(st2));
		amp_init(&st2.scaler, true);
		assert_int_equal(ckpt_decode(v1.buf, v1.len, path, "ab12", &st2, &m2, &o2, &err), 0);
		assert_true(st2.scaler.scale == AMP_INIT_SCALE);
		assert_int_equal(st2.scaler.good_steps, 0);
		assert_int_equal(st2.step, 42);
		assert_true(st2.epoch_loss == 1.5);
		assert_int_equal(st2.epoch_correct, 7);
		assert_int_equal(st2.epoch_seen, 9);
		assert_int_equal(st2.global_batch, 0); /* unknown: the trainer decides */
		assert_memory_equal(m2.params, m3.params, m3.narena * 4);
		/* The file's momentum is m[i] = i / 1024 over the packed
		 * parameters; the arena holds them span by span. */
		for (size_t sp = 0, i = 0; sp < m2.nspans; sp++)
			for (size_t k = 0; k < m2.spans[sp].n; k++, i++)
				if (o2.m[m2.spans[sp].off + k] != (float)i / 1024.0f)
					fail_msg("momentum of parameter %zu: %g", i,
						 (double)o2.m[m2.spans[sp].off + k]);
		/* The hash names the spec: another spec's checkpoint is refused. */
		assert_int_equal(ckpt_decode(v1.buf, v1.len, path, "cd34", &st2, &m2, &o2, &err), -1);
		model_release(&m3);
		optim_release(&o3);
		sbuf_release(&v1);
		free(path);
	}

	/* A damaged scale is refused, naming the file. */
	memset(buf.buf + 140, 0xff, 8);
	{
		uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)buf.buf,
					       (uInt)(buf.len - 4));
		struct sbuf tail = SBUF_INIT;

		le_put_u32(&tail, crc);
		memcpy(buf.buf + buf.len - 4, tail.buf, 4);
		sbuf_release(&tail);
	}
	assert_int_equal(ckpt_decode(buf.buf, buf.len, "x.bin", "ab12", &st2, &m2, &o2, &err), -1);
	assert_non_null(strstr(err.buf, "x.bin: invalid loss scale"));
	model_release(&m);
	model_release(&m2);
	optim_release(&o);
	optim_release(&o2);
	sbuf_release(&buf);
	sbuf_release(&err);
}

static double *to_f64(const float *f, size_t n)
{
	double *d = malloc(n * sizeof(*d));

	for (size_t i = 0; i < n; i++)
		d[i] = f[i];
	return d;
}

/* Largest |a - ref| / max|ref| over n: the error relative to the
 * output's scale, which is what rounding the inputs to 8 (bf16) or 11
 * (fp16) significant bits bounds; elementwise relative error is
 * meaningless for outputs near zero. */
static double scaled_err(const float *a, const double *ref, size_t n)
{
	double most = 0, top = 0;

	for (size_t i = 0; i < n; i++)
		top = fabs(ref[i]) > top ? fabs(ref[i]) : top;
	for (size_t i = 0; i < n; i++)
		most = fabs(a[i] - ref[i]) > most ? fabs(a[i] - ref[i]) : most;
	return top > 0 ? most / top : most;
}

/* The precision a layer reports is the one its kernels ran: bf16 native
 * where the CPU as capped has AVX512-BF16, emulated (rounded inputs,
 * fp32 kernels) below it; fp16 emulated (oneDNN 2.6 has no fp16 CPU
 * kernels); convolutions of fewer than 16 channels fp32, with a reason.
 * A low precision that quietly ran fp32 would show an error at fp32's
 * level (about 1e-7); rounded inputs give 1e-4 and more. */
static void assert_ran_as_asked(const struct be_kernel *k, enum be_precision asked,
				bool fp32_exception, double err_vs_f64)
{
	bool native_bf16 = cpu_isa_level() >= CPU_ISA_AVX512_CORE_BF16;

	print_message("# asked %s: ran %s%s on %s%s%s%s\n", be_precision_name(asked),
		      be_precision_name(k->prec), k->emulated ? " emulated" : "", k->impl,
		      k->why[0] ? " (" : "", k->why, k->why[0] ? ")" : "");
	if (asked == BE_FP32 || fp32_exception) {
		assert_int_equal(k->prec, BE_FP32);
		assert_false(k->emulated);
		assert_true(asked == BE_FP32 || k->why[0]);
		return;
	}
	assert_int_equal(k->prec, asked);
	/* with AVX512-BF16 the tuning may measure emulation faster, and says so */
	if (asked == BE_BF16 && native_bf16 && k->emulated)
		assert_non_null(strstr(k->why, "native bf16 measured slower"));
	else
		assert_int_equal(k->emulated, asked == BE_FP16 || !native_bf16);
	assert_true(k->emulated == (k->why[0] != '\0'));
	assert_null(strstr(k->impl, "ref"));
	assert_true(err_vs_f64 > 1e-5);
}

/* Documented bounds (see backend_cpu.c): bf16 inputs carry a relative
 * rounding error of 2^-9 each, fp16 2^-12; over sums of C*R*S <= 288
 * random-signed terms the output's error relative to its largest value
 * stays below 2e-2 (bf16) and 3e-3 (fp16).  Measured: about a fifth. */
static void check_conv_lp(struct conv_geom g, enum be_precision prec, double bound)
{
	struct sbuf err = SBUF_INIT;
	struct conv_ref r = { 0 };
	struct conv_case c;
	struct be_conv *cv;

	conv_case_init(&c, g);
	cv = be_conv_create(&c.g, BE_NEED_DX, prec, &err);
	if (!cv)
		fail_msg("be_conv_create: %s", err.buf);
	assert_int_equal(be_conv_forward(cv, c.x, c.w, c.b, c.y, &err), 0);
	assert_int_equal(be_conv_backward(cv, c.x, c.dy, c.dx, c.dw, c.db, &err), 0);
	conv_ref_forward(&r, &c, false);
	conv_ref_backward(&r, &c);
	print_message("# %s conv %dx%dx%d->%d: y %.2e dx %.2e dw %.2e db %.2e (bound %.0e)\n",
		      be_precision_name(prec), c.g.h, c.g.w, c.g.c, c.g.k,
		      scaled_err(c.y, r.y, c.ny), scaled_err(c.dx, r.dx, c.nx),
		      scaled_err(c.dw, r.dw, c.nw), scaled_err(c.db, r.db, c.g.k), bound);
	assert_true(scaled_err(c.y, r.y, c.ny) < bound);
	assert_true(scaled_err(c.dx, r.dx, c.nx) < bound);
	assert_true(scaled_err(c.dw, r.dw, c.nw) < bound);
	assert_true(scaled_err(c.db, r.db, c.g.k) < bound);
	assert_ran_as_asked(be_conv_kernel(cv), prec, c.g.c < 16, scaled_err(c.y, r.y, c.ny));
	be_conv_free(cv);
	conv_ref_release(&r);
	conv_case_release(&c);
	sbuf_release(&err);
}

static void amp__bf16_and_fp16_convolutions_stay_within_documented_bounds(void **state)
{
	(void)state;
	/* one input channel: the stated fp32 exception */
	check_conv_lp((struct conv_geom){ 4, 12, 12, 1, 32, 3, 3, 1, 1, 0, 0 }, BE_BF16, 2e-2);
	check_conv_lp((struct conv_geom){ 4, 10, 10, 32, 64, 3, 3, 1, 1, 0, 0 }, BE_BF16, 2e-2);
	check_conv_lp((struct conv_geom){ 3, 9, 7, 16, 32, 3, 3, 2, 1, 0, 0 }, BE_BF16, 2e-2);
	/* stride 1: dx runs as a forward with flipped weights, at padding
	 * R-1-pad (here 4 and 1) */
	check_conv_lp((struct conv_geom){ 2, 9, 9, 16, 24, 5, 5, 1, 0, 0, 0 }, BE_BF16, 2e-2);
	check_conv_lp((struct conv_geom){ 2, 8, 6, 16, 16, 3, 3, 1, 1, 0, 0 }, BE_BF16, 2e-2);
	check_conv_lp((struct conv_geom){ 2, 8, 8, 16, 16, 3, 3, 1, 0, 0, 0 }, BE_BF16, 2e-2);
	check_conv_lp((struct conv_geom){ 4, 10, 10, 32, 64, 3, 3, 1, 1, 0, 0 }, BE_FP16, 3e-3);
	check_conv_lp((struct conv_geom){ 3, 8, 8, 16, 32, 1, 1, 2, 0, 0, 0 }, BE_FP16, 3e-3);
}

/* The linear layer's three GEMMs at low precision against the double
 * reference: sums of IN (forward, weight gradient over N) terms, same
 * bounds as the convolutions. */
static void check_linear_lp(int n, int in, int out, enum be_precision prec, double bound)
{
	struct sbuf err = SBUF_INIT;
	struct be_linear *lin = be_linear_create(n, in, out, prec, &err);
	size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
	float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(ny * 4), *dy = malloc(ny * 4);
	float *dx = malloc(nx * 4), *dw = malloc(nw * 4);
	double *b0 = calloc(out, 8), *yd = malloc(ny * 8), *dxd = malloc(nx * 8);
	double *dwd = malloc(nw * 8), *dbd = malloc(out * 8), *xd, *wd, *dyd;

	if (!lin)
		fail_msg("be_linear_create: %s", err.buf);
	fill_normalf(x, nx, 5), fill_normalf(w, nw, 6), fill_normalf(dy, ny, 7);
	assert_int_equal(be_linear_forward(lin, x, w, y, &err), 0);
	assert_int_equal(be_linear_backward(lin, x, w, dy, dx, dw, &err), 0);
	xd = to_f64(x, nx), wd = to_f64(w, nw), dyd = to_f64(dy, ny);
	linear_fwd_ref(n, in, out, xd, wd, b0, yd);
	linear_bwd_ref(n, in, out, xd, wd, dyd, dxd, dwd, dbd);
	print_message("# %s linear %d x %d -> %d: y %.2e dx %.2e dw %.2e (bound %.0e)\n",
		      be_precision_name(prec), n, in, out, scaled_err(y, yd, ny),
		      scaled_err(dx, dxd, nx), scaled_err(dw, dwd, nw), bound);
	assert_true(scaled_err(y, yd, ny) < bound);
	assert_true(scaled_err(dx, dxd, nx) < bound);
	assert_true(scaled_err(dw, dwd, nw) < bound);
	/* fp32 is exact sgemm: far inside any low-precision bound */
	if (prec == BE_FP32)
		assert_true(scaled_err(y, yd, ny) < 1e-5 && scaled_err(dw, dwd, nw) < 1e-5);
	assert_ran_as_asked(be_linear_kernel(lin), prec, false, scaled_err(y, yd, ny));
	be_linear_free(lin);
	free(x), free(w), free(y), free(dy), free(dx), free(dw);
	free(b0), free(yd), free(dxd), free(dwd), free(dbd), free(xd), free(wd), free(dyd);
	sbuf_release(&err);
}

static void amp__bf16_and_fp16_linear_layers_stay_within_documented_bounds(void **state)
{
	(void)state;
	check_linear_lp(16, 200, 24, BE_FP32, 1e-5);
	check_linear_lp(16, 200, 24, BE_BF16, 2e-2);
	check_linear_lp(7, 33, 5, BE_BF16, 2e-2);
	check_linear_lp(16, 200, 24, BE_FP16, 3e-3);
}

static void amp__fp16_rounding_overflows_to_inf_like_the_hardware(void **state)
{
	float x[4] = { 65504.0f, 65520.0f, 1e-8f, 1.0f / 3 }, y[4];

	(void)state;
	be_round_fp16(4, x, y);
	assert_true(y[0] == 65504.0f);
	assert_true(isinf(y[1]));
	assert_true(y[2] == 0.0f); /* below the smallest subnormal, 2^-24 */
	assert_true(fabsf(y[3] - 1.0f / 3) < 1.0f / 4096 && y[3] != 1.0f / 3);
}

static void amp__bf16_rounding_is_to_nearest_even_with_inf_and_nan_kept(void **state)
{
	float x[6] = { 1.00390625f, 1.01171875f, 1.0f / 3, FLT_MAX, -1e-30f, NAN }, y[6];

	(void)state;
	be_round_bf16(6, x, y);
	assert_true(y[0] == 1.0f);       /* 1 + 2^-8: a tie, to the even 1 */
	assert_true(y[1] == 1.015625f);  /* 1 + 3 * 2^-8: a tie, to even 1 + 2^-6 */
	assert_true(y[2] == 0.333984375f);
	assert_true(isinf(y[3]) && y[3] > 0);
	assert_true(y[4] < 0 && fabsf(y[4] + 1e-30f) < 1e-32f);
	assert_true(isnan(y[5]));
}

/* A pass long enough to be split among threads rounds every element
 * as a pass of one element does: the split changes who, not what. */
static void amp__a_long_rounding_pass_equals_one_element_at_a_time(void **state)
{
	size_t n = 100003;
	float *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y)), one;
	uint32_t seed = 12345;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = ((float)(seed >> 8) / (1 << 24) - 0.5f) * 1e5f;
	}
	x[7] = NAN, x[11] = INFINITY, x[n - 1] = 65520.0f;
	be_round_bf16(n, x, y);
	for (size_t i = 0; i < n; i++) {
		be_round_bf16(1, &x[i], &one);
		assert_memory_equal(&y[i], &one, sizeof(one));
	}
	be_round_fp16(n, x, y);
	for (size_t i = 0; i < n; i++) {
		be_round_fp16(1, &x[i], &one);
		assert_memory_equal(&y[i], &one, sizeof(one));
	}
	free(x);
	free(y);
}

/* The max pool after an emulated (fp16: every CPU) convolution rounds
 * its small gradient for it, and the gradients are the bits they are
 * when the convolution rounds its full-size dy itself. */
static void amp__a_pool_rounding_for_its_convolution_changes_no_gradient(void **state)
{
	struct sbuf err = SBUF_INIT;
	struct model m;
	struct layer *conv, *pool;
	int32_t labels[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	size_t nx = 8 * 28 * 28;
	float *x = malloc(nx * sizeof(*x)), *g = malloc(1);
	int64_t correct;

	(void)state;
	assert_int_equal(model_build(&m, MODEL_CNN, (struct shape){ 8, 28, 28, 1 }, 10, LOSS_XENT,
				     BE_FP16, &err), 0);
	model_init(&m, 5);
	conv = &m.net.v[2], pool = &m.net.v[3];
	assert_int_equal(conv->kind, LAYER_CONV);
	assert_true(be_conv_kernel(conv->be)->emulated);
	assert_int_equal(pool->kind, LAYER_MAXPOOL);
	assert_non_null(pool->round_dy);
	fill_normalf(x, nx, 11);
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(model_forward(&m, x, true, 0, &err), 0);
		model_loss(&m, labels, NULL, &correct);
		assert_int_equal(model_backward(&m, NULL, &err), 0);
		if (!pass) {
			g = realloc(g, m.narena * sizeof(*g));
			memcpy(g, m.grads, m.narena * sizeof(*g));
			/* the convolution rounds its own dy again */
			pool->round_dy = NULL;
			be_conv_set_dy_rounded(conv->be, false);
		}
	}
	assert_memory_equal(g, m.grads, m.narena * sizeof(*g));
	model_release(&m);
	free(x);
	free(g);
	sbuf_release(&err);
}

/* Each vector width the CPU has (baseline, AVX2, AVX-512, chosen by
 * the cap) rounds to the same bits, in place too. */
static void amp__every_vector_width_rounds_to_the_same_bits(void **state)
{
	const enum cpu_isa caps[] = { CPU_ISA_AVX2, CPU_ISA_AVX512_CORE, CPU_ISA_ALL };
	size_t n = 70001;
	float *x = malloc(n * sizeof(*x)), *base = malloc(n * sizeof(*base)),
	      *y = malloc(n * sizeof(*y));
	uint32_t seed = 777;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		uint32_t u;

		seed = seed * 1664525u + 1013904223u;
		u = seed;
		memcpy(&x[i], &u, 4); /* every bit pattern: NaNs, subnormals, huge */
	}
	for (int p = 0; p < 2; p++) {
		void (*round)(size_t, const float *, float *) = p ? be_round_fp16 : be_round_bf16;

		cpu_isa_set_level(CPU_ISA_BASELINE);
		round(n, x, base);
		for (size_t c = 0; c < sizeof(caps) / sizeof(*caps); c++) {
			cpu_isa_set_level(caps[c]);
			round(n, x, y);
			assert_memory_equal(y, base, n * sizeof(*y));
			memcpy(y, x, n * sizeof(*y));
			round(n, y, y);
			assert_memory_equal(y, base, n * sizeof(*y));
		}
	}
	cpu_isa_set_level(CPU_ISA_ALL);
	free(x);
	free(base);
	free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(amp__an_injected_inf_skips_the_step_and_halves_the_scale),
		cmocka_unit_test(amp__an_fp16_forward_overflow_is_a_skipped_step_not_divergence),
		cmocka_unit_test(amp__doubles_the_scale_after_the_growth_interval),
		cmocka_unit_test(amp__a_disabled_scaler_changes_nothing),
		cmocka_unit_test(amp__scaler_state_survives_a_checkpoint_round_trip),
		cmocka_unit_test(amp__bf16_and_fp16_convolutions_stay_within_documented_bounds),
		cmocka_unit_test(amp__bf16_and_fp16_linear_layers_stay_within_documented_bounds),
		cmocka_unit_test(amp__fp16_rounding_overflows_to_inf_like_the_hardware),
		cmocka_unit_test(amp__bf16_rounding_is_to_nearest_even_with_inf_and_nan_kept),
		cmocka_unit_test(amp__a_long_rounding_pass_equals_one_element_at_a_time),
		cmocka_unit_test(amp__every_vector_width_rounds_to_the_same_bits),
		cmocka_unit_test(amp__a_pool_rounding_for_its_convolution_changes_no_gradient),
	};

	return cmocka_run_group_tests(tests, setup_backend, NULL);
}
