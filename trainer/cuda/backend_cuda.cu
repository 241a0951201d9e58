/* backend_cuda.cu - the CUDA backend (backend_cuda.h): its device context,
 * memory, input staging and conversions.  The ops live beside it, one
 * concern per file behind cuda_internal.cuh: cuda_gemm.cu (cuBLASLt),
 * cuda_conv.cu, cuda_pool.cu, cuda_batchnorm.cu (cuDNN),
 * cuda_pointwise.cu (element-wise kernels, losses, optimizers) and
 * cuda_nccl.cu (NCCL allreduce overlapped with backward; MPI for its
 * bootstrap only).  Shell over CUDA, cuDNN, cuBLASLt and NCCL.
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
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

struct cuda_state G;

/* ---- lifecycle ---- */

extern "C" bool be_cuda_built(void)
{
	return true;
}

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
	/* encode-ok: a description for people, cut to its buffer (C++: no strfmt_label) */
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

size_t cuda_elem_bytes(enum be_precision prec)
{
	return prec == BE_FP32 ? 4 : 2;
}

int cuda_convert(size_t n, const float *x, void *y, enum be_precision prec)
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
int cuda_scratch_reserve(size_t bytes, struct sbuf *err)
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
