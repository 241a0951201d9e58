/* layer.c - the layers of a model and the sequences that chain them
 * (layer.h): forward and backward of each layer kind, then a struct seq
 * built, planned (buffers, the fused first layer) and run with the
 * gradient hook between layers.  One file, not two, because the two
 * recurse: a residual layer runs two sequences and a sequence runs its
 * layers, so a split would have calls going both ways.
 * Core over the backend: convolution, pooling and GEMMs go to backend.h,
 * the pointwise work to kernels/pointwise_f32.c.  Shapes are stated per
 * kind in layer.h; every buffer used here was sized by layer_setup(). */
#include "trainer/model/layer.h"           // defines: struct layer, struct seq
#include "trainer/cpu/backend.h"         // defines: be_conv_*, be_pool_*, be_linear_*, be_alloc, be_free
#include "trainer/kernels/kernels.h" // defines: relu_*_f32, batchnorm_*_f32, conv1pool_*
#include "common/sbuf.h"                // defines: struct sbuf, sbuf_addstr, xrealloc
#include "common/monoclock.h"  // defines: monoclock_s

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double layer_train_flops(const struct layer *l)
{
	double fwd = 0;

	if (l->kind == LAYER_CONV)
		fwd = 2.0 * l->out.h * l->out.w * l->out.c * l->in.c * l->k * l->k;
	else if (l->kind == LAYER_LINEAR)
		fwd = 2.0 * l->in.c * l->out.c;
	return fwd * (l->need_dx ? 3 : 2);
}

struct conv_geom layer_conv_geom(const struct layer *l)
{
	struct conv_geom g = { l->in.n, l->in.h, l->in.w, l->in.c, l->out.c, l->k, l->k,
			       l->stride, l->pad, 0, 0 };

	conv_geom_finish(&g);
	return g;
}

struct pool_geom layer_pool_geom(const struct layer *l)
{
	struct pool_geom g = { l->in.n, l->in.h, l->in.w, l->in.c, l->k, l->stride, 0, 0 };

	pool_geom_finish(&g);
	return g;
}

void layer_count_params(const struct layer *l, size_t *nparam, size_t *nstate)
{
	size_t p = 0, s = 0, pp, ss;

	switch (l->kind) {
	case LAYER_CONV:
		p = (size_t)l->out.c * l->in.c * l->k * l->k + l->out.c;
		break;
	case LAYER_LINEAR:
		p = (size_t)l->out.c * l->in.c + l->out.c;
		break;
	case LAYER_BATCHNORM:
		p = 2 * (size_t)l->in.c;
		s = 2 * (size_t)l->in.c;
		break;
	case LAYER_RESIDUAL:
		for (size_t i = 0; i < l->body->n; i++) {
			layer_count_params(&l->body->v[i], &pp, &ss);
			p += pp;
			s += ss;
		}
		for (size_t i = 0; l->shortcut && i < l->shortcut->n; i++) {
			layer_count_params(&l->shortcut->v[i], &pp, &ss);
			p += pp;
			s += ss;
		}
		break;
	default:
		break;
	}
	*nparam = p;
	*nstate = s;
}

/* A parameterised layer's weights and biases (batch norm: gamma, beta). */
static void split_params(const struct layer *l, size_t np, size_t *nw, size_t *nb)
{
	*nb = l->kind == LAYER_BATCHNORM ? (size_t)l->in.c : (size_t)l->out.c;
	*nw = np - *nb;
}

size_t layer_arena_floats(const struct layer *l)
{
	size_t np, ns, nw, nb, n = 0;

	if (l->kind == LAYER_RESIDUAL) {
		for (size_t i = 0; i < l->body->n; i++)
			n += layer_arena_floats(&l->body->v[i]);
		for (size_t i = 0; l->shortcut && i < l->shortcut->n; i++)
			n += layer_arena_floats(&l->shortcut->v[i]);
		return n;
	}
	layer_count_params(l, &np, &ns);
	if (!np)
		return 0;
	split_params(l, np, &nw, &nb);
	return arena_align(nw) + arena_align(nb);
}

static void seq_assign(struct seq *s, float *params, float *grads, size_t *off, float *state,
		       size_t *soff)
{
	for (size_t i = s->n; i-- > 0;)
		layer_assign(&s->v[i], params, grads, off, state, soff);
}

