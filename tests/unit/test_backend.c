/* test_backend.c - the oneDNN backend against the double-precision
 * reference kernels on random inputs (fp32 tolerances), and the layer
 * graph's composite pieces (flatten order, residual blocks) against
 * finite differences. */
#include "tests/unit/convlib.h"
#include "tests/unit/trainlib.h"
#include "trainer/cpu/backend.h"
#include "trainer/kernels/cpu_isa.h"
#include "trainer/kernels/kernels.h"
#include "trainer/model/layer.h"
#include "trainer/model/model.h"
#include "common/sbuf.h"
#include "common/spec/spec.h"

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

static double *to_f64(const float *f, size_t n)
{
	double *d = malloc(n * sizeof(*d));

	for (size_t i = 0; i < n; i++)
		d[i] = f[i];
	return d;
}

static float *to_f32(const double *d, size_t n)
{
	float *f = malloc(n * sizeof(*f));

	for (size_t i = 0; i < n; i++)
		f[i] = (float)d[i];
	return f;
}

/* a against the reference d rounded to fp32 */
#define assert_close_ref(a, d, n, atol, rtol)                 \
	do {                                                  \
		float *ref_ = to_f32(d, n);                   \
		assert_close(a, ref_, n, atol, rtol);         \
		free(ref_);                                   \
	} while (0)

static void check_conv(struct conv_geom g, unsigned flags)
{
	struct sbuf err = SBUF_INIT;
	struct conv_ref r = { 0 };
	struct conv_case c;
	struct be_conv *cv;

	conv_case_init(&c, g);
	cv = be_conv_create(&c.g, flags, BE_FP32, &err);
	if (!cv)
		fail_msg("be_conv_create: %s", err.buf);
	assert_int_equal(be_conv_forward(cv, c.x, c.w, c.b, c.y, &err), 0);
	conv_ref_forward(&r, &c, flags & BE_RELU);
	assert_close_ref(c.y, r.y, c.ny, 1e-4, 1e-4);
	if (flags & BE_RELU)
		relu_bwd_f32(c.ny, c.y, c.dy, c.dy);
	assert_int_equal(be_conv_backward(cv, c.x, c.dy, (flags & BE_NEED_DX) ? c.dx : NULL, c.dw,
					  c.db, &err), 0);
	conv_ref_backward(&r, &c);
	if (flags & BE_NEED_DX)
		assert_close_ref(c.dx, r.dx, c.nx, 1e-4, 1e-4);
	assert_close_ref(c.dw, r.dw, c.nw, 1e-3, 1e-4);
	assert_close_ref(c.db, r.db, c.g.k, 1e-3, 1e-4);
	be_conv_free(cv);
	conv_ref_release(&r);
	conv_case_release(&c);
	sbuf_release(&err);
}

static void backend__convolutions_match_the_reference(void **state)
{
	(void)state;
	check_conv((struct conv_geom){ 4, 12, 12, 1, 32, 3, 3, 1, 1, 0, 0 }, BE_RELU);
	check_conv((struct conv_geom){ 4, 10, 10, 32, 64, 3, 3, 1, 1, 0, 0 }, BE_RELU | BE_NEED_DX);
	check_conv((struct conv_geom){ 3, 9, 7, 16, 32, 3, 3, 2, 1, 0, 0 }, BE_NEED_DX);
	check_conv((struct conv_geom){ 3, 8, 8, 16, 32, 1, 1, 2, 0, 0, 0 }, BE_NEED_DX);
}

/* ties: x is rounded to halves and clipped at 0, as after a ReLU, so
 * windows hold equal maxima and the first-maximum rule is exercised. */
