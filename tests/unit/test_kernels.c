/* test_kernels.c - finite-difference gradient checks, in double, of every
 * op's reference kernel (convolution, pooling, linear) and of the
 * pointwise kernels (ReLU, batch norm, dropout, losses) that train, and
 * synchronised batch norm split over two ranks against the whole batch.
 *
 * Each check projects the op's output on a fixed random r, L = <y, r>,
 * and compares the backward pass fed with dy = r against central
 * differences of L in every input and parameter coordinate. */
#include "tests/unit/trainlib.h"
#include "trainer/kernels/kernels.h"

#define H 1e-6
#define TOL 1e-6

/* f(ctx) -> y[ny]; x[i] perturbed in place. */
typedef void (*fwd_fn)(void *ctx, double *y);

static double project(fwd_fn f, void *ctx, const double *r, double *y, size_t ny)
{
	double s = 0;

	f(ctx, y);
	for (size_t i = 0; i < ny; i++)
		s += y[i] * r[i];
	return s;
}

/* Checks grad (analytic dL/dx) against central differences of x. */
static void fd_check(fwd_fn f, void *ctx, double *x, size_t nx, const double *grad,
		     const double *r, size_t ny, const char *what)
{
	double *y = malloc(ny * sizeof(*y));

	for (size_t i = 0; i < nx; i++) {
		double keep = x[i], lp, lm, num;

		x[i] = keep + H;
		lp = project(f, ctx, r, y, ny);
		x[i] = keep - H;
		lm = project(f, ctx, r, y, ny);
		x[i] = keep;
		num = (lp - lm) / (2 * H);
		if (fabs(num - grad[i]) > TOL * (1 + fabs(num)))
			fail_msg("%s[%zu]: backward %.12g, finite differences %.12g", what, i,
				 grad[i], num);
	}
	free(y);
}

struct conv_ctx {
	struct conv_geom g;
	double *x, *w, *b;
};

static void conv_f(void *c, double *y)
{
	struct conv_ctx *k = c;

	conv2d_fwd_ref(&k->g, k->x, k->w, k->b, y);
}

static void check_conv(int stride, int pad, int ksize)
{
	struct conv_ctx k = { { 2, 7, 6, 3, 4, ksize, ksize, stride, pad, 0, 0 }, 0, 0, 0 };
	size_t nx, nw, ny;
	double *r, *dx, *dw, *db;

	assert_int_equal(conv_geom_finish(&k.g), 0);
	nx = (size_t)k.g.n * k.g.h * k.g.w * k.g.c;
	nw = (size_t)k.g.k * k.g.c * k.g.r * k.g.s;
	ny = (size_t)k.g.n * k.g.p * k.g.q * k.g.k;
	k.x = malloc(nx * 8);
	k.w = malloc(nw * 8);
	k.b = malloc(k.g.k * 8);
	r = malloc(ny * 8);
	dx = malloc(nx * 8);
	dw = malloc(nw * 8);
	db = malloc(k.g.k * 8);
	fill_normal(k.x, nx, 1);
	fill_normal(k.w, nw, 2);
	fill_normal(k.b, k.g.k, 3);
	fill_normal(r, ny, 4);
	conv2d_bwd_data_ref(&k.g, r, k.w, dx);
	conv2d_bwd_weights_ref(&k.g, k.x, r, dw, db);
	fd_check(conv_f, &k, k.x, nx, dx, r, ny, "conv dx");
	fd_check(conv_f, &k, k.w, nw, dw, r, ny, "conv dw");
	fd_check(conv_f, &k, k.b, k.g.k, db, r, ny, "conv db");
	free(k.x), free(k.w), free(k.b), free(r), free(dx), free(dw), free(db);
}

static void kernels__conv_gradients_match_finite_differences(void **state)
{
	(void)state;
	check_conv(1, 1, 3);
	check_conv(2, 1, 3);
	check_conv(2, 0, 1);
}

struct pool_ctx {
	struct pool_geom g;
	double *x;
	int max;
};

static void pool_f(void *c, double *y)
{
	struct pool_ctx *k = c;

	if (k->max)
		maxpool_fwd_ref(&k->g, k->x, y);
	else
		avgpool_fwd_ref(&k->g, k->x, y);
}

