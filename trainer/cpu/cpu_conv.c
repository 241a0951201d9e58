/* cpu_conv.c - convolutions on the CPU backend (backend.h be_conv_*),
 * through oneDNN.
 *
 * Each be_conv plans three primitives at create time (forward with the
 * bias and an optional fused ReLU post-op, backward data, backward
 * weights), lets oneDNN pick the weight layout ("any": blocked for the
 * JIT kernels) and plans the reorders between that layout and the plain
 * (K,C,R,S) arena once.  Activations stay NHWC (channels last), which
 * oneDNN's AVX-512 kernels run directly, so no activation is reordered
 * between layers at fp32.
 *
 * Budget: conv FLOPs = 2*N*K*P*Q*C*R*S per pass; weights reorders cost
 * 2*|w| bytes per step, negligible beside the convolutions.
 *
 * Precision (enum be_precision): BE_BF16 runs convolutions with bf16
 * source, weights and output gradient and fp32 accumulation, bias,
 * output, input gradient and weight gradient, on oneDNN's
 * avx512_core_bf16 or avx512_core_amx kernels.  The layers keep fp32
 * NHWC activations: x and dy are converted to bf16 here by planned
 * reorders into the blocked layout the forward chose, and y and dx back
 * to NHWC (memory-bound, about a tenth of what blocking saves: AMX
 * kernels on NHWC ran 3-4x slower than on nChw16c, e.g. 1.9 against
 * 0.7 ms for the cnn's 32->64 forward); the bf16 copy of x made by the
 * forward is reused by the weight gradient.  At fp32 NHWC is kept: the
 * AVX-512 kernels run it at the GEMM peak, so reorders would only cost.
 * Convolutions of fewer than LP_MIN_CHANNELS inputs run fp32.  The
 * master weights stay fp32 in the arena.  At low precision and stride 1
 * the input gradient runs as a forward convolution of dy with
 * transposed, flipped weights (oneDNN 2.6 has brgemm AMX kernels for the
 * forward only; plan_dx_as_forward); at other strides, or where no JIT
 * kernel takes that form, oneDNN's backward-data primitive runs.
 *
 * Every primitive and reorder is checked when planned (plan_check): a
 * reference implementation is refused, and the planner tries the next
 * formulation (lp_forms): NHWC dx, blocked dx, backward data, then
 * NHWC activations, then emulation.  Emulation (be_kernel.emulated) is
 * how a precision without native kernels runs: x, w and dy are rounded
 * to bf16 or binary16 (overflow to inf included, which is what loss
 * scaling guards) and the convolution runs in fp32 kernels, giving the
 * precision's numerics at fp32's speed.  bf16 is emulated below
 * avx512_core_bf16 (AVX2, AVX-512 without BF16: oneDNN's own bf16
 * kernels there, jit_bf16:avx512_core, ran the cnn's step in 83.5 ms
 * against 34.6 ms at fp32; emulated, 55.5 against 54.5), fp16 always
 * (oneDNN 2.6 has no fp16 CPU kernels).
 *
 * Where the CPU has AVX512-BF16, native bf16 is one candidate among
 * others (conv_choose, tune.h): native, emulated NHWC and emulated
 * blocked are each planned and timed on made-up inputs, and the fastest
 * is kept (at fp32: NHWC against blocked).  On Intel without AMX
 * vdpbf16ps has fp32 FMA's peak, and native bf16's conversions made it
 * slower than emulation (cnn 32->64 at batch 128, two threads: native
 * 17.6 ms against 10.3 ms emulated, forward+backward).  The choice is
 * made in cpu_conv_tune.c and cached (cpu_tune.c); HPCTRAIN_KERNELS=fixed
 * keeps the order above.
 */
