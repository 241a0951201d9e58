/* test_cuda.c - the CUDA backend op by op against the CPU backend on
 * random inputs, and NCCL allreduce.  Every test skips, printing
 * "skipped: no GPU", when cudaGetDeviceCount finds no device (or the
 * build had no nvcc: then backend_cuda.h's stub reports 0 devices).
 *
 * Bounds: fp32 relative error <= 1e-5 (elementwise, atol 1e-5; no TF32:
 * backend_cuda.cu forbids it); bf16 2e-2 and fp16 3e-3 of the output's
 * largest magnitude, as for the CPU's low-precision convolutions
 * (test_amp.c), since both round the same inputs. */
#include "tests/unit/trainlib.h"
#include "trainer/backend.h"
#include "trainer/backend_cuda.h"
#include "cli/sbuf.h"

#ifdef HAVE_CUDA
#include <mpi.h>
#endif

static bool have_gpu(void)
{
	static int n = -1;

	if (n < 0)
		n = be_cuda_device_count();
	if (!n)
		print_message("skipped: no GPU\n");
	return n > 0;
}

#ifdef HAVE_CUDA
static int setup(void **state)
{
	struct sbuf err = SBUF_INIT;
	int rc = backend_init(2, &err);

	(void)state;
	if (!rc && have_gpu())
		rc = be_cuda_init(0, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.buf);
	sbuf_release(&err);
	return rc;
}

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

static void check_scaled(const float *a, const float *ref, size_t n, double bound)
{
	double top = 0, most = 0;

	for (size_t i = 0; i < n; i++)
		top = fabs(ref[i]) > top ? fabs(ref[i]) : top;
	for (size_t i = 0; i < n; i++)
		most = fabs(a[i] - ref[i]) > most ? fabs(a[i] - ref[i]) : most;
	assert_true(most <= bound * (top > 0 ? top : 1));
}

static void check_conv(struct conv_geom g, enum be_precision prec)
{
	struct sbuf err = SBUF_INIT;
	size_t nx, nw, ny;
	float *x, *w, *b, *y, *dy, *dx, *dw, *db, *dx_, *dw_, *db_, *y_;
	struct be_conv *cpu;
	struct be_cuda_conv *gpu;
	float *d_x, *d_w, *d_b, *d_y, *d_dy, *d_dx, *d_dw, *d_db;
	double bound = prec == BE_BF16 ? 2e-2 : prec == BE_FP16 ? 3e-3 : 0;

	assert_int_equal(conv_geom_finish(&g), 0);
	nx = (size_t)g.n * g.h * g.w * g.c, nw = (size_t)g.k * g.c * g.r * g.s;
	ny = (size_t)g.n * g.p * g.q * g.k;
	x = malloc(nx * 4), w = malloc(nw * 4), b = malloc(g.k * 4), y = malloc(ny * 4);
	dy = malloc(ny * 4), dx = malloc(nx * 4), dw = malloc(nw * 4), db = malloc(g.k * 4);
	fill_normalf(x, nx, 1), fill_normalf(w, nw, 2), fill_normalf(b, g.k, 3);
	fill_normalf(dy, ny, 4);
	/* The CPU's fp32 result is the reference at every precision. */
	cpu = be_conv_create(&g, BE_NEED_DX, BE_FP32, &err);
	assert_non_null(cpu);
	assert_int_equal(be_conv_forward(cpu, x, w, b, y, &err), 0);
	assert_int_equal(be_conv_backward(cpu, x, dy, dx, dw, db, &err), 0);
	gpu = be_cuda_conv_create(&g, BE_NEED_DX, prec, &err);
	if (!gpu)
		fail_msg("be_cuda_conv_create: %s", err.buf);
	d_x = dev_copy(x, nx), d_w = dev_copy(w, nw), d_b = dev_copy(b, g.k), d_dy = dev_copy(dy, ny);
	d_y = be_cuda_alloc(ny), d_dx = be_cuda_alloc(nx), d_dw = be_cuda_alloc(nw);
	d_db = be_cuda_alloc(g.k);
	assert_int_equal(be_cuda_conv_forward(gpu, d_x, d_w, d_b, d_y, &err), 0);
	assert_int_equal(be_cuda_conv_backward(gpu, d_x, d_dy, d_dx, d_dw, d_db, &err), 0);
	y_ = host_copy(d_y, ny), dx_ = host_copy(d_dx, nx), dw_ = host_copy(d_dw, nw);
	db_ = host_copy(d_db, g.k);
	if (prec == BE_FP32) {
		assert_close(y_, y, ny, 1e-5, 1e-5);
		assert_close(dx_, dx, nx, 1e-5, 1e-5);
		assert_close(dw_, dw, nw, 1e-5, 1e-5);
		assert_close(db_, db, g.k, 1e-5, 1e-5);
	} else {
		check_scaled(y_, y, ny, bound);
		check_scaled(dx_, dx, nx, bound);
		check_scaled(dw_, dw, nw, bound);
		check_scaled(db_, db, g.k, bound);
	}
	be_conv_free(cpu);
	be_cuda_conv_free(gpu);
	be_cuda_free(d_x), be_cuda_free(d_w), be_cuda_free(d_b), be_cuda_free(d_y);
	be_cuda_free(d_dy), be_cuda_free(d_dx), be_cuda_free(d_dw), be_cuda_free(d_db);
	free(x), free(w), free(b), free(y), free(dy), free(dx), free(dw), free(db);
	free(y_), free(dx_), free(dw_), free(db_);
	sbuf_release(&err);
}