void layer_assign(struct layer *l, float *params, float *grads, size_t *off, float *state,
		  size_t *soff)
{
	size_t np, ns;

	l->arena_lo = *off;
	if (l->kind == LAYER_RESIDUAL) {
		/* The shortcut's backward runs last, so its gradients come last. */
		seq_assign(l->body, params, grads, off, state, soff);
		if (l->shortcut)
			seq_assign(l->shortcut, params, grads, off, state, soff);
		l->arena_hi = *off;
		return;
	}
	layer_count_params(l, &np, &ns);
	if (np) {
		split_params(l, np, &l->nw, &l->nb);
		l->w = params + *off;
		l->dw = grads + *off;
		*off = arena_align(*off + l->nw);
		l->b = params + *off;
		l->db = grads + *off;
		*off = arena_align(*off + l->nb);
	}
	if (ns) {
		l->running = state + *soff;
		l->nrunning = ns;
		*soff += ns;
	}
	l->arena_hi = *off;
}

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
		snprintf(k->impl, sizeof(k->impl), "conv1pool:%s", conv1pool_isa());
		snprintf(k->why, sizeof(k->why), "%d input channel, fused with its pooling",
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

static int residual_forward(struct layer *l, const float *x, float *y, bool train,
			    uint64_t key, struct sbuf *err)
{
	size_t n = shape_count(l->out);

	if (seq_forward(l->body, x, train, key, err))
		return -1;
	if (l->shortcut && seq_forward(l->shortcut, x, train, key, err))
		return -1;
	add_f32(n, seq_output(l->body), l->shortcut ? seq_output(l->shortcut) : x, y);
	relu_fwd_f32(n, y, y);
	return 0;
}

/* The body and the shortcut both get the gradient of the pre-activation
 * sum; each may overwrite the dy it is given, so the sum's gradient is
 * recomputed from (y, dy), which nothing here modifies. */
static int residual_backward(struct layer *l, const float *y, const float *dy, float *dx,
			     struct sbuf *err)
{
	size_t n = shape_count(l->out), nin = shape_count(l->in);

	relu_bwd_f32(n, y, dy, l->tmp);
	if (!l->shortcut) {
		memcpy(l->tmp2, l->tmp, nin * sizeof(*l->tmp2)); /* identity: in == out */
	} else {
		if (seq_backward(l->shortcut, l->tmp, dx ? l->tmp2 : NULL, NULL, err))
			return -1;
		relu_bwd_f32(n, y, dy, l->tmp);
	}
	if (seq_backward(l->body, l->tmp, dx, NULL, err))
		return -1;
	if (dx)
		add_f32(nin, dx, l->tmp2, dx);
	return 0;
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

int layer_forward(struct layer *l, const float *x, float *y, bool train, uint64_t key,
		  struct sbuf *err)
{
	size_t n = shape_count(l->in);

	switch (l->kind) {
	case LAYER_CONV:
		return be_conv_forward(l->be, x, l->w, l->b, y, err);
	case LAYER_MAXPOOL:
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
		l->key = key ^ ((uint64_t)l->id << 48);
		if (train && l->p > 0)
			dropout_fwd_f32(n, x, y, l->p, l->key);
		else
			memcpy(y, x, n * sizeof(*y));
		return 0;
	case LAYER_FLATTEN:
		flatten(&l->in, x, y, false);
		return 0;
	case LAYER_RESIDUAL:
		return residual_forward(l, x, y, train, key, err);
	}
	return 0;
}

int layer_backward(struct layer *l, const float *x, const float *y, float *dy, float *dx,
		   struct sbuf *err)
{
	size_t n = shape_count(l->out);

	switch (l->kind) {
	case LAYER_CONV:
		if (l->relu && !l->relu_by_pool)
			relu_bwd_f32(n, y, dy, dy);
		return be_conv_backward(l->be, x, dy, dx, l->dw, l->db, err);
	case LAYER_MAXPOOL:
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
		return residual_backward(l, y, dy, dx, err);
	}
	return 0;
}

/* Sequences: building one, planning its buffers and the fused first
 * layer, and running it forward and backward. */

struct layer *seq_push(struct seq *s, enum layer_kind kind, struct shape in)
{
	struct layer *l;

	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 8;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	l = &s->v[s->n++];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->in = in;
	l->out = in;
	l->need_dx = true;
	return l;
}

struct shape seq_out(const struct seq *s, struct shape in)
{
	return s->n ? s->v[s->n - 1].out : in;
}

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

	s->act = calloc(s->n ? s->n : 1, sizeof(*s->act));
	if (!s->act)
		goto oom;
	for (size_t i = 0; i + 1 < s->n; i++)
		if (fusable(&s->v[i], &s->v[i + 1]))
			s->v[i].fused_into_pool = s->v[i + 1].fused_conv = true;
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

int seq_forward(struct seq *s, const float *x, bool train, uint64_t key, struct sbuf *err)
{
	s->input = x;
	for (size_t i = 0; i < s->n; i++) {
		double t0 = monoclock_s();

		if (s->v[i].fused_into_pool) {
			struct layer *conv = &s->v[i], *pool = &s->v[++i];
			struct conv_geom g = layer_conv_geom(conv);

			conv1pool_fwd_f32(&g, x, conv->w, conv->b, s->act[i], pool->arg);
		} else if (layer_forward(&s->v[i], x, s->act[i], train, key, err)) {
			return -1;
		}
		if (train)
			s->v[i].fwd_s += monoclock_s() - t0;
		x = s->act[i];
	}
	return 0;
}

const float *seq_output(const struct seq *s)
{
	return s->n ? s->act[s->n - 1] : s->input;
}

int seq_backward(struct seq *s, float *dy, float *dx, const struct grad_hook *hook,
		 struct sbuf *err)
{
	int cur = 0;

	for (size_t i = s->n; i-- > 0;) {
		struct layer *l = &s->v[i];
		const float *x = i ? s->act[i - 1] : s->input;
		float *out = i ? s->g[cur] : dx;

		double t0 = monoclock_s();

		if (out == dy) /* never write the input gradient over dy */
			out = s->g[cur ^= 1];
		if (l->fused_conv) {
			/* the convolution is a first layer: nothing before it
			 * has parameters or wants a gradient */
			struct layer *conv = &s->v[--i];
			struct conv_geom g = layer_conv_geom(conv);

			conv1pool_bwd_f32(&g, i ? s->act[i - 1] : s->input, s->act[i + 1], dy, l->arg,
					  l->part, conv->dw, conv->db);
			l->bwd_s += monoclock_s() - t0;
			if (hook && hook->on_grad_ready &&
			    hook->on_grad_ready(hook->ctx, conv->arena_lo, conv->arena_hi))
				return -1;
			break;
		}
		if (layer_backward(l, x, s->act[i], dy, l->need_dx ? out : NULL, err))
			return -1;
		l->bwd_s += monoclock_s() - t0;
		if (hook && hook->on_grad_ready && l->arena_hi > l->arena_lo &&
		    hook->on_grad_ready(hook->ctx, l->arena_lo, l->arena_hi))
			return -1;
		dy = out;
		cur ^= 1;
	}
	return 0;
}