#include "trainer/cpu/cpu_conv.h"     // defines: struct be_conv, enum conv_cand, conv_choose
#include "trainer/cpu/cpu_internal.h" // defines: struct prim, struct relayout, prim_*, relayout_*
#include "common/strfmt.h" // defines: strfmt_label

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many input channels a convolution runs fp32 at every
 * precision: with C*R*S = 9 (a grey image's first layer) there is no
 * reduction for bf16 to speed up, and oneDNN's bf16 kernel for it ran
 * slower than fp32 here (3.3 ms against 2.9 ms forward, 128x28x28x1). */
#define LP_MIN_CHANNELS 16

/* How the input gradient is computed: a forward convolution of dy with
 * flipped weights writing NHWC dx, the same writing dx in the layout
 * the kernel prefers (then reordered), or oneDNN's backward data. */
enum dx_form { DX_FWD_NHWC, DX_FWD_ANY, DX_BWD };

/* One formulation of a convolution; lp_forms and fp32_forms list them
 * in the order they are tried. */
struct conv_form {
	bool blocked; /* activations in the forward's blocked layout */
	enum dx_form dx;
};

static const struct conv_form lp_forms[] = {
	{ true, DX_FWD_NHWC }, { true, DX_FWD_ANY }, { true, DX_BWD },
	{ false, DX_FWD_NHWC }, { false, DX_BWD },
};
static const struct conv_form fp32_forms[] = { { false, DX_BWD }, { true, DX_BWD } };


/* Releases what conv_plan made, keeping geometry, kernel and the
 * emulation's buffers. */
static void conv_unplan(struct be_conv *cv)
{
	dnnl_memory_t *mems[] = { &cv->b, &cv->db };

	prim_release(&cv->fwd);
	prim_release(&cv->bwd_data);
	prim_release(&cv->bwd_w);
	relayout_release(&cv->w_fwd);
	relayout_release(&cv->w_bwd);
	relayout_release(&cv->dw);
	relayout_release(&cv->xc);
	relayout_release(&cv->dyc);
	relayout_release(&cv->yo);
	relayout_release(&cv->dxo);
	for (size_t i = 0; i < sizeof(mems) / sizeof(mems[0]); i++)
		if (*mems[i])
			dnnl_memory_destroy(*mems[i]);
	cv->b = cv->db = NULL;
	be_free(cv->wflip);
	cv->wflip = NULL;
}

void be_conv_free(struct be_conv *cv)
{
	if (!cv)
		return;
	conv_unplan(cv);
	be_free(cv->xr);
	be_free(cv->wr);
	be_free(cv->dyr);
	free(cv);
}

const struct be_kernel *be_conv_kernel(const struct be_conv *cv)
{
	return &cv->kern;
}

be_round_fn be_conv_dy_round(const struct be_conv *cv)
{
	return cv->round;
}

void be_conv_set_dy_rounded(struct be_conv *cv, bool rounded)
{
	cv->dy_rounded = rounded;
}

/* The forward's choice of layout for a blocked plan: md as the
 * primitive chose it, with data type dt (gradients mirror activations). */
static dnnl_memory_desc_t chosen_md(const struct prim *pr, dnnl_query_t what, dnnl_data_type_t dt)
{
	dnnl_memory_desc_t md = *dnnl_primitive_desc_query_md(pr->pd, what, 0);

	md.data_type = dt;
	return md;
}

/* At stride 1 the input gradient is a forward convolution of dy with
 * the weights transposed (C and K swapped) and flipped in R and S, at
 * padding R-1-pad.  oneDNN 2.6 runs its bf16 forward on AMX with the
 * brgemm kernels but the backward-data pass with an older one: the
 * cnn's 32->64 layer at batch 128 took 2.3 ms as a forward against
 * 3.6 ms as backward data (one thread, cold caches).  On AMX the forward
 * writes fp32 NHWC dx directly; the avx512_core_bf16 kernels take a
 * blocked source only with a blocked destination (DX_FWD_ANY, then
 * reordered).  The flip is K*C*R*S floats per step. */
static dnnl_status_t plan_dx_as_forward(struct be_conv *cv, dnnl_data_type_t lt,
					const dnnl_memory_desc_t *dy_lp,
					const dnnl_memory_desc_t *x_md, enum dx_form form)
{
	const struct conv_geom *g = &cv->g;
	dnnl_dims_t wd = { g->c, g->k, g->r, g->s }, xd = { g->n, g->c, g->h, g->w },
		    strides = { 1, 1 }, pad = { g->r - 1 - g->pad, g->s - 1 - g->pad };
	dnnl_memory_desc_t w_any, w_plain, dx_any;
	dnnl_convolution_desc_t d;
	dnnl_status_t st;

	cv->wflip = be_alloc((size_t)g->k * g->c * g->r * g->s);
	if (!cv->wflip)
		return dnnl_out_of_memory;
	if ((st = dnnl_memory_desc_init_by_tag(&w_any, 4, wd, lt, dnnl_format_tag_any)) ||
	    (st = dnnl_memory_desc_init_by_tag(&w_plain, 4, wd, dnnl_f32, dnnl_oihw)) ||
	    (st = dnnl_memory_desc_init_by_tag(&dx_any, 4, xd, dnnl_f32, dnnl_format_tag_any)) ||
	    (st = dnnl_convolution_forward_desc_init(&d, dnnl_forward_inference,
						     dnnl_convolution_direct, dy_lp, &w_any, NULL,
						     form == DX_FWD_NHWC ? x_md : &dx_any, strides,
						     pad, pad)) ||
	    (st = prim_create(&cv->bwd_data, &d, NULL, NULL)) ||
	    (st = relayout_create(&cv->w_bwd, &w_plain,
				  dnnl_primitive_desc_query_md(cv->bwd_data.pd,
							       dnnl_query_weights_md, 0), 1)))
		return st;
	return relayout_create(&cv->dxo,
			       dnnl_primitive_desc_query_md(cv->bwd_data.pd, dnnl_query_dst_md, 0),
			       x_md, 0);
}

/* wflip[c][k][R-1-r][S-1-s] = w[k][c][r][s]. */
static void flip_weights(const struct conv_geom *g, const float *w, float *wflip)
{
	size_t rs = (size_t)g->r * g->s;

	for (int k = 0; k < g->k; k++)
		for (int c = 0; c < g->c; c++) {
			const float *src = w + ((size_t)k * g->c + c) * rs;
			float *dst = wflip + ((size_t)c * g->k + k) * rs;

			for (size_t i = 0; i < rs; i++)
				dst[rs - 1 - i] = src[i];
		}
}

/* Plans the three primitives with inputs of type lt (f32, bf16, f16) in
 * formulation f; outputs and gradients of weights stay f32.  blocked:
 * activations in the layout the forward picks (nChw16c-like), converted
 * from and to the layers' NHWC around each call; else NHWC throughout.
 * Returns oneDNN's status: dnnl_unimplemented when this CPU build has no
 * kernel but the reference one for some pass. */
static dnnl_status_t conv_plan(struct be_conv *cv, dnnl_data_type_t lt, struct conv_form f)
{
	const struct conv_geom *g = &cv->g;
	dnnl_memory_desc_t x_md, x_lp, y_md, y_out, dy_lp, dx_md, w_any, w_lp, w_plain, b_md;
	dnnl_dims_t xd = { g->n, g->c, g->h, g->w }, yd = { g->n, g->k, g->p, g->q },
		    wd = { g->k, g->c, g->r, g->s }, bd = { g->k };
	dnnl_dims_t strides = { g->stride, g->stride }, pad = { g->pad, g->pad };
	dnnl_format_tag_t act = f.blocked ? dnnl_format_tag_any : dnnl_nhwc;
	dnnl_convolution_desc_t d;
	dnnl_post_ops_t po = NULL;
	dnnl_status_t st;

#define PLAN(call)                                                                         \
	do {                                                                               \
		if ((st = (call)) != dnnl_success)                                         \
			goto out;                                                          \
	} while (0)
	PLAN(dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dnnl_f32, dnnl_nhwc));
	PLAN(dnnl_memory_desc_init_by_tag(&x_lp, 4, xd, lt, act));
	PLAN(dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dnnl_f32, dnnl_nhwc));
	PLAN(dnnl_memory_desc_init_by_tag(&y_out, 4, yd, dnnl_f32, act));
	PLAN(dnnl_memory_desc_init_by_tag(&w_any, 4, wd, dnnl_f32, dnnl_format_tag_any));
	PLAN(dnnl_memory_desc_init_by_tag(&w_lp, 4, wd, lt, dnnl_format_tag_any));
	PLAN(dnnl_memory_desc_init_by_tag(&w_plain, 4, wd, dnnl_f32, dnnl_oihw));
	PLAN(dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_x));

	PLAN(dnnl_convolution_forward_desc_init(&d, dnnl_forward_training, dnnl_convolution_direct,
						&x_lp, &w_lp, &b_md, &y_out, strides, pad, pad));
	if (cv->flags & BE_RELU) {
		PLAN(dnnl_post_ops_create(&po));
		PLAN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
	}
	PLAN(prim_create(&cv->fwd, &d, NULL, po));
	/* From here on every activation layout is concrete: the backward
	 * passes reuse the forward's converted input and share dy. */
	x_lp = chosen_md(&cv->fwd, dnnl_query_src_md, lt);
	y_out = chosen_md(&cv->fwd, dnnl_query_dst_md, dnnl_f32);
	dy_lp = chosen_md(&cv->fwd, dnnl_query_dst_md, lt);
	dx_md = f.blocked ? chosen_md(&cv->fwd, dnnl_query_src_md, lt) : x_md;
	PLAN(relayout_create(&cv->w_fwd, &w_plain,
			     dnnl_primitive_desc_query_md(cv->fwd.pd, dnnl_query_weights_md, 0), 1));
	PLAN(relayout_create(&cv->xc, &x_md, &x_lp, 1));
	PLAN(relayout_create(&cv->yo, &y_out, &y_md, 0));
	PLAN(relayout_create(&cv->dyc, &y_md, &dy_lp, 1));
	if ((cv->flags & BE_NEED_DX) && f.dx != DX_BWD) {
		PLAN(plan_dx_as_forward(cv, lt, &dy_lp, &x_md, f.dx));
	} else if (cv->flags & BE_NEED_DX) {
		PLAN(dnnl_convolution_backward_data_desc_init(&d, dnnl_convolution_direct, &dx_md,
							      &w_lp, &dy_lp, strides, pad, pad));
		PLAN(prim_create(&cv->bwd_data, &d, cv->fwd.pd, NULL));
		PLAN(relayout_create(
			&cv->w_bwd, &w_plain,
			dnnl_primitive_desc_query_md(cv->bwd_data.pd, dnnl_query_weights_md, 0), 1));
		PLAN(relayout_create(&cv->dxo, &dx_md, &x_md, 0));
	}
	PLAN(dnnl_convolution_backward_weights_desc_init(&d, dnnl_convolution_direct, &x_lp, &w_any,
							 &b_md, &dy_lp, strides, pad, pad));
	PLAN(prim_create(&cv->bwd_w, &d, cv->fwd.pd, NULL));
	PLAN(relayout_create(
		&cv->dw, dnnl_primitive_desc_query_md(cv->bwd_w.pd, dnnl_query_diff_weights_md, 0),
		&w_plain, 0));
	PLAN(mem_create(&cv->b, &b_md));
	PLAN(mem_create(&cv->db, &b_md));
	impl_name(cv->fwd.pd, cv->kern.impl, sizeof(cv->kern.impl));
