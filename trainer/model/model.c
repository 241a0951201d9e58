/* model.c - the bundled models (mlp, cnn, hepcnn, resnet-small), their
 * arenas, initialisation and loss.  Core over layer.c.
 *
 *   mlp           flatten - linear 256 - ReLU - linear 128 - ReLU - linear OUT
 *   cnn           conv 32 3x3 p1 - ReLU - maxpool 2 - conv 64 3x3 p1 - ReLU - maxpool 2
 *                 - linear 128 - ReLU - linear OUT   (the PyTorch peer of the benchmark)
 *   hepcnn        4 x (conv 3x3 p1 - ReLU - maxpool 2) with 16, 32, 64, 128 filters
 *                 - linear 128 - ReLU - dropout 0.25 - linear OUT (HEP-CNN's shape)
 *   resnet-small  conv 16 - BN - ReLU, then residual blocks (conv-BN-ReLU-conv-BN
 *                 + shortcut, ReLU) 2 x 16, 2 x 32 (stride 2), 2 x 64 (stride 2),
 *                 global average pool, linear OUT
 */
#include "trainer/model/model.h"           // defines: struct model, model_*
#include "trainer/cpu/backend.h"         // defines: be_alloc, be_free
#include "trainer/kernels/kernels.h" // defines: softmax_xent_f32, sigmoid_bce_f32
#include "trainer/model/rng.h"             // defines: struct rng
#include "common/sbuf.h"                // defines: struct sbuf, xcalloc
#include "common/spec/spec.h"                // defines: enum model_kind
#include "common/strfmt.h" // defines: strfmt_label

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct builder {
	struct seq *s;
	struct shape cur;
	struct sbuf *err;
	int failed;
};

static struct layer *add(struct builder *b, enum layer_kind kind)
{
	return seq_push(b->s, kind, b->cur);
}

static void too_small(struct builder *b, const char *what)
{
	if (!b->failed)
		sbuf_addf(b->err, "the model's %s needs larger images (they shrink to %dx%d before it)",
			  what, b->cur.h, b->cur.w);
	b->failed = 1;
}

static void b_conv(struct builder *b, int filters, int k, int stride, int pad, bool relu)
{
	struct conv_geom g = { b->cur.n, b->cur.h, b->cur.w, b->cur.c, filters, k, k, stride,
			       pad, 0, 0 };
	struct layer *l;

	if (b->failed || conv_geom_finish(&g))
		return too_small(b, "convolutions");
	l = add(b, LAYER_CONV);
	l->k = k;
	l->stride = stride;
	l->pad = pad;
	l->relu = relu;
	l->out = (struct shape){ g.n, g.p, g.q, filters };
	b->cur = l->out;
}

static void b_pool(struct builder *b, bool max, int k, int stride)
{
	struct pool_geom g = { b->cur.n, b->cur.h, b->cur.w, b->cur.c, k, stride, 0, 0 };
	struct layer *l;

	if (b->failed || pool_geom_finish(&g))
		return too_small(b, "pooling");
	l = add(b, max ? LAYER_MAXPOOL : LAYER_AVGPOOL);
	l->k = k;
	l->stride = stride;
	l->out = (struct shape){ g.n, g.p, g.q, g.c };
	b->cur = l->out;
}

static void b_simple(struct builder *b, enum layer_kind kind)
{
	struct layer *l;

	if (b->failed)
		return;
	l = add(b, kind);
	if (kind == LAYER_BATCHNORM) {
		l->eps = 1e-5;
		l->momentum = 0.1;
	}
}

static void b_dropout(struct builder *b, double p)
{
	if (b->failed)
		return;
	add(b, LAYER_DROPOUT)->p = p;
}