static void check_pool(struct pool_geom g, bool max, bool ties)
{
	struct sbuf err = SBUF_INIT;
	struct be_pool *pl;
	size_t nx, ny;
	float *x, *y, *dy, *dx, *ref;
	double *xd, *yd, *dyd, *dxd;

	assert_int_equal(pool_geom_finish(&g), 0);
	nx = (size_t)g.n * g.h * g.w * g.c, ny = (size_t)g.n * g.p * g.q * g.c;
	x = malloc(nx * 4), y = malloc(ny * 4), dy = malloc(ny * 4), dx = malloc(nx * 4);
	fill_normalf(x, nx, 5), fill_normalf(dy, ny, 6);
	for (size_t i = 0; ties && i < nx; i++)
		x[i] = x[i] > 0 ? roundf(2 * x[i]) / 2 : 0;
	pl = be_pool_create(&g, max, BE_NEED_DX, BE_FP32, &err);
	assert_non_null(pl);
	assert_int_equal(be_pool_forward(pl, x, y, &err), 0);
	assert_int_equal(be_pool_backward(pl, dy, dx, &err), 0);
	xd = to_f64(x, nx), dyd = to_f64(dy, ny), yd = malloc(ny * 8), dxd = malloc(nx * 8);
	if (max) {
		maxpool_fwd_ref(&g, xd, yd);
		maxpool_bwd_ref(&g, xd, dyd, dxd);
	} else {
		avgpool_fwd_ref(&g, xd, yd);
		avgpool_bwd_ref(&g, dyd, dxd);
	}
	ref = to_f32(yd, ny);
	assert_close(y, ref, ny, 1e-6, 1e-5);
	free(ref);
	ref = to_f32(dxd, nx);
	assert_close(dx, ref, nx, 1e-6, 1e-5);
	free(ref);
	be_pool_free(pl);
	free(x), free(y), free(dy), free(dx), free(xd), free(yd), free(dyd), free(dxd);
	sbuf_release(&err);
}

/* Capped at AVX2 (8 channels a vector), the fused layer gives the
 * bits it gave at this CPU's widest (AVX-512 where it has it). */
static void same_bits_at_avx2(const struct conv_geom *g, const float *x, const float *wt,
			      const float *b, const float *dy, const float *y, const int32_t *arg,
			      const float *dw, const float *db)
{
	size_t ny = (size_t)g->n * (g->h / 2) * (g->w / 2) * g->k, nw = (size_t)g->k * 9;
	float *y2 = malloc(ny * 4), *dw2 = malloc(nw * 4), *db2 = malloc(g->k * 4);
	int32_t *arg2 = malloc(ny * 4);
	double *part = malloc((size_t)g->n * 10 * g->k * 8);
	enum cpu_isa was = cpu_isa_level();

	cpu_isa_set_level(CPU_ISA_AVX2);
	assert_string_equal(conv1pool_isa(), "avx2");
	conv1pool_fwd_f32(g, x, wt, b, y2, arg2);
	conv1pool_bwd_f32(g, x, y2, dy, arg2, part, dw2, db2);
	cpu_isa_set_level(was);
	assert_memory_equal(y2, y, ny * 4);
	assert_memory_equal(arg2, arg, ny * 4);
	assert_memory_equal(dw2, dw, nw * 4);
	assert_memory_equal(db2, db, (size_t)g->k * 4);
	free(y2), free(dw2), free(db2), free(arg2), free(part);
}

/* The fused first layer (kernels/conv1pool.c) against the unfused
 * reference in double: convolution, ReLU, max pooling, and back through
 * the pooling (masked by the ReLU) to the weight gradient.  ties: x and
 * w are small integers and b is 0.5, so convolution outputs are exact
 * and windows hold equal maxima: the first-maximum rule is checked. */
