/* cuda_internal.cuh - what the CUDA backend's files share, nothing more:
 * the device context, the error macros, the conversion kernels two of
 * them launch, and the grow-only buffers.  Each kernel is defined in the
 * file that launches it (no relocatable device code).  Shell (CUDA). */
#ifndef HPT_CUDA_INTERNAL_CUH
#define HPT_CUDA_INTERNAL_CUH

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "trainer/cuda/backend_cuda.h" // defines: be_cuda_*
#include "trainer/cuda/gpu_plan.h"     // defines: gpu_alignment, gpu_pick_algo, gpu_conv_precision
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_addf
}

/* The backend's one device context: streams, library handles, grow-only
 * buffers; defined in backend_cuda.cu, set up by be_cuda_init. */
struct cuda_state {
	bool ready;
	int device;
	cudaStream_t compute, comm;
	cudaStream_t copy;       /* input staging (be_cuda_stage_in) */
	cudaEvent_t started[2];  /* slot's copy began (timed) */
	cudaEvent_t copied[2];   /* slot's copy done (timed) */
	cudaEvent_t freed[2];    /* the compute stream is done with slot */
	cudaEvent_t queued, reduced;
	cudaEvent_t computed, waited; /* timed: the exposed part of the reduction */
	cublasLtHandle_t lt;
	cudnnHandle_t dnn;
	void *lt_ws;
	size_t lt_ws_bytes;
	void *scratch; /* GEMM operand conversions and convolutions' passing
			* low-precision copies; grown by a plan or a first use */
	size_t scratch_bytes;
	float *part;   /* the bias gradients' partial sums, grown likewise */
	size_t part_floats;
	int *flag;     /* device overflow flag */
	ncclComm_t nccl;
	int world;
	char describe[320];
};
extern struct cuda_state G;

#define CU_TRY(call)                                                                      \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			sbuf_addf(err, "CUDA: %s: %s (%s:%d)", #call, cudaGetErrorString(e_), \
				  __FILE__, __LINE__);                                    \
			goto fail;                                                        \
		}                                                                         \
	} while (0)
#define DNN_TRY(call)                                                                     \
	do {                                                                              \
		cudnnStatus_t s_ = (call);                                                \
		if (s_ != CUDNN_STATUS_SUCCESS) {                                         \
			sbuf_addf(err, "cuDNN: %s: %s (%s:%d)", #call, cudnnGetErrorString(s_), \
				  __FILE__, __LINE__);                                    \
			goto fail;                                                        \
		}                                                                         \
	} while (0)
#define LT_TRY(call)                                                                      \
	do {                                                                              \
		cublasStatus_t s_ = (call);                                               \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                        \
			sbuf_addf(err, "cuBLASLt: %s: status %d (%s:%d)", #call, (int)s_,  \
				  __FILE__, __LINE__);                                    \
			goto fail;                                                        \
		}                                                                         \
	} while (0)
#define NCCL_TRY(call)                                                                    \
	do {                                                                              \
		ncclResult_t r_ = (call);                                                 \
		if (r_ != ncclSuccess) {                                                  \
			sbuf_addf(err, "NCCL: %s: %s (%s:%d)", #call, ncclGetErrorString(r_), \
				  __FILE__, __LINE__);                                    \
			goto fail;                                                        \
		}                                                                         \
	} while (0)

static inline unsigned blocks_for(size_t n)
{
	size_t b = (n + 255) / 256;

	return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b ? b : 1);
}

/* ---- conversions to and from the compute type (convolutions, GEMMs) ---- */

template <typename T> __device__ T from_f32(float v);
template <> __device__ inline float from_f32<float>(float v) { return v; }
template <> __device__ inline __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ inline __half from_f32<__half>(float v) { return __float2half_rn(v); }
static __device__ inline float to_f32(float v) { return v; }
static __device__ inline float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
static __device__ inline float to_f32(__half v) { return __half2float(v); }

template <typename T> __global__ void k_convert(size_t n, const float *x, T *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = from_f32<T>(x[i]);
}

/* y = act(widen(t) + b[channel]) over (rows, k). */
template <typename T>
__global__ void k_bias_act(size_t n, int k, const T *t, const float *b, bool relu, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float v = to_f32(t[i]) + b[i % k];

		y[i] = relu && v < 0 ? 0 : v;
	}
}

/* Bytes per element of the compute type. */
size_t cuda_elem_bytes(enum be_precision prec);
/* x (fp32) -> y in prec, on the compute stream; 0 or -1. */
int cuda_convert(size_t n, const float *x, void *y, enum be_precision prec);
/* G.scratch and G.part (the bias gradients' partial sums) grow to at
 * least this much; grow-only, so a step of a known shape never allocates.
 * 0 or -1 with err. */
int cuda_scratch_reserve(size_t bytes, struct sbuf *err);
int cuda_part_reserve(size_t floats, struct sbuf *err);
/* The partial-sum floats cuda_bias_grad needs for rows x k. */
size_t cuda_bg_part_floats(int rows, int k);
/* db = column sums of dy (rows x k), fp32, in a fixed order. */
int cuda_bias_grad(int rows, int k, const float *d_dy, float *d_db, struct sbuf *err);

#endif
