/* layer_cpu.c - the layers on the CPU: struct layer_ops of layer.h over
 * the oneDNN backend (backend.h) and the pointwise kernels (kernels/),
 * and a sequence set up for it: its buffers, its backend primitives and
 * the fusions only the CPU makes (the one-channel first convolution run
 * with its max pool by conv1pool.c, a ReLU's mask applied by the max
 * pool after it, an emulated convolution's rounding of dy by that pool).
 * Core over the backend.  Shapes are stated per kind in layer.h; every
 * buffer used here was sized by layer_setup(). */
#include "trainer/model/layer.h"     // defines: struct layer, struct seq, layer_cpu_ops
#include "trainer/cpu/backend.h"     // defines: be_conv_*, be_pool_*, be_linear_*, be_alloc, be_free
#include "trainer/kernels/kernels.h" // defines: relu_*_f32, batchnorm_*_f32, conv1pool_*
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_addstr
#include "common/strfmt.h" // defines: strfmt_label

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int layer_setup(struct layer *l, struct sbuf *err)
{
	unsigned flags = (l->need_dx ? BE_NEED_DX : 0) | (l->relu ? BE_RELU : 0);
	struct conv_geom cg;
	struct pool_geom pg;

	switch (l->kind) {
	case LAYER_CONV:
		if (l->fused_into_pool)
			return 0;
		cg = layer_conv_geom(l);
		l->be = be_conv_create(&cg, flags, l->prec, err);
		return l->be ? 0 : -1;
	case LAYER_MAXPOOL:
		if (l->fused_conv) {
			l->arg = malloc(shape_count(l->out) * sizeof(*l->arg));
			l->part = malloc((size_t)l->in.n * 10 * l->out.c * sizeof(*l->part));
			if (l->arg && l->part)
				return 0;
			break;
		}
		/* fall through */
	case LAYER_AVGPOOL:
		pg = layer_pool_geom(l);
		l->be = be_pool_create(&pg, l->kind == LAYER_MAXPOOL, flags, l->prec, err);
		return l->be ? 0 : -1;
	case LAYER_LINEAR:
		l->be = be_linear_create(l->in.n, l->in.c, l->out.c, l->prec, err);
		return l->be ? 0 : -1;
	case LAYER_BATCHNORM:
		/* sums: a few doubles per channel, used only with sync, which
		 * is set after setup (model_set_bn_sync), so always allocated */
		l->save = be_alloc(3 * (size_t)l->in.c);
		l->sums = malloc((4 * (size_t)l->in.c + 1) * sizeof(*l->sums));
		if (l->save && l->sums)
			return 0;
		break;
	case LAYER_RESIDUAL:
		l->tmp = be_alloc(shape_count(l->out));
		l->tmp2 = be_alloc(shape_count(l->in));
		if (!l->tmp || !l->tmp2)
			break;
		if (seq_setup(l->body, err) || (l->shortcut && seq_setup(l->shortcut, err)))
			return -1;
		return 0;
	default:
		return 0;
	}
	sbuf_addstr(err, "out of memory");
	return -1;
}

bool layer_kernel(const struct layer *l, struct be_kernel *k)
{
	if (l->kind == LAYER_CONV && l->fused_into_pool) {
		*k = (struct be_kernel){ .prec = BE_FP32 };
		strfmt_label(k->impl, sizeof(k->impl), "conv1pool:%s", conv1pool_isa());
		strfmt_label(k->why, sizeof(k->why), "%d input channel, fused with its pooling",
			 l->in.c);
		return true;
	}
	if (l->kind == LAYER_CONV && l->be)
		*k = *be_conv_kernel(l->be);
	else if (l->kind == LAYER_LINEAR && l->be)
		*k = *be_linear_kernel(l->be);
	else
		return false;
	return true;
}

void layer_release(struct layer *l)
{
	if (l->kind == LAYER_CONV)
		be_conv_free(l->be);
	else if (l->kind == LAYER_MAXPOOL || l->kind == LAYER_AVGPOOL)
		be_pool_free(l->be);
	else if (l->kind == LAYER_LINEAR)
		be_linear_free(l->be);
	free(l->arg);
	free(l->part);
	if (l->body) {
		seq_release(l->body);
		free(l->body);
	}
	if (l->shortcut) {
		seq_release(l->shortcut);
		free(l->shortcut);
	}
	be_free(l->save);
	free(l->sums);
	be_free(l->tmp);
	be_free(l->tmp2);
	memset(l, 0, sizeof(*l));
}