static void kernels__pooling_gradients_match_finite_differences(void **state)
{
	for (int max = 0; max < 2; max++) {
		struct pool_ctx k = { { 2, 6, 5, 3, 2, 2, 0, 0 }, NULL, max };
		size_t nx, ny;
		double *r, *dx;

		(void)state;
		assert_int_equal(pool_geom_finish(&k.g), 0);
		nx = (size_t)k.g.n * k.g.h * k.g.w * k.g.c;
		ny = (size_t)k.g.n * k.g.p * k.g.q * k.g.c;
		k.x = malloc(nx * 8);
		r = malloc(ny * 8);
		dx = malloc(nx * 8);
		fill_normal(k.x, nx, 5);
		fill_normal(r, ny, 6);
		if (max)
			maxpool_bwd_ref(&k.g, k.x, r, dx);
		else
			avgpool_bwd_ref(&k.g, r, dx);
		fd_check(pool_f, &k, k.x, nx, dx, r, ny, max ? "maxpool dx" : "avgpool dx");
		free(k.x), free(r), free(dx);
	}
}

struct lin_ctx {
	int n, in, out;
	double *x, *w, *b;
};

static void lin_f(void *c, double *y)
{
	struct lin_ctx *k = c;

	linear_fwd_ref(k->n, k->in, k->out, k->x, k->w, k->b, y);
}

static void kernels__linear_gradients_match_finite_differences(void **state)
{
	struct lin_ctx k = { 3, 5, 4, 0, 0, 0 };
	double x[15], w[20], b[4], r[12], dx[15], dw[20], db[4];

	(void)state;
	k.x = x, k.w = w, k.b = b;
	fill_normal(x, 15, 7);
	fill_normal(w, 20, 8);
	fill_normal(b, 4, 9);
	fill_normal(r, 12, 10);
	linear_bwd_ref(3, 5, 4, x, w, r, dx, dw, db);
	fd_check(lin_f, &k, x, 15, dx, r, 12, "linear dx");
	fd_check(lin_f, &k, w, 20, dw, r, 12, "linear dw");
	fd_check(lin_f, &k, b, 4, db, r, 12, "linear db");
}

struct pw_ctx {
	size_t n;
	double *x, *g, *b, p;
	uint64_t key;
	int c;
};

static void relu_f(void *c, double *y)
{
	struct pw_ctx *k = c;

	relu_fwd_f64(k->n, k->x, y);
}

static void dropout_f(void *c, double *y)
{
	struct pw_ctx *k = c;

	dropout_fwd_f64(k->n, k->x, y, k->p, k->key);
}

static void kernels__relu_and_dropout_gradients_match_finite_differences(void **state)
{
	double x[40], y[40], r[40], dx[40];
	struct pw_ctx k = { 40, x, 0, 0, 0.3, 77, 0 };
	int dropped = 0;

	(void)state;
	fill_normal(x, 40, 11);
	fill_normal(r, 40, 12);
	relu_fwd_f64(40, x, y);
	relu_bwd_f64(40, y, r, dx);
	fd_check(relu_f, &k, x, 40, dx, r, 40, "relu dx");
	dropout_bwd_f64(40, r, dx, 0.3, 77);
	fd_check(dropout_f, &k, x, 40, dx, r, 40, "dropout dx");
	dropout_fwd_f64(40, x, y, 0.3, 77);
	for (int i = 0; i < 40; i++)
		dropped += y[i] == 0;
	assert_in_range(dropped, 4, 24); /* p = 0.3 of 40, loosely */
}

static void bn_f(void *c, double *y)
{
	struct pw_ctx *k = c;
	double mean[4], invstd[4], var[4];

	batchnorm_fwd_train_f64(k->n / k->c, k->c, k->x, k->g, k->b, 1e-5, y, mean, invstd, var);
}

