/* cuda_batchnorm.cu - the CUDA backend's batch norm: cuDNN's NHWC
 * training passes, and the running statistics and inference as kernels
 * that round as the C ones do.  Shell. */
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

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
