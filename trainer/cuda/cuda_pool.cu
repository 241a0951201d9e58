/* cuda_pool.cu - the CUDA backend's max and average pooling through
 * cuDNN, fp32.  Shell. */
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

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