/* out (cols, rows) = a (rows, cols) transposed, in 8x8 tiles so both
 * sides stay within a few cache lines per tile. */
static void transpose(const float *restrict a, size_t rows, size_t cols, float *restrict out)
{
	enum { TILE = 8 };

	for (size_t i0 = 0; i0 < rows; i0 += TILE)
		for (size_t j0 = 0; j0 < cols; j0 += TILE) {
			size_t i1 = i0 + TILE < rows ? i0 + TILE : rows;
			size_t j1 = j0 + TILE < cols ? j0 + TILE : cols;

			for (size_t j = j0; j < j1; j++)
				for (size_t i = i0; i < i1; i++)
					out[j * rows + i] = a[i * cols + j];
		}
}

/* (n, h, w, c) <-> (n, c*h*w) in (c, h, w) order: per sample (h*w, c)
 * -> (c, h*w), back: the reverse. */
static void flatten(const struct shape *s, const float *x, float *y, bool back)
{
	size_t hw = (size_t)s->h * s->w, c = (size_t)s->c, per = hw * c;

#pragma omp parallel for schedule(static)
	for (int n = 0; n < s->n; n++) {
		if (back)
			transpose(x + n * per, c, hw, y + n * per);
		else
			transpose(x + n * per, hw, c, y + n * per);
	}
}

static int linear_forward(struct layer *l, const float *x, float *y, struct sbuf *err)
{
	int n = l->in.n, out = l->out.c;

	if (be_linear_forward(l->be, x, l->w, y, err))
		return -1;
	for (int i = 0; i < n; i++) {
		float *row = y + (size_t)i * out;

		for (int o = 0; o < out; o++) {
			float v = row[o] + l->b[o];

			row[o] = l->relu && v < 0 ? 0 : v;
		}
	}
	return 0;
}

static int linear_backward(struct layer *l, const float *x, float *dy, float *dx,
			   struct sbuf *err)
{
	int n = l->in.n, out = l->out.c;

	for (int o = 0; o < out; o++)
		l->db[o] = 0;
	for (int i = 0; i < n; i++)
		for (int o = 0; o < out; o++)
			l->db[o] += dy[(size_t)i * out + o];
	return be_linear_backward(l->be, x, l->w, dy, dx, l->dw, err);
}

/* Training statistics: this rank's batch, or with sync the global batch
 * (one allreduce of 2c+1 doubles).  Running statistics follow the batch
 * statistics, so with sync they stay identical on every rank. */
static int batchnorm_forward(struct layer *l, const float *x, float *y, bool train,
			     struct sbuf *err)
{
	size_t m = shape_count(l->in) / l->in.c;
	int c = l->in.c;
	float *s = l->save, *rm = l->running, *rv = l->running + c, mom = (float)l->momentum;

	if (!train) {
		batchnorm_fwd_infer_f32(m, c, x, l->w, l->b, rm, rv, l->eps, y);
		return 0;
	}
	if (!l->sync) {
		batchnorm_fwd_train_f32(m, c, x, l->w, l->b, l->eps, y, s, s + c, s + 2 * c);
	} else {
		batchnorm_sums_f32(m, c, x, l->sums);
		if (l->sync->allreduce_sum(l->sync->ctx, l->sums, 2 * (size_t)c + 1, err))
			return -1;
		batchnorm_fwd_sync_f32(m, c, x, l->w, l->b, l->eps, l->sums, y, s, s + c, s + 2 * c);
	}
	for (int j = 0; j < c; j++) {
		rm[j] = (1 - mom) * rm[j] + mom * s[j];
		rv[j] = (1 - mom) * rv[j] + mom * s[2 * c + j];
	}
	return 0;
}

/* With sync: dgamma and dbeta are this rank's sums (the gradient
 * allreduce adds them over ranks like any gradient); dx needs the global
 * sums (a second allreduce, of 2c doubles) over the global count, which
 * the forward's allreduce left in sums[2c]. */