static void kernels__batchnorm_gradients_match_finite_differences(void **state)
{
	enum { M = 10, C = 3 };
	double x[M * C], y[M * C], r[M * C], dx[M * C], g[C], b[C], dg[C], db[C];
	double mean[C], invstd[C], var[C];
	struct pw_ctx k = { M * C, x, g, b, 0, 0, C };

	(void)state;
	fill_normal(x, M * C, 13);
	fill_normal(r, M * C, 14);
	fill_normal(g, C, 15);
	fill_normal(b, C, 16);
	batchnorm_fwd_train_f64(M, C, x, g, b, 1e-5, y, mean, invstd, var);
	batchnorm_bwd_f64(M, C, x, r, g, mean, invstd, dx, dg, db);
	fd_check(bn_f, &k, x, M * C, dx, r, M * C, "batchnorm dx");
	fd_check(bn_f, &k, g, C, dg, r, M * C, "batchnorm dgamma");
	fd_check(bn_f, &k, b, C, db, r, M * C, "batchnorm dbeta");
}

/* Synchronised batch norm over two "ranks": rows [0, m0) and [m0, m)
 * of x, each normalised with the sum of both ranks' partial sums, as
 * the allreduce in comm.c would give them. */
struct bn2_ctx {
	size_t m, m0;
	int c;
	double *x, *g, *b;
	double mean[4], invstd[4], var[4], sums[2][9], tot[9];
};

static void bn2_sum(struct bn2_ctx *k, int n)
{
	for (int j = 0; j < n; j++)
		k->tot[j] = k->sums[0][j] + k->sums[1][j];
}

static void bn2_f(void *c, double *y)
{
	struct bn2_ctx *k = c;
	size_t m1 = k->m - k->m0, off = k->m0 * k->c;

	batchnorm_sums_f64(k->m0, k->c, k->x, k->sums[0]);
	batchnorm_sums_f64(m1, k->c, k->x + off, k->sums[1]);
	bn2_sum(k, 2 * k->c + 1);
	batchnorm_fwd_sync_f64(k->m0, k->c, k->x, k->g, k->b, 1e-5, k->tot, y, k->mean, k->invstd,
			       k->var);
	batchnorm_fwd_sync_f64(m1, k->c, k->x + off, k->g, k->b, 1e-5, k->tot, y + off, k->mean,
			       k->invstd, k->var);
}

/* Backward of bn2_f at its last forward: dgamma and dbeta are the sum
 * of the ranks' own sums (what the gradient allreduce does). */
static void bn2_bwd(struct bn2_ctx *k, const double *dy, double *dx, double *dg, double *db)
{
	size_t m1 = k->m - k->m0, off = k->m0 * k->c;

	batchnorm_bwd_sums_f64(k->m0, k->c, k->x, dy, k->mean, k->invstd, k->sums[0]);
	batchnorm_bwd_sums_f64(m1, k->c, k->x + off, dy + off, k->mean, k->invstd, k->sums[1]);
	bn2_sum(k, 2 * k->c);
	for (int j = 0; j < k->c; j++)
		db[j] = k->tot[j], dg[j] = k->tot[k->c + j];
	batchnorm_bwd_sync_f64(k->m0, k->c, k->x, dy, k->g, k->mean, k->invstd, k->tot,
			       (double)k->m, dx);
	batchnorm_bwd_sync_f64(m1, k->c, k->x + off, dy + off, k->g, k->mean, k->invstd, k->tot,
			       (double)k->m, dx + off);
}

static void kernels__sync_batchnorm_gradients_over_two_ranks_match_finite_differences(void **state)
{
	enum { M = 10, C = 4 };
	double x[M * C], y[M * C], r[M * C], dx[M * C], g[C], b[C], dg[C], db[C];
	struct bn2_ctx k = { M, 4, C, x, g, b, { 0 }, { 0 }, { 0 }, { { 0 } }, { 0 } };

	(void)state;
	fill_normal(x, M * C, 21);
	fill_normal(r, M * C, 22);
	fill_normal(g, C, 23);
	fill_normal(b, C, 24);
	for (int i = 0; i < M * C; i++)
		x[i] = 3 + 2 * x[i]; /* a mean well away from 0: E[x^2] - mean^2 at work */
	bn2_f(&k, y);
	bn2_bwd(&k, r, dx, dg, db);
	fd_check(bn2_f, &k, x, M * C, dx, r, M * C, "sync batchnorm dx");
	fd_check(bn2_f, &k, g, C, dg, r, M * C, "sync batchnorm dgamma");
	fd_check(bn2_f, &k, b, C, db, r, M * C, "sync batchnorm dbeta");
}

