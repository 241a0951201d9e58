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
 * cached (cpu_tune.c); HPCTRAIN_KERNELS=fixed keeps the order above.
 */
#include "trainer/cpu_internal.h" // defines: struct prim, struct relayout, prim_*, relayout_*
#include "trainer/tune.h"         // defines: struct tune_cand, tune_* (pick, budget, median, describe)

#include <omp.h>
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

struct be_conv {
	struct conv_geom g;
	unsigned flags;
	struct be_kernel kern;
	/* emulation: rounds x, w and dy to kern.prec; NULL when native */
	void (*round)(size_t n, const float *x, float *y);
	struct prim fwd, bwd_data, bwd_w;
	struct relayout w_fwd, w_bwd, dw;
	struct relayout xc, dyc; /* fp32 NHWC -> compute type and layout */
	struct relayout yo, dxo; /* compute layout -> NHWC (no-op unless blocked) */
	dnnl_memory_t b, db;
	const float *x_last; /* the input converted by the last forward */
	const float *w_last; /* the weights of the last forward */
	float *xr, *wr, *dyr; /* emulation: rounded copies */
	float *wflip;         /* dx as a forward: w transposed and flipped */
};

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

/* The candidates the planner chooses among (tune.h), in the order the
 * fixed mode tries them: native low precision (the first of lp_forms
 * that plans), emulation on fp32 kernels in NHWC or blocked layouts,
 * and plain fp32 in NHWC or blocked layouts. */
enum conv_cand { CAND_NATIVE, CAND_EMU_NHWC, CAND_EMU_BLOCKED, CAND_NHWC, CAND_BLOCKED };
static const char *const cand_names[] = { "native", "emulated nhwc", "emulated blocked", "nhwc",
					  "blocked" };

/* Plans candidate c from scratch. */
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

/* Inputs for timing a candidate: made-up values, the layer's sizes. */
struct conv_trial {
	float *x, *w, *b, *y, *dy, *dx, *dw, *db;
};

static void trial_release(struct conv_trial *t)
{
	float **v[] = { &t->x, &t->w, &t->b, &t->y, &t->dy, &t->dx, &t->dw, &t->db };

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		be_free(*v[i]);
		*v[i] = NULL;
	}
}

static int trial_init(struct conv_trial *t, const struct be_conv *cv)
{
	const struct conv_geom *g = &cv->g;
	size_t nx = (size_t)g->n * g->h * g->w * g->c, ny = (size_t)g->n * g->p * g->q * g->k,
	       nw = (size_t)g->k * g->c * g->r * g->s;

	*t = (struct conv_trial){ be_alloc(nx), be_alloc(nw), be_alloc(g->k), be_alloc(ny),
				  be_alloc(ny), (cv->flags & BE_NEED_DX) ? be_alloc(nx) : NULL,
				  be_alloc(nw), be_alloc(g->k) };
	if (!t->x || !t->w || !t->b || !t->y || !t->dy || !t->dw || !t->db ||
	    ((cv->flags & BE_NEED_DX) && !t->dx)) {
		trial_release(t);
		return -1;
	}
	for (size_t i = 0; i < nx; i++)
		t->x[i] = (float)((i * 2654435761u) >> 22 & 1023) / 1024.0f - 0.5f;
	for (size_t i = 0; i < nw; i++)
		t->w[i] = (float)((i * 40503u) >> 4 & 255) / 2560.0f - 0.05f;
	for (size_t i = 0; i < ny; i++)
		t->dy[i] = (float)((i * 2246822519u) >> 23 & 511) / 5120.0f - 0.05f;
	return 0;
}

/* A candidate's time in ms (tune.h): the median of forward+backward
 * passes after one warm-up, as many as tune_may_repeat allows; -1 when
 * a pass fails.  spent_s: the process's tuning seconds so far. */
static double conv_time(struct be_conv *cv, struct conv_trial *t, double spent_s)
{
	struct sbuf err = SBUF_INIT;
	double v[TUNE_REPS], start = omp_get_wtime(), ms = 0;
	int n = -1; /* -1: the warm-up */

	for (; n < 0 || tune_may_repeat(v, n, spent_s + omp_get_wtime() - start, ms * 1e-3); n++) {
		double t0 = omp_get_wtime();

		if (be_conv_forward(cv, t->x, t->w, t->b, t->y, &err) ||
		    be_conv_backward(cv, t->x, t->dy, t->dx, t->dw, t->db, &err)) {
			sbuf_release(&err);
			return -1;
		}
		ms = (omp_get_wtime() - t0) * 1e3;
		if (n >= 0)
			v[n] = ms;
	}
	sbuf_release(&err);
	return tune_median(v, n);
}