static void b_linear(struct builder *b, int out, bool relu)
{
	struct layer *l;

	if (b->failed)
		return;
	if (b->cur.h != 1 || b->cur.w != 1 || b->s->n == 0) {
		l = add(b, LAYER_FLATTEN);
		l->out = (struct shape){ b->cur.n, 1, 1, b->cur.h * b->cur.w * b->cur.c };
		b->cur = l->out;
	}
	l = add(b, LAYER_LINEAR);
	l->relu = relu;
	l->out = (struct shape){ b->cur.n, 1, 1, out };
	b->cur = l->out;
}

static void b_residual(struct builder *b, int filters, int stride)
{
	struct builder body = { xcalloc(1, sizeof(struct seq)), b->cur, b->err, b->failed };
	struct builder sc = { NULL, b->cur, b->err, 0 };
	struct layer *l;

	b_conv(&body, filters, 3, stride, 1, false);
	b_simple(&body, LAYER_BATCHNORM);
	b_simple(&body, LAYER_RELU);
	b_conv(&body, filters, 3, 1, 1, false);
	b_simple(&body, LAYER_BATCHNORM);
	if (stride != 1 || b->cur.c != filters) {
		sc.s = xcalloc(1, sizeof(struct seq));
		b_conv(&sc, filters, 1, stride, 0, false);
		b_simple(&sc, LAYER_BATCHNORM);
	}
	l = add(b, LAYER_RESIDUAL);
	l->body = body.s;
	l->shortcut = sc.s;
	if (body.failed || sc.failed || b->failed) {
		b->failed = 1;
		return;
	}
	l->out = body.cur;
	b->cur = l->out;
}

static void build_layers(struct builder *b, int kind, int outputs)
{
	static const int hep_filters[] = { 16, 32, 64, 128 };

	switch (kind) {
	case MODEL_MLP:
		b_linear(b, 256, true);
		b_linear(b, 128, true);
		b_linear(b, outputs, false);
		break;
	case MODEL_CNN:
		b_conv(b, 32, 3, 1, 1, true);
		b_pool(b, true, 2, 2);
		b_conv(b, 64, 3, 1, 1, true);
		b_pool(b, true, 2, 2);
		b_linear(b, 128, true);
		b_linear(b, outputs, false);
		break;
	case MODEL_HEPCNN:
		for (int i = 0; i < 4; i++) {
			b_conv(b, hep_filters[i], 3, 1, 1, true);
			b_pool(b, true, 2, 2);
		}
		b_linear(b, 128, true);
		b_dropout(b, 0.25);
		b_linear(b, outputs, false);
		break;
	case MODEL_RESNET_SMALL:
		b_conv(b, 16, 3, 1, 1, false);
		b_simple(b, LAYER_BATCHNORM);
		b_simple(b, LAYER_RELU);
		b_residual(b, 16, 1);
		b_residual(b, 16, 1);
		b_residual(b, 32, 2);
		b_residual(b, 32, 1);
		b_residual(b, 64, 2);
		b_residual(b, 64, 1);
		b_pool(b, false, b->cur.h < b->cur.w ? b->cur.h : b->cur.w, 1);
		b_linear(b, outputs, false);
		break;
	default:
		sbuf_addf(b->err, "unknown model %d", kind);
		b->failed = 1;
	}
}

static int number_layers(struct seq *s, int id)
{
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].id = id++;
		if (s->v[i].body)
			id = number_layers(s->v[i].body, id);
		if (s->v[i].shortcut)
			id = number_layers(s->v[i].shortcut, id);
	}
	return id;
}

/* Convolutions and linear layers compute at prec, in residual blocks too. */
static void set_precision(struct seq *s, enum be_precision prec)
{
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].prec = s->v[i].kind == LAYER_CONV || s->v[i].kind == LAYER_LINEAR ? prec
											  : BE_FP32;
		if (s->v[i].body)
			set_precision(s->v[i].body, prec);
		if (s->v[i].shortcut)
			set_precision(s->v[i].shortcut, prec);
	}
}

