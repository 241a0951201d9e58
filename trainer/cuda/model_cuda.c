/* model_cuda.c - a built model's layers on the GPU (model_cuda.h): device
 * arenas, activations and cuDNN plans, forward, backward, loss-scale
 * check and optimizer through backend_cuda.h.  Shell (device memory).
 *
 * The walk of the layers is layer.c's, the one the CPU runs: the device
 * model is a copy of the host's struct seq whose layers point at device
 * memory and whose ops are this file's (struct layer_ops: what each
 * kind computes, through backend_cuda.h).  The copies keep the host
 * layers' shapes, configuration and arena ranges, and none of the CPU's
 * fusions.
 *
 * Cost per step: the batch is copied into pinned memory and from there,
 * on a copy stream, to the device while the GPU may still run the
 * previous step (two device slots take turns); the labels (or targets)
 * go up with the loss, and 16 bytes come back, the loss and the count of
 * right predictions: the step's one wait.  Everything else stays on the
 * device; logits come back only for evaluation (model_cuda_logits).
 */
#include "trainer/cuda/model_cuda.h"   // defines: struct model_cuda, model_cuda_*
#include "trainer/cuda/backend_cuda.h" // defines: be_cuda_*
#include "trainer/model/model.h"        // defines: struct model, LOSS_XENT
#include "trainer/model/optim.h"        // defines: struct optim
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_addf, xcalloc
#include "common/spec/spec.h"             // defines: OPTIMIZER_ADAMW
#include "common/monoclock.h"  // defines: monoclock_s

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct model_cuda {
	struct model *m;
	struct seq net;                /* the host's m->net on the device */
	float *params, *grads, *state; /* model.h's arenas, same layout */
	float *om, *ov;                /* struct optim's m and v */
	float *x[2], *hx[2];           /* the batch by slot: on the device, pinned */
	int slot;                      /* the slot of the last forward */
	int32_t *labels, *hlabels;     /* the batch's labels: device, pinned */
	float *targets, *htargets;     /* and targets (BCE losses) */
	double *out, *hout;            /* the loss and the right predictions */
	float *dlogits;                /* the loss gradient */
	size_t nx, nlogits;
	double copy_ms, sync_ms;       /* this step's, for the metrics */
};

static void *dalloc_bytes(size_t bytes, const char *what, struct sbuf *err)
{
	void *d = be_cuda_alloc_bytes(bytes);

	if (!d)
		sbuf_addf(err, "out of GPU memory (%.1f MiB for %s)", bytes / 1048576.0, what);
	return d;
}

static float *dalloc(size_t n, const char *what, struct sbuf *err)
{
	return dalloc_bytes(n * sizeof(float), what, err);
}

/* The device address of what host_ptr addresses in the host arena. */
static float *view(float *arena, const float *host_arena, const float *host_ptr)
{
	return host_ptr ? arena + (host_ptr - host_arena) : NULL;
}

/* ---- the device copy of the layers ---- */

static const struct layer_ops cuda_ops;
static int mirror_seq(struct model_cuda *mc, struct seq *d, const struct seq *s,
		      struct sbuf *err);
static void mirror_seq_release(struct seq *d);

/* d: host layer l with device buffers, and none of what the CPU fused. */
static int mirror_layer(struct model_cuda *mc, struct layer *d, const struct layer *l,
			struct sbuf *err)
{
	const struct model *m = mc->m;
	unsigned flags = (l->need_dx ? BE_NEED_DX : 0) | (l->relu ? BE_RELU : 0);
	struct conv_geom cg;
	struct pool_geom pg;

