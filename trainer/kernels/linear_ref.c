/* linear_ref.c - plain double-precision fully connected layer, the
 * oracle of the GEMM path.  Core.  x (N,IN), w (OUT,IN), y (N,OUT). */
#include "trainer/kernels/kernels.h" // defines: linear_*_ref

void linear_fwd_ref(int n, int in, int out, const double *x, const double *w, const double *b,
		    double *y)
{
	for (int i = 0; i < n; i++)
		for (int o = 0; o < out; o++) {
			double acc = b ? b[o] : 0.0;

			for (int j = 0; j < in; j++)
				acc += x[(size_t)i * in + j] * w[(size_t)o * in + j];
			y[(size_t)i * out + o] = acc;
		}
}

void linear_bwd_ref(int n, int in, int out, const double *x, const double *w, const double *dy,
		    double *dx, double *dw, double *db)
{
	if (dx)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < in; j++) {
				double acc = 0;

				for (int o = 0; o < out; o++)
					acc += dy[(size_t)i * out + o] * w[(size_t)o * in + j];
				dx[(size_t)i * in + j] = acc;
			}
	for (int o = 0; o < out; o++) {
		for (int j = 0; j < in; j++) {
			double acc = 0;

			for (int i = 0; i < n; i++)
				acc += dy[(size_t)i * out + o] * x[(size_t)i * in + j];
			dw[(size_t)o * in + j] = acc;
		}
		if (db) {
			double acc = 0;

			for (int i = 0; i < n; i++)
				acc += dy[(size_t)i * out + o];
			db[o] = acc;
		}
	}
}
