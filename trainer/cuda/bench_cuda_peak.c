/* bench_cuda_peak.c - the GPU's measured GEMM peak at fp32, bf16 and
 * fp16, the denominator of tests/bench/gpu_bench.sh's model FLOP
 * utilisation.  Shell (CUDA).
 *
 * One square GEMM, M = N = K = 16384 (2*M*N*K = 8.8 TFLOP: compute-bound
 * at every precision), through be_cuda_gemm, the trainer's own path:
 * fp32 without TF32, bf16/fp16 inputs with fp32 accumulation.  At bf16
 * and fp16 the time includes be_cuda_gemm's operand conversion (6 bytes
 * per operand element, about a tenth of the GEMM here), which the
 * trainer's GEMMs pay as well.  Best of 5 after a warm-up; one element
 * is checked against a dot product first (small integers: exact at every
 * precision).  Prints "peak_tflops PREC X" per precision, or
 * "skipped: no GPU" when there is none (exit 0 either way).
 */
#include "trainer/cuda/backend_cuda.h" // defines: be_cuda_*
#include "common/sbuf.h"             // defines: struct sbuf
#include "common/monoclock.h"  // defines: monoclock_s

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Best time of reps GEMMs at prec; < 0 on error (err filled). */
static double time_gemm(int n, const float *a, const float *b, float *c, enum be_precision prec,
			int reps, struct sbuf *err)
{
	double best = 1e30;

	for (int r = -1; r < reps; r++) { /* r = -1: warm-up, plans and scratch */
		double t = monoclock_s();

		if (be_cuda_gemm('n', 'n', n, n, n, 1, a, n, b, n, 0, c, n, prec, err) ||
		    be_cuda_sync(err))
			return -1;
		t = monoclock_s() - t;
		if (r >= 0 && t < best)
			best = t;
	}
	return best;
}

int main(void)
{
	const int n = 16384;
	const size_t nn = (size_t)n * n;
	struct sbuf err = SBUF_INIT;
	float *ha, *hb, *da = NULL, *db = NULL, *dc = NULL, got;
	double ref = 0;
	int rc = 1;

	if (be_cuda_device_count() < 1) {
		printf("skipped: no GPU\n");
		return 0;
	}
	ha = malloc(nn * sizeof(float));
	hb = malloc(nn * sizeof(float));
	if (!ha || !hb || be_cuda_init(0, &err))
		goto out;
	for (size_t i = 0; i < nn; i++)
		ha[i] = (float)(i % 7) - 3, hb[i] = (float)(i % 5) - 2;
	for (int k = 0; k < n; k++) /* C[0][1] */
		ref += (double)ha[k] * hb[(size_t)k * n + 1];
	da = be_cuda_alloc(nn), db = be_cuda_alloc(nn), dc = be_cuda_alloc(nn);
	if (!da || !db || !dc) {
		sbuf_addstr(&err, "out of GPU memory");
		goto out;
	}
	if (be_cuda_upload(da, ha, nn, &err) || be_cuda_upload(db, hb, nn, &err))
		goto out;
	printf("device %s\n", be_cuda_describe());
	for (int p = BE_FP32; p <= BE_FP16; p++) {
		double t = time_gemm(n, da, db, dc, p, 5, &err);

		if (t < 0 || be_cuda_download(&got, dc + 1, 1, &err))
			goto out;
		if (fabs(got - ref) > 1e-3 * (1 + fabs(ref))) {
			sbuf_addf(&err, "%s GEMM gives %g, expected %g", be_precision_name(p), got, ref);
			goto out;
		}
		printf("peak_tflops %s %.1f\n", be_precision_name(p), 2.0 * n * n * (double)n / t * 1e-12);
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench_cuda_peak: %s\n", err.len ? err.buf : "out of memory");
	be_cuda_free(da);
	be_cuda_free(db);
	be_cuda_free(dc);
	be_cuda_shutdown();
	free(ha);
	free(hb);
	sbuf_release(&err);
	return rc;
}
