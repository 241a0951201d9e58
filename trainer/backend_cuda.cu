/* backend_cuda.cu - the CUDA backend (backend_cuda.h): cuDNN convolution,
 * pooling and batch norm, cuBLASLt GEMMs, element-wise kernels and NCCL
 * allreduce overlapped with backward.  Shell over CUDA, cuDNN,
 * cuBLASLt, NCCL and (for the NCCL bootstrap only) MPI.
 *
 * Precision: at bf16/fp16 a convolution converts x, w and dy to the low
 * type on the device (w also to (K,R,S,C), the layout tensor-core
 * kernels want) and runs cuDNN's pseudo-bf16/half configuration:
 * low-precision tensors, fp32 accumulation (CUDNN_TENSOR_OP_MATH); the
 * low-precision y, dx and dw are widened to fp32 by the kernels that add
 * the bias (and ReLU) or reorder dw back to (K,C,R,S).  Convolutions of
 * few input channels (gpu_conv_precision: a grey image's first layer)
 * run fp32 at every precision.  The bias gradient is an fp32 reduction
 * of the fp32 dy.  At fp32 the math mode is CUDNN_FMA_MATH, no Winograd
 * or FFT algorithm is used and the GEMM compute type is
 * CUBLAS_COMPUTE_32F, so no TF32 rounding: results match the CPU
 * backend to 1e-5.  Pooling and batch norm run fp32 (memory-bound;
 * batch-norm statistics stay fp32).  cuDNN algorithms are picked
 * deterministic where one exists (same bits for the same step on the
 * same GPU: exact resume).  cuBLASLt is told the alignment its operands
 * really have (gpu_alignment), not left to assume 256 bytes.
 *
 * The element-wise kernels (bias, ReLU, residual add, flatten, dropout,
 * batch-norm running statistics and inference, loss-scale check, the
 * optimizers) are grid-stride loops written as the C kernels of
 * kernels/ and optim.c, expression for expression, and built with
 * --fmad=false (trainer/build.mk), so they round as the CPU does: the
 * optimizer step and the dropout masks are the CPU's bit for bit.  Each
 * moves a few bytes per FLOP: HBM-bound, microseconds at these sizes.
 *
 * Streams: every op runs on the compute stream; NCCL runs on a second
 * stream that waits for an event recorded when a bucket's gradients were
 * queued, so its allreduce overlaps the backward queued after it.
 *
 * Budget: conv FLOPs 2*N*K*P*Q*C*R*S per pass on tensor cores; the
 * conversions move 6 bytes per element of x, dy and y (HBM-bound, a few
 * percent of a convolution at the bundled models' sizes).  Memory: at
 * fp32 a convolution keeps only its (K,R,S,C) weights; at bf16/fp16 also
 * the low-precision x its weight gradient needs; the copies that live
 * within one call share one scratch buffer.
 */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <mpi.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "trainer/backend_cuda.h" // defines: be_cuda_*
#include "trainer/gpu_plan.h"     // defines: gpu_alignment, gpu_pick_algo, gpu_conv_precision
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_addf
}

static struct {
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
} G;

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

static unsigned blocks_for(size_t n)
{
	size_t b = (n + 255) / 256;

	return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b ? b : 1);
}

/* ---- element-wise kernels (grid-stride loops) ---- */

template <typename T> __device__ T from_f32(float v);
template <> __device__ float from_f32<float>(float v) { return v; }
template <> __device__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
__device__ float to_f32(float v) { return v; }
__device__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float to_f32(__half v) { return __half2float(v); }

template <typename T> __global__ void k_convert(size_t n, const float *x, T *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = from_f32<T>(x[i]);
}

/* (K,C,R,S) fp32 -> (K,R,S,C) T. */
template <typename T> __global__ void k_w_to_krsc(int k, int c, int rs, const float *w, T *o)
{
	size_t n = (size_t)k * c * rs;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t kk = i / ((size_t)c * rs), rem = i % ((size_t)c * rs);
		size_t cc = rem / rs, p = rem % rs;

		o[(kk * rs + p) * c + cc] = from_f32<T>(w[i]);
	}
}

/* (K,R,S,C) T -> (K,C,R,S) fp32. */
template <typename T> __global__ void k_krsc_to_w(int k, int c, int rs, const T *in, float *w)
{
	size_t n = (size_t)k * c * rs;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t kk = i / ((size_t)c * rs), rem = i % ((size_t)c * rs);
		size_t cc = rem / rs, p = rem % rs;

		w[i] = to_f32(in[(kk * rs + p) * c + cc]);
	}
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

template <typename T> __global__ void k_widen(size_t n, const T *t, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = to_f32(t[i]);
}

/* The bias gradient db[c] = sum over rows of dy[row, c] in two passes of
 * a fixed order (the same bits every run).  Pass 1: a block of 32
 * columns x 8 lanes sums one chunk of rows, each warp reading 32
 * neighbouring columns of a row (coalesced), into part[chunk, c].  Pass
 * 2: one block per column adds its chunks in a tree.  hepcnn's first
 * layer at batch 256 (1M rows x 16) runs as 1024 blocks, not 16. */
enum { BG_COLS = 32, BG_LANES = 8, BG_MAX_CHUNKS = 1024, BG_MIN_ROWS = 64 };

__global__ void k_bias_grad_part(int rows, int k, int per, const float *dy, float *part)
{
	__shared__ float lane[BG_LANES][BG_COLS + 1];
	int c = blockIdx.x * BG_COLS + threadIdx.x;
	int lo = blockIdx.y * per, hi = min(rows, lo + per);
	float v = 0;

	if (c < k)
		for (int r = lo + threadIdx.y; r < hi; r += BG_LANES)
			v += dy[(size_t)r * k + c];
	lane[threadIdx.y][threadIdx.x] = v;
	__syncthreads();
	if (threadIdx.y == 0 && c < k) {
		for (int j = 1; j < BG_LANES; j++)
			v += lane[j][threadIdx.x];
		part[(size_t)blockIdx.y * k + c] = v;
	}
}

__global__ void k_bias_grad_sum(int chunks, int k, const float *part, float *db)
{
	__shared__ float t[256];
	float v = 0;

	for (int j = threadIdx.x; j < chunks; j += blockDim.x)
		v += part[(size_t)j * k + blockIdx.x];
	t[threadIdx.x] = v;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			t[threadIdx.x] += t[threadIdx.x + w];
		__syncthreads();
	}
	if (!threadIdx.x)
		db[blockIdx.x] = t[0];
}

__global__ void k_relu_fwd(size_t n, const float *x, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = x[i] > 0 ? x[i] : 0;
}

__global__ void k_relu_bwd(size_t n, const float *y, const float *dy, float *dx)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dx[i] = y[i] > 0 ? dy[i] : 0;
}

__global__ void k_unscale(size_t n, float *g, float scale, int *flag)
{
	int bad = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		g[i] *= scale;
		bad |= !isfinite(g[i]);
	}
	if (bad)
		*flag = 1;
}

__global__ void k_add(size_t n, const float *a, const float *b, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = a[i] + b[i];
}