/* Two ranks of 24 and 40 rows with summed partial statistics give, in
 * fp32, what batch norm on all 64 rows gives: the contract of
 * train.batchnorm: sync. */
static void kernels__sync_batchnorm_on_two_halves_equals_batchnorm_on_the_whole_batch(void **state)
{
	enum { M = 64, M0 = 24, C = 8 };
	float x[M * C], dy[M * C], g[C], b[C], y[M * C], dx[M * C], mean[C], inv[C], var[C];
	float dg[C], db[C], ys[M * C], dxs[M * C], ms[C], is[C], vs[C], dgs[C], dbs[C];
	double sums[2][2 * C + 1], tot[2 * C + 1];
	const size_t rows[2] = { M0, M - M0 }, off[2] = { 0, M0 * C };

	(void)state;
	fill_normalf(x, M * C, 25);
	fill_normalf(dy, M * C, 26);
	fill_normalf(g, C, 27);
	fill_normalf(b, C, 28);
	for (int i = 0; i < M * C; i++)
		x[i] = 0.5f + 1.5f * x[i];
	batchnorm_fwd_train_f32(M, C, x, g, b, 1e-5, y, mean, inv, var);
	batchnorm_bwd_f32(M, C, x, dy, g, mean, inv, dx, dg, db);
	for (int p = 0; p < 2; p++)
		batchnorm_sums_f32(rows[p], C, x + off[p], sums[p]);
	for (int j = 0; j < 2 * C + 1; j++)
		tot[j] = sums[0][j] + sums[1][j];
	for (int p = 0; p < 2; p++)
		batchnorm_fwd_sync_f32(rows[p], C, x + off[p], g, b, 1e-5, tot, ys + off[p], ms, is, vs);
	assert_close(ys, y, M * C, 1e-6, 1e-5);
	assert_close(ms, mean, C, 1e-6, 1e-5);
	assert_close(is, inv, C, 1e-6, 1e-5);
	assert_close(vs, var, C, 1e-6, 1e-5);
	for (int p = 0; p < 2; p++)
		batchnorm_bwd_sums_f32(rows[p], C, x + off[p], dy + off[p], ms, is, sums[p]);
	for (int j = 0; j < 2 * C; j++)
		tot[j] = sums[0][j] + sums[1][j];
	for (int j = 0; j < C; j++) {
		dbs[j] = (float)(sums[0][j] + sums[1][j]);
		dgs[j] = (float)(sums[0][C + j] + sums[1][C + j]);
	}
	for (int p = 0; p < 2; p++)
		batchnorm_bwd_sync_f32(rows[p], C, x + off[p], dy + off[p], g, ms, is, tot, M,
				       dxs + off[p]);
	assert_close(dxs, dx, M * C, 1e-6, 1e-5);
	assert_close(dgs, dg, C, 1e-6, 1e-5);
	assert_close(dbs, db, C, 1e-6, 1e-5);
}

struct loss_ctx {
	int n, k;
	double *z, *t;
	int32_t *labels;
	int bce;
};

static void loss_f(void *c, double *y)
{
	struct loss_ctx *k = c;
	int64_t right;

	y[0] = k->bce ? sigmoid_bce_f64(k->n, k->k, k->z, k->t, NULL, &right)
		      : softmax_xent_f64(k->n, k->k, k->z, k->labels, NULL, &right);
}

