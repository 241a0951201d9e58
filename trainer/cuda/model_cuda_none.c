/* model_cuda_none.c - the device model of a trainer built without
 * nvcc: every call fails, saying so (model_cuda.h).  In trainer/cuda's
 * archive, taken only where model_cuda.o is not linked (trainer/
 * build.mk).  Core. */
#include "trainer/cuda/model_cuda.h" // defines: model_cuda_*
#include "common/sbuf.h"             // defines: sbuf_addstr

struct model_cuda *model_cuda_create(struct model *m, const struct optim *o, struct sbuf *err)
{
	(void)m;
	(void)o;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return NULL;
}

void model_cuda_free(struct model_cuda *mc)
{
	(void)mc;
}

int model_cuda_upload(struct model_cuda *mc, const struct optim *o, struct sbuf *err)
{
	(void)mc;
	(void)o;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_download(struct model_cuda *mc, struct optim *o, struct sbuf *err)
{
	(void)mc;
	(void)o;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_forward(struct model_cuda *mc, const float *x, bool train, uint64_t key,
		       struct sbuf *err)
{
	(void)mc;
	(void)x;
	(void)train;
	(void)key;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_logits(struct model_cuda *mc, struct sbuf *err)
{
	(void)mc;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_loss(struct model_cuda *mc, const int32_t *labels, const float *targets,
		    double *loss, int64_t *correct, struct sbuf *err)
{
	(void)mc;
	(void)labels;
	(void)targets;
	*loss = 0;
	*correct = 0;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_scale_loss_grad(struct model_cuda *mc, float k, bool poison, struct sbuf *err)
{
	(void)mc;
	(void)k;
	(void)poison;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_backward(struct model_cuda *mc, const struct grad_hook *hook, struct sbuf *err)
{
	(void)mc;
	(void)hook;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_unscale(struct model_cuda *mc, double scale, bool *overflow, struct sbuf *err)
{
	(void)mc;
	(void)scale;
	*overflow = false;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

int model_cuda_update(struct model_cuda *mc, const struct optim *o, double lr, struct sbuf *err)
{
	(void)mc;
	(void)o;
	(void)lr;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return -1;
}

float *model_cuda_grads(struct model_cuda *mc)
{
	(void)mc;
	return NULL;
}

void model_cuda_step_times(struct model_cuda *mc, double *copy_ms, double *sync_ms)
{
	(void)mc;
	*copy_ms = *sync_ms = 0;
}