static void add_spans(struct model *m, const struct seq *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct layer *l = &s->v[i];

		if (l->body)
			add_spans(m, l->body);
		if (l->shortcut)
			add_spans(m, l->shortcut);
		if (l->nw) {
			m->spans[m->nspans++] = (struct arena_span){ (size_t)(l->w - m->params), l->nw };
			m->spans[m->nspans++] = (struct arena_span){ (size_t)(l->b - m->params), l->nb };
		}
	}
}

static size_t count_tensors(const struct seq *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += (s->v[i].body ? count_tensors(s->v[i].body) : 0) +
		     (s->v[i].shortcut ? count_tensors(s->v[i].shortcut) : 0) + (s->v[i].nw ? 2 : 0);
	return n;
}

static int by_offset(const void *a, const void *b)
{
	size_t x = ((const struct arena_span *)a)->off, y = ((const struct arena_span *)b)->off;

	return x < y ? -1 : x > y;
}

/* The tensors sorted by offset: arena order, which is what checkpoints
 * store back to back. */
static void collect_spans(struct model *m)
{
	m->spans = xcalloc(count_tensors(&m->net) + 1, sizeof(*m->spans));
	m->nspans = 0;
	add_spans(m, &m->net);
	qsort(m->spans, m->nspans, sizeof(*m->spans), by_offset);
}

int model_build(struct model *m, int kind, struct shape input, int outputs,
		enum loss_kind loss, enum be_precision prec, struct sbuf *err)
{
	struct builder b = { &m->net, input, err, 0 };
	size_t np = 0, na = 0, ns = 0, off = 0, soff = 0;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->input = input;
	m->outputs = outputs;
	m->loss = loss;
	m->prec = prec;
	build_layers(&b, kind, outputs);
	if (b.failed)
		return -1;
	number_layers(&m->net, 0);
	set_precision(&m->net, prec);
	/* Nothing wants the gradient of the input, nor of layers before the
	 * first one with parameters. */
	for (size_t i = 0; i < m->net.n; i++) {
		size_t p, s;

		m->net.v[i].need_dx = false;
		layer_count_params(&m->net.v[i], &p, &s);
		if (p)
			break;
	}
	for (size_t i = 0; i < m->net.n; i++) {
		size_t p, s;

		layer_count_params(&m->net.v[i], &p, &s);
		np += p;
		ns += s;
		na += layer_arena_floats(&m->net.v[i]);
	}
	m->nparams = np;
	m->narena = na;
	m->nstate = ns;
	m->params = be_alloc(na);
	m->grads = be_alloc(na);
	m->state = be_alloc(ns);
	m->dlogits = be_alloc((size_t)input.n * outputs);
	if (!m->params || !m->grads || !m->state || !m->dlogits) {
		sbuf_addstr(err, "out of memory");
		return -1;
	}
	for (size_t i = m->net.n; i-- > 0;)
		layer_assign(&m->net.v[i], m->params, m->grads, &off, m->state, &soff);
	collect_spans(m);
	return seq_setup(&m->net, err);
}

void model_release(struct model *m)
{
	seq_release(&m->net);
	be_free(m->params);
	be_free(m->grads);
	be_free(m->state);
	be_free(m->dlogits);
	free(m->spans);
	memset(m, 0, sizeof(*m));
}

static void init_seq(struct seq *s, struct rng *r)
{
	for (size_t i = 0; i < s->n; i++) {
		struct layer *l = &s->v[i];
		double fan_in, bound;

		switch (l->kind) {
		case LAYER_CONV:
		case LAYER_LINEAR:
			fan_in = (double)l->in.c * (l->kind == LAYER_CONV ? l->k * l->k : 1);
			bound = 1.0 / sqrt(fan_in);
			for (size_t j = 0; j < l->nw; j++)
				l->w[j] = (float)((2 * rng_uniform(r) - 1) * bound);
			for (size_t j = 0; j < l->nb; j++)
				l->b[j] = (float)((2 * rng_uniform(r) - 1) * bound);
			break;
		case LAYER_BATCHNORM:
			for (int j = 0; j < l->in.c; j++) {
				l->w[j] = 1;
				l->b[j] = 0;
				l->running[j] = 0;
				l->running[l->in.c + j] = 1;
			}
			break;
		case LAYER_RESIDUAL:
			init_seq(l->body, r);
			if (l->shortcut)
				init_seq(l->shortcut, r);
			break;
		default:
			break;
		}
	}
}

