/* kernels.h - the numerical kernels of the trainer, plain C.
 *
 * Core: pure functions of their arguments; no allocation, no I/O.
 * Layouts: activations NHWC (channels last, the layout the CPU backend
 * keeps between layers); convolution weights (K,C,R,S) and linear weights
 * (OUT,IN), PyTorch's layouts, so checkpoints and fixtures need no
 * transposes.
 *
 * Two families:
 *   - *_ref (double): the plain reference of each op that oneDNN runs in
 *     the fast path (convolution, pooling, linear).  They are the oracles
 *     of the unit tests (finite differences in double, then the oneDNN
 *     backend against them in fp32) and are never on the training path.
 *   - pointwise kernels (ReLU, batch norm, dropout, losses), built twice
 *     from one source (*.inc) as _f32 for training and _f64 for the
 *     finite-difference checks, so the code the checks verify is the
 *     code that trains.
 */
#ifndef HPT_KERNELS_H
#define HPT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* in (N,H,W,C), w (K,C,R,S), out (N,P,Q,K); symmetric zero padding. */
struct conv_geom {
	int n, h, w, c;
	int k, r, s, stride, pad;
	int p, q; /* filled by conv_geom_finish() */
};

/* pool window k x k, stride, no padding (PyTorch's floor mode):
 * in (N,H,W,C), out (N,P,Q,C). */
struct pool_geom {
	int n, h, w, c;
	int k, stride;
	int p, q; /* filled by pool_geom_finish() */
};

/* Returns 0, or -1 when the output would be empty. */
int conv_geom_finish(struct conv_geom *g);
int pool_geom_finish(struct pool_geom *g);

/* conv2d: FLOPs = 2*N*K*P*Q*C*R*S per pass (forward, data, weights). */
void conv2d_fwd_ref(const struct conv_geom *g, const double *x, const double *w,
		    const double *b, double *y);
void conv2d_bwd_data_ref(const struct conv_geom *g, const double *dy, const double *w,
			 double *dx);
void conv2d_bwd_weights_ref(const struct conv_geom *g, const double *x, const double *dy,
			    double *dw, double *db);

/* Max pooling: the gradient goes to the first maximum of each window in
 * row-major order, as in PyTorch. */
void maxpool_fwd_ref(const struct pool_geom *g, const double *x, double *y);
void maxpool_bwd_ref(const struct pool_geom *g, const double *x, const double *dy, double *dx);
void avgpool_fwd_ref(const struct pool_geom *g, const double *x, double *y);
void avgpool_bwd_ref(const struct pool_geom *g, const double *dy, double *dx);

/* Max pooling in fp32 for training (maxpool.c): arg (N,P,Q,C) receives
 * each window's row-major index of its first maximum; dx is overwritten. */
void maxpool_fwd_f32(const struct pool_geom *g, const float *x, float *y, int32_t *arg);
void maxpool_bwd_f32(const struct pool_geom *g, const float *dy, const int32_t *arg, float *dx);

/* y = x rounded to the nearest bf16 or binary16 value, kept as float
 * (round.c; backend.h be_round_bf16 and be_round_fp16 say how); y may
 * be x. */
void round_bf16_f32(size_t n, const float *x, float *y);
void round_fp16_f32(size_t n, const float *x, float *y);

/* A one-channel first layer fused whole (conv1pool.c): conv g (C = 1,
 * 3x3, stride 1, padding 1, K <= CONV1POOL_MAX_K) + bias + ReLU + 2x2
 * max pooling of stride 2.  y and arg are (N, H/2, W/2, K): the pooled
 * output and each window's argmax (0..3, row-major).  The backward takes
 * the pooled gradient dy and writes dw (K,1,3,3) and db (K); part is
 * scratch of N*10*K doubles.  No input gradient: it is a first layer. */
#define CONV1POOL_MAX_K 64
#define CONV1POOL_MAX_PAD 65536 /* (H+2)(W+2): the padded image lives on the stack */
bool conv1pool_fits(const struct conv_geom *g);
/* The instruction set the fused layer runs on here, "avx512_core" or
 * "avx2" (the widest the CPU has under the cap); NULL: it cannot run. */
