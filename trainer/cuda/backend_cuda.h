/* backend_cuda.h - the CUDA backend's operations: cuDNN convolution,
 * pooling and batch norm, cuBLASLt GEMMs on tensor cores, element-wise
 * kernels, and NCCL allreduce on a stream of its own.
 *
 * All pointers named d_* are device memory (be_cuda_alloc); shapes and
 * layouts are those of backend.h (activations NHWC, weights (K,C,R,S)).
 * Precision follows enum be_precision: low-precision inputs are
 * converted on the device, every accumulation and every output is fp32.
 *
 * Built from the backend's .cu files when nvcc is found; otherwise
 * backend_cuda_none.c reports no device, so callers and tests need no
 * #ifdef and compile once, and a binary built with CUDA runs on a
 * machine without a GPU: it asks be_cuda_device_count() and stays on the
 * CPU backend when it is 0.  Which of the two a binary links is chosen
 * at link time (trainer/build.mk).
 *
 * Contract as in backend.h: 0 or -1 with err filled, NULL on failure
 * for constructors, *_free accepts NULL, nothing allocates after create.
 */
#ifndef HPT_BACKEND_CUDA_H
#define HPT_BACKEND_CUDA_H

#include "trainer/cpu/backend.h" // defines: enum be_precision, struct conv_geom, struct pool_geom

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;
struct be_cuda_conv;
struct be_cuda_pool;