static void check_conv1pool(int n, int h, int w, int k, bool ties)
{
	struct conv_geom g = { n, h, w, 1, k, 3, 3, 1, 1, 0, 0 };
	struct pool_geom pg = { n, h, w, k, 2, 2, 0, 0 };
	size_t nx, nc, ny, nw = (size_t)k * 9;
	float *x, *wt, *b, *y, *dy, *dw, *db, *ref;
	int32_t *arg;
	double *part, *xd, *wd, *bd, *cd, *yd, *dyd, *dcd, *dwd, *dbd;

	assert_int_equal(conv_geom_finish(&g), 0);
	assert_int_equal(pool_geom_finish(&pg), 0);
	if (!conv1pool_fits(&g))
		skip(); /* no AVX2 and FMA: the model runs the layers unfused */
	nx = (size_t)n * h * w, nc = nx * k, ny = (size_t)n * pg.p * pg.q * k;
	x = malloc(nx * 4), wt = malloc(nw * 4), b = malloc(k * 4), y = malloc(ny * 4);
	dy = malloc(ny * 4), dw = malloc(nw * 4), db = malloc(k * 4), arg = malloc(ny * 4);
	part = malloc((size_t)n * 10 * k * 8);
	fill_normalf(x, nx, 7), fill_normalf(wt, nw, 8), fill_normalf(b, k, 9);
	fill_normalf(dy, ny, 10);
	for (size_t i = 0; ties && i < nx; i++)
		x[i] = roundf(x[i]);
	for (size_t i = 0; ties && i < nw; i++)
		wt[i] = roundf(wt[i]);
	for (int i = 0; ties && i < k; i++)
		b[i] = 0.5f;
	conv1pool_fwd_f32(&g, x, wt, b, y, arg);
	conv1pool_bwd_f32(&g, x, y, dy, arg, part, dw, db);
	same_bits_at_avx2(&g, x, wt, b, dy, y, arg, dw, db);

	xd = to_f64(x, nx), wd = to_f64(wt, nw), bd = to_f64(b, k), dyd = to_f64(dy, ny);
	cd = malloc(nc * 8), yd = malloc(ny * 8), dcd = malloc(nc * 8);
	dwd = malloc(nw * 8), dbd = malloc(k * 8);
	conv2d_fwd_ref(&g, xd, wd, bd, cd);
	for (size_t i = 0; i < nc; i++)
		cd[i] = cd[i] > 0 ? cd[i] : 0;
	maxpool_fwd_ref(&pg, cd, yd);
	for (size_t i = 0; i < ny; i++)
		dyd[i] = yd[i] > 0 ? dyd[i] : 0;
	maxpool_bwd_ref(&pg, cd, dyd, dcd);
	conv2d_bwd_weights_ref(&g, xd, dcd, dwd, dbd);
	ref = to_f32(yd, ny);
	assert_close(y, ref, ny, 1e-5, 1e-5);
	free(ref);
	ref = to_f32(dwd, nw);
	assert_close(dw, ref, nw, 1e-4, 1e-4);
	free(ref);
	ref = to_f32(dbd, k);
	assert_close(db, ref, k, 1e-4, 1e-4);
	free(ref);
	free(x), free(wt), free(b), free(y), free(dy), free(dw), free(db), free(arg), free(part);
	free(xd), free(wd), free(bd), free(cd), free(yd), free(dyd), free(dcd), free(dwd), free(dbd);
}

static void backend__fused_first_layer_matches_conv_relu_maxpool(void **state)
{
	(void)state;
	check_conv1pool(3, 28, 28, 32, false); /* the cnn's */
	check_conv1pool(2, 7, 9, 12, false);   /* floor mode, channels not a multiple of 8 */
	check_conv1pool(2, 8, 8, 16, true);    /* equal maxima */
	check_conv1pool(2, 2, 2, 3, true);     /* one window, padding all round */
}

static void backend__pooling_matches_the_reference(void **state)
{
	(void)state;
	check_pool((struct pool_geom){ 3, 14, 14, 32, 2, 2, 0, 0 }, true, false);
	check_pool((struct pool_geom){ 3, 7, 7, 16, 2, 2, 0, 0 }, true, false); /* floor mode */
	check_pool((struct pool_geom){ 3, 14, 14, 32, 2, 2, 0, 0 }, true, true);
	check_pool((struct pool_geom){ 2, 9, 9, 13, 3, 2, 0, 0 }, true, true); /* overlap, odd c */
	check_pool((struct pool_geom){ 2, 11, 10, 6, 2, 3, 0, 0 }, true, false); /* gaps */
	check_pool((struct pool_geom){ 2, 7, 7, 64, 7, 1, 0, 0 }, false, false);
}

static void backend__gemm_matches_the_reference_linear_layer(void **state)
{
	enum { N = 5, IN = 37, OUT = 11 };
	float x[N * IN], w[OUT * IN], y[N * OUT], dy[N * OUT], dx[N * IN], dw[OUT * IN], *ref;
	double xd[N * IN], wd[OUT * IN], yd[N * OUT], dyd[N * OUT], dxd[N * IN], dwd[OUT * IN];
	struct sbuf err = SBUF_INIT;

	(void)state;
	fill_normalf(x, N * IN, 7), fill_normalf(w, OUT * IN, 8), fill_normalf(dy, N * OUT, 9);
	for (int i = 0; i < N * IN; i++)
		xd[i] = x[i];
	for (int i = 0; i < OUT * IN; i++)
		wd[i] = w[i];
	for (int i = 0; i < N * OUT; i++)
		dyd[i] = dy[i];
	assert_int_equal(be_gemm('n', 't', N, OUT, IN, 1, x, IN, w, IN, 0, y, OUT, &err), 0);
	assert_int_equal(be_gemm('n', 'n', N, IN, OUT, 1, dy, OUT, w, IN, 0, dx, IN, &err), 0);
	assert_int_equal(be_gemm('t', 'n', OUT, IN, N, 1, dy, OUT, x, IN, 0, dw, IN, &err), 0);
	linear_fwd_ref(N, IN, OUT, xd, wd, NULL, yd);
	linear_bwd_ref(N, IN, OUT, xd, wd, dyd, dxd, dwd, NULL);
	ref = to_f32(yd, N * OUT);
	assert_close(y, ref, N * OUT, 1e-5, 1e-5);
	free(ref);
	ref = to_f32(dxd, N * IN);
	assert_close(dx, ref, N * IN, 1e-5, 1e-5);
	free(ref);
	ref = to_f32(dwd, OUT * IN);
	assert_close(dw, ref, OUT * IN, 1e-5, 1e-5);
	free(ref);
}