static void cuda__convolutions_match_the_cpu_backend(void **state)
{
	(void)state;
	if (!have_gpu())
		skip();
	for (int p = BE_FP32; p <= BE_FP16; p++) {
		check_conv((struct conv_geom){ 4, 12, 12, 1, 32, 3, 3, 1, 1, 0, 0 }, p);
		check_conv((struct conv_geom){ 4, 10, 10, 32, 64, 3, 3, 1, 1, 0, 0 }, p);
		check_conv((struct conv_geom){ 3, 8, 8, 16, 32, 1, 1, 2, 0, 0, 0 }, p);
	}
}

static void cuda__gemms_match_the_cpu_backend(void **state)
{
	enum { M = 33, N = 17, K = 70 };
	float a[M * K], b[K * N], c[M * N], *c_;
	float *d_a, *d_b, *d_c;
	struct sbuf err = SBUF_INIT;

	(void)state;
	if (!have_gpu())
		skip();
	fill_normalf(a, M * K, 1), fill_normalf(b, K * N, 2);
	assert_int_equal(be_gemm('n', 'n', M, N, K, 1, a, K, b, N, 0, c, N, &err), 0);
	d_a = dev_copy(a, M * K), d_b = dev_copy(b, K * N), d_c = be_cuda_alloc(M * N);
	for (int p = BE_FP32; p <= BE_FP16; p++) {
		assert_int_equal(be_cuda_gemm('n', 'n', M, N, K, 1, d_a, K, d_b, N, 0, d_c, N, p, &err), 0);
		c_ = host_copy(d_c, M * N);
		if (p == BE_FP32)
			assert_close(c_, c, M * N, 1e-5, 1e-5);
		else
			check_scaled(c_, c, M * N, p == BE_BF16 ? 2e-2 : 3e-3);
		free(c_);
	}
	be_cuda_free(d_a), be_cuda_free(d_b), be_cuda_free(d_c);
	sbuf_release(&err);
}