static int batchnorm_backward(struct layer *l, const float *x, const float *dy, float *dx,
			      struct sbuf *err)
{
	size_t m = shape_count(l->in) / l->in.c;
	int c = l->in.c;
	double *bs = l->sums + 2 * c + 1;
	const float *mean = l->save, *invstd = l->save + c;

	if (!l->sync) {
		batchnorm_bwd_f32(m, c, x, dy, l->w, mean, invstd, dx, l->dw, l->db);
		return 0;
	}
	batchnorm_bwd_sums_f32(m, c, x, dy, mean, invstd, bs);
	for (int j = 0; j < c; j++) {
		l->db[j] = (float)bs[j];
		l->dw[j] = (float)bs[c + j];
	}
	if (!dx) /* need_dx is the same on every rank: all skip the allreduce */
		return 0;
	if (l->sync->allreduce_sum(l->sync->ctx, bs, 2 * (size_t)c, err))
		return -1;
	batchnorm_bwd_sync_f32(m, c, x, dy, l->w, mean, invstd, bs, l->sums[2 * c], dx);
	return 0;
}

/* ---- struct layer_ops ---- */

static int cpu_forward(struct layer *l, const float *x, float *y, bool train, struct sbuf *err)
{
	size_t n = shape_count(l->in);
	struct conv_geom g;

	switch (l->kind) {
	case LAYER_CONV:
		return be_conv_forward(l->be, x, l->w, l->b, y, err);
	case LAYER_MAXPOOL:
		if (l->fused_conv) { /* x is the convolution's input */
			g = layer_conv_geom(l->conv);
			conv1pool_fwd_f32(&g, x, l->conv->w, l->conv->b, y, l->arg);
			return 0;
		}
		/* fall through */
	case LAYER_AVGPOOL:
		return be_pool_forward(l->be, x, y, err);
	case LAYER_LINEAR:
		return linear_forward(l, x, y, err);
	case LAYER_RELU:
		relu_fwd_f32(n, x, y);
		return 0;
	case LAYER_BATCHNORM:
		return batchnorm_forward(l, x, y, train, err);
	case LAYER_DROPOUT:
		if (train && l->p > 0)
			dropout_fwd_f32(n, x, y, l->p, l->key);
		else
			memcpy(y, x, n * sizeof(*y));
		return 0;
	case LAYER_FLATTEN:
		flatten(&l->in, x, y, false);
		return 0;
	case LAYER_RESIDUAL:
		break;
	}
	return 0;
}

static int cpu_backward(struct layer *l, const float *x, const float *y, float *dy, float *dx,
			struct sbuf *err)
{
	size_t n = shape_count(l->out);
	struct conv_geom g;

	switch (l->kind) {
	case LAYER_CONV:
		if (l->relu && !l->relu_by_pool)
			relu_bwd_f32(n, y, dy, dy);
		return be_conv_backward(l->be, x, dy, dx, l->dw, l->db, err);
	case LAYER_MAXPOOL:
		if (l->fused_conv) { /* the convolution is a first layer: no dx */
			g = layer_conv_geom(l->conv);
			conv1pool_bwd_f32(&g, x, y, dy, l->arg, l->part, l->conv->dw, l->conv->db);
			return 0;
		}
		/* fall through */
	case LAYER_AVGPOOL:
		if (dx && l->pool_masks)
			relu_bwd_f32(n, y, dy, dy);
		if (dx && l->round_dy)
			l->round_dy(n, dy, dy);
		return dx ? be_pool_backward(l->be, dy, dx, err) : 0;
	case LAYER_LINEAR:
		if (l->relu && !l->relu_by_pool)
			relu_bwd_f32(n, y, dy, dy);
		return linear_backward(l, x, dy, dx, err);
	case LAYER_RELU:
		if (dx)
			relu_bwd_f32(n, y, dy, dx);
		return 0;
	case LAYER_BATCHNORM:
		return batchnorm_backward(l, x, dy, dx, err);
	case LAYER_DROPOUT:
		if (dx && l->p > 0)
			dropout_bwd_f32(n, dy, dx, l->p, l->key);
		else if (dx)
			memcpy(dx, dy, n * sizeof(*dx));
		return 0;
	case LAYER_FLATTEN:
		if (dx)
			flatten(&l->in, dy, dx, true);
		return 0;
	case LAYER_RESIDUAL:
		break;
	}
	return 0;
}

