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

/* 8 channels a vector: one AVX register. */
typedef float vfloat __attribute__((vector_size(32)));
typedef int32_t vint __attribute__((vector_size(32)));
#define VLEN 8

/* The workers are built for AVX2 with FMA and used only where the CPU
 * has both (conv1pool_fits): 9 multiply-adds per output are compute-
 * bound, and baseline x86-64 has neither FMA nor 8-wide vectors (GCC
 * splits these vectors there, and the selects came out 3-10 times
 * slower than oneDNN's unfused path).  GCC 12's
 * target_clones("arch=x86-64-v3") resolver picked the baseline on these
 * AVX-512 machines, hence the explicit test.  A cap below AVX2
 * (cpu_isa.h) turns the fused path off as the CPU's lack would. */
#if defined(__x86_64__) && defined(__GNUC__)
#define FAST_TARGET __attribute__((target("avx2,fma")))
static bool cpu_fast(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
	       cpu_isa_level() >= CPU_ISA_AVX2;
}
#else
#define FAST_TARGET
static bool cpu_fast(void)
{
	return false;
}
#endif
#define INLINE static inline __attribute__((always_inline))

INLINE vfloat vload(const float *p)
{
	vfloat v;

	memcpy(&v, p, sizeof(v));
	return v;
}

INLINE vint vloadi(const int32_t *p)
{
	vint v;

	memcpy(&v, p, sizeof(v));
	return v;
}

INLINE void vstore(float *p, vfloat v)
{
	memcpy(p, &v, sizeof(v));
}

INLINE void vstorei(int32_t *p, vint v)
{
	memcpy(p, &v, sizeof(v));
}

INLINE vfloat vselect(vint m, vfloat a, vfloat b)
{
	return (vfloat)(((vint)a & m) | ((vint)b & ~m));
}

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

bool conv1pool_fits(const struct conv_geom *g)
{
	return g->c == 1 && g->r == 3 && g->s == 3 && g->stride == 1 && g->pad == 1 &&
	       g->h >= 2 && g->w >= 2 && g->k <= CONV1POOL_MAX_K &&
	       (g->h + 2) * (g->w + 2) <= CONV1POOL_MAX_PAD && cpu_fast();
}

/* Window element j (row-major in the 2x2 window), tap t = 3r + s: its
 * position in the 4x4 patch. */
#define AT_PATCH(j, t) ((((j) >> 1) + (t) / 3) * 4 + ((j) & 1) + (t) % 3)

/* The 2x2 window's four ReLU'd convolution outputs for channels
 * [k, k+VLEN), reduced to their first maximum. */
INLINE void window_vec(const float (*wt)[CONV1POOL_MAX_K], const float *b, int k,
			      const float xp[16], float *y, int32_t *arg)
{
	vfloat v[4], best;
	vint at = { 0 };

#pragma GCC unroll 4
	for (int j = 0; j < 4; j++) {
		v[j] = vload(b + k);
#pragma GCC unroll 9
		for (int t = 0; t < 9; t++)
			v[j] += vload(&wt[t][k]) * xp[AT_PATCH(j, t)];
		v[j] = vselect(v[j] > 0, v[j], (vfloat){ 0 });
	}
	best = v[0];
#pragma GCC unroll 3
	for (int j = 1; j < 4; j++) {
		vint better = v[j] > best;

		best = vselect(better, v[j], best);
		at = (j & better) | (at & ~better);
	}
	vstore(y, best);
	vstorei(arg, at);
}

/* Image n of the forward: pad, then every pooled pixel. */
INLINE void fwd_image(const struct conv_geom *g, const float (*wt)[CONV1POOL_MAX_K],
		      const float *b, const float *img, float *y, int32_t *arg)
{
	int kk = g->k, pp_n = g->h / 2, qq_n = g->w / 2, pw = g->w + 2;
	float pad[(g->h + 2) * pw];

	pad_image(g, img, pad);
	for (int pp = 0; pp < pp_n; pp++)
		for (int qq = 0; qq < qq_n; qq++) {
			size_t o = ((size_t)pp * qq_n + qq) * kk;
			float xp[16];
			int k = 0;

			patch(pad, pw, pp, qq, xp);
			for (; k + VLEN <= kk; k += VLEN)
				window_vec(wt, b, k, xp, y + o + k, arg + o + k);
			for (; k < kk; k++) {
				float best = 0;
				int32_t at = 0;

				for (int j = 0; j < 4; j++) {
					float v = b[k];

					for (int t = 0; t < 9; t++)
						v += wt[t][k] * xp[AT_PATCH(j, t)];
					v = v > 0 ? v : 0;
					if (!j || v > best) {
						best = v;
						at = j;
					}
				}
				y[o + k] = best;
				arg[o + k] = at;
			}
		}
}