/* Thread i owns NHWC element i and its (c,h,w) twin j. */
__global__ void k_flatten(int n, int hw, int c, const float *x, float *y, bool back)
{
	size_t per = (size_t)hw * c, total = per * n;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t s = i / per, rem = i % per, p = rem / c, ch = rem % c;
		size_t j = s * per + ch * hw + p;

		if (back)
			y[i] = x[j];
		else
			y[j] = x[i];
	}
}

/* rng.h's rng_mix, rng_hash and rng_hash_uniform, bit for bit
 * (test_cuda.c compares the masks with the CPU's). */
__device__ uint64_t d_rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

__device__ float d_rng_hash_uniform(uint64_t key, uint64_t counter)
{
	uint64_t h = d_rng_mix(d_rng_mix(key ^ 0x3c6ef372fe94f82bull) + counter);

	return (float)(h >> 40) * 0x1.0p-24f;
}

__global__ void k_dropout(size_t n, const float *x, float *y, double p, uint64_t key, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = d_rng_hash_uniform(key, i) >= p ? x[i] * scale : 0;
}

/* softmax_xent_f32 of kernels/pointwise.inc, one thread per sample:
 * term[i] and hit[i] for the fixed-order sum of k_sum_terms. */
__global__ void k_xent(int n, int k, const float *logits, const int32_t *labels, float *dlogits,
		       double *term, double *hit)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		const float *z = logits + (size_t)i * k;
		double mx = z[0], sum = 0;
		int best = 0, y = labels[i];

		for (int j = 1; j < k; j++)
			if (z[j] > mx) {
				mx = z[j];
				best = j;
			}
		for (int j = 0; j < k; j++)
			sum += exp(z[j] - mx);
		term[i] = log(sum) + mx - z[y];
		hit[i] = best == y;
		for (int j = 0; j < k; j++)
			dlogits[(size_t)i * k + j] = (float)((exp(z[j] - mx) / sum - (j == y)) / n);
	}
}

/* sigmoid_bce_f32, one thread per output. */
__global__ void k_bce(size_t nk, const float *logits, const float *targets, float *dlogits,
		      double *term, double *hit)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nk;
	     i += (size_t)gridDim.x * blockDim.x) {
		double z = logits[i], t = targets[i];

		term[i] = (z > 0 ? z : 0) - z * t + log1p(exp(-fabs(z)));
		hit[i] = (z > 0) == (t > 0.5);
		dlogits[i] = (float)((1.0 / (1.0 + exp(-z)) - t) / (double)nk);
	}
}

/* out = (sum of term / div, sum of hit), summed in index order as the
 * C kernels sum: one thread, m is a batch's worth. */
__global__ void k_sum_terms(size_t m, const double *term, const double *hit, double div,
			    double *out)
{
	double loss = 0, right = 0;

	for (size_t i = 0; i < m; i++) {
		loss += term[i];
		right += hit[i];
	}
	out[0] = loss / div;
	out[1] = right;
}

/* amp_scale's g *= k; poison: then g[0] = NaN. */
__global__ void k_scale(size_t n, float *g, float k, bool poison)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		g[i] = poison && !i ? NAN : g[i] * k;
}

/* One thread per channel: c is at most a few hundred. */
__global__ void k_bn_running(int rows, int c, const float *mean, const float *invstd, double eps,
			     float m, float *rm, float *rv)
{
	for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < c; j += gridDim.x * blockDim.x) {
		double is = invstd[j], vb = 1.0 / (is * is) - eps, vu;

		vb = vb < 0 ? 0 : vb;
		vu = rows > 1 ? vb * rows / (rows - 1) : vb;
		rm[j] = (1 - m) * rm[j] + m * mean[j];
		rv[j] = (1 - m) * rv[j] + m * (float)vu;
	}
}

__global__ void k_bn_infer(size_t n, int c, const float *x, const float *gamma, const float *beta,
			   const float *rm, const float *rv, double eps, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		int j = (int)(i % c);

		y[i] = (float)(gamma[j] * (x[i] - rm[j]) / sqrt((double)rv[j] + eps) + beta[j]);
	}
}

/* optim.c's loops, line for line. */
__global__ void k_sgd(size_t n, float *p, const float *g, float *m, struct be_cuda_optim o)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float d = g[i];

		if (o.wd != 0.0f)
			d += o.wd * p[i];
		if (o.mu != 0.0f) {
			m[i] = o.mu * m[i] + d;
			d = o.nesterov ? d + o.mu * m[i] : m[i];
		}
		p[i] -= o.lr * d;
	}
}

__global__ void k_adamw(size_t n, float *p, const float *g, float *m, float *v,
			struct be_cuda_optim o)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float gi = g[i];

		p[i] *= o.decay;
		m[i] = o.b1 * m[i] + (1.0f - o.b1) * gi;
		v[i] = o.b2 * v[i] + (1.0f - o.b2) * gi * gi;
		p[i] -= o.lr / o.bc1 * (m[i] / (sqrtf(v[i]) / o.bc2s + o.eps));
	}
}

/* ---- lifecycle ---- */

extern "C" int be_cuda_device_count(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError(); /* clear the sticky "no driver" error */
		return 0;
	}
	return n;
}

extern "C" int be_cuda_bus_id(int device, char *buf, int len, struct sbuf *err)
{
	CU_TRY(cudaDeviceGetPCIBusId(buf, len, device));
	return 0;
fail:
	return -1;
}

/* Everything be_cuda_init made, whichever part of it it made; G is zero
 * afterwards. */
static void release_all(void)
{
	be_cuda_nccl_shutdown();
	if (G.compute)
		cudaStreamSynchronize(G.compute);
	cudaFree(G.lt_ws);
	cudaFree(G.scratch);
	cudaFree(G.part);
	cudaFree(G.flag);
	if (G.lt)
		cublasLtDestroy(G.lt);
	if (G.dnn)
		cudnnDestroy(G.dnn);
	for (int i = 0; i < 2; i++) {
		if (G.started[i])
			cudaEventDestroy(G.started[i]);
		if (G.copied[i])
			cudaEventDestroy(G.copied[i]);
		if (G.freed[i])
			cudaEventDestroy(G.freed[i]);
	}
	if (G.queued)
		cudaEventDestroy(G.queued);
	if (G.reduced)
		cudaEventDestroy(G.reduced);
	if (G.computed)
		cudaEventDestroy(G.computed);
	if (G.waited)
		cudaEventDestroy(G.waited);
	if (G.compute)
		cudaStreamDestroy(G.compute);
	if (G.comm)
		cudaStreamDestroy(G.comm);
	if (G.copy) {
		cudaStreamSynchronize(G.copy);
		cudaStreamDestroy(G.copy);
	}
	memset(&G, 0, sizeof(G));
}

