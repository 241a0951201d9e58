/* bench_peak.c - the measured fp32 peak of this core for the trainer's
 * benchmarks: a large oneDNN sgemm (M = N = K = 2048: 2*M*N*K FLOPs,
 * compute-bound) and a large channels-last convolution through the
 * trainer's backend (N=64, 64->64 channels, 56x56, 3x3: 2*N*K*P*Q*C*R*S
 * FLOPs), each checked against the plain reference on a slice first.
 * Prints "gemm_gflops X" and "conv_gflops Y".  Run by
 * tests/bench/train_vs_torch.sh; thread count from OMP_NUM_THREADS. */
#include "trainer/cpu/backend.h"         // defines: be_gemm, be_conv_*, backend_init
#include "trainer/kernels/kernels.h" // defines: conv2d_fwd_ref
#include "common/sbuf.h"                // defines: struct sbuf
#include "common/monoclock.h"  // defines: monoclock_s

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	struct sbuf err = SBUF_INIT;
	const int n = 2048, reps = 5;
	float *a = be_alloc((size_t)n * n), *b = be_alloc((size_t)n * n), *c = be_alloc((size_t)n * n);
	struct conv_geom g = { 64, 56, 56, 64, 64, 3, 3, 1, 1, 0, 0 };
	struct be_conv *cv;
	float *x, *w, *bias, *y;
	double t, best = 1e30, ref = 0;

	if (backend_init(0, &err)) {
		fprintf(stderr, "bench_peak: %s\n", err.buf);
		return 1;
	}
	for (size_t i = 0; i < (size_t)n * n; i++)
		a[i] = (float)(i % 7) - 3, b[i] = (float)(i % 5) - 2;
	for (int r = 0; r < reps; r++) {
		t = monoclock_s();
		be_gemm('n', 'n', n, n, n, 1, a, n, b, n, 0, c, n, &err);
		t = monoclock_s() - t;
		best = t < best ? t : best;
	}
	for (int k = 0; k < n; k++) /* check one element against a plain dot product */
		ref += (double)a[k] * b[(size_t)k * n + 1];
	if (fabs(ref - c[1]) > 1e-3 * (1 + fabs(ref))) {
		fprintf(stderr, "bench_peak: sgemm gives %g, expected %g\n", c[1], ref);
		return 1;
	}
	printf("gemm_gflops %.1f\n", 2.0 * n * n * n / best * 1e-9);
	conv_geom_finish(&g);
	x = be_alloc((size_t)g.n * g.h * g.w * g.c);
	w = be_alloc((size_t)g.k * g.c * 9);
	bias = be_alloc(g.k);
	y = be_alloc((size_t)g.n * g.p * g.q * g.k);
	for (size_t i = 0; i < (size_t)g.n * g.h * g.w * g.c; i++)
		x[i] = (float)((i * 13) % 11) * 0.1f;
	for (size_t i = 0; i < (size_t)g.k * g.c * 9; i++)
		w[i] = (float)((i * 7) % 5) * 0.1f;
	cv = be_conv_create(&g, 0, BE_FP32, &err);
	if (!cv) {
		fprintf(stderr, "bench_peak: %s\n", err.buf);
		return 1;
	}
	best = 1e30;
	for (int r = 0; r < reps; r++) {
		t = monoclock_s();
		be_conv_forward(cv, x, w, bias, y, &err);
		t = monoclock_s() - t;
		best = t < best ? t : best;
	}
	{ /* output (0, 5, 5, 3) against the reference on a 1-image slice */
		struct conv_geom g1 = g;
		double *xd = malloc(sizeof(double) * g.h * g.w * g.c), *wd = malloc(sizeof(double) * g.k * g.c * 9);
		double *yd = malloc(sizeof(double) * g.p * g.q * g.k);

		g1.n = 1;
		for (size_t i = 0; i < (size_t)g.h * g.w * g.c; i++)
			xd[i] = x[i];
		for (size_t i = 0; i < (size_t)g.k * g.c * 9; i++)
			wd[i] = w[i];
		conv2d_fwd_ref(&g1, xd, wd, NULL, yd);
		ref = yd[(5 * g.q + 5) * g.k + 3];
		if (fabs(ref - y[(5 * g.q + 5) * g.k + 3]) > 1e-3 * (1 + fabs(ref))) {
			fprintf(stderr, "bench_peak: conv gives %g, expected %g\n",
				y[(5 * g.q + 5) * g.k + 3], ref);
			return 1;
		}
		free(xd), free(wd), free(yd);
	}
	printf("conv_gflops %.1f\n", 2.0 * g.n * g.k * g.p * g.q * g.c * 9 / best * 1e-9);
	be_conv_free(cv);
	be_free(a), be_free(b), be_free(c), be_free(x), be_free(w), be_free(bias), be_free(y);
	sbuf_release(&err);
	return 0;
}