FAST_TARGET static void fwd_image_fast(const struct conv_geom *g,
				       const float (*wt)[CONV1POOL_MAX_K], const float *b,
				       const float *img, float *y, int32_t *arg)
{
	fwd_image(g, wt, b, img, y, arg);
}

void conv1pool_fwd_f32(const struct conv_geom *g, const float *x, const float *w,
		       const float *b, float *y, int32_t *arg)
{
	size_t pooled = (size_t)(g->h / 2) * (g->w / 2) * g->k;
	float wt[9][CONV1POOL_MAX_K]; /* tap-major, so channels are contiguous */

	for (int k = 0; k < g->k; k++)
		for (int t = 0; t < 9; t++)
			wt[t][k] = w[k * 9 + t];
#pragma omp parallel for schedule(static)
	for (int n = 0; n < g->n; n++)
		fwd_image_fast(g, (const float (*)[CONV1POOL_MAX_K])wt, b, x + (size_t)n * g->h * g->w,
			       y + n * pooled, arg + n * pooled);
}

/* One image's weight and bias gradient sums into part[10][k] (taps, then
 * the bias).  Channels outer, so a group's ten accumulators stay in
 * registers over all the image's pixels. */
INLINE void bwd_image(const struct conv_geom *g, const float *pad, const float *y,
		      const float *dy, const int32_t *arg, double *part)
{
	int kk = g->k, pp_n = g->h / 2, qq_n = g->w / 2, pw = g->w + 2, k = 0;

	for (; k + VLEN <= kk; k += VLEN) {
		vfloat acc[10] = { 0 };

		for (int pp = 0; pp < pp_n; pp++)
			for (int qq = 0; qq < qq_n; qq++) {
				size_t o = ((size_t)pp * qq_n + qq) * kk + k;
				vfloat gy = vselect(vload(y + o) > 0, vload(dy + o), (vfloat){ 0 });
				vint at = vloadi(arg + o);
				float xp[16];

				patch(pad, pw, pp, qq, xp);
#pragma GCC unroll 4
				for (int j = 0; j < 4; j++) {
					vfloat gj = vselect(at == j, gy, (vfloat){ 0 });

#pragma GCC unroll 9
					for (int t = 0; t < 9; t++)
						acc[t] += gj * xp[AT_PATCH(j, t)];
				}
				acc[9] += gy;
			}
		for (int t = 0; t < 10; t++)
			for (int i = 0; i < VLEN; i++)
				part[t * kk + k + i] = acc[t][i];
	}
	for (; k < kk; k++) {
		float acc[10] = { 0 };

		for (int pp = 0; pp < pp_n; pp++)
			for (int qq = 0; qq < qq_n; qq++) {
				size_t o = ((size_t)pp * qq_n + qq) * kk + k;
				float gy = y[o] > 0 ? dy[o] : 0, xp[16];

				patch(pad, pw, pp, qq, xp);
				for (int t = 0; t < 9; t++)
					acc[t] += gy * xp[AT_PATCH(arg[o], t)];
				acc[9] += gy;
			}
		for (int t = 0; t < 10; t++)
			part[t * kk + k] = acc[t];
	}
}

/* Image n of the backward: pad, then the sums. */
INLINE void bwd_one(const struct conv_geom *g, const float *img, const float *y,
		    const float *dy, const int32_t *arg, double *part)
{
	float pad[(g->h + 2) * (g->w + 2)];

	pad_image(g, img, pad);
	bwd_image(g, pad, y, dy, arg, part);
}

FAST_TARGET static void bwd_one_fast(const struct conv_geom *g, const float *img,
				     const float *y, const float *dy, const int32_t *arg,
				     double *part)
{
	bwd_one(g, img, y, dy, arg, part);
}

void conv1pool_bwd_f32(const struct conv_geom *g, const float *x, const float *y,
		       const float *dy, const int32_t *arg, double *part, float *dw, float *db)
{
	int kk = g->k;
	size_t pooled = (size_t)(g->h / 2) * (g->w / 2) * kk;

#pragma omp parallel for schedule(static)
	for (int n = 0; n < g->n; n++)
		bwd_one_fast(g, x + (size_t)n * g->h * g->w, y + n * pooled, dy + n * pooled,
			     arg + n * pooled, part + (size_t)n * 10 * kk);
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
