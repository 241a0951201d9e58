/* pool_ref.c - plain double-precision max and average pooling, the
 * oracle of the oneDNN path.  Core.  in (N,H,W,C), out (N,P,Q,C). */
#include "trainer/kernels/kernels.h" // defines: struct pool_geom, *pool_*_ref

#include <string.h>

#define X(t, n_, h_, w_, c_) ((t)[(((size_t)(n_) * g->h + (h_)) * g->w + (w_)) * g->c + (c_)])
#define Y(t, n_, p_, q_, c_) ((t)[(((size_t)(n_) * g->p + (p_)) * g->q + (q_)) * g->c + (c_)])

/* Row-major first maximum of the window at (n, p, q, c). */
static void argmax(const struct pool_geom *g, const double *x, int n, int p, int q, int c,
		   int *bh, int *bw)
{
	double best = X(x, n, p * g->stride, q * g->stride, c);

	*bh = p * g->stride;
	*bw = q * g->stride;
	for (int i = 0; i < g->k; i++)
		for (int j = 0; j < g->k; j++) {
			int h = p * g->stride + i, w = q * g->stride + j;

			if (X(x, n, h, w, c) > best) {
				best = X(x, n, h, w, c);
				*bh = h;
				*bw = w;
			}
		}
}

void maxpool_fwd_ref(const struct pool_geom *g, const double *x, double *y)
{
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int c = 0; c < g->c; c++) {
					int h, w;

					argmax(g, x, n, p, q, c, &h, &w);
					Y(y, n, p, q, c) = X(x, n, h, w, c);
				}
}

void maxpool_bwd_ref(const struct pool_geom *g, const double *x, const double *dy, double *dx)
{
	memset(dx, 0, sizeof(*dx) * (size_t)g->n * g->h * g->w * g->c);
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int c = 0; c < g->c; c++) {
					int h, w;

					argmax(g, x, n, p, q, c, &h, &w);
					X(dx, n, h, w, c) += Y(dy, n, p, q, c);
				}
}

void avgpool_fwd_ref(const struct pool_geom *g, const double *x, double *y)
{
	double inv = 1.0 / ((double)g->k * g->k);

	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int c = 0; c < g->c; c++) {
					double acc = 0;

					for (int i = 0; i < g->k; i++)
						for (int j = 0; j < g->k; j++)
							acc += X(x, n, p * g->stride + i,
								 q * g->stride + j, c);
					Y(y, n, p, q, c) = acc * inv;
				}
}

void avgpool_bwd_ref(const struct pool_geom *g, const double *dy, double *dx)
{
	double inv = 1.0 / ((double)g->k * g->k);

	memset(dx, 0, sizeof(*dx) * (size_t)g->n * g->h * g->w * g->c);
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int c = 0; c < g->c; c++)
					for (int i = 0; i < g->k; i++)
						for (int j = 0; j < g->k; j++)
							X(dx, n, p * g->stride + i, q * g->stride + j,
							  c) += Y(dy, n, p, q, c) * inv;
}