void model_init(struct model *m, uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed);
	init_seq(&m->net, &r);
}

static void set_bn_sync(struct seq *s, const struct bn_sync *sync)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].kind == LAYER_BATCHNORM)
			s->v[i].sync = sync;
		if (s->v[i].body)
			set_bn_sync(s->v[i].body, sync);
		if (s->v[i].shortcut)
			set_bn_sync(s->v[i].shortcut, sync);
	}
}

void model_set_bn_sync(struct model *m, const struct bn_sync *sync)
{
	set_bn_sync(&m->net, sync);
}

int model_forward(struct model *m, const float *x, bool train, uint64_t key, struct sbuf *err)
{
	return seq_forward(&m->net, x, train, key, err);
}

const float *model_logits(const struct model *m)
{
	return seq_output(&m->net);
}

double model_loss(struct model *m, const int32_t *labels, const float *targets,
		  int64_t *correct)
{
	const float *z = model_logits(m);

	if (m->loss == LOSS_XENT)
		return softmax_xent_f32(m->input.n, m->outputs, z, labels, m->dlogits, correct);
	return sigmoid_bce_f32(m->input.n, m->outputs, z, targets, m->dlogits, correct);
}

int model_backward(struct model *m, const struct grad_hook *hook, struct sbuf *err)
{
	return seq_backward(&m->net, m->dlogits, NULL, hook, err);
}

/* A convolution's or linear layer's three products (forward, weight
 * gradient, input gradient) cost the same FLOPs; the input gradient is
 * counted only where it is computed (need_dx). */
static double seq_train_flops(const struct seq *s)
{
	double f = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct layer *l = &s->v[i];

		if (l->kind == LAYER_RESIDUAL)
			f += seq_train_flops(l->body) + (l->shortcut ? seq_train_flops(l->shortcut) : 0);
		f += layer_train_flops(l);
	}
	return f;
}

double model_train_flops_per_sample(const struct model *m)
{
	return seq_train_flops(&m->net);
}

/* "conv 3x3 32>64", "conv+maxpool 3x3 1>32", "linear 1568>128", ... */
static void layer_name(const struct layer *l, char *buf, size_t size)
{
	static const char *const kinds[] = {
		[LAYER_CONV] = "conv",       [LAYER_MAXPOOL] = "maxpool",
		[LAYER_AVGPOOL] = "avgpool", [LAYER_LINEAR] = "linear",
		[LAYER_RELU] = "relu",       [LAYER_BATCHNORM] = "batchnorm",
		[LAYER_DROPOUT] = "dropout", [LAYER_FLATTEN] = "flatten",
		[LAYER_RESIDUAL] = "residual",
	};

	if (l->fused_conv)
		strfmt_label(buf, size, "conv+maxpool %dx%d %d>%d", l[-1].k, l[-1].k, l[-1].in.c,
			 l[-1].out.c);
	else if (l->kind == LAYER_CONV)
		strfmt_label(buf, size, "conv %dx%d %d>%d", l->k, l->k, l->in.c, l->out.c);
	else if (l->kind == LAYER_MAXPOOL || l->kind == LAYER_AVGPOOL)
		strfmt_label(buf, size, "%s %dx%d", kinds[l->kind], l->k, l->k);
	else if (l->kind == LAYER_LINEAR || l->kind == LAYER_RESIDUAL)
		strfmt_label(buf, size, "%s %d>%d", kinds[l->kind], l->in.c * l->in.h * l->in.w,
			 l->out.c * l->out.h * l->out.w);
	else
		strfmt_label(buf, size, "%s", kinds[l->kind]);
}