extern "C" int be_cuda_init(int device, struct sbuf *err)
{
	struct cudaDeviceProp p;

	if (G.ready)
		return 0;
	CU_TRY(cudaSetDevice(device));
	CU_TRY(cudaGetDeviceProperties(&p, device));
	CU_TRY(cudaStreamCreateWithFlags(&G.compute, cudaStreamNonBlocking));
	CU_TRY(cudaStreamCreateWithFlags(&G.comm, cudaStreamNonBlocking));
	CU_TRY(cudaStreamCreateWithFlags(&G.copy, cudaStreamNonBlocking));
	for (int i = 0; i < 2; i++) {
		CU_TRY(cudaEventCreate(&G.started[i]));
		CU_TRY(cudaEventCreate(&G.copied[i]));
		CU_TRY(cudaEventCreateWithFlags(&G.freed[i], cudaEventDisableTiming));
	}
	CU_TRY(cudaEventCreateWithFlags(&G.queued, cudaEventDisableTiming));
	CU_TRY(cudaEventCreateWithFlags(&G.reduced, cudaEventDisableTiming));
	CU_TRY(cudaEventCreate(&G.computed));
	CU_TRY(cudaEventCreate(&G.waited));
	LT_TRY(cublasLtCreate(&G.lt));
	DNN_TRY(cudnnCreate(&G.dnn));
	DNN_TRY(cudnnSetStream(G.dnn, G.compute));
	G.lt_ws_bytes = 32u << 20;
	CU_TRY(cudaMalloc(&G.lt_ws, G.lt_ws_bytes));
	CU_TRY(cudaMalloc((void **)&G.flag, sizeof(int)));
	G.device = device;
	G.ready = true;
	snprintf(G.describe, sizeof(G.describe), "CUDA %.200s (sm_%d%d, %d SMs), cuDNN %zu, cuBLASLt %zu",
		 p.name, p.major, p.minor, p.multiProcessorCount, cudnnGetVersion(),
		 cublasLtGetVersion());
	return 0;
fail:
	release_all();
	return -1;
}

extern "C" const char *be_cuda_describe(void)
{
	return G.describe;
}

extern "C" void be_cuda_shutdown(void)
{
	if (G.ready)
		release_all();
}

/* Zeroed on the compute stream: a cudaMemset on the legacy stream is
 * not ordered before work on the non-blocking compute stream. */
extern "C" void *be_cuda_alloc_bytes(size_t bytes)
{
	void *p = NULL;

	bytes = bytes ? bytes : 1;
	if (cudaMalloc(&p, bytes) != cudaSuccess) {
		cudaGetLastError();
		return NULL;
	}
	if (cudaMemsetAsync(p, 0, bytes, G.compute) != cudaSuccess) {
		cudaFree(p);
		return NULL;
	}
	return p;
}

extern "C" float *be_cuda_alloc(size_t nfloats)
{
	return (float *)be_cuda_alloc_bytes(nfloats * sizeof(float));
}

extern "C" void be_cuda_free(void *d)
{
	if (d)
		cudaFree(d);
}

extern "C" void *be_cuda_host_alloc(size_t bytes)
{
	void *p = NULL;

	if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
		cudaGetLastError();
		return NULL;
	}
	memset(p, 0, bytes);
	return p;
}

extern "C" void be_cuda_host_free(void *h)
{
	if (h)
		cudaFreeHost(h);
}

extern "C" int be_cuda_stage_ready(int slot, struct sbuf *err)
{
	CU_TRY(cudaEventSynchronize(G.copied[slot]));
	return 0;
fail:
	return -1;
}

/* The copy waits until the compute stream has finished the step that
 * last read d (two stages ago: freed[slot] was recorded when the stage
 * after it began); the compute stream waits for the copy; and this
 * point of the compute stream, after everything queued so far, frees
 * the other slot for the next stage. */