#undef PLAN
out:
	if (po)
		dnnl_post_ops_destroy(po);
	return st;
}

/* dx as a forward convolution needs stride 1 and padding inside a
 * square kernel. */
static bool dx_as_forward_fits(const struct be_conv *cv)
{
	const struct conv_geom *g = &cv->g;

	return g->stride == 1 && g->r == g->s && g->pad < g->r;
}

/* Tries each formulation of forms in turn, keeping the first that plans
 * with no reference implementation. */
static dnnl_status_t conv_plan_first(struct be_conv *cv, dnnl_data_type_t lt,
				     const struct conv_form *forms, size_t nforms)
{
	dnnl_status_t st = dnnl_unimplemented;
	bool dx = cv->flags & BE_NEED_DX;

	for (size_t i = 0; i < nforms; i++) {
		if (forms[i].dx != DX_BWD && (!dx || !dx_as_forward_fits(cv)))
			continue;
		st = conv_plan(cv, lt, forms[i]);
		if (st == dnnl_success)
			return st;
		conv_unplan(cv);
		if (st != dnnl_unimplemented && st != dnnl_invalid_arguments)
			return st;
	}
	return st;
}

static dnnl_status_t conv_plan_cand(struct be_conv *cv, enum conv_cand c)
{
	const struct conv_geom *g = &cv->g;
	dnnl_status_t st;

	conv_unplan(cv);
	cv->round = NULL;
	cv->kern.emulated = false;
	if (c == CAND_NATIVE)
		return conv_plan_first(cv, cv->kern.prec == BE_BF16 ? dnnl_bf16 : dnnl_f16,
				       lp_forms, sizeof(lp_forms) / sizeof(*lp_forms));
	if (c == CAND_EMU_NHWC || c == CAND_EMU_BLOCKED) {
		/* Emulation: x, w and dy rounded to kern.prec, fp32 kernels. */
		cv->kern.emulated = true;
		cv->round = cv->kern.prec == BE_BF16 ? be_round_bf16 : be_round_fp16;
		if (!cv->xr)
			cv->xr = be_alloc((size_t)g->n * g->h * g->w * g->c);
		if (!cv->wr)
			cv->wr = be_alloc((size_t)g->k * g->c * g->r * g->s);
		if (!cv->dyr)
			cv->dyr = be_alloc((size_t)g->n * g->p * g->q * g->k);
		if (!cv->xr || !cv->wr || !cv->dyr)
			return dnnl_out_of_memory;
	}
	st = conv_plan(cv, dnnl_f32, fp32_forms[c == CAND_EMU_BLOCKED || c == CAND_BLOCKED]);
	if (st != dnnl_success)
		conv_unplan(cv);
	return st;
}