	*d = (struct layer){ .kind = l->kind, .in = l->in, .out = l->out, .id = l->id,
			     .need_dx = l->need_dx, .k = l->k, .stride = l->stride, .pad = l->pad,
			     .relu = l->relu, .p = l->p, .eps = l->eps, .momentum = l->momentum,
			     .prec = l->prec, .nw = l->nw, .nb = l->nb, .arena_lo = l->arena_lo,
			     .arena_hi = l->arena_hi, .nrunning = l->nrunning };
	d->w = view(mc->params, m->params, l->w);
	d->b = view(mc->params, m->params, l->b);
	d->dw = view(mc->grads, m->grads, l->dw);
	d->db = view(mc->grads, m->grads, l->db);
	d->running = view(mc->state, m->state, l->running);
	switch (l->kind) {
	case LAYER_CONV:
		cg = layer_conv_geom(l);
		d->be = be_cuda_conv_create(&cg, flags, l->prec, err);
		return d->be ? 0 : -1;
	case LAYER_MAXPOOL:
	case LAYER_AVGPOOL:
		pg = layer_pool_geom(l);
		d->be = be_cuda_pool_create(&pg, l->kind == LAYER_MAXPOOL, err);
		return d->be ? 0 : -1;
	case LAYER_BATCHNORM:
		/* save: the batch's mean, then invstd (2c); cuDNN's backward
		 * always writes dx, into tmp where none is wanted */
		if (!(d->save = dalloc(2 * (size_t)l->in.c, "batch-norm statistics", err)) ||
		    (!l->need_dx && !(d->tmp = dalloc(shape_count(l->in), "batch-norm gradients", err))))
			return -1;
		return 0;
	case LAYER_RESIDUAL:
		if (!(d->tmp = dalloc(shape_count(l->out), "residual gradients", err)) ||
		    !(d->tmp2 = dalloc(shape_count(l->in), "residual gradients", err)))
			return -1;
		d->body = xcalloc(1, sizeof(*d->body));
		if (mirror_seq(mc, d->body, l->body, err))
			return -1;
		if (l->shortcut) {
			d->shortcut = xcalloc(1, sizeof(*d->shortcut));
			if (mirror_seq(mc, d->shortcut, l->shortcut, err))
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

/* On failure the partly copied sequence is left for mirror_seq_release. */
static int mirror_seq(struct model_cuda *mc, struct seq *d, const struct seq *s,
		      struct sbuf *err)
{
	size_t most = 0;

	d->ops = &cuda_ops;
	d->v = xcalloc(s->n ? s->n : 1, sizeof(*d->v));
	d->act = xcalloc(s->n ? s->n : 1, sizeof(*d->act));
	d->n = d->alloc = s->n;
	for (size_t i = 0; i < s->n; i++) {
		size_t ni = shape_count(s->v[i].in), no = shape_count(s->v[i].out);

		most = ni > most ? ni : most;
		most = no > most ? no : most;
		if (!(d->act[i] = dalloc(no, "activations", err)) ||
		    mirror_layer(mc, &d->v[i], &s->v[i], err))
			return -1;
	}
	if (!(d->g[0] = dalloc(most, "activation gradients", err)) ||
	    !(d->g[1] = dalloc(most, "activation gradients", err)))
		return -1;
	return 0;
}

static void mirror_layer_release(struct layer *d)
{
	if (d->kind == LAYER_CONV)
		be_cuda_conv_free(d->be);
	else if (d->kind == LAYER_MAXPOOL || d->kind == LAYER_AVGPOOL)
		be_cuda_pool_free(d->be);
	be_cuda_free(d->save);
	be_cuda_free(d->tmp);
	be_cuda_free(d->tmp2);
	if (d->body) {
		mirror_seq_release(d->body);
		free(d->body);
	}
	if (d->shortcut) {
		mirror_seq_release(d->shortcut);
		free(d->shortcut);
	}
	memset(d, 0, sizeof(*d));
}

static void mirror_seq_release(struct seq *d)
{
	for (size_t i = 0; i < d->n; i++) {
		mirror_layer_release(&d->v[i]);
		be_cuda_free(d->act[i]);
	}
	free(d->v);
	free(d->act);
	be_cuda_free(d->g[0]);
	be_cuda_free(d->g[1]);
	memset(d, 0, sizeof(*d));
}

/* Pinned host buffers for what crosses the bus every step. */
static int host_buffers(struct model_cuda *mc, struct sbuf *err)
{
	size_t n = (size_t)mc->m->input.n;

	if ((mc->hx[0] = be_cuda_host_alloc(mc->nx * sizeof(float))) &&
	    (mc->hx[1] = be_cuda_host_alloc(mc->nx * sizeof(float))) &&
	    (mc->hlabels = be_cuda_host_alloc(n * sizeof(int32_t))) &&
	    (mc->htargets = be_cuda_host_alloc(mc->nlogits * sizeof(float))) &&
	    (mc->hout = be_cuda_host_alloc(2 * sizeof(double))))
		return 0;
	sbuf_addstr(err, "cannot pin host memory for the batch");
	return -1;
}

struct model_cuda *model_cuda_create(struct model *m, const struct optim *o, struct sbuf *err)
{
	struct model_cuda *mc = xcalloc(1, sizeof(*mc));

	mc->m = m;
	mc->nx = shape_count(m->input);
	mc->nlogits = (size_t)m->input.n * m->outputs;
	if (host_buffers(mc, err)) {
		model_cuda_free(mc);
		return NULL;
	}
	if (!(mc->params = dalloc(m->narena, "parameters", err)) ||
	    !(mc->grads = dalloc(m->narena, "gradients", err)) ||
	    !(mc->state = dalloc(m->nstate, "batch-norm state", err)) ||
	    !(mc->om = dalloc(o->n, "optimizer state", err)) ||
	    (o->v && !(mc->ov = dalloc(o->n, "optimizer state", err))) ||
	    !(mc->x[0] = dalloc(mc->nx, "the batch", err)) ||
	    !(mc->x[1] = dalloc(mc->nx, "the batch", err)) ||
	    !(mc->labels = dalloc_bytes((size_t)m->input.n * sizeof(int32_t), "the labels", err)) ||
	    !(mc->targets = dalloc(mc->nlogits, "the targets", err)) ||
	    !(mc->out = dalloc_bytes(2 * sizeof(double), "the loss", err)) ||
	    !(mc->dlogits = dalloc(mc->nlogits, "the loss gradient", err)) ||
	    mirror_seq(mc, &mc->net, &m->net, err)) {
		model_cuda_free(mc);
		return NULL;
	}
	return mc;
}

void model_cuda_free(struct model_cuda *mc)
{
	if (!mc)
		return;
	mirror_seq_release(&mc->net);
	be_cuda_free(mc->params);
	be_cuda_free(mc->grads);
	be_cuda_free(mc->state);
	be_cuda_free(mc->om);
	be_cuda_free(mc->ov);
	for (int i = 0; i < 2; i++) {
		be_cuda_free(mc->x[i]);
		be_cuda_host_free(mc->hx[i]);
	}
	be_cuda_free(mc->labels);
	be_cuda_free(mc->targets);
	be_cuda_free(mc->out);
	be_cuda_host_free(mc->hlabels);
	be_cuda_host_free(mc->htargets);
	be_cuda_host_free(mc->hout);
	be_cuda_free(mc->dlogits);
	free(mc);
}

/* ---- host <-> device ---- */

int model_cuda_upload(struct model_cuda *mc, const struct optim *o, struct sbuf *err)
{
	const struct model *m = mc->m;

	if (be_cuda_upload(mc->params, m->params, m->narena, err) ||
	    (m->nstate && be_cuda_upload(mc->state, m->state, m->nstate, err)) ||
	    be_cuda_upload(mc->om, o->m, o->n, err) ||
	    (o->v && be_cuda_upload(mc->ov, o->v, o->n, err)))
		return -1;
	return 0;
}

int model_cuda_download(struct model_cuda *mc, struct optim *o, struct sbuf *err)
{
	struct model *m = mc->m;

	if (be_cuda_download(m->params, mc->params, m->narena, err) ||
	    (m->nstate && be_cuda_download(m->state, mc->state, m->nstate, err)) ||
	    be_cuda_download(o->m, mc->om, o->n, err) ||
	    (o->v && be_cuda_download(o->v, mc->ov, o->n, err)))
		return -1;
	return 0;
}

float *model_cuda_grads(struct model_cuda *mc)
{
	return mc->grads;
}

/* ---- struct layer_ops on the device ---- */

/* x (n, in), w (out, in), y (n, out) = act(x w^T + b). */
static int linear_forward(struct layer *l, const float *x, float *y, struct sbuf *err)
{
	int n = l->in.n, in = l->in.c, out = l->out.c;

	if (be_cuda_gemm('n', 't', n, out, in, 1.0f, x, in, l->w, in, 0.0f, y, out, l->prec, err))
		return -1;
	return be_cuda_bias_act((size_t)n, out, l->b, l->relu, y, err);
}

/* db = colsum(dy), dw (out, in) = dy^T x, dx (n, in) = dy w. */
static int linear_backward(struct layer *l, const float *x, const float *dy, float *dx,
			   struct sbuf *err)
{
	int n = l->in.n, in = l->in.c, out = l->out.c;

	if (be_cuda_bias_grad(n, out, dy, l->db, err) ||
	    be_cuda_gemm('t', 'n', out, in, n, 1.0f, dy, out, x, in, 0.0f, l->dw, in, l->prec, err))
		return -1;
	if (dx && be_cuda_gemm('n', 'n', n, in, out, 1.0f, dy, out, l->w, in, 0.0f, dx, in,
			       l->prec, err))
		return -1;
	return 0;
}

static int bn_forward(struct layer *l, const float *x, float *y, bool train, struct sbuf *err)
{
	int c = l->in.c, rows = (int)(shape_count(l->in) / (size_t)c);

	if (!train)
		return be_cuda_batchnorm_infer(rows, c, x, l->w, l->b, l->running, l->running + c,
					       l->eps, y, err);
	if (be_cuda_batchnorm_forward(l->in.n, l->in.h * l->in.w, c, x, l->w, l->b, l->eps, y,
				      l->save, l->save + c, err))
		return -1;
	return be_cuda_batchnorm_running(rows, c, l->save, l->save + c, l->eps, l->momentum,
					 l->running, l->running + c, err);
}

static int bn_backward(struct layer *l, const float *x, const float *dy, float *dx,
		       struct sbuf *err)
{
	int c = l->in.c;

	return be_cuda_batchnorm_backward(l->in.n, l->in.h * l->in.w, c, x, dy, l->w, l->save,
					  l->save + c, l->eps, dx ? dx : l->tmp, l->dw, l->db, err);
}

static int cuda_forward(struct layer *l, const float *x, float *y, bool train, struct sbuf *err)
{
	size_t n = shape_count(l->in);

	switch (l->kind) {
	case LAYER_CONV:
		return be_cuda_conv_forward(l->be, x, l->w, l->b, y, err);
	case LAYER_MAXPOOL:
	case LAYER_AVGPOOL:
		return be_cuda_pool_forward(l->be, x, y, err);
	case LAYER_LINEAR:
		return linear_forward(l, x, y, err);
	case LAYER_RELU:
		return be_cuda_relu_forward(n, x, y, err);
	case LAYER_BATCHNORM:
		return bn_forward(l, x, y, train, err);
	case LAYER_DROPOUT:
		if (train && l->p > 0)
			return be_cuda_dropout(n, x, y, l->p, l->key, err);
		return be_cuda_copy(y, x, n, err);
	case LAYER_FLATTEN:
		return be_cuda_flatten(l->in.n, l->in.h, l->in.w, l->in.c, x, y, false, err);
	case LAYER_RESIDUAL:
		break;
	}
	return 0;
}

static int cuda_backward(struct layer *l, const float *x, const float *y, float *dy, float *dx,
			 struct sbuf *err)
{
	size_t n = shape_count(l->out);

	switch (l->kind) {
	case LAYER_CONV:
		if (l->relu && be_cuda_relu_backward(n, y, dy, dy, err))
			return -1;
		return be_cuda_conv_backward(l->be, x, dy, dx, l->dw, l->db, err);
	case LAYER_MAXPOOL:
	case LAYER_AVGPOOL:
		return dx ? be_cuda_pool_backward(l->be, x, y, dy, dx, err) : 0;
	case LAYER_LINEAR:
		if (l->relu && be_cuda_relu_backward(n, y, dy, dy, err))
			return -1;
		return linear_backward(l, x, dy, dx, err);
	case LAYER_RELU:
		return dx ? be_cuda_relu_backward(n, y, dy, dx, err) : 0;
	case LAYER_BATCHNORM:
		return bn_backward(l, x, dy, dx, err);
	case LAYER_DROPOUT:
		if (dx && l->p > 0)
			return be_cuda_dropout(n, dy, dx, l->p, l->key, err);
		return dx ? be_cuda_copy(dx, dy, n, err) : 0;
	case LAYER_FLATTEN:
		return dx ? be_cuda_flatten(l->in.n, l->in.h, l->in.w, l->in.c, dy, dx, true, err)
			  : 0;
	case LAYER_RESIDUAL:
		break;
	}
	return 0;
}

static const struct layer_ops cuda_ops = {
	.forward = cuda_forward,
	.backward = cuda_backward,
	.add = be_cuda_add,
	.relu_forward = be_cuda_relu_forward,
	.relu_backward = be_cuda_relu_backward,
	.copy = be_cuda_copy,
};

/* ---- the step ---- */

/* The batch goes through a pinned buffer to the device on the copy
 * stream, into the slot the step before last used: the copy overlaps
 * whatever the GPU still runs of the previous step. */
int model_cuda_forward(struct model_cuda *mc, const float *x, bool train, uint64_t key,
		       struct sbuf *err)
{
	int s = mc->slot ^ 1;
	double t0 = (1e3 * monoclock_s());

	if (be_cuda_stage_ready(s, err))
		return -1;
	memcpy(mc->hx[s], x, mc->nx * sizeof(float));
	if (be_cuda_stage_in(s, mc->x[s], mc->hx[s], mc->nx * sizeof(float), err))
		return -1;
	mc->copy_ms += (1e3 * monoclock_s()) - t0;
	mc->slot = s;
	return seq_forward(&mc->net, mc->x[s], train, key, err);
}

int model_cuda_logits(struct model_cuda *mc, struct sbuf *err)
{
	struct model *m = mc->m;

	/* model_logits(m) is the host net's last activation (every bundled
	 * model has layers) */
	return be_cuda_download(m->net.act[m->net.n - 1], seq_output(&mc->net), mc->nlogits, err);
}

int model_cuda_loss(struct model_cuda *mc, const int32_t *labels, const float *targets,
		    double *loss, int64_t *correct, struct sbuf *err)
{
	const struct model *m = mc->m;
	int n = m->input.n, k = m->outputs, rc;
	double t0;
	float dma;

	if (m->loss == LOSS_XENT) {
		memcpy(mc->hlabels, labels, (size_t)n * sizeof(int32_t));
		rc = be_cuda_upload_async(mc->labels, mc->hlabels, (size_t)n * sizeof(int32_t), err) ||
		     be_cuda_softmax_xent(n, k, seq_output(&mc->net), mc->labels, mc->dlogits,
					  mc->out, err);
	} else {
		memcpy(mc->htargets, targets, mc->nlogits * sizeof(float));
		rc = be_cuda_upload_async(mc->targets, mc->htargets, mc->nlogits * sizeof(float),
					  err) ||
		     be_cuda_sigmoid_bce(n, k, seq_output(&mc->net), mc->targets, mc->dlogits,
					 mc->out, err);
	}
	t0 = (1e3 * monoclock_s());
	if (rc || be_cuda_download_sync(mc->hout, mc->out, 2 * sizeof(double), err))
		return -1;
	mc->sync_ms += (1e3 * monoclock_s()) - t0;
	/* the batch's copy is done: the forward waited for it */
	if (be_cuda_stage_ms(mc->slot, &dma, err))
		return -1;
	mc->copy_ms += dma;
	*loss = mc->hout[0];
	*correct = (int64_t)mc->hout[1];
	return 0;
}

int model_cuda_scale_loss_grad(struct model_cuda *mc, float k, bool poison, struct sbuf *err)
{
	return be_cuda_scale(mc->nlogits, mc->dlogits, k, poison, err);
}

int model_cuda_backward(struct model_cuda *mc, const struct grad_hook *hook, struct sbuf *err)
{
	return seq_backward(&mc->net, mc->dlogits, NULL, hook, err);
}

int model_cuda_unscale(struct model_cuda *mc, double scale, bool *overflow, struct sbuf *err)
{
	double t0 = (1e3 * monoclock_s());
	int rc;

	/* amp_unscale's factor: exact, scale is a power of two */
	rc = be_cuda_unscale(mc->m->narena, mc->grads, (float)(1.0 / scale), overflow, err);
	mc->sync_ms += (1e3 * monoclock_s()) - t0;
	return rc;
}

void model_cuda_step_times(struct model_cuda *mc, double *copy_ms, double *sync_ms)
{
	*copy_ms = mc->copy_ms;
	*sync_ms = mc->sync_ms;
	mc->copy_ms = mc->sync_ms = 0;
}

int model_cuda_update(struct model_cuda *mc, const struct optim *o, double lr, struct sbuf *err)
{
	struct be_cuda_optim s = { 0 };

	/* optim_update's scalars, computed as it computes them */
	s.adamw = o->name == OPTIMIZER_ADAMW;
	s.nesterov = o->nesterov != 0;
	s.lr = (float)lr;
	s.wd = (float)o->weight_decay;
	s.mu = (float)o->momentum;
	if (s.adamw) {
		double t = (double)(o->t + 1);

		s.b1 = (float)o->beta1;
		s.b2 = (float)o->beta2;
		s.eps = (float)o->eps;
		s.bc1 = (float)(1.0 - pow(o->beta1, t));
		s.bc2s = (float)sqrt(1.0 - pow(o->beta2, t));
		s.decay = 1.0f - s.lr * s.wd;
	}
	return be_cuda_optim_update(mc->m->narena, mc->params, mc->grads, mc->om, mc->ov, &s, err);
}