static void cuda__pooling_matches_the_cpu_backend(void **state)
{
	struct pool_geom g = { 3, 14, 14, 32, 2, 2, 0, 0 };
	struct sbuf err = SBUF_INIT;
	struct be_pool *cpu;
	struct be_cuda_pool *gpu;
	size_t nx, ny;
	float *x, *y, *dy, *dx, *y_, *dx_, *d_x, *d_y, *d_dy, *d_dx;

	(void)state;
	if (!have_gpu())
		skip();
	assert_int_equal(pool_geom_finish(&g), 0);
	nx = (size_t)g.n * g.h * g.w * g.c, ny = (size_t)g.n * g.p * g.q * g.c;
	x = malloc(nx * 4), y = malloc(ny * 4), dy = malloc(ny * 4), dx = malloc(nx * 4);
	fill_normalf(x, nx, 5), fill_normalf(dy, ny, 6);
	cpu = be_pool_create(&g, true, BE_NEED_DX, BE_FP32, &err);
	gpu = be_cuda_pool_create(&g, true, &err);
	assert_non_null(cpu);
	assert_non_null(gpu);
	assert_int_equal(be_pool_forward(cpu, x, y, &err), 0);
	assert_int_equal(be_pool_backward(cpu, dy, dx, &err), 0);
	d_x = dev_copy(x, nx), d_dy = dev_copy(dy, ny), d_y = be_cuda_alloc(ny), d_dx = be_cuda_alloc(nx);
	assert_int_equal(be_cuda_pool_forward(gpu, d_x, d_y, &err), 0);
	assert_int_equal(be_cuda_pool_backward(gpu, d_x, d_y, d_dy, d_dx, &err), 0);
	y_ = host_copy(d_y, ny), dx_ = host_copy(d_dx, nx);
	assert_close(y_, y, ny, 1e-6, 1e-5);
	assert_close(dx_, dx, nx, 1e-6, 1e-5);
	be_pool_free(cpu);
	be_cuda_pool_free(gpu);
	be_cuda_free(d_x), be_cuda_free(d_y), be_cuda_free(d_dy), be_cuda_free(d_dx);
	free(x), free(y), free(dy), free(dx), free(y_), free(dx_);
	sbuf_release(&err);
}

static void cuda__unscale_finds_an_injected_inf(void **state)
{
	float g[1000];
	float *d;
	bool of = true;
	struct sbuf err = SBUF_INIT;

	(void)state;
	if (!have_gpu())
		skip();
	for (int i = 0; i < 1000; i++)
		g[i] = 65536.0f * i;
	d = dev_copy(g, 1000);
	assert_int_equal(be_cuda_unscale(1000, d, 1.0f / 65536, &of, &err), 0);
	assert_false(of);
	g[500] = INFINITY;
	be_cuda_free(d);
	d = dev_copy(g, 1000);
	assert_int_equal(be_cuda_unscale(1000, d, 1.0f / 65536, &of, &err), 0);
	assert_true(of);
	be_cuda_free(d);
	sbuf_release(&err);
}

/* One rank: the average is the input itself; exercises the MPI
 * bootstrap, the event hand-off and the stream wait. */
static void cuda__nccl_allreduce_through_an_mpi_bootstrap(void **state)
{
	float h[4096], *r, *d;
	MPI_Comm comm = MPI_COMM_WORLD;
	struct sbuf err = SBUF_INIT;
	int inited = 0;

	(void)state;
	if (!have_gpu())
		skip();
	MPI_Initialized(&inited);
	if (!inited)
		MPI_Init(NULL, NULL);
	fill_normalf(h, 4096, 9);
	d = dev_copy(h, 4096);
	if (be_cuda_nccl_init_mpi(&comm, &err))
		fail_msg("%s", err.buf);
	assert_int_equal(be_cuda_allreduce_start(d, 4096, &err), 0);
	assert_int_equal(be_cuda_allreduce_wait(&err), 0);
	r = host_copy(d, 4096);
	assert_close(r, h, 4096, 0, 0);
	be_cuda_nccl_shutdown();
	be_cuda_free(d);
	free(r);
	MPI_Finalize();
	sbuf_release(&err);
}
#else
static int setup(void **state)
{
	(void)state;
	return 0;
}
#define NO_CUDA_TEST(name)                                                                 \
	static void name(void **state)                                                     \
	{                                                                                  \
		(void)state;                                                               \
		if (!have_gpu())                                                           \
			skip();                                                            \
	}
NO_CUDA_TEST(cuda__convolutions_match_the_cpu_backend)
NO_CUDA_TEST(cuda__gemms_match_the_cpu_backend)
NO_CUDA_TEST(cuda__pooling_matches_the_cpu_backend)
NO_CUDA_TEST(cuda__unscale_finds_an_injected_inf)
NO_CUDA_TEST(cuda__nccl_allreduce_through_an_mpi_bootstrap)
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuda__convolutions_match_the_cpu_backend),
		cmocka_unit_test(cuda__gemms_match_the_cpu_backend),
		cmocka_unit_test(cuda__pooling_matches_the_cpu_backend),
		cmocka_unit_test(cuda__unscale_finds_an_injected_inf),
		cmocka_unit_test(cuda__nccl_allreduce_through_an_mpi_bootstrap),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