/* What the tuner (cpu_conv_tune.c) plans and times: see conv_tune_ops. */
static const struct conv_tune_ops tune_ops = { conv_plan_cand, be_conv_forward, be_conv_backward };

struct be_conv *be_conv_create(const struct conv_geom *g, unsigned flags,
			       enum be_precision prec, struct sbuf *err)
{
	static const enum conv_cand fp32[] = { CAND_NHWC, CAND_BLOCKED },
				    lp[] = { CAND_NATIVE, CAND_EMU_NHWC, CAND_EMU_BLOCKED };
	struct be_conv *cv = calloc(1, sizeof(*cv));
	dnnl_status_t st;
	bool native;

	if (!cv) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	cv->g = *g;
	cv->flags = flags;
	cv->kern.prec = prec;
	cpu_refused[0] = '\0';
	if (prec != BE_FP32 && g->c < LP_MIN_CHANNELS) {
		cv->kern.prec = BE_FP32;
		strfmt_label(cv->kern.why, sizeof(cv->kern.why), "%d input channel%s", g->c,
			 g->c == 1 ? "" : "s");
	}
	native = cv->kern.prec == BE_FP16 || cpu_bf16_native;
	if (cv->kern.prec == BE_FP32)
		st = conv_choose(cv, fp32, 2, &tune_ops);
	else
		st = conv_choose(cv, native ? lp : lp + 1, native ? 3 : 2, &tune_ops);
	/* Emulated because native did not plan (or the CPU has no native
	 * kernels): say why, unless the tuning said it already. */
	if (st == dnnl_success && cv->kern.emulated && !cv->kern.why[0])
		cpu_why_emulated(&cv->kern);
	if (st != dnnl_success) {
		sbuf_addf(err, "oneDNN: cannot plan a %s convolution %dx%dx%d -> %d (%dx%d, stride %d) "
			  "on this CPU (%s): %s",
			  be_precision_name(prec), g->h, g->w, g->c, g->k, g->r, g->s, g->stride,
			  cpu_isa_in_use(),
			  cpu_refused[0] ? "only a reference kernel exists" : "status");
		if (cpu_refused[0])
			sbuf_addf(err, " (%s)", cpu_refused);
		else
			sbuf_addf(err, " %d", (int)st);
		be_conv_free(cv);
		return NULL;
	}
	return cv;
}

