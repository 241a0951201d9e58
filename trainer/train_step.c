/* train_step.c - the model's passes on its device, for one rank's
 * trainer: see train_internal.h.  Core but for the device it drives. */
#include "trainer/train_internal.h" // defines: struct trainer, train_step_*
#include "trainer/model/amp.h"            // defines: amp_scale, amp_unscale, amp_update, amp_factor
#include "trainer/cuda/model_cuda.h"     // defines: model_cuda_*

#include <math.h>

/* Evaluation (train false) wants the logits on the host. */
int train_step_forward(struct trainer *t, bool train, uint64_t key, struct sbuf *err)
{
	if (!t->dev)
		return model_forward(&t->model, t->x, train, key, err);
	if (model_cuda_forward(t->dev, t->x, train, key, err))
		return -1;
	return train ? 0 : model_cuda_logits(t->dev, err);
}

/* The loss and its gradient where the model is; from the GPU only the
 * loss and the count of right predictions come back. */
int train_step_loss(struct trainer *t, double *loss, int64_t *correct, struct sbuf *err)
{
	if (t->dev)
		return model_cuda_loss(t->dev, t->labels, t->targets, loss, correct, err);
	*loss = model_loss(&t->model, t->labels, t->targets, correct);
	return 0;
}

/* amp_scale of the loss gradient; poison (a forward that overflowed,
 * amp_forward_overflow) puts a NaN in it, so that the unscale after the
 * allreduce skips the step on every rank. */
int train_step_scale(struct trainer *t, bool poison, struct sbuf *err)
{
	if (t->dev)
		return model_cuda_scale_loss_grad(t->dev, amp_factor(&t->cs.scaler, t->grad_factor / (float)t->tp.plan.accum),
						  poison, err);
	amp_scale(&t->cs.scaler, t->model.dlogits, (size_t)t->model.input.n * t->model.outputs,
		  t->grad_factor / (float)t->tp.plan.accum);
	if (poison)
		t->model.dlogits[0] = NAN;
	return 0;
}

int train_step_backward(struct trainer *t, const struct grad_hook *gh, struct sbuf *err)
{
	if (t->dev)
		return model_cuda_backward(t->dev, gh, err);
	return model_backward(&t->model, gh, err);
}

/* Loss scaling (fp16): unscales the gradients and records the outcome;
 * 1 = an overflow, skip this update; 0; -1 error. */
int train_step_unscale(struct trainer *t, struct sbuf *err)
{
	bool overflow;

	if (!t->cs.scaler.enabled)
		return 0;
	if (!t->dev)
		overflow = amp_unscale(&t->cs.scaler, t->model.grads, t->model.narena);
	else if (model_cuda_unscale(t->dev, t->cs.scaler.scale, &overflow, err))
		return -1;
	return amp_update(&t->cs.scaler, overflow) ? 1 : 0;
}

int train_step_update(struct trainer *t, double lr, struct sbuf *err)
{
	if (!t->dev)
		optim_update(&t->opt, t->model.params, t->model.grads, 0, t->model.narena, lr);
	else if (model_cuda_update(t->dev, &t->opt, lr, err))
		return -1;
	optim_tick(&t->opt);
	return 0;
}

/* The host model and optimizer get the device's values (checkpoints). */
int train_step_sync_to_host(struct trainer *t, struct sbuf *err)
{
	return t->dev ? model_cuda_download(t->dev, &t->opt, err) : 0;
}

int train_step_evaluate(struct trainer *t, double *loss, double *acc, struct sbuf *err)
{
	int b = t->model.input.n, k = t->model.outputs;
	int64_t batches = (t->test.n + b - 1) / b, right = 0, seen = 0;
	double sum = 0;

	for (int64_t i = 0; i < batches; i++) {
		int real = loader_eval_batch(&t->test, b, i, t->x, t->labels, t->targets);
		int64_t c;

		if (train_step_forward(t, false, 0, err))
			return -1;
		if (t->model.loss == LOSS_XENT)
			sum += real * softmax_xent_f32(real, k, model_logits(&t->model), t->labels,
						       NULL, &c);
		else
			sum += real * sigmoid_bce_f32(real, k, model_logits(&t->model), t->targets,
						      NULL, &c);
		right += c;
		seen += real;
	}
	*loss = seen ? sum / seen : 0;
	*acc = seen ? (double)right / ((double)seen * (t->model.loss == LOSS_MULTI ? k : 1)) : 0;
	return 0;
}