#ifdef __cplusplus
extern "C" {
#endif
/* Whether this binary has the CUDA backend.  Without it
 * (backend_cuda_none.c) only this, be_cuda_device_count() (0) and
 * be_cuda_describe() may be called. */
bool be_cuda_built(void);
/* GPUs this process can use; 0 when there is no driver or no device. */
int be_cuda_device_count(void);
/* The PCI bus id of device ("0000:3b:00.0") into buf[0, len): what
 * tells two ranks' GPUs apart whatever CUDA_VISIBLE_DEVICES numbered
 * them.  0 or -1 with err. */
int be_cuda_bus_id(int device, char *buf, int len, struct sbuf *err);
/* Selects the device, creates the compute and communication streams and
 * the cuBLASLt and cuDNN handles.  0 or -1 with err (and nothing left
 * made). */
int be_cuda_init(int device, struct sbuf *err);
const char *be_cuda_describe(void);
void be_cuda_shutdown(void);

/* Zeroed device memory (be_cuda_alloc_bytes: of any type). */
float *be_cuda_alloc(size_t nfloats);
void *be_cuda_alloc_bytes(size_t bytes);
void be_cuda_free(void *d);
/* Synchronous copies of n floats from and to pageable memory. */
int be_cuda_upload(float *d, const float *h, size_t n, struct sbuf *err);
int be_cuda_download(float *h, const float *d, size_t n, struct sbuf *err);

/* Pinned (page-locked) host memory, zeroed: what asynchronous copies
 * need to be asynchronous. */
void *be_cuda_host_alloc(size_t bytes);
void be_cuda_host_free(void *h);
/* Double-buffered input: slot 0 or 1 alternates per stage.
 * be_cuda_stage_ready waits until the pinned buffer of slot may be
 * written again (its previous copy is done).  be_cuda_stage_in copies
 * the pinned h into d on a copy stream of its own, once the compute
 * stream has finished the work that last read d, and makes the compute
 * stream wait for the copy: the copy overlaps what the compute stream
 * still has queued.  d of slot 0 and slot 1 must differ. */
int be_cuda_stage_ready(int slot, struct sbuf *err);
int be_cuda_stage_in(int slot, void *d, const void *h, size_t bytes, struct sbuf *err);
/* How long slot's last copy took on the device, once it is done. */
int be_cuda_stage_ms(int slot, float *ms, struct sbuf *err);
/* Asynchronous upload from pinned h on the compute stream; h must stay
 * unchanged until the compute stream passed it. */
int be_cuda_upload_async(void *d, const void *h, size_t bytes, struct sbuf *err);
/* bytes from the device into h after everything queued (a wait). */
int be_cuda_download_sync(void *h, const void *d, size_t bytes, struct sbuf *err);
/* Waits for the compute stream. */
int be_cuda_sync(struct sbuf *err);

/* Row-major C = alpha op(A) op(B) + beta C as be_gemm, on the device;
 * A and B are rounded to prec (bf16/fp16 tensor-core GEMM, fp32
 * accumulate and output). */
int be_cuda_gemm(char ta, char tb, int m, int n, int k, float alpha, const float *d_a, int lda,
		 const float *d_b, int ldb, float beta, float *d_c, int ldc,
		 enum be_precision prec, struct sbuf *err);

struct be_cuda_conv *be_cuda_conv_create(const struct conv_geom *g, unsigned flags,
					 enum be_precision prec, struct sbuf *err);
int be_cuda_conv_forward(struct be_cuda_conv *cv, const float *d_x, const float *d_w,
			 const float *d_b, float *d_y, struct sbuf *err);
int be_cuda_conv_backward(struct be_cuda_conv *cv, const float *d_x, const float *d_dy,
			  float *d_dx, float *d_dw, float *d_db, struct sbuf *err);
void be_cuda_conv_free(struct be_cuda_conv *cv);

struct be_cuda_pool *be_cuda_pool_create(const struct pool_geom *g, bool max,
					 struct sbuf *err);
int be_cuda_pool_forward(struct be_cuda_pool *pl, const float *d_x, float *d_y,
			 struct sbuf *err);
int be_cuda_pool_backward(struct be_cuda_pool *pl, const float *d_x, const float *d_y,
			  const float *d_dy, float *d_dx, struct sbuf *err);
void be_cuda_pool_free(struct be_cuda_pool *pl);

/* Training-mode batch norm over NHWC data of n images of hw pixels and
 * c channels, as batchnorm_fwd_train_f32/batchnorm_bwd_f32 (statistics
 * in fp32). */
int be_cuda_batchnorm_forward(int n, int hw, int c, const float *d_x, const float *d_gamma,
			      const float *d_beta, double eps, float *d_y, float *d_mean,
			      float *d_invstd, struct sbuf *err);
int be_cuda_batchnorm_backward(int n, int hw, int c, const float *d_x, const float *d_dy,
			       const float *d_gamma, const float *d_mean, const float *d_invstd,
			       double eps, float *d_dx, float *d_dgamma, float *d_dbeta,
			       struct sbuf *err);

/* Running statistics after be_cuda_batchnorm_forward, as layer.c does
 * on the CPU: rmean = (1-m) rmean + m mean, rvar = (1-m) rvar + m var
 * with var the unbiased batch variance, recovered from invstd (in
 * double: (1/invstd^2 - eps) rows/(rows-1); its error is relative to
 * var + eps, which is what inference divides by). */
int be_cuda_batchnorm_running(int rows, int c, const float *d_mean, const float *d_invstd,
			      double eps, double momentum, float *d_rmean, float *d_rvar,
			      struct sbuf *err);
/* Inference: y = gamma (x - rmean) / sqrt(rvar + eps) + beta, in the
 * arithmetic of batchnorm_fwd_infer_f32. */
int be_cuda_batchnorm_infer(int rows, int c, const float *d_x, const float *d_gamma,
			    const float *d_beta, const float *d_rmean, const float *d_rvar,
			    double eps, float *d_y, struct sbuf *err);

/* Element-wise kernels.  nvcc builds them with --fmad=false and the
 * same expression order as the C kernels, so they round as the CPU's do. */
int be_cuda_relu_forward(size_t n, const float *d_x, float *d_y, struct sbuf *err);
int be_cuda_relu_backward(size_t n, const float *d_y, const float *d_dy, float *d_dx,
			  struct sbuf *err);
/* The losses of kernels/pointwise.inc on the device, as
 * softmax_xent_f32 and sigmoid_bce_f32: d_dlogits gets their gradient,
 * d_out[0] the mean loss and d_out[1] the count of right predictions
 * (terms in double, summed in index order; exp and log are CUDA's, so
 * the loss matches the CPU's to about 1e-15 relative, not bit for bit).
 * labels in [0, k). */
int be_cuda_softmax_xent(int n, int k, const float *d_logits, const int32_t *d_labels,
			 float *d_dlogits, double *d_out, struct sbuf *err);
int be_cuda_sigmoid_bce(int n, int k, const float *d_logits, const float *d_targets,
			float *d_dlogits, double *d_out, struct sbuf *err);
/* amp_scale's d_g *= k (nothing when k is 1); poison: then d_g[0] =
 * NaN, the mark of a forward that overflowed (amp_forward_overflow). */
int be_cuda_scale(size_t n, float *d_g, float k, bool poison, struct sbuf *err);
/* d_g *= scale in place and *overflow = any element not finite (loss
 * scaling; one pass, one flag read back). */
int be_cuda_unscale(size_t n, float *d_g, float scale, bool *overflow, struct sbuf *err);
/* d_dst[0, n) = d_src[0, n), on the compute stream. */
int be_cuda_copy(float *d_dst, const float *d_src, size_t n, struct sbuf *err);
/* d_y = d_a + d_b (the residual sum; d_y may alias either). */
int be_cuda_add(size_t n, const float *d_a, const float *d_b, float *d_y, struct sbuf *err);
/* A linear layer's epilogue over (rows, k): y = act(y + b[col]). */
int be_cuda_bias_act(size_t rows, int k, const float *d_b, bool relu, float *d_y,
		     struct sbuf *err);
/* db[j] = sum over rows of dy[row, j] (fp32, a fixed reduction order). */
int be_cuda_bias_grad(int rows, int k, const float *d_dy, float *d_db, struct sbuf *err);
/* NHWC (n,h,w,c) -> (n, c*h*w) in PyTorch's (c,h,w) order, or back
 * (the inverse permutation), as layer.c's flatten; d_y != d_x. */
int be_cuda_flatten(int n, int h, int w, int c, const float *d_x, float *d_y, bool back,
		    struct sbuf *err);
/* y[i] = x[i] / (1-p) where rng_hash_uniform(key, i) >= p, else 0: the
 * mask function of kernels/pointwise.inc (rng.h), so the CPU and the
 * GPU drop the same elements; forward and backward are this one op. */
int be_cuda_dropout(size_t n, const float *d_x, float *d_y, double p, uint64_t key,
		    struct sbuf *err);

/* One optimizer step over n parameters with optim.c's arithmetic in its
 * order: the caller computes the per-step scalars as optim_update does
 * (lr, wd and mu rounded to float; AdamW's bc1 = 1 - beta1^t, bc2s =
 * sqrt(1 - beta2^t), decay = 1 - lr wd).  d_v is used by AdamW only. */
struct be_cuda_optim {
	bool adamw, nesterov;
	float lr, wd, mu;
	float b1, b2, eps, bc1, bc2s, decay;
};
int be_cuda_optim_update(size_t n, float *d_p, const float *d_g, float *d_m, float *d_v,
			 const struct be_cuda_optim *o, struct sbuf *err);

/* NCCL.  be_cuda_nccl_init_mpi bootstraps the communicator: rank 0 makes
 * the ncclUniqueId, MPI_Bcast sends it to the others, every rank joins.
 * mpi_comm points to an MPI_Comm (void * keeps mpi.h out of this header).
 * Collective over the communicator. */
int be_cuda_nccl_init_mpi(const void *mpi_comm, struct sbuf *err);
/* Sum-allreduce of d_buf[0, n) (the trainer pre-divides gradients by
 * the world size, so the sum is their average), on the
 * communication stream after an event recorded now on the compute
 * stream: a bucket's allreduce overlaps the backward of earlier layers
 * that is queued after it.  be_cuda_allreduce_wait makes the compute
 * stream wait for every allreduce started so far. */
int be_cuda_allreduce_start(float *d_buf, size_t n, struct sbuf *err);
int be_cuda_allreduce_wait(struct sbuf *err);
/* After the compute stream of a be_cuda_allreduce_wait was synchronised:
 * how long the compute stream stood waiting for the allreduces, i.e. the
 * communication that backward did not hide (metrics' comm_ms). */
int be_cuda_exposed_ms(float *ms, struct sbuf *err);
void be_cuda_nccl_shutdown(void);
#ifdef __cplusplus
}
#endif

#endif