int be_conv_forward(struct be_conv *cv, const float *x, const float *w, const float *b,
		    float *y, struct sbuf *err)
{
	const struct conv_geom *g = &cv->g;
	dnnl_memory_t wm, xm, ym;
	const float *xin = x, *win = w;

	if (cv->round) {
		cv->round((size_t)g->n * g->h * g->w * g->c, x, cv->xr);
		cv->round((size_t)g->k * g->c * g->r * g->s, w, cv->wr);
		xin = cv->xr, win = cv->wr;
	}
	DNNL_TRY(relayout_in(&cv->w_fwd, win, &wm));
	DNNL_TRY(relayout_in(&cv->xc, xin, &xm));
	DNNL_TRY(mem_set(cv->b, b));
	DNNL_TRY(relayout_out_mem(&cv->yo, y, &ym));
	dnnl_exec_arg_t a[] = { { DNNL_ARG_SRC, xm },
				{ DNNL_ARG_WEIGHTS, wm },
				{ DNNL_ARG_BIAS, cv->b },
				{ DNNL_ARG_DST, ym } };
	DNNL_TRY(prim_run(&cv->fwd, 4, a));
	DNNL_TRY(relayout_out_finish(&cv->yo));
	cv->w_last = win;
	cv->x_last = x;
	return 0;
fail:
	return -1;
}