const char *conv1pool_isa(void);
void conv1pool_fwd_f32(const struct conv_geom *g, const float *x, const float *w,
		       const float *b, float *y, int32_t *arg);
void conv1pool_bwd_f32(const struct conv_geom *g, const float *x, const float *y,
		       const float *dy, const int32_t *arg, double *part, float *dw, float *db);

/* linear: x (N,IN), w (OUT,IN), b (OUT), y (N,OUT) = x w^T + b. */
void linear_fwd_ref(int n, int in, int out, const double *x, const double *w, const double *b,
		    double *y);
void linear_bwd_ref(int n, int in, int out, const double *x, const double *w, const double *dy,
		    double *dx, double *dw, double *db);

/* Pointwise kernels, declared for both precisions. */
#define HPT_POINTWISE_DECLS(T, SUF)                                                           \
	void relu_fwd_##SUF(size_t n, const T *x, T *y);                                      \
	void relu_bwd_##SUF(size_t n, const T *y, const T *dy, T *dx);                        \
	void add_##SUF(size_t n, const T *a, const T *b, T *y);                               \
	void batchnorm_fwd_train_##SUF(size_t m, int c, const T *x, const T *gamma,           \
				       const T *beta, double eps, T *y, T *mean, T *invstd,   \
				       T *var);                                               \
	void batchnorm_fwd_infer_##SUF(size_t m, int c, const T *x, const T *gamma,           \
				       const T *beta, const T *rmean, const T *rvar,          \
				       double eps, T *y);                                     \
	void batchnorm_bwd_##SUF(size_t m, int c, const T *x, const T *dy, const T *gamma,    \
				 const T *mean, const T *invstd, T *dx, T *dgamma, T *dbeta); \
	void batchnorm_sums_##SUF(size_t m, int c, const T *x, double *sums);                 \
	void batchnorm_fwd_sync_##SUF(size_t m, int c, const T *x, const T *gamma,            \
				      const T *beta, double eps, const double *sums, T *y,    \
				      T *mean, T *invstd, T *var);                            \
	void batchnorm_bwd_sums_##SUF(size_t m, int c, const T *x, const T *dy,               \
				      const T *mean, const T *invstd, double *sums);          \
	void batchnorm_bwd_sync_##SUF(size_t m, int c, const T *x, const T *dy,               \
				      const T *gamma, const T *mean, const T *invstd,         \
				      const double *sums, double count, T *dx);               \
	void dropout_fwd_##SUF(size_t n, const T *x, T *y, double p, uint64_t key);           \
	void dropout_bwd_##SUF(size_t n, const T *dy, T *dx, double p, uint64_t key);         \
	double softmax_xent_##SUF(int n, int k, const T *logits, const int32_t *labels,       \
				  T *dlogits, int64_t *correct);                              \
	double sigmoid_bce_##SUF(int n, int k, const T *logits, const T *targets, T *dlogits, \
				 int64_t *correct);

HPT_POINTWISE_DECLS(float, f32)
HPT_POINTWISE_DECLS(double, f64)

/* Batch norm: y = gamma (x - mean) invstd + beta per channel over the
 * m = N*H*W rows; train mode uses the batch's biased variance and
 * returns mean, invstd and the unbiased variance (for running stats).
 * Synchronised batch norm splits both passes at the reduction over
 * rows: batchnorm_sums / batchnorm_bwd_sums give a rank's partial sums,
 * the caller adds them over the ranks (MPI lives in comm.c, not here),
 * and batchnorm_fwd_sync / batchnorm_bwd_sync finish with the totals,
 * so N ranks of m rows compute what one process of N*m rows would.
 * Dropout keeps x[i] with probability 1-p, scaled by 1/(1-p), from a
 * mask that is a pure function of (key, i): forward and backward agree
 * without storing it.  Losses return the mean over the batch (xent) or
 * over all n*k outputs (bce; k = 1 is binary, k > 1 multi-label) and
 * write its gradient; correct counts right predictions (bce: per output,
 * logit > 0 against target > 0.5). */

#endif
