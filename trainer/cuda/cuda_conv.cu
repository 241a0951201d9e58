/* cuda_conv.cu - the CUDA backend's convolutions through cuDNN: the
 * precision per layer (gpu_conv_precision), the algorithm (gpu_pick_algo),
 * the (K,R,S,C) weights and the low-precision copies.  Shell. */
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

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

template <typename T> __global__ void k_widen(size_t n, const T *t, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = to_f32(t[i]);
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
	size_t e = cuda_elem_bytes(cv->prec), nx = (size_t)g->n * g->h * g->w * g->c;
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
	e = cuda_elem_bytes(prec);
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
	if (cuda_scratch_reserve(conv_scratch_plan(cv).total, err) ||
	    cuda_part_reserve(cuda_bg_part_floats(g->n * g->p * g->q, g->k), err))
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
	if (low && cuda_convert(ny, d_dy, (void *)dy, cv->prec)) {
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
	return cuda_bias_grad(g->n * g->p * g->q, g->k, d_dy, d_db, err);
fail:
	return -1;
}