/* The compute-type copy of x: the forward's when x is the input it
 * converted (the training step's case), else converted now. */
static dnnl_status_t conv_input(struct be_conv *cv, const float *x, dnnl_memory_t *xm)
{
	const struct conv_geom *g = &cv->g;

	if (x == cv->x_last && cv->xc.r.p) {
		*xm = cv->xc.internal;
		return dnnl_success;
	}
	if (cv->round) {
		if (x != cv->x_last)
			cv->round((size_t)g->n * g->h * g->w * g->c, x, cv->xr);
		x = cv->xr;
	}
	return relayout_in(&cv->xc, x, xm);
}

int be_conv_backward(struct be_conv *cv, const float *x, const float *dy, float *dx,
		     float *dw, float *db, struct sbuf *err)
{
	const struct conv_geom *g = &cv->g;
	dnnl_memory_t wm, dwm, dym, xm, dxm;

	if (dx && !(cv->flags & BE_NEED_DX)) {
		sbuf_addstr(err, "be_conv_backward: dx asked of a convolution planned without it");
		return -1;
	}
	if (cv->round && !cv->dy_rounded) {
		cv->round((size_t)g->n * g->p * g->q * g->k, dy, cv->dyr);
		dy = cv->dyr;
	}
	DNNL_TRY(relayout_in(&cv->dyc, dy, &dym));
	if (dx) {
		if (cv->wflip)
			flip_weights(g, cv->w_last, cv->wflip);
		DNNL_TRY(relayout_in(&cv->w_bwd, cv->wflip ? cv->wflip : cv->w_last, &wm));
		DNNL_TRY(relayout_out_mem(&cv->dxo, dx, &dxm));
		dnnl_exec_arg_t a[] = { { cv->wflip ? DNNL_ARG_SRC : DNNL_ARG_DIFF_DST, dym },
					{ DNNL_ARG_WEIGHTS, wm },
					{ cv->wflip ? DNNL_ARG_DST : DNNL_ARG_DIFF_SRC, dxm } };
		DNNL_TRY(prim_run(&cv->bwd_data, 3, a));
		DNNL_TRY(relayout_out_finish(&cv->dxo));
	}
	DNNL_TRY(relayout_out_mem(&cv->dw, dw, &dwm));
	DNNL_TRY(conv_input(cv, x, &xm));
	DNNL_TRY(mem_set(cv->db, db));
	dnnl_exec_arg_t a[] = { { DNNL_ARG_SRC, xm },
				{ DNNL_ARG_DIFF_DST, dym },
				{ DNNL_ARG_DIFF_WEIGHTS, dwm },
				{ DNNL_ARG_DIFF_BIAS, cv->db } };
	DNNL_TRY(prim_run(&cv->bwd_w, 4, a));
	DNNL_TRY(relayout_out_finish(&cv->dw));
	return 0;
fail:
	return -1;
}