/* The arena offset of parameter k, counting the tensors back to back. */
static size_t arena_index(const struct model *m, size_t k)
{
	for (size_t i = 0; i < m->nspans; i++) {
		if (k < m->spans[i].n)
			return m->spans[i].off + k;
		k -= m->spans[i].n;
	}
	fail_msg("parameter %zu of %zu", k, m->nparams);
	return 0;
}

/* Directional derivative of L = <model logits, r> along a sparse random
 * d, in fp32 with a large step: catches wiring errors in composite
 * layers (residual blocks, shortcuts, batch norm inside), not rounding. */
static void check_model_directional(int kind, struct shape in, int outputs)
{
	struct model m;
	struct sbuf err = SBUF_INIT;
	size_t nz = (size_t)in.n * outputs, np;
	float *r, *d, *g, *keep;
	double lp = 0, lm = 0, dot = 0, h = 1e-3;

	if (model_build(&m, kind, in, outputs, LOSS_XENT, BE_FP32, &err))
		fail_msg("model_build: %s", err.buf);
	model_init(&m, 3);
	np = m.narena;
	float *x = malloc(shape_count(in) * 4);
	r = malloc(nz * 4), d = malloc(np * 4), g = malloc(np * 4), keep = malloc(np * 4);
	fill_normalf(x, shape_count(in), 10), fill_normalf(r, nz, 11);
	/* A sparse direction: 64 coordinates spread over every layer, +-1,
	 * picked among the parameters (not the arena's alignment gaps). */
	memset(d, 0, np * 4);
	for (size_t i = 0; i < 64; i++)
		d[arena_index(&m, (i * 7919 + i * i * 104729) % m.nparams)] = i % 2 ? 1.0f : -1.0f;
	assert_int_equal(model_forward(&m, x, true, 1, &err), 0);
	memcpy(m.dlogits, r, nz * 4);
	assert_int_equal(model_backward(&m, NULL, &err), 0);
	memcpy(g, m.grads, np * 4);
	memcpy(keep, m.params, np * 4);
	for (size_t i = 0; i < np; i++)
		dot += (double)g[i] * d[i];
	for (int sgn = 1; sgn >= -1; sgn -= 2) {
		double s = 0;

		for (size_t i = 0; i < np; i++)
			m.params[i] = keep[i] + (float)(sgn * h * d[i]);
		assert_int_equal(model_forward(&m, x, true, 1, &err), 0);
		for (size_t i = 0; i < nz; i++)
			s += (double)model_logits(&m)[i] * r[i];
		if (sgn > 0)
			lp = s;
		else
			lm = s;
	}
	if (fabs((lp - lm) / (2 * h) - dot) > 2e-2 * (1 + fabs(dot)))
		fail_msg("model %d: directional derivative %.6g, backward %.6g", kind,
			 (lp - lm) / (2 * h), dot);
	model_release(&m);
	free(x), free(r), free(d), free(g), free(keep);
	sbuf_release(&err);
}

static void backend__every_model_backward_matches_a_directional_derivative(void **state)
{
	(void)state;
	check_model_directional(MODEL_MLP, (struct shape){ 4, 6, 6, 1 }, 3);
	check_model_directional(MODEL_CNN, (struct shape){ 4, 8, 8, 1 }, 3);
	check_model_directional(MODEL_HEPCNN, (struct shape){ 4, 16, 16, 1 }, 2);
	check_model_directional(MODEL_RESNET_SMALL, (struct shape){ 4, 8, 8, 2 }, 3);
}