extern "C" int be_cuda_stage_in(int slot, void *d, const void *h, size_t bytes, struct sbuf *err)
{
	CU_TRY(cudaStreamWaitEvent(G.copy, G.freed[slot], 0));
	CU_TRY(cudaEventRecord(G.started[slot], G.copy));
	CU_TRY(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, G.copy));
	CU_TRY(cudaEventRecord(G.copied[slot], G.copy));
	CU_TRY(cudaStreamWaitEvent(G.compute, G.copied[slot], 0));
	CU_TRY(cudaEventRecord(G.freed[slot ^ 1], G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_stage_ms(int slot, float *ms, struct sbuf *err)
{
	CU_TRY(cudaEventElapsedTime(ms, G.started[slot], G.copied[slot]));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_upload_async(void *d, const void *h, size_t bytes, struct sbuf *err)
{
	CU_TRY(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_download_sync(void *h, const void *d, size_t bytes, struct sbuf *err)
{
	CU_TRY(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, G.compute));
	CU_TRY(cudaStreamSynchronize(G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_upload(float *d, const float *h, size_t n, struct sbuf *err)
{
	CU_TRY(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, G.compute));
	CU_TRY(cudaStreamSynchronize(G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_download(float *h, const float *d, size_t n, struct sbuf *err)
{
	CU_TRY(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, G.compute));
	CU_TRY(cudaStreamSynchronize(G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_sync(struct sbuf *err)
{
	CU_TRY(cudaStreamSynchronize(G.compute));
	return 0;
fail:
	return -1;
}

static size_t elem_bytes(enum be_precision prec)
{
	return prec == BE_FP32 ? 4 : 2;
}

static int convert(size_t n, const float *x, void *y, enum be_precision prec)
{
	if (prec == BE_BF16)
		k_convert<<<blocks_for(n), 256, 0, G.compute>>>(n, x, (__nv_bfloat16 *)y);
	else if (prec == BE_FP16)
		k_convert<<<blocks_for(n), 256, 0, G.compute>>>(n, x, (__half *)y);
	else
		k_convert<<<blocks_for(n), 256, 0, G.compute>>>(n, x, (float *)y);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Grow-only: allocates on the first step of a new shape, never after. */
static int scratch_reserve(size_t bytes, struct sbuf *err)
{
	if (bytes <= G.scratch_bytes)
		return 0;
	CU_TRY(cudaStreamSynchronize(G.compute));
	cudaFree(G.scratch);
	G.scratch = NULL;
	G.scratch_bytes = 0;
	CU_TRY(cudaMalloc(&G.scratch, bytes));
	G.scratch_bytes = bytes;
	return 0;
fail:
	return -1;
}

/* Rows per chunk of the bias gradient's first pass. */
static int bg_rows_per_chunk(int rows)
{
	int per = (rows + BG_MAX_CHUNKS - 1) / BG_MAX_CHUNKS;

	return per < BG_MIN_ROWS ? BG_MIN_ROWS : per;
}

static size_t bg_part_floats(int rows, int k)
{
	int per = bg_rows_per_chunk(rows);

	return (size_t)((rows + per - 1) / per) * k;
}

/* Grow-only, as scratch_reserve. */
static int part_reserve(size_t floats, struct sbuf *err)
{
	if (floats <= G.part_floats)
		return 0;
	CU_TRY(cudaStreamSynchronize(G.compute));
	cudaFree(G.part);
	G.part = NULL;
	G.part_floats = 0;
	CU_TRY(cudaMalloc((void **)&G.part, floats * sizeof(float)));
	G.part_floats = floats;
	return 0;
fail:
	return -1;
}

static int bias_grad(int rows, int k, const float *d_dy, float *d_db, struct sbuf *err)
{
	int per = bg_rows_per_chunk(rows), chunks = (rows + per - 1) / per;
	dim3 grid((k + BG_COLS - 1) / BG_COLS, chunks), block(BG_COLS, BG_LANES);

	if (part_reserve((size_t)chunks * k, err))
		return -1;
	k_bias_grad_part<<<grid, block, 0, G.compute>>>(rows, k, per, d_dy, G.part);
	k_bias_grad_sum<<<k, 256, 0, G.compute>>>(chunks, k, G.part, d_db);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* ---- GEMM ---- */

/* The heuristic assumes 256-byte-aligned operands unless told otherwise
 * (and may then pick a kernel that faults on a view into an arena):
 * tell it what the pointers have. */
static int set_alignment(cublasLtMatmulPreference_t pref, const void *a, const void *b,
			 const void *c, struct sbuf *err)
{
	uint32_t al[3] = { gpu_alignment((uintptr_t)a), gpu_alignment((uintptr_t)b),
			   gpu_alignment((uintptr_t)c) };

	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
						    &al[0], sizeof(al[0])));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
						    &al[1], sizeof(al[1])));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
						    &al[2], sizeof(al[2])));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
						    &al[2], sizeof(al[2])));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_gemm(char ta, char tb, int m, int n, int k, float alpha, const float *d_a,
			    int lda, const float *d_b, int ldb, float beta, float *d_c, int ldc,
			    enum be_precision prec, struct sbuf *err)
{
	/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
	 * swap the operands, keep the transposes. */
	cublasLtMatmulDesc_t op = NULL;
	cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t h;
	cublasOperation_t opa = tb == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t opb = ta == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
	cudaDataType_t in = prec == BE_BF16 ? CUDA_R_16BF : prec == BE_FP16 ? CUDA_R_16F : CUDA_R_32F;
	/* Elements to convert: rows x ld of each row-major operand, B being
	 * (tb ? n x k : k x n) and A (ta ? k x m : m x k). */
	size_t na = (size_t)(tb == 't' ? n : k) * ldb, nb = (size_t)(ta == 't' ? k : m) * lda;
	const void *a = d_b, *b = d_a;
	int found = 0, rc = -1;

	if (prec != BE_FP32) {
		size_t e = elem_bytes(prec);

		if (scratch_reserve((na + nb) * e + 256, err))
			return -1;
		if (convert(na, d_b, G.scratch, prec) ||
		    convert(nb, d_a, (char *)G.scratch + ((na * e + 255) / 256) * 256, prec)) {
			sbuf_addstr(err, "CUDA: conversion kernel failed to launch");
			return -1;
		}
		a = G.scratch;
		b = (char *)G.scratch + ((na * e + 255) / 256) * 256;
	}
	LT_TRY(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
	LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
	LT_TRY(cublasLtMatrixLayoutCreate(&la, in, opa == CUBLAS_OP_N ? n : k,
					  opa == CUBLAS_OP_N ? k : n, ldb));
	LT_TRY(cublasLtMatrixLayoutCreate(&lb, in, opb == CUBLAS_OP_N ? k : m,
					  opb == CUBLAS_OP_N ? m : k, lda));
	LT_TRY(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, ldc));
	LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						    &G.lt_ws_bytes, sizeof(G.lt_ws_bytes)));
	if (set_alignment(pref, a, b, d_c, err))
		goto fail;
	LT_TRY(cublasLtMatmulAlgoGetHeuristic(G.lt, op, la, lb, lc, lc, pref, 1, &h, &found));
	if (!found || h.state != CUBLAS_STATUS_SUCCESS) {
		sbuf_addf(err, "cuBLASLt: no algorithm for a %s GEMM %dx%dx%d (status %d)",
			  be_precision_name(prec), m, n, k, found ? (int)h.state : -1);
		goto fail;
	}
	LT_TRY(cublasLtMatmul(G.lt, op, &alpha, a, la, b, lb, &beta, d_c, lc, d_c, lc, &h.algo,
			      G.lt_ws, G.lt_ws_bytes, G.compute));
	rc = 0;
fail:
	/* Descriptors are host objects; creating them per call costs
	 * microseconds, against a GEMM of tens.  A cache per shape is the
	 * next step if profiles show it. */
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (lc)
		cublasLtMatrixLayoutDestroy(lc);
	if (lb)
		cublasLtMatrixLayoutDestroy(lb);
	if (la)
		cublasLtMatrixLayoutDestroy(la);
	if (op)
		cublasLtMatmulDescDestroy(op);
	return rc;
}

/* ---- convolution ---- */

/* A convolution's device memory.  Kept from forward to backward: w as
 * (K,R,S,C) in the compute type (backward data reuses it) and, at
 * bf16/fp16, x in the compute type (the weight gradient reuses it).
 * Passing, in the shared scratch (reserved by the plan, so the step loop
 * never grows it for a convolution): the forward's low-precision y, and
 * backward's low-precision dy, its dx (only where one is asked for) and
 * dw.  At fp32 cuDNN reads x and dy and writes y and dx where the caller
 * has them: no activation-sized copy at all. */
struct be_cuda_conv {
	struct conv_geom g;
	unsigned flags;
	enum be_precision prec; /* what runs: gpu_conv_precision of what was asked */
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv;
	cudnnConvolutionFwdAlgo_t fa;
	cudnnConvolutionBwdDataAlgo_t da;
	cudnnConvolutionBwdFilterAlgo_t wa;
	void *ws;
	size_t ws_bytes;
	void *xl, *wl; /* kept copies (xl: bf16/fp16 only) */
};

/* Byte offsets of the passing copies in the scratch: the forward's y at
 * 0; backward's dy, dx and dw; total, what the scratch must hold. */
struct conv_scratch {
	size_t dy, dx, dw, total;
};

static size_t round256(size_t bytes)
{
	return (bytes + 255) / 256 * 256;
}

static struct conv_scratch conv_scratch_plan(const struct be_cuda_conv *cv)
{
	const struct conv_geom *g = &cv->g;
	size_t e = elem_bytes(cv->prec), nx = (size_t)g->n * g->h * g->w * g->c;
	size_t ny = (size_t)g->n * g->p * g->q * g->k, nw = (size_t)g->k * g->c * g->r * g->s;
	bool low = cv->prec != BE_FP32;
	struct conv_scratch sc;

	sc.dy = 0;
	sc.dx = sc.dy + (low ? round256(ny * e) : 0);
	sc.dw = sc.dx + (low && (cv->flags & BE_NEED_DX) ? round256(nx * e) : 0);
	sc.total = sc.dw + round256(nw * e);
	if (low && round256(ny * e) > sc.total)
		sc.total = round256(ny * e);
	return sc;
}

extern "C" void be_cuda_conv_free(struct be_cuda_conv *cv)
{
	if (!cv)
		return;
	if (cv->x)
		cudnnDestroyTensorDescriptor(cv->x);
	if (cv->y)
		cudnnDestroyTensorDescriptor(cv->y);
	if (cv->w)
		cudnnDestroyFilterDescriptor(cv->w);
	if (cv->conv)
		cudnnDestroyConvolutionDescriptor(cv->conv);
	cudaFree(cv->ws);
	cudaFree(cv->xl);
	cudaFree(cv->wl);
	free(cv);
}

static enum gpu_algo_kind algo_kind(cudnnConvolutionFwdAlgo_t a)
{
	return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING
		       ? GPU_ALGO_FFT
	       : a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
			       a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED
		       ? GPU_ALGO_WINOGRAD
		       : GPU_ALGO_GEMM;
}

static enum gpu_algo_kind algo_kind(cudnnConvolutionBwdDataAlgo_t a)
{
	return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
			       a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING
		       ? GPU_ALGO_FFT
	       : a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
			       a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED
		       ? GPU_ALGO_WINOGRAD
		       : GPU_ALGO_GEMM;
}

static enum gpu_algo_kind algo_kind(cudnnConvolutionBwdFilterAlgo_t a)
{
	return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
			       a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING
		       ? GPU_ALGO_FFT
	       : a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD ||
			       a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED
		       ? GPU_ALGO_WINOGRAD
		       : GPU_ALGO_GEMM;
}

enum { MAX_ALGOS = 8 }; /* more than any of cuDNN's *_ALGO_COUNT */

/* gpu_pick_algo over what cuDNN's heuristic rated.  The descriptor's
 * math mode is what runs (at fp32 CUDNN_FMA_MATH: never TF32),
 * whatever the rating said. */
template <typename P> static int pick_algo(const P *perf, int cnt, enum be_precision prec)
{
	cudnnMathType_t want = prec == BE_FP32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
	struct gpu_algo v[MAX_ALGOS];

	cnt = cnt < MAX_ALGOS ? cnt : MAX_ALGOS;
	for (int i = 0; i < cnt; i++) {
		v[i].ok = perf[i].status == CUDNN_STATUS_SUCCESS;
		v[i].deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
		v[i].math_matches = perf[i].mathType == want;
		v[i].kind = algo_kind(perf[i].algo);
	}
	return gpu_pick_algo(v, cnt, prec);
}

static int conv_algos(struct be_cuda_conv *cv, struct sbuf *err)
{
	cudnnConvolutionFwdAlgoPerf_t fp[MAX_ALGOS];
	cudnnConvolutionBwdDataAlgoPerf_t dp[MAX_ALGOS];
	cudnnConvolutionBwdFilterAlgoPerf_t wp[MAX_ALGOS];
	size_t b1 = 0, b2 = 0, b3 = 0;
	int cnt = 0, i;

	DNN_TRY(cudnnGetConvolutionForwardAlgorithm_v7(G.dnn, cv->x, cv->w, cv->conv, cv->y,
						       MAX_ALGOS, &cnt, fp));
	if ((i = pick_algo(fp, cnt, cv->prec)) < 0)
		goto no_algo;
	cv->fa = fp[i].algo;
	DNN_TRY(cudnnGetConvolutionBackwardDataAlgorithm_v7(G.dnn, cv->w, cv->y, cv->conv, cv->x,
							    MAX_ALGOS, &cnt, dp));
	if ((i = pick_algo(dp, cnt, cv->prec)) < 0)
		goto no_algo;
	cv->da = dp[i].algo;
	DNN_TRY(cudnnGetConvolutionBackwardFilterAlgorithm_v7(G.dnn, cv->x, cv->y, cv->conv, cv->w,
							      MAX_ALGOS, &cnt, wp));
	if ((i = pick_algo(wp, cnt, cv->prec)) < 0)
		goto no_algo;
	cv->wa = wp[i].algo;
	DNN_TRY(cudnnGetConvolutionForwardWorkspaceSize(G.dnn, cv->x, cv->w, cv->conv, cv->y, cv->fa, &b1));
	DNN_TRY(cudnnGetConvolutionBackwardDataWorkspaceSize(G.dnn, cv->w, cv->y, cv->conv, cv->x,
							     cv->da, &b2));
	DNN_TRY(cudnnGetConvolutionBackwardFilterWorkspaceSize(G.dnn, cv->x, cv->y, cv->conv, cv->w,
							       cv->wa, &b3));
	cv->ws_bytes = b1 > b2 ? b1 : b2;
	cv->ws_bytes = b3 > cv->ws_bytes ? b3 : cv->ws_bytes;
	return 0;
no_algo:
	sbuf_addf(err, "cuDNN: no %s algorithm for a %dx%d convolution of %d to %d channels",
		  be_precision_name(cv->prec), cv->g.r, cv->g.s, cv->g.c, cv->g.k);
fail:
	return -1;
}

extern "C" struct be_cuda_conv *be_cuda_conv_create(const struct conv_geom *g, unsigned flags,
						    enum be_precision prec, struct sbuf *err)
{
	struct be_cuda_conv *cv = (struct be_cuda_conv *)calloc(1, sizeof(*cv));
	cudnnDataType_t dt;
	size_t e, nx = (size_t)g->n * g->h * g->w * g->c, nw = (size_t)g->k * g->c * g->r * g->s;

	if (!cv) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	cv->g = *g;
	cv->flags = flags;
	cv->prec = prec = gpu_conv_precision(g->c, prec);
	e = elem_bytes(prec);
	dt = prec == BE_BF16 ? CUDNN_DATA_BFLOAT16 : prec == BE_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
	DNN_TRY(cudnnCreateTensorDescriptor(&cv->x));
	DNN_TRY(cudnnCreateTensorDescriptor(&cv->y));
	DNN_TRY(cudnnCreateFilterDescriptor(&cv->w));
	DNN_TRY(cudnnCreateConvolutionDescriptor(&cv->conv));
	DNN_TRY(cudnnSetTensor4dDescriptor(cv->x, CUDNN_TENSOR_NHWC, dt, g->n, g->c, g->h, g->w));
	DNN_TRY(cudnnSetTensor4dDescriptor(cv->y, CUDNN_TENSOR_NHWC, dt, g->n, g->k, g->p, g->q));
	DNN_TRY(cudnnSetFilter4dDescriptor(cv->w, dt, CUDNN_TENSOR_NHWC, g->k, g->c, g->r, g->s));
	DNN_TRY(cudnnSetConvolution2dDescriptor(cv->conv, g->pad, g->pad, g->stride, g->stride, 1, 1,
						CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
	DNN_TRY(cudnnSetConvolutionMathType(cv->conv, prec == BE_FP32 ? CUDNN_FMA_MATH
								     : CUDNN_TENSOR_OP_MATH));
	if (conv_algos(cv, err))
		goto fail;
	if (cv->ws_bytes)
		CU_TRY(cudaMalloc(&cv->ws, cv->ws_bytes));
	CU_TRY(cudaMalloc(&cv->wl, nw * e));
	if (prec != BE_FP32)
		CU_TRY(cudaMalloc(&cv->xl, nx * e));
	if (scratch_reserve(conv_scratch_plan(cv).total, err) ||
	    part_reserve(bg_part_floats(g->n * g->p * g->q, g->k), err))
		goto fail;
	return cv;
fail:
	be_cuda_conv_free(cv);
	return NULL;
}

/* x (bf16/fp16 only) and w into their kept compute-type copies. */
template <typename T>
static void conv_fwd_kernels_in(struct be_cuda_conv *cv, const float *x, const float *w)
{
	const struct conv_geom *g = &cv->g;
	size_t nx = (size_t)g->n * g->h * g->w * g->c, nw = (size_t)g->k * g->c * g->r * g->s;

	if (cv->xl)
		k_convert<<<blocks_for(nx), 256, 0, G.compute>>>(nx, x, (T *)cv->xl);
	k_w_to_krsc<<<blocks_for(nw), 256, 0, G.compute>>>(g->k, g->c, g->r * g->s, w, (T *)cv->wl);
}

extern "C" int be_cuda_conv_forward(struct be_cuda_conv *cv, const float *d_x, const float *d_w,
				    const float *d_b, float *d_y, struct sbuf *err)
{
	const struct conv_geom *g = &cv->g;
	size_t ny = (size_t)g->n * g->p * g->q * g->k;
	const float one = 1, zero = 0;
	bool relu = cv->flags & BE_RELU, low = cv->prec != BE_FP32;
	const void *x = low ? cv->xl : d_x;
	void *y = low ? G.scratch : d_y;

	if (cv->prec == BE_BF16)
		conv_fwd_kernels_in<__nv_bfloat16>(cv, d_x, d_w);
	else if (cv->prec == BE_FP16)
		conv_fwd_kernels_in<__half>(cv, d_x, d_w);
	else
		conv_fwd_kernels_in<float>(cv, d_x, d_w);
	DNN_TRY(cudnnConvolutionForward(G.dnn, &one, cv->x, x, cv->w, cv->wl, cv->conv, cv->fa,
					cv->ws, cv->ws_bytes, &zero, cv->y, y));
	/* at fp32 in place: element i is read before it is written */
	if (cv->prec == BE_BF16)
		k_bias_act<<<blocks_for(ny), 256, 0, G.compute>>>(ny, g->k, (const __nv_bfloat16 *)y,
								   d_b, relu, d_y);
	else if (cv->prec == BE_FP16)
		k_bias_act<<<blocks_for(ny), 256, 0, G.compute>>>(ny, g->k, (const __half *)y, d_b,
								   relu, d_y);
	else
		k_bias_act<<<blocks_for(ny), 256, 0, G.compute>>>(ny, g->k, (const float *)y, d_b,
								   relu, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* The compute-type dx (bf16/fp16) and dw back to fp32, dw to (K,C,R,S). */
template <typename T>
static void conv_bwd_out(struct be_cuda_conv *cv, const void *dxl, float *dx, const void *dwl,
			 float *dw)
{
	const struct conv_geom *g = &cv->g;
	size_t nx = (size_t)g->n * g->h * g->w * g->c, nw = (size_t)g->k * g->c * g->r * g->s;

	if (dx && dxl != dx)
		k_widen<<<blocks_for(nx), 256, 0, G.compute>>>(nx, (const T *)dxl, dx);
	k_krsc_to_w<<<blocks_for(nw), 256, 0, G.compute>>>(g->k, g->c, g->r * g->s, (const T *)dwl,
							    dw);
}

/* d_x must be the forward's input (backend.h's contract): at fp32 the
 * weight gradient reads it; at bf16/fp16 the forward's copy of it. */
extern "C" int be_cuda_conv_backward(struct be_cuda_conv *cv, const float *d_x, const float *d_dy,
				     float *d_dx, float *d_dw, float *d_db, struct sbuf *err)
{
	const struct conv_geom *g = &cv->g;
	size_t ny = (size_t)g->n * g->p * g->q * g->k;
	const float one = 1, zero = 0;
	bool low = cv->prec != BE_FP32;
	struct conv_scratch sc = conv_scratch_plan(cv);
	char *s = (char *)G.scratch;
	const void *x = low ? cv->xl : (const void *)d_x;
	const void *dy = low ? (const void *)(s + sc.dy) : (const void *)d_dy;
	void *dx = low ? (void *)(s + sc.dx) : (void *)d_dx, *dw = s + sc.dw;

	if (d_dx && !(cv->flags & BE_NEED_DX)) {
		sbuf_addstr(err, "be_cuda_conv_backward: dx asked of a convolution planned without it");
		return -1;
	}
	if (low && convert(ny, d_dy, (void *)dy, cv->prec)) {
		sbuf_addstr(err, "CUDA: conversion kernel failed to launch");
		return -1;
	}
	if (d_dx)
		DNN_TRY(cudnnConvolutionBackwardData(G.dnn, &one, cv->w, cv->wl, cv->y, dy, cv->conv,
						     cv->da, cv->ws, cv->ws_bytes, &zero, cv->x, dx));
	DNN_TRY(cudnnConvolutionBackwardFilter(G.dnn, &one, cv->x, x, cv->y, dy, cv->conv, cv->wa,
					       cv->ws, cv->ws_bytes, &zero, cv->w, dw));
	if (cv->prec == BE_BF16)
		conv_bwd_out<__nv_bfloat16>(cv, dx, d_dx, dw, d_dw);
	else if (cv->prec == BE_FP16)
		conv_bwd_out<__half>(cv, dx, d_dx, dw, d_dw);
	else
		conv_bwd_out<float>(cv, dx, d_dx, dw, d_dw);
	CU_TRY(cudaGetLastError());
	return bias_grad(g->n * g->p * g->q, g->k, d_dy, d_db, err);
fail:
	return -1;
}

/* ---- pooling ---- */

struct be_cuda_pool {
	cudnnPoolingDescriptor_t p;
	cudnnTensorDescriptor_t x, y;
};

extern "C" void be_cuda_pool_free(struct be_cuda_pool *pl)
{
	if (!pl)
		return;
	if (pl->p)
		cudnnDestroyPoolingDescriptor(pl->p);
	if (pl->x)
		cudnnDestroyTensorDescriptor(pl->x);
	if (pl->y)
		cudnnDestroyTensorDescriptor(pl->y);
	free(pl);
}

extern "C" struct be_cuda_pool *be_cuda_pool_create(const struct pool_geom *g, bool max,
						    struct sbuf *err)
{
	struct be_cuda_pool *pl = (struct be_cuda_pool *)calloc(1, sizeof(*pl));

	if (!pl) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	DNN_TRY(cudnnCreatePoolingDescriptor(&pl->p));
	DNN_TRY(cudnnCreateTensorDescriptor(&pl->x));
	DNN_TRY(cudnnCreateTensorDescriptor(&pl->y));
	DNN_TRY(cudnnSetPooling2dDescriptor(pl->p,
					    max ? CUDNN_POOLING_MAX_DETERMINISTIC
						: CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
					    CUDNN_NOT_PROPAGATE_NAN, g->k, g->k, 0, 0, g->stride,
					    g->stride));
	DNN_TRY(cudnnSetTensor4dDescriptor(pl->x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, g->n, g->c,
					   g->h, g->w));
	DNN_TRY(cudnnSetTensor4dDescriptor(pl->y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, g->n, g->c,
					   g->p, g->q));
	return pl;
fail:
	be_cuda_pool_free(pl);
	return NULL;
}

extern "C" int be_cuda_pool_forward(struct be_cuda_pool *pl, const float *d_x, float *d_y,
				    struct sbuf *err)
{
	const float one = 1, zero = 0;

	DNN_TRY(cudnnPoolingForward(G.dnn, pl->p, &one, pl->x, d_x, &zero, pl->y, d_y));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_pool_backward(struct be_cuda_pool *pl, const float *d_x, const float *d_y,
				     const float *d_dy, float *d_dx, struct sbuf *err)
{
	const float one = 1, zero = 0;

	DNN_TRY(cudnnPoolingBackward(G.dnn, pl->p, &one, pl->y, d_y, pl->y, d_dy, pl->x, d_x, &zero,
				     pl->x, d_dx));
	return 0;
fail:
	return -1;
}

/* ---- batch norm: NHWC activations as cuDNN's NHWC (n, c, hw, 1), in
 * its spatial-persistent mode, its fast path for NHWC data, where this
 * GPU and cuDNN offer it (else the plain spatial mode) ---- */

static int bn_descs(int n, int hw, int c, cudnnTensorDescriptor_t *t, cudnnTensorDescriptor_t *p,
		    struct sbuf *err)
{
	DNN_TRY(cudnnCreateTensorDescriptor(t));
	DNN_TRY(cudnnCreateTensorDescriptor(p));
	DNN_TRY(cudnnSetTensor4dDescriptor(*t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, hw, 1));
	DNN_TRY(cudnnDeriveBNTensorDescriptor(*p, *t, CUDNN_BATCHNORM_SPATIAL_PERSISTENT));
	return 0;
fail:
	return -1;
}

/* Spatial-persistent first; a cuDNN that lacks it for this shape says
 * CUDNN_STATUS_NOT_SUPPORTED and the plain mode runs.  Both give the
 * batch's mean and inverse standard deviation. */
static cudnnStatus_t bn_forward_modes(cudnnTensorDescriptor_t t, cudnnTensorDescriptor_t p,
				      const float *d_x, const float *d_gamma, const float *d_beta,
				      double eps, float *d_y, float *d_mean, float *d_invstd)
{
	static const cudnnBatchNormMode_t modes[] = { CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
						      CUDNN_BATCHNORM_SPATIAL };
	const float one = 1, zero = 0;
	cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;

	for (int i = 0; i < 2 && st == CUDNN_STATUS_NOT_SUPPORTED; i++)
		st = cudnnBatchNormalizationForwardTraining(G.dnn, modes[i], &one, &zero, t, d_x, t,
							    d_y, p, d_gamma, d_beta, 0, NULL, NULL,
							    eps, d_mean, d_invstd);
	return st;
}

static cudnnStatus_t bn_backward_modes(cudnnTensorDescriptor_t t, cudnnTensorDescriptor_t p,
				       const float *d_x, const float *d_dy, const float *d_gamma,
				       double eps, const float *d_mean, const float *d_invstd,
				       float *d_dx, float *d_dgamma, float *d_dbeta)
{
	static const cudnnBatchNormMode_t modes[] = { CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
						      CUDNN_BATCHNORM_SPATIAL };
	const float one = 1, zero = 0;
	cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;

	for (int i = 0; i < 2 && st == CUDNN_STATUS_NOT_SUPPORTED; i++)
		st = cudnnBatchNormalizationBackward(G.dnn, modes[i], &one, &zero, &one, &zero, t, d_x,
						     t, d_dy, t, d_dx, p, d_gamma, d_dgamma, d_dbeta,
						     eps, d_mean, d_invstd);
	return st;
}

extern "C" int be_cuda_batchnorm_forward(int n, int hw, int c, const float *d_x,
					 const float *d_gamma, const float *d_beta, double eps,
					 float *d_y, float *d_mean, float *d_invstd, struct sbuf *err)
{
	cudnnTensorDescriptor_t t = NULL, p = NULL;
	int rc = -1;

	if (bn_descs(n, hw, c, &t, &p, err))
		goto fail;
	DNN_TRY(bn_forward_modes(t, p, d_x, d_gamma, d_beta,
				 eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps, d_y, d_mean,
				 d_invstd));
	rc = 0;
fail:
	if (t)
		cudnnDestroyTensorDescriptor(t);
	if (p)
		cudnnDestroyTensorDescriptor(p);
	return rc;
}

extern "C" int be_cuda_batchnorm_backward(int n, int hw, int c, const float *d_x,
					  const float *d_dy, const float *d_gamma,
					  const float *d_mean, const float *d_invstd, double eps,
					  float *d_dx, float *d_dgamma, float *d_dbeta,
					  struct sbuf *err)
{
	cudnnTensorDescriptor_t t = NULL, p = NULL;
	int rc = -1;

	if (bn_descs(n, hw, c, &t, &p, err))
		goto fail;
	DNN_TRY(bn_backward_modes(t, p, d_x, d_dy, d_gamma,
				  eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps, d_mean,
				  d_invstd, d_dx, d_dgamma, d_dbeta));
	rc = 0;
fail:
	if (t)
		cudnnDestroyTensorDescriptor(t);
	if (p)
		cudnnDestroyTensorDescriptor(p);
	return rc;
}

/* cuDNN's floor on eps; the running update must use the eps that made
 * invstd. */
static double bn_eps(double eps)
{
	return eps < CUDNN_BN_MIN_EPSILON ? CUDNN_BN_MIN_EPSILON : eps;
}

extern "C" int be_cuda_batchnorm_running(int rows, int c, const float *d_mean,
					 const float *d_invstd, double eps, double momentum,
					 float *d_rmean, float *d_rvar, struct sbuf *err)
{
	k_bn_running<<<(c + 255) / 256, 256, 0, G.compute>>>(rows, c, d_mean, d_invstd, bn_eps(eps),
							      (float)momentum, d_rmean, d_rvar);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_batchnorm_infer(int rows, int c, const float *d_x, const float *d_gamma,
				       const float *d_beta, const float *d_rmean,
				       const float *d_rvar, double eps, float *d_y, struct sbuf *err)
{
	size_t n = (size_t)rows * c;

	k_bn_infer<<<blocks_for(n), 256, 0, G.compute>>>(n, c, d_x, d_gamma, d_beta, d_rmean, d_rvar,
							  eps, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* ---- element-wise ---- */

extern "C" int be_cuda_relu_forward(size_t n, const float *d_x, float *d_y, struct sbuf *err)
{
	k_relu_fwd<<<blocks_for(n), 256, 0, G.compute>>>(n, d_x, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_relu_backward(size_t n, const float *d_y, const float *d_dy, float *d_dx,
				     struct sbuf *err)
{
	k_relu_bwd<<<blocks_for(n), 256, 0, G.compute>>>(n, d_y, d_dy, d_dx);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_unscale(size_t n, float *d_g, float scale, bool *overflow, struct sbuf *err)
{
	int h = 0;

	CU_TRY(cudaMemsetAsync(G.flag, 0, sizeof(int), G.compute));
	k_unscale<<<blocks_for(n), 256, 0, G.compute>>>(n, d_g, scale, G.flag);
	CU_TRY(cudaGetLastError());
	CU_TRY(cudaMemcpyAsync(&h, G.flag, sizeof(int), cudaMemcpyDeviceToHost, G.compute));
	CU_TRY(cudaStreamSynchronize(G.compute));
	*overflow = h != 0;
	return 0;
fail:
	return -1;
}

/* The per-sample (per-output) terms live in the scratch: nothing else
 * uses it between kernels of one call. */
static int loss_terms(size_t m, double **term, double **hit, struct sbuf *err)
{
	if (scratch_reserve(2 * m * sizeof(double), err))
		return -1;
	*term = (double *)G.scratch;
	*hit = *term + m;
	return 0;
}

extern "C" int be_cuda_softmax_xent(int n, int k, const float *d_logits, const int32_t *d_labels,
				    float *d_dlogits, double *d_out, struct sbuf *err)
{
	double *term, *hit;

	if (loss_terms((size_t)n, &term, &hit, err))
		return -1;
	k_xent<<<(n + 127) / 128, 128, 0, G.compute>>>(n, k, d_logits, d_labels, d_dlogits, term, hit);
	k_sum_terms<<<1, 1, 0, G.compute>>>((size_t)n, term, hit, (double)n, d_out);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_sigmoid_bce(int n, int k, const float *d_logits, const float *d_targets,
				   float *d_dlogits, double *d_out, struct sbuf *err)
{
	size_t nk = (size_t)n * k;
	double *term, *hit;

	if (loss_terms(nk, &term, &hit, err))
		return -1;
	k_bce<<<blocks_for(nk), 256, 0, G.compute>>>(nk, d_logits, d_targets, d_dlogits, term, hit);
	k_sum_terms<<<1, 1, 0, G.compute>>>(nk, term, hit, (double)nk, d_out);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_scale(size_t n, float *d_g, float k, bool poison, struct sbuf *err)
{
	if (k == 1.0f && !poison)
		return 0;
	k_scale<<<blocks_for(n), 256, 0, G.compute>>>(n, d_g, k, poison);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_copy(float *d_dst, const float *d_src, size_t n, struct sbuf *err)
{
	CU_TRY(cudaMemcpyAsync(d_dst, d_src, n * sizeof(float), cudaMemcpyDeviceToDevice, G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_add(size_t n, const float *d_a, const float *d_b, float *d_y,
			   struct sbuf *err)
{
	k_add<<<blocks_for(n), 256, 0, G.compute>>>(n, d_a, d_b, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_bias_act(size_t rows, int k, const float *d_b, bool relu, float *d_y,
				struct sbuf *err)
{
	size_t n = rows * k;

	k_bias_act<<<blocks_for(n), 256, 0, G.compute>>>(n, k, (const float *)d_y, d_b, relu, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_bias_grad(int rows, int k, const float *d_dy, float *d_db,
				 struct sbuf *err)
{
	return bias_grad(rows, k, d_dy, d_db, err);
}

extern "C" int be_cuda_flatten(int n, int h, int w, int c, const float *d_x, float *d_y,
			       bool back, struct sbuf *err)
{
	size_t total = (size_t)n * h * w * c;

	k_flatten<<<blocks_for(total), 256, 0, G.compute>>>(n, h * w, c, d_x, d_y, back);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_dropout(size_t n, const float *d_x, float *d_y, double p, uint64_t key,
			       struct sbuf *err)
{
	/* the scale of dropout_fwd_f32: 1/(1-p) in double, rounded once */
	k_dropout<<<blocks_for(n), 256, 0, G.compute>>>(n, d_x, d_y, p, key, (float)(1.0 / (1.0 - p)));
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_optim_update(size_t n, float *d_p, const float *d_g, float *d_m, float *d_v,
				    const struct be_cuda_optim *o, struct sbuf *err)
{
	if (o->adamw)
		k_adamw<<<blocks_for(n), 256, 0, G.compute>>>(n, d_p, d_g, d_m, d_v, *o);
	else
		k_sgd<<<blocks_for(n), 256, 0, G.compute>>>(n, d_p, d_g, d_m, *o);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* ---- NCCL ---- */

/* Every rank learns of a failure on any rank: rank 0 sends whether it
 * made the id along with it, and the ranks agree on whether all joined
 * (a rank whose ncclCommInitRank failed while the others still wait in
 * theirs is for the caller's stall watchdog). */
extern "C" int be_cuda_nccl_init_mpi(const void *mpi_comm, struct sbuf *err)
{
	MPI_Comm comm = *(const MPI_Comm *)mpi_comm;
	struct {
		int ok;
		ncclUniqueId id;
	} boot;
	ncclResult_t r;
	int rank, world, rc, ok;

	if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &world) != MPI_SUCCESS) {
		sbuf_addstr(err, "MPI: cannot query the communicator for NCCL");
		return -1;
	}
	memset(&boot, 0, sizeof(boot));
	if (!rank) {
		r = ncclGetUniqueId(&boot.id);
		boot.ok = r == ncclSuccess;
		if (!boot.ok)
			sbuf_addf(err, "NCCL: ncclGetUniqueId: %s", ncclGetErrorString(r));
	}
	rc = MPI_Bcast(&boot, (int)sizeof(boot), MPI_BYTE, 0, comm);
	if (rc != MPI_SUCCESS) {
		sbuf_addf(err, "MPI: MPI_Bcast of the NCCL id failed with %d", rc);
		return -1;
	}
	if (!boot.ok) {
		if (rank)
			sbuf_addstr(err, "NCCL: rank 0 could not make the communicator's id");
		return -1;
	}
	r = ncclCommInitRank(&G.nccl, world, boot.id, rank);
	ok = r == ncclSuccess;
	if (!ok) {
		sbuf_addf(err, "NCCL: ncclCommInitRank: %s", ncclGetErrorString(r));
		G.nccl = NULL;
	}
	rc = MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
	if (rc != MPI_SUCCESS || !ok) {
		if (rc != MPI_SUCCESS)
			sbuf_addf(err, "MPI: MPI_Allreduce of the NCCL start failed with %d", rc);
		else if (G.nccl)
			sbuf_addstr(err, "NCCL: another rank could not join the communicator");
		if (G.nccl) /* abort: a destroy could wait for the missing peer */
			ncclCommAbort(G.nccl);
		G.nccl = NULL;
		return -1;
	}
	G.world = world;
	return 0;
}

extern "C" int be_cuda_allreduce_start(float *d_buf, size_t n, struct sbuf *err)
{
	if (!G.nccl) {
		sbuf_addstr(err, "be_cuda_allreduce_start: NCCL is not initialised");
		return -1;
	}
	CU_TRY(cudaEventRecord(G.queued, G.compute));
	CU_TRY(cudaStreamWaitEvent(G.comm, G.queued, 0));
	NCCL_TRY(ncclAllReduce(d_buf, d_buf, n, ncclFloat, ncclSum, G.nccl, G.comm));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_allreduce_wait(struct sbuf *err)
{
	CU_TRY(cudaEventRecord(G.computed, G.compute));
	CU_TRY(cudaEventRecord(G.reduced, G.comm));
	CU_TRY(cudaStreamWaitEvent(G.compute, G.reduced, 0));
	CU_TRY(cudaEventRecord(G.waited, G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_exposed_ms(float *ms, struct sbuf *err)
{
	CU_TRY(cudaEventElapsedTime(ms, G.computed, G.waited));
	return 0;
fail:
	return -1;
}

extern "C" void be_cuda_nccl_shutdown(void)
{
	if (G.nccl) {
		cudaStreamSynchronize(G.comm);
		ncclCommDestroy(G.nccl);
		G.nccl = NULL;
	}
}