/* Plans the cached choice for key, if there is one and it plans. */
static bool conv_cached(struct be_conv *cv, const enum conv_cand *c, size_t n, const char *key)
{
	int best = cpu_tune_lookup(key, cv->kern.tuned, sizeof(cv->kern.tuned));

	if (best >= 0 && (size_t)best < n && conv_plan_cand(cv, c[best]) == dnnl_success) {
		/* native lost only where it was timed: at fp16 it never plans
		 * (oneDNN 2.6), and cpu_why_emulated says so */
		if (cv->kern.emulated && best && c[0] == CAND_NATIVE &&
		    strstr(cv->kern.tuned, cand_names[CAND_NATIVE]))
			snprintf(cv->kern.why, sizeof(cv->kern.why), "native %s measured slower",
				 be_precision_name(cv->kern.prec));
		cv->x_last = cv->w_last = NULL;
		cpu_tune_record(key, best, cv->kern.tuned, false);
		return true;
	}
	cv->kern.tuned[0] = '\0';
	return false;
}

/* Says what the tuning found (tune_describe) and records the choice,
 * caching a complete comparison; best is the candidate planned now. */
static void conv_report(struct be_conv *cv, const enum conv_cand *c, const struct tune_cand *tc,
			size_t n, int best, const char *key)
{
	tune_describe(tc, n, cv->kern.tuned, sizeof(cv->kern.tuned));
	if (cv->kern.emulated && tc[0].ms >= 0 && c[0] == CAND_NATIVE)
		snprintf(cv->kern.why, sizeof(cv->kern.why), "native %s measured slower",
			 be_precision_name(cv->kern.prec));
	cpu_tune_record(key, best, cv->kern.tuned, tune_is_complete(tc, n));
}

/* Plans each candidate in turn and keeps the fastest by measurement;
 * without tuning the first that plans.  Every candidate that plans is
 * timed while the process's budget (tune.h) lasts; once it is spent,
 * the fastest so far, or the fixed order where none was timed, decides
 * and the start line names the candidates left untimed. */
static dnnl_status_t conv_choose(struct be_conv *cv, const enum conv_cand *c, size_t n)
{
	struct tune_cand tc[4];
	struct conv_trial trial;
	double t0 = omp_get_wtime(), spent0 = cpu_tune_spent, last_s = 0, cand_t0 = 0;
	dnnl_status_t st = dnnl_unimplemented, first_st = dnnl_unimplemented;
	int best, want, planned = -1, current = -1;
	const struct conv_geom *g = &cv->g;
	int shape[] = { g->n, g->h, g->w, g->c, g->k, g->r, g->s, g->stride, g->pad, (int)cv->flags };
	char key[256];
	bool choice = cpu_tune_on && n > 1, budget_left = tune_may_go_on(spent0, 0), tune;

	if (choice) {
		cpu_tune_key("conv", cv->kern.prec, shape, sizeof(shape) / sizeof(*shape), key,
			     sizeof(key));
		if (conv_cached(cv, c, n, key)) {
			cpu_tune_spent += omp_get_wtime() - t0;
			return dnnl_success;
		}
	}
	tune = choice && budget_left && !trial_init(&trial, cv);
	for (size_t i = 0; i < n; i++)
		tc[i] = (struct tune_cand){ cand_names[c[i]], choice && (tune || !budget_left)
								      ? TUNE_NOT_REACHED
								      : TUNE_NOT_PLANNED };
	for (size_t i = 0; i < n; i++) {
		if (i)
			last_s = omp_get_wtime() - cand_t0;
		/* the next candidate is taken to cost what the last one did,
		 * planning included */
		if (tune_pick(tc, i) >= 0 &&
		    (!tune || !tune_may_go_on(spent0 + omp_get_wtime() - t0, last_s)))
			break;
		cand_t0 = omp_get_wtime();
		st = conv_plan_cand(cv, c[i]);
		if (!i)
			first_st = st;
		/* a failed plan leaves nothing planned */
		current = st == dnnl_success ? (int)i : -1;
		if (st == dnnl_out_of_memory)
			break;
		if (st != dnnl_success) {
			tc[i].ms = TUNE_NOT_PLANNED;
			continue;
		}
		if (planned < 0)
			planned = (int)i;
		if (!tune)
			break;
		tc[i].ms = conv_time(cv, &trial, spent0 + omp_get_wtime() - t0);
		if (tc[i].ms < 0)
			tc[i].ms = TUNE_NOT_PLANNED;
	}
	/* the fastest timed, else the first that planned */
	best = tune_pick(tc, n);
	want = best >= 0 ? best : planned;
	if (st == dnnl_out_of_memory)
		;
	else if (want < 0)
		st = first_st;
	else if (want != current)
		st = conv_plan_cand(cv, c[want]);
	else
		st = dnnl_success;
	if (choice && st == dnnl_success)
		conv_report(cv, c, tc, n, want, key);
	if (tune) {
		trial_release(&trial);
		cpu_tune_spent += omp_get_wtime() - t0;
	}
	cv->x_last = cv->w_last = NULL; /* the trials' buffers are gone */
	return st;
}

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
		snprintf(cv->kern.why, sizeof(cv->kern.why), "%d input channel%s", g->c,
			 g->c == 1 ? "" : "s");
	}
	native = cv->kern.prec == BE_FP16 || cpu_bf16_native;
	if (cv->kern.prec == BE_FP32)
		st = conv_choose(cv, fp32, 2);
	else
		st = conv_choose(cv, native ? lp : lp + 1, native ? 3 : 2);
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
	if (cv->round) {
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