static void backend__flatten_uses_pytorch_chw_order(void **state)
{
	struct seq s = { 0 };
	struct layer *l;
	struct sbuf err = SBUF_INIT;
	float x[2 * 2 * 3 * 4], back[24];

	(void)state;
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	l = seq_push(&s, LAYER_FLATTEN, (struct shape){ 1, 2, 3, 4 });
	l->out = (struct shape){ 1, 1, 1, 24 };
	assert_int_equal(seq_setup(&s, &err), 0);
	assert_int_equal(seq_forward(&s, x, true, 0, &err), 0);
	/* NHWC element (h=1, w=2, c=3) is x[(1*3+2)*4+3] = 23; CHW index 3*6+1*3+2 = 23. */
	assert_float_equal(seq_output(&s)[3 * 6 + 1 * 3 + 2], 23.0f, 0);
	/* NHWC (h=0, w=1, c=2) = x[6]; CHW 2*6 + 0 + 1 = 13. */
	assert_float_equal(seq_output(&s)[13], 6.0f, 0);
	memcpy(back, seq_output(&s), sizeof(back));
	s.v[0].need_dx = true;
	assert_int_equal(seq_backward(&s, back, x, NULL, &err), 0);
	for (int i = 0; i < 24; i++)
		assert_float_equal(x[i], (float)i, 0);
	seq_release(&s);
}

static void backend__arena_is_laid_out_in_reverse_layer_order(void **state)
{
	struct model m;
	struct sbuf err = SBUF_INIT;
	size_t prev_lo = SIZE_MAX;

	(void)state;
	assert_int_equal(model_build(&m, MODEL_CNN, (struct shape){ 2, 8, 8, 1 }, 10, LOSS_XENT, BE_FP32, &err), 0);
	for (size_t i = 0; i < m.net.n; i++) {
		struct layer *l = &m.net.v[i];

		if (!l->nw)
			continue;
		assert_true(l->arena_hi <= prev_lo);
		prev_lo = l->arena_lo;
	}
	assert_int_equal(prev_lo, 0);
	assert_int_equal(m.net.v[0].arena_hi, m.narena);
	model_release(&m);
	sbuf_release(&err);
}

/* Every tensor of every bundled model 256 bytes into its arena (the
 * cnn's fc1 was at float 1290 and hepcnn's at 129 when the tensors were
 * packed back to back), the gaps zero after model_init, and the tensors
 * add up to the model's parameters. */
static void backend__every_arena_tensor_is_256_byte_aligned(void **state)
{
	static const struct shape in[] = { { 2, 8, 8, 1 }, { 2, 8, 8, 1 }, { 2, 16, 16, 1 },
					   { 2, 8, 8, 2 } };
	struct sbuf err = SBUF_INIT;

	(void)state;
	for (int kind = MODEL_MLP; kind <= MODEL_RESNET_SMALL; kind++) {
		struct model m;
		size_t total = 0, end = 0;

		assert_int_equal(model_build(&m, kind, in[kind], 10, LOSS_XENT, BE_FP32, &err), 0);
		model_init(&m, 1);
		assert_true(m.nspans >= 2);
		for (size_t i = 0; i < m.nspans; i++) {
			assert_int_equal(m.spans[i].off * sizeof(float) % 256, 0);
			assert_true(m.spans[i].off >= end);
			for (size_t j = end; j < m.spans[i].off; j++)
				assert_true(m.params[j] == 0 && m.grads[j] == 0);
			end = m.spans[i].off + m.spans[i].n;
			total += m.spans[i].n;
		}
		assert_int_equal(total, m.nparams);
		assert_int_equal(arena_align(end), m.narena);
		assert_true(m.narena - m.nparams < m.nspans * ARENA_ALIGN);
		model_release(&m);
	}
	assert_int_equal(arena_align(0), 0);
	assert_int_equal(arena_align(1), 64);
	assert_int_equal(arena_align(1290), 1344);
	assert_int_equal(arena_align(1344), 1344);
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(backend__convolutions_match_the_reference),
		cmocka_unit_test(backend__pooling_matches_the_reference),
		cmocka_unit_test(backend__fused_first_layer_matches_conv_relu_maxpool),
		cmocka_unit_test(backend__gemm_matches_the_reference_linear_layer),
		cmocka_unit_test(backend__every_model_backward_matches_a_directional_derivative),
		cmocka_unit_test(backend__flatten_uses_pytorch_chw_order),
		cmocka_unit_test(backend__arena_is_laid_out_in_reverse_layer_order),
		cmocka_unit_test(backend__every_arena_tensor_is_256_byte_aligned),
	};

	return cmocka_run_group_tests(tests, setup_backend, NULL);
}
