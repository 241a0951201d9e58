/* maxpool.c - max pooling in fp32 for training: the forward records each
 * window's first maximum in an int32 per output, the backward routes the
 * gradient through it.  Core, NHWC, PyTorch's floor mode.
 *
 * Why not oneDNN: oneDNN 2.6's training-mode max pooling (the kind with a
 * workspace) runs at a sixth of the speed of its own inference kernel on
 * the AVX-512 machines here (3.6 ms against 0.55 ms for the cnn's first
 * pooling, 128x28x28x32), which made pooling a quarter of a training step.
 * Channels are innermost and contiguous, so the loops run 4 channels at a
 * time in GCC vector types: GCC 12 does not if-convert the compare-and-
 * select of a running maximum (IEEE compares may trap), so it would not
 * vectorise the plain loop at any -O level.  The vector types compile
 * for any target (SSE2 on baseline x86-64, NEON on Arm).
 *
 * Tie rule: the first maximum in row-major window order wins (a later
 * equal value does not replace it), as in PyTorch and maxpool_*_ref.
 */
#include "trainer/kernels/kernels.h" // defines: struct pool_geom, maxpool_*_f32

#include <string.h>

typedef float vfloat __attribute__((vector_size(16)));
typedef int32_t vint __attribute__((vector_size(16)));
#define VLEN 4