size_t model_layer_times(struct model *m, struct layer_time *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->net.n; i++) {
		struct layer *l = &m->net.v[i];

		if (l->fused_into_pool)
			continue;
		if (n < max) {
			layer_name(l, out[n].name, sizeof(out[n].name));
			out[n].fwd_s = l->fwd_s;
			out[n].bwd_s = l->bwd_s;
			out[n].flops = layer_train_flops(l) +
				       (l->fused_conv ? layer_train_flops(l - 1) : 0) +
				       (l->kind == LAYER_RESIDUAL ? seq_train_flops(l->body) +
				       (l->shortcut ? seq_train_flops(l->shortcut) : 0) : 0);
		}
		n++;
	}
	return n;
}

void model_layer_times_reset(struct model *m)
{
	for (size_t i = 0; i < m->net.n; i++)
		m->net.v[i].fwd_s = m->net.v[i].bwd_s = 0;
}

static int count_layers(const struct seq *s)
{
	int n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += 1 + (s->v[i].body ? count_layers(s->v[i].body) : 0) +
		     (s->v[i].shortcut ? count_layers(s->v[i].shortcut) : 0);
	return n;
}

int model_count_layers(const struct model *m)
{
	return count_layers(&m->net);
}

static size_t seq_kernels(const struct seq *s, struct model_kernel *out, size_t max, size_t n)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct layer *l = &s->v[i];
		struct be_kernel k;

		if (l->kind == LAYER_RESIDUAL) {
			n = seq_kernels(l->body, out, max, n);
			if (l->shortcut)
				n = seq_kernels(l->shortcut, out, max, n);
		} else if (layer_kernel(l, &k)) {
			if (n < max)
				out[n] = (struct model_kernel){ l->kind, k };
			n++;
		}
	}
	return n;
}

size_t model_kernels(const struct model *m, struct model_kernel *out, size_t max)
{
	return seq_kernels(&m->net, out, max, 0);
}

static bool same_kernel(const struct model_kernel *a, const struct model_kernel *b)
{
	return a->kind == b->kind && a->k.prec == b->k.prec && a->k.emulated == b->k.emulated &&
	       !strcmp(a->k.impl, b->k.impl) && !strcmp(a->k.why, b->k.why) &&
	       !strcmp(a->k.tuned, b->k.tuned);
}

void model_describe_kernels(const struct model *m, struct sbuf *out)
{
	size_t n = model_kernels(m, NULL, 0);
	struct model_kernel *v = xcalloc(n ? n : 1, sizeof(*v));
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	enum be_precision low = BE_FP32;

	model_kernels(m, v, n);
	for (size_t i = 0; i < n; i++) {
		size_t count = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (!done[j] && same_kernel(&v[i], &v[j]))
				done[j] = true, count++;
		sbuf_addf(out, "%s%s %zux %s%s %s", i ? ", " : "",
			  v[i].kind == LAYER_CONV ? "conv" : "linear", count,
			  be_precision_name(v[i].k.prec), v[i].k.emulated ? " emulated on" : "",
			  v[i].k.impl);
		if (v[i].k.why[0])
			sbuf_addf(out, " (%s)", v[i].k.why);
		if (v[i].k.tuned[0])
			sbuf_addf(out, " [measured: %s]", v[i].k.tuned);
	}
	/* what the layers were asked for: the lowest precision any runs */
	for (size_t i = 0; i < n; i++)
		if (v[i].k.prec > low)
			low = v[i].k.prec;
	if (be_precision_limit(low))
		sbuf_addf(out, "; %s cannot be faster than fp32 here: %s; precision: fp32 is the "
			  "alternative", be_precision_name(low), be_precision_limit(low));
	free(v);
	free(done);
}