static int cpu_add(size_t n, const float *a, const float *b, float *y, struct sbuf *err)
{
	(void)err;
	add_f32(n, a, b, y);
	return 0;
}

static int cpu_relu_forward(size_t n, const float *x, float *y, struct sbuf *err)
{
	(void)err;
	relu_fwd_f32(n, x, y);
	return 0;
}

static int cpu_relu_backward(size_t n, const float *y, const float *dy, float *dx,
			     struct sbuf *err)
{
	(void)err;
	relu_bwd_f32(n, y, dy, dx);
	return 0;
}

static int cpu_copy(float *dst, const float *src, size_t n, struct sbuf *err)
{
	(void)err;
	memcpy(dst, src, n * sizeof(*dst));
	return 0;
}

const struct layer_ops layer_cpu_ops = {
	.forward = cpu_forward,
	.backward = cpu_backward,
	.add = cpu_add,
	.relu_forward = cpu_relu_forward,
	.relu_backward = cpu_relu_backward,
	.copy = cpu_copy,
};

/* ---- a sequence set up for the CPU ---- */

/* A first layer that conv1pool.c runs fused: a one-channel 3x3
 * convolution with ReLU that needs no input gradient, then a 2x2 max
 * pool of stride 2. */
static bool fusable(const struct layer *conv, const struct layer *pool)
{
	struct conv_geom g;

	if (conv->kind != LAYER_CONV || !conv->relu || conv->need_dx ||
	    pool->kind != LAYER_MAXPOOL || pool->k != 2 || pool->stride != 2)
		return false;
	g = layer_conv_geom(conv);
	return conv1pool_fits(&g);
}

/* Hands an emulated convolution's rounding of dy to the max pool after
 * it (layer.h round_dy), where windows do not overlap: each input
 * element then gets one routed value or 0, so the rounded pooled
 * gradient routes to the rounded full-size one. */
static void round_before_pool(struct layer *conv, struct layer *pool)
{
	be_round_fn r;

	if (conv->kind != LAYER_CONV || conv->fused_into_pool || !conv->be ||
	    pool->kind != LAYER_MAXPOOL || !pool->need_dx || pool->k > pool->stride ||
	    !(r = be_conv_dy_round(conv->be)))
		return;
	pool->round_dy = r;
	be_conv_set_dy_rounded(conv->be, true);
}

int seq_setup(struct seq *s, struct sbuf *err)
{
	size_t most = 0;

	s->ops = &layer_cpu_ops;
	s->act = calloc(s->n ? s->n : 1, sizeof(*s->act));
	if (!s->act)
		goto oom;
	for (size_t i = 0; i + 1 < s->n; i++)
		if (fusable(&s->v[i], &s->v[i + 1])) {
			s->v[i].fused_into_pool = s->v[i + 1].fused_conv = true;
			s->v[i + 1].conv = &s->v[i];
		}
	for (size_t i = 0; i < s->n; i++) {
		size_t ni = shape_count(s->v[i].in), no = shape_count(s->v[i].out);

		most = ni > most ? ni : most;
		most = no > most ? no : most;
		if (!s->v[i].fused_into_pool && !(s->act[i] = be_alloc(no)))
			goto oom;
		if (layer_setup(&s->v[i], err))
			return -1;
		if (i && s->v[i].kind == LAYER_MAXPOOL && s->v[i].need_dx && s->v[i - 1].relu &&
		    !s->v[i].fused_conv)
			s->v[i - 1].relu_by_pool = s->v[i].pool_masks = true;
		if (i)
			round_before_pool(&s->v[i - 1], &s->v[i]);
	}
	s->g[0] = be_alloc(most);
	s->g[1] = be_alloc(most);
	if (!s->g[0] || !s->g[1])
		goto oom;
	return 0;
oom:
	sbuf_addstr(err, "out of memory");
	return -1;
}

void seq_release(struct seq *s)
{
	for (size_t i = 0; i < s->n; i++) {
		layer_release(&s->v[i]);
		if (s->act)
			be_free(s->act[i]);
	}
	free(s->act);
	free(s->v);
	be_free(s->g[0]);
	be_free(s->g[1]);
	memset(s, 0, sizeof(*s));
}
