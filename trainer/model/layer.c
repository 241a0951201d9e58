/* layer.c - the layers of a model and the sequences that chain them
 * (layer.h): their sizes and places in the arenas, and the one walk of
 * a sequence, forward and backward with the gradient hook between
 * layers, residual blocks included.  The walk is the same on every
 * device: what a layer computes is its sequence's struct layer_ops
 * (layer_cpu.c on the CPU, model_cuda.c on the GPU), so the CPU's tests
 * run the walk the GPU runs.  One file, not two, because the walk
 * recurses: a residual layer runs two sequences and a sequence runs its
 * layers.  Core. */
#include "trainer/model/layer.h"     // defines: struct layer, struct seq, struct layer_ops
#include "trainer/kernels/kernels.h" // defines: conv_geom_finish, pool_geom_finish
#include "common/sbuf.h"             // defines: xrealloc
#include "common/monoclock.h"        // defines: monoclock_s

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

/* ---- the walk, on any device (struct layer_ops) ---- */

static int residual_forward(const struct layer_ops *ops, struct layer *l, const float *x,
			    float *y, bool train, uint64_t key, struct sbuf *err)
{
	size_t n = shape_count(l->out);

	if (seq_forward(l->body, x, train, key, err) ||
	    (l->shortcut && seq_forward(l->shortcut, x, train, key, err)) ||
	    ops->add(n, seq_output(l->body), l->shortcut ? seq_output(l->shortcut) : x, y, err))
		return -1;
	return ops->relu_forward(n, y, y, err);
}

/* The body and the shortcut both get the gradient of the pre-activation
 * sum; each may overwrite the dy it is given, so the sum's gradient is
 * recomputed from (y, dy), which nothing here modifies. */
static int residual_backward(const struct layer_ops *ops, struct layer *l, const float *y,
			     const float *dy, float *dx, struct sbuf *err)
{
	size_t n = shape_count(l->out), nin = shape_count(l->in);

	if (ops->relu_backward(n, y, dy, l->tmp, err))
		return -1;
	if (!l->shortcut) {
		if (ops->copy(l->tmp2, l->tmp, nin, err)) /* identity: in == out */
			return -1;
	} else if (seq_backward(l->shortcut, l->tmp, dx ? l->tmp2 : NULL, NULL, err) ||
		   ops->relu_backward(n, y, dy, l->tmp, err)) {
		return -1;
	}
	if (seq_backward(l->body, l->tmp, dx, NULL, err))
		return -1;
	return dx ? ops->add(nin, dx, l->tmp2, dx, err) : 0;
}

int layer_forward(const struct layer_ops *ops, struct layer *l, const float *x, float *y,
		  bool train, uint64_t key, struct sbuf *err)
{
	if (l->kind == LAYER_RESIDUAL)
		return residual_forward(ops, l, x, y, train, key, err);
	if (l->kind == LAYER_DROPOUT) /* the mask of this step, this layer */
		l->key = key ^ ((uint64_t)l->id << 48);
	return ops->forward(l, x, y, train, err);
}

int layer_backward(const struct layer_ops *ops, struct layer *l, const float *x,
		   const float *y, float *dy, float *dx, struct sbuf *err)
{
	if (l->kind == LAYER_RESIDUAL)
		return residual_backward(ops, l, y, dy, dx, err);
	return ops->backward(l, x, y, dy, dx, err);
}

/* Layer i's input: the output of the nearest layer before it that has
 * one (a layer fused into the next has none), else the sequence's. */
static const float *input_of(const struct seq *s, size_t i)
{
	while (i && s->v[i - 1].fused_into_pool)
		i--;
	return i ? s->act[i - 1] : s->input;
}

int seq_forward(struct seq *s, const float *x, bool train, uint64_t key, struct sbuf *err)
{
	s->input = x;
	for (size_t i = 0; i < s->n; i++) {
		double t0 = monoclock_s();

		if (s->v[i].fused_into_pool) /* the next layer computes it */
			continue;
		if (layer_forward(s->ops, &s->v[i], x, s->act[i], train, key, err))
			return -1;
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

/* The hook fires per layer of this sequence (a residual block as one
 * range), in increasing arena order; a layer fused into the next got
 * its gradients from that layer's backward. */
int seq_backward(struct seq *s, float *dy, float *dx, const struct grad_hook *hook,
		 struct sbuf *err)
{
	int cur = 0;

	for (size_t i = s->n; i-- > 0;) {
		struct layer *l = &s->v[i];
		float *out = i ? s->g[cur] : dx;
		double t0 = monoclock_s();

		if (out == dy) /* never write the input gradient over dy */
			out = s->g[cur ^= 1];
		if (!l->fused_into_pool) {
			if (layer_backward(s->ops, l, input_of(s, i), s->act[i], dy,
					   l->need_dx ? out : NULL, err))
				return -1;
			l->bwd_s += monoclock_s() - t0;
		}
		if (hook && hook->on_grad_ready && l->arena_hi > l->arena_lo &&
		    hook->on_grad_ready(hook->ctx, l->arena_lo, l->arena_hi))
			return -1;
		dy = out;
		cur ^= 1;
	}
	return 0;
}
