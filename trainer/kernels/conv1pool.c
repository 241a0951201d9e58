/* conv1pool.c - a one-channel first layer fused whole: 3x3 convolution
 * (stride 1, padding 1) + bias + ReLU + 2x2 max pooling of stride 2, and
 * its weight gradient.  Core, NHWC, fp32.
 *
 * Why: a grey-image model starts with exactly this (the cnn, hepcnn), and
 * unfused it is the costliest part of a step that has nothing to do with
 * the convolutions' FLOPs: 9 multiply-adds per output feed a full-size
 * activation (cnn: 128x28x28x32 floats, 12.8 MB; hepcnn: 33.5 MB) that
 * is written by the convolution, read by the pooling, and then, as its
 * gradient, written by the pooling's backward and read by the weight
 * gradient.  oneDNN 2.6 runs these one-channel convolutions at 10-18
 * GFLOP/s and this machine moves 7-8 GB/s per core, so the cnn spent
 * about 16 ms of a 45 ms bf16 step there (forward 4.1, weight gradient
 * 6.7, pooling 5 ms: ONEDNN_VERBOSE and perf, one thread).  Fused, the
 * full-size activation never exists: each output pixel of the pooling
 * computes its 2x2 window of convolution outputs from a 4x4 patch of
 * the image, and the weight gradient is summed from the pooled gradient
 * straight away, since the pooling routes each window's gradient to its
 * maximum alone.
 *
 * Semantics are those of the unfused layers: ReLU is max(v, 0) (NaN ->
 * 0), the first maximum in row-major window order wins, a window's
 * gradient passes only where its output is > 0 (the ReLU's mask at the
 * maximum), floor mode drops a last odd row or column.  Sums run in a
 * different order than oneDNN's, so results agree to rounding, not bits.
 * The weight gradient sums per image into part[] and then over images
 * in order: the same bits for any thread count.
 */
#include "trainer/kernels/kernels.h" // defines: struct conv_geom, conv1pool_*
#include "trainer/kernels/cpu_isa.h" // defines: cpu_isa_level

#include <string.h>

/* The workers are built for AVX2 with FMA, 8 channels a vector, and
 * for AVX-512, 16 (conv1pool.inc), and used only where the CPU has them
 * (conv1pool_fits): 9 multiply-adds per output are compute-bound, and
 * baseline x86-64 has neither FMA nor 8-wide vectors (GCC splits these
 * vectors there, and the selects came out 3-10 times slower than
 * oneDNN's unfused path).  AVX-512 halves the instructions and the
 * loads of the weights: the cnn's layer at batch 128 on one thread took
 * 1.2-1.5 ms forward and 1.4-1.6 ms backward with AVX2 against 0.7-1.1
 * and 0.8-1.0 ms with AVX-512 (Xeon model 207), to the same bits.
 * GCC 12's target_clones("arch=x86-64-v3") resolver picked the baseline
 * on these AVX-512 machines, hence the explicit tests.  A cap
 * (cpu_isa.h) below AVX-512 or AVX2 turns that width off as the CPU's
 * lack would. */
#define INLINE static inline __attribute__((always_inline))

/* Image n zero-padded by one pixel all round: (H+2) x (W+2), so the
 * 4x4 patch of pooled pixel (pp, qq) starts at padded (2pp, 2qq). */
INLINE void pad_image(const struct conv_geom *g, const float *img, float *pad)
{
	int pw = g->w + 2;

	memset(pad, 0, (size_t)(g->h + 2) * pw * sizeof(*pad));
	for (int h = 0; h < g->h; h++)
		memcpy(pad + (size_t)(h + 1) * pw + 1, img + (size_t)h * g->w, g->w * sizeof(*pad));
}

INLINE void patch(const float *pad, int pw, int pp, int qq, float xp[16])
{
	const float *p0 = pad + (size_t)2 * pp * pw + 2 * qq;

	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			xp[i * 4 + j] = p0[i * pw + j];
}

/* Window element j (row-major in the 2x2 window), tap t = 3r + s: its
 * position in the 4x4 patch. */
#define AT_PATCH(j, t) ((((j) >> 1) + (t) / 3) * 4 + ((j) & 1) + (t) % 3)

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define VLEN 8
#define FN(name) name##_avx2
#include "trainer/kernels/conv1pool.inc"
#undef VLEN
#undef FN
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma")
#define VLEN 16
#define FN(name) name##_avx512
#include "trainer/kernels/conv1pool.inc"
#undef VLEN
#undef FN
#pragma GCC pop_options

/* 0: none (the unfused layers run), 1: AVX2, 2: AVX-512. */
static int width(void)
{
	enum cpu_isa cap = cpu_isa_level();

	if (cap >= CPU_ISA_AVX512_CORE && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
		return 2;
	return cap >= CPU_ISA_AVX2 && __builtin_cpu_supports("avx2") &&
	       __builtin_cpu_supports("fma");
}
#else
/* Compiled so the file builds anywhere; never run (width() is 0). */
#define VLEN 8
#define FN(name) name##_avx2
#include "trainer/kernels/conv1pool.inc"
#undef VLEN
#undef FN
#define fwd_image_avx512 fwd_image_avx2
#define bwd_one_avx512 bwd_one_avx2
static int width(void)
{
	return 0;
}
#endif

const char *conv1pool_isa(void)
{
	return width() == 2 ? "avx512_core" : width() ? "avx2" : NULL;
}

bool conv1pool_fits(const struct conv_geom *g)
{
	return g->c == 1 && g->r == 3 && g->s == 3 && g->stride == 1 && g->pad == 1 &&
	       g->h >= 2 && g->w >= 2 && g->k <= CONV1POOL_MAX_K &&
	       (g->h + 2) * (g->w + 2) <= CONV1POOL_MAX_PAD && width() > 0;
}

void conv1pool_fwd_f32(const struct conv_geom *g, const float *x, const float *w,
		       const float *b, float *y, int32_t *arg)
{
	size_t pooled = (size_t)(g->h / 2) * (g->w / 2) * g->k;
	float wt[9][CONV1POOL_MAX_K]; /* tap-major, so channels are contiguous */

	for (int k = 0; k < g->k; k++)
		for (int t = 0; t < 9; t++)
			wt[t][k] = w[k * 9 + t];
	bool wide = width() == 2;

#pragma omp parallel for schedule(static)
	for (int n = 0; n < g->n; n++)
		(wide ? fwd_image_avx512 : fwd_image_avx2)(g, (const float (*)[CONV1POOL_MAX_K])wt, b,
							   x + (size_t)n * g->h * g->w,
							   y + n * pooled, arg + n * pooled);
}

void conv1pool_bwd_f32(const struct conv_geom *g, const float *x, const float *y,
		       const float *dy, const int32_t *arg, double *part, float *dw, float *db)
{
	int kk = g->k;
	size_t pooled = (size_t)(g->h / 2) * (g->w / 2) * kk;

	bool wide = width() == 2;

#pragma omp parallel for schedule(static)
	for (int n = 0; n < g->n; n++)
		(wide ? bwd_one_avx512 : bwd_one_avx2)(g, x + (size_t)n * g->h * g->w, y + n * pooled,
						       dy + n * pooled, arg + n * pooled,
						       part + (size_t)n * 10 * kk);
	for (int k = 0; k < kk; k++)
		for (int t = 0; t < 10; t++) {
			double s = 0;

			for (int n = 0; n < g->n; n++)
				s += part[((size_t)n * 10 + t) * kk + k];
			if (t < 9)
				dw[k * 9 + t] = (float)s;
			else
				db[k] = (float)s;
		}
}
