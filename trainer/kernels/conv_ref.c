/* conv_ref.c - plain double-precision 2-D convolution, the oracle of the
 * oneDNN path.  Core.  in (N,H,W,C), w (K,C,R,S), out (N,P,Q,K).
 * Direct loops, O(N*K*P*Q*C*R*S): meant for the small shapes of tests. */
#include "trainer/kernels/kernels.h" // defines: struct conv_geom, conv2d_*_ref

#include <string.h>

#define X(t, n_, h_, w_, c_) ((t)[(((size_t)(n_) * g->h + (h_)) * g->w + (w_)) * g->c + (c_)])
#define Y(t, n_, p_, q_, k_) ((t)[(((size_t)(n_) * g->p + (p_)) * g->q + (q_)) * g->k + (k_)])
#define W(t, k_, c_, r_, s_) ((t)[(((size_t)(k_) * g->c + (c_)) * g->r + (r_)) * g->s + (s_)])

void conv2d_fwd_ref(const struct conv_geom *g, const double *x, const double *w,
		    const double *b, double *y)
{
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int k = 0; k < g->k; k++) {
					double acc = b ? b[k] : 0.0;

					for (int r = 0; r < g->r; r++) {
						int h = p * g->stride - g->pad + r;

						if (h < 0 || h >= g->h)
							continue;
						for (int s = 0; s < g->s; s++) {
							int v = q * g->stride - g->pad + s;

							if (v < 0 || v >= g->w)
								continue;
							for (int c = 0; c < g->c; c++)
								acc += X(x, n, h, v, c) * W(w, k, c, r, s);
						}
					}
					Y(y, n, p, q, k) = acc;
				}
}

void conv2d_bwd_data_ref(const struct conv_geom *g, const double *dy, const double *w,
			 double *dx)
{
	memset(dx, 0, sizeof(*dx) * (size_t)g->n * g->h * g->w * g->c);
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int k = 0; k < g->k; k++) {
					double d = Y(dy, n, p, q, k);

					for (int r = 0; r < g->r; r++) {
						int h = p * g->stride - g->pad + r;

						if (h < 0 || h >= g->h)
							continue;
						for (int s = 0; s < g->s; s++) {
							int v = q * g->stride - g->pad + s;

							if (v < 0 || v >= g->w)
								continue;
							for (int c = 0; c < g->c; c++)
								X(dx, n, h, v, c) += d * W(w, k, c, r, s);
						}
					}
				}
}

void conv2d_bwd_weights_ref(const struct conv_geom *g, const double *x, const double *dy,
			    double *dw, double *db)
{
	memset(dw, 0, sizeof(*dw) * (size_t)g->k * g->c * g->r * g->s);
	if (db)
		memset(db, 0, sizeof(*db) * (size_t)g->k);
	for (int n = 0; n < g->n; n++)
		for (int p = 0; p < g->p; p++)
			for (int q = 0; q < g->q; q++)
				for (int k = 0; k < g->k; k++) {
					double d = Y(dy, n, p, q, k);

					if (db)
						db[k] += d;
					for (int r = 0; r < g->r; r++) {
						int h = p * g->stride - g->pad + r;

						if (h < 0 || h >= g->h)
							continue;
						for (int s = 0; s < g->s; s++) {
							int v = q * g->stride - g->pad + s;

							if (v < 0 || v >= g->w)
								continue;
							for (int c = 0; c < g->c; c++)
								W(dw, k, c, r, s) += d * X(x, n, h, v, c);
						}
					}
				}
}
