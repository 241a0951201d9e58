/* seq.c - sequences of layers (layer.h struct seq): building one, planning
 * its buffers and the fused first layer, and running it forward and
 * backward with the gradient hook between layers. */
#include "trainer/layer.h"           // defines: struct seq, layer_*, seq_*
#include "trainer/backend.h"         // defines: be_alloc, be_free
#include "trainer/kernels/kernels.h" // defines: conv1pool_*
#include "common/sbuf.h"                // defines: struct sbuf, xrealloc

#include <stdlib.h>
#include <string.h>

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
		if (s->v[i].fused_into_pool) {
			struct layer *conv = &s->v[i], *pool = &s->v[++i];
			struct conv_geom g = layer_conv_geom(conv);

			conv1pool_fwd_f32(&g, x, conv->w, conv->b, s->act[i], pool->arg);
			x = s->act[i];
			continue;
		}
		if (layer_forward(&s->v[i], x, s->act[i], train, key, err))
			return -1;
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

		if (out == dy) /* never write the input gradient over dy */
			out = s->g[cur ^= 1];
		if (l->fused_conv) {
			/* the convolution is a first layer: nothing before it
			 * has parameters or wants a gradient */
			struct layer *conv = &s->v[--i];
			struct conv_geom g = layer_conv_geom(conv);

			conv1pool_bwd_f32(&g, i ? s->act[i - 1] : s->input, s->act[i + 1], dy, l->arg,
					  l->part, conv->dw, conv->db);
			if (hook && hook->on_grad_ready &&
			    hook->on_grad_ready(hook->ctx, conv->arena_lo, conv->arena_hi))
				return -1;
			break;
		}
		if (layer_backward(l, x, s->act[i], dy, l->need_dx ? out : NULL, err))
			return -1;
		if (hook && hook->on_grad_ready && l->arena_hi > l->arena_lo &&
		    hook->on_grad_ready(hook->ctx, l->arena_lo, l->arena_hi))
			return -1;
		dy = out;
		cur ^= 1;
	}
	return 0;
}