static void kernels__loss_gradients_match_finite_differences(void **state)
{
	double z[24], t[24], dz[24], one = 1;
	int32_t labels[4] = { 0, 5, 2, 2 };
	int64_t right;

	(void)state;
	fill_normal(z, 24, 17);
	for (int i = 0; i < 24; i++)
		t[i] = i % 3 == 0;
	for (int bce = 0; bce < 2; bce++)
		for (int k = 1; k <= 6; k += 5) {
			struct loss_ctx c = { 24 / k, k, z, t, labels, bce };

			if (!bce && k == 1)
				continue;
			if (bce)
				sigmoid_bce_f64(c.n, k, z, t, dz, &right);
			else
				softmax_xent_f64(c.n, k, z, labels, dz, &right);
			fd_check(loss_f, &c, z, 24, dz, &one, 1, bce ? "bce dz" : "xent dz");
		}
}

static void kernels__bce_stays_finite_for_huge_logits(void **state)
{
	double z[2] = { 1e4, -1e4 }, t[2] = { 0, 1 }, dz[2];
	int64_t right;
	double l = sigmoid_bce_f64(2, 1, z, t, dz, &right);

	(void)state;
	assert_true(isfinite(l));
	assert_true(fabs(l - 1e4) < 1e-6 * 1e4);
	assert_int_equal(right, 0);
}

static void kernels__f32_pointwise_kernels_agree_with_f64(void **state)
{
	enum { M = 64, C = 8 };
	float xf[M * C], yf[M * C], gf[C], bf[C], mf[C], sf[C], vf[C], dxf[M * C], dgf[C], dbf[C];
	double x[M * C], y[M * C], g[C], b[C], m[C], s[C], v[C], dx[M * C], dg[C], db[C];
	float y64[M * C], dx64[M * C], m64[C], s64[C], v64[C], dg64[C], db64[C];

	(void)state;
	fill_normal(x, M * C, 18);
	fill_normal(g, C, 19);
	fill_normal(b, C, 20);
	for (int i = 0; i < M * C; i++)
		xf[i] = (float)x[i], x[i] = xf[i];
	for (int i = 0; i < C; i++)
		gf[i] = (float)g[i], g[i] = gf[i], bf[i] = (float)b[i], b[i] = bf[i];
	batchnorm_fwd_train_f32(M, C, xf, gf, bf, 1e-5, yf, mf, sf, vf);
	batchnorm_fwd_train_f64(M, C, x, g, b, 1e-5, y, m, s, v);
	batchnorm_bwd_f32(M, C, xf, yf, gf, mf, sf, dxf, dgf, dbf);
	batchnorm_bwd_f64(M, C, x, y, g, m, s, dx, dg, db);
	for (int i = 0; i < M * C; i++)
		y64[i] = (float)y[i], dx64[i] = (float)dx[i];
	for (int i = 0; i < C; i++) {
		m64[i] = (float)m[i], s64[i] = (float)s[i], v64[i] = (float)v[i];
		dg64[i] = (float)dg[i], db64[i] = (float)db[i];
	}
	/* Every output, not only y and dx: a wrong mean, 1/std, variance or
	 * parameter gradient would train quietly wrong. */
	assert_close(mf, m64, C, 1e-5, 1e-5);
	assert_close(sf, s64, C, 1e-5, 1e-5);
	assert_close(vf, v64, C, 1e-5, 1e-5);
	assert_close(yf, y64, M * C, 1e-5, 1e-5);
	assert_close(dxf, dx64, M * C, 1e-4, 1e-4);
	assert_close(dgf, dg64, C, 1e-4, 1e-4);
	assert_close(dbf, db64, C, 1e-4, 1e-4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kernels__conv_gradients_match_finite_differences),
		cmocka_unit_test(kernels__pooling_gradients_match_finite_differences),
		cmocka_unit_test(kernels__linear_gradients_match_finite_differences),
		cmocka_unit_test(kernels__relu_and_dropout_gradients_match_finite_differences),
		cmocka_unit_test(kernels__batchnorm_gradients_match_finite_differences),
		cmocka_unit_test(kernels__sync_batchnorm_gradients_over_two_ranks_match_finite_differences),
		cmocka_unit_test(kernels__sync_batchnorm_on_two_halves_equals_batchnorm_on_the_whole_batch),
		cmocka_unit_test(kernels__loss_gradients_match_finite_differences),
		cmocka_unit_test(kernels__bce_stays_finite_for_huge_logits),
		cmocka_unit_test(kernels__f32_pointwise_kernels_agree_with_f64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