static inline vfloat vload(const float *p)
{
	vfloat v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline vint vloadi(const int32_t *p)
{
	vint v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void vstore(float *p, vfloat v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void vstorei(int32_t *p, vint v)
{
	memcpy(p, &v, sizeof(v));
}

/* The window of output row (n, p) starts at input row n*h + p*stride. */
static const float *window_row(const struct pool_geom *g, const float *x, int n, int p)
{
	return x + ((size_t)n * g->h + (size_t)p * g->stride) * g->w * g->c;
}

/* Offset of window element j from the window's corner. */
static size_t window_offset(const struct pool_geom *g, int j)
{
	return ((size_t)(j / g->k) * g->w + (size_t)(j % g->k)) * g->c;
}

/* One output pixel, channels [0, c): vectors, then a scalar tail.
 * off[j] = window_offset(g, j), computed once per call. */
static void fwd_pixel(const struct pool_geom *g, const size_t *off, const float *x0, float *y,
		      int32_t *arg)
{
	size_t c = (size_t)g->c, i = 0;
	int kk = g->k * g->k;

	for (; i + VLEN <= c; i += VLEN) {
		vfloat best = vload(x0 + i);
		vint at = (vint){ 0 };

		for (int j = 1; j < kk; j++) {
			vfloat v = vload(x0 + off[j] + i);
			vint better = v > best;

			best = (vfloat)(((vint)v & better) | ((vint)best & ~better));
			at = (j & better) | (at & ~better);
		}
		vstore(y + i, best);
		vstorei(arg + i, at);
	}
	for (; i < c; i++) {
		float best = x0[i];
		int32_t at = 0;

		for (int j = 1; j < kk; j++)
			if (x0[off[j] + i] > best) {
				best = x0[off[j] + i];
				at = j;
			}
		y[i] = best;
		arg[i] = at;
	}
}

/* The common 2x2 window with the offsets as constants (one row of
 * output pixels): GCC keeps the four loads and three selects in
 * registers instead of looping over off[]. */
static void fwd_row_2x2(const struct pool_geom *g, const float *row, float *y, int32_t *arg)
{
	size_t c = (size_t)g->c, right = c, down = (size_t)g->w * c;
	size_t step = (size_t)g->stride * c;

	for (int q = 0; q < g->q; q++, row += step, y += c, arg += c) {
		size_t i = 0;

		for (; i + VLEN <= c; i += VLEN) {
			vfloat best = vload(row + i), v;
			vint at = (vint){ 0 }, better;

			v = vload(row + right + i);
			better = v > best;
			best = (vfloat)(((vint)v & better) | ((vint)best & ~better));
			at = (1 & better) | (at & ~better);
			v = vload(row + down + i);
			better = v > best;
			best = (vfloat)(((vint)v & better) | ((vint)best & ~better));
			at = (2 & better) | (at & ~better);
			v = vload(row + down + right + i);
			better = v > best;
			best = (vfloat)(((vint)v & better) | ((vint)best & ~better));
			at = (3 & better) | (at & ~better);
			vstore(y + i, best);
			vstorei(arg + i, at);
		}
		for (; i < c; i++) {
			const float *w4[4] = { row + i, row + right + i, row + down + i,
					       row + down + right + i };
			int32_t at = 0;

			for (int j = 1; j < 4; j++)
				if (*w4[j] > *w4[at])
					at = j;
			y[i] = *w4[at];
			arg[i] = at;
		}
	}
}

void maxpool_fwd_f32(const struct pool_geom *g, const float *x, float *y, int32_t *arg)
{
	size_t c = (size_t)g->c, off[g->k * g->k];

	if (g->k == 2) {
#pragma omp parallel for schedule(static) collapse(2)
		for (int n = 0; n < g->n; n++)
			for (int p = 0; p < g->p; p++) {
				size_t o = ((size_t)n * g->p + p) * g->q * c;

				fwd_row_2x2(g, window_row(g, x, n, p), y + o, arg + o);
			}
		return;
	}

	for (int j = 0; j < g->k * g->k; j++)
		off[j] = window_offset(g, j);

#pragma omp parallel for schedule(static) collapse(2)
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++) {
			const float *row = window_row(g, x, n, p);
			size_t o = ((size_t)n * g->p + p) * g->q * c;

			for (int q = 0; q < g->q; q++)
				fwd_pixel(g, off, row + (size_t)q * g->stride * c, y + o + q * c,
					  arg + o + q * c);
		}
}

/* Windows that tile the input (k == stride): every input element under
 * a window is written once, the maximum with dy and the rest with 0. */
static void bwd_pixel_tiled(const struct pool_geom *g, const size_t *off, const float *dy,
			    const int32_t *arg, float *d0)
{
	size_t c = (size_t)g->c;

	for (int j = 0; j < g->k * g->k; j++) {
		float *dj = d0 + off[j];
		size_t i = 0;

		for (; i + VLEN <= c; i += VLEN) {
			vint hit = vloadi(arg + i) == j;

			vstore(dj + i, (vfloat)((vint)vload(dy + i) & hit));
		}
		for (; i < c; i++)
			dj[i] = arg[i] == j ? dy[i] : 0.0f;
	}
}

/* bwd_pixel_tiled for 2x2 windows of stride 2 along one row of output
 * pixels, offsets constant. */
static void bwd_row_2x2(const struct pool_geom *g, const float *dy, const int32_t *arg,
			float *row)
{
	size_t c = (size_t)g->c, down = (size_t)g->w * c;

	for (int q = 0; q < g->q; q++, row += 2 * c, dy += c, arg += c) {
		float *d[4] = { row, row + c, row + down, row + down + c };
		size_t i = 0;

		for (; i + VLEN <= c; i += VLEN) {
			vint at = vloadi(arg + i), v = (vint)vload(dy + i);

			vstore(d[0] + i, (vfloat)(v & (at == 0)));
			vstore(d[1] + i, (vfloat)(v & (at == 1)));
			vstore(d[2] + i, (vfloat)(v & (at == 2)));
			vstore(d[3] + i, (vfloat)(v & (at == 3)));
		}
		for (; i < c; i++)
			for (int j = 0; j < 4; j++)
				d[j][i] = arg[i] == j ? dy[i] : 0.0f;
	}
}

/* Overlapping or gapped windows: accumulate into a zeroed dx. */
static void bwd_pixel_general(const struct pool_geom *g, const size_t *off, const float *dy,
			      const int32_t *arg, float *d0)
{
	for (size_t i = 0; i < (size_t)g->c; i++)
		d0[off[arg[i]] + i] += dy[i];
}

/* Zeroes what no window covers: in floor mode the last rows and columns
 * when the size is not a multiple of the stride. */
static void zero_uncovered(const struct pool_geom *g, float *dx)
{
	size_t c = (size_t)g->c, rowlen = (size_t)g->w * c;
	int covered_h = (g->p - 1) * g->stride + g->k, covered_w = (g->q - 1) * g->stride + g->k;

	for (int n = 0; n < g->n; n++) {
		float *img = dx + (size_t)n * g->h * rowlen;

		for (int h = 0; h < g->h; h++) {
			if (h >= covered_h) {
				memset(img + h * rowlen, 0, rowlen * sizeof(float));
				continue;
			}
			if (covered_w < g->w)
				memset(img + h * rowlen + covered_w * c, 0,
				       (size_t)(g->w - covered_w) * c * sizeof(float));
		}
	}
}

void maxpool_bwd_f32(const struct pool_geom *g, const float *dy, const int32_t *arg, float *dx)
{
	size_t c = (size_t)g->c, off[g->k * g->k];
	int tiled = g->k == g->stride;

	for (int j = 0; j < g->k * g->k; j++)
		off[j] = window_offset(g, j);
	if (tiled)
		zero_uncovered(g, dx);
	else
		memset(dx, 0, (size_t)g->n * g->h * g->w * c * sizeof(float));
	if (g->k == 2 && tiled) {
#pragma omp parallel for schedule(static) collapse(2)
		for (int n = 0; n < g->n; n++)
			for (int p = 0; p < g->p; p++) {
				size_t o = ((size_t)n * g->p + p) * g->q * c;

				bwd_row_2x2(g, dy + o, arg + o,
					    dx + ((size_t)n * g->h + (size_t)p * 2) * g->w * c);
			}
		return;
	}
	/* Windows of different rows overlap only when k > stride: serial then. */
#pragma omp parallel for schedule(static) collapse(2) if (g->k <= g->stride)
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++) {
			float *row = dx + ((size_t)n * g->h + (size_t)p * g->stride) * g->w * c;
			size_t o = ((size_t)n * g->p + p) * g->q * c;

			for (int q = 0; q < g->q; q++) {
				float *d0 = row + (size_t)q * g->stride * c;

				if (tiled)
					bwd_pixel_tiled(g, off, dy + o + q * c, arg + o + q * c, d0);
				else
					bwd_pixel_general(g, off, dy + o + q * c, arg + o + q * c, d0);
			}
		}
}
