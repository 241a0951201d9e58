/* cpu_linear.c - linear layers on the CPU backend (backend.h
 * be_linear_*): sgemm at fp32 and emulated precisions, oneDNN matmuls on
 * bf16 copies at native bf16. */
#include "trainer/cpu/cpu_internal.h" // defines: struct prim, struct relayout, prim_*, relayout_*
#include "trainer/cpu/tune.h"         // defines: struct tune_cand, tune_* (pick, budget, median, describe)
#include "common/strfmt.h" // defines: strfmt_label

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Linear layers (backend.h).  Native bf16: oneDNN matmuls whose
 * operands are bf16 copies made by planned reorders; the transposed
 * operands (w as (in,out), dy as (out,n)) are views of the same copies
 * with swapped strides, so nothing is transposed in memory.  The cnn's
 * 3136 -> 128 layer at batch 128, one thread: 4.2 ms of sgemm per step
 * against 1.0 ms of AMX matmuls and 0.3 ms of conversion.  Emulated
 * precisions run sgemm on rounded copies. */
struct be_linear {
	int n, in, out;
	struct be_kernel kern;
	void (*round)(size_t n, const float *x, float *y); /* emulation, else NULL */
	struct prim fwd, bwd_data, bwd_w;
	struct relayout xc, wc, dyc;        /* bf16: f32 -> bf16 copies */
	dnnl_memory_t w_t, dy_t;            /* views: w as (in,out), dy as (out,n) */
	dnnl_memory_t y, dx, dw;
	float *xr, *wr, *dyr;               /* emulation: rounded copies */
	const float *x_last, *w_last;       /* what the copies were made of */
};

/* Releases the bf16 plan, keeping the shape and the kernel. */
static void linear_unplan(struct be_linear *lin)
{
	dnnl_memory_t *mems[] = { &lin->w_t, &lin->dy_t, &lin->y, &lin->dx, &lin->dw };

	prim_release(&lin->fwd);
	prim_release(&lin->bwd_data);
	prim_release(&lin->bwd_w);
	relayout_release(&lin->xc);
	relayout_release(&lin->wc);
	relayout_release(&lin->dyc);
	for (size_t i = 0; i < sizeof(mems) / sizeof(*mems); i++)
		if (*mems[i]) {
			dnnl_memory_destroy(*mems[i]);
			*mems[i] = NULL;
		}
}

void be_linear_free(struct be_linear *lin)
{
	if (!lin)
		return;
	linear_unplan(lin);
	be_free(lin->xr);
	be_free(lin->wr);
	be_free(lin->dyr);
	free(lin);
}

const struct be_kernel *be_linear_kernel(const struct be_linear *lin)
{
	return &lin->kern;
}

static dnnl_status_t md2(dnnl_memory_desc_t *md, dnnl_dim_t rows, dnnl_dim_t cols,
			 dnnl_data_type_t dt, dnnl_format_tag_t tag)
{
	dnnl_dims_t d = { rows, cols };

	return dnnl_memory_desc_init_by_tag(md, 2, d, dt, tag);
}

static dnnl_status_t matmul_plan(struct prim *pr, const dnnl_memory_desc_t *a,
				 const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *c)
{
	dnnl_matmul_desc_t d;
	dnnl_status_t st = dnnl_matmul_desc_init(&d, a, b, NULL, c);

	return st == dnnl_success ? prim_create(pr, &d, NULL, NULL) : st;
}

/* Plans the bf16 matmuls; oneDNN's status (dnnl_unimplemented: no bf16
 * matmul but the reference one on this CPU build). */
static dnnl_status_t linear_plan_bf16(struct be_linear *lin)
{
	dnnl_memory_desc_t x32, xb, w32, wb, wbt, dy32, dyb, dybt, y, dx, dw;
	dnnl_status_t st;

#define PLAN(call)                                                                         \
	do {                                                                               \
		if ((st = (call)) != dnnl_success)                                         \
			return st;                                                         \
	} while (0)
	PLAN(md2(&x32, lin->n, lin->in, dnnl_f32, dnnl_ab));
	PLAN(md2(&xb, lin->n, lin->in, dnnl_bf16, dnnl_ab));
	PLAN(md2(&w32, lin->out, lin->in, dnnl_f32, dnnl_ab));
	PLAN(md2(&wb, lin->out, lin->in, dnnl_bf16, dnnl_ab));
	PLAN(md2(&wbt, lin->in, lin->out, dnnl_bf16, dnnl_ba));
	PLAN(md2(&dy32, lin->n, lin->out, dnnl_f32, dnnl_ab));
	PLAN(md2(&dyb, lin->n, lin->out, dnnl_bf16, dnnl_ab));
	PLAN(md2(&dybt, lin->out, lin->n, dnnl_bf16, dnnl_ba));
	PLAN(md2(&y, lin->n, lin->out, dnnl_f32, dnnl_ab));
	PLAN(md2(&dx, lin->n, lin->in, dnnl_f32, dnnl_ab));
	PLAN(md2(&dw, lin->out, lin->in, dnnl_f32, dnnl_ab));
	PLAN(matmul_plan(&lin->fwd, &xb, &wbt, &y));
	PLAN(matmul_plan(&lin->bwd_data, &dyb, &wb, &dx));
	PLAN(matmul_plan(&lin->bwd_w, &dybt, &xb, &dw));
	PLAN(relayout_create(&lin->xc, &x32, &xb, 1));
	PLAN(relayout_create(&lin->wc, &w32, &wb, 1));
	PLAN(relayout_create(&lin->dyc, &dy32, &dyb, 1));
	PLAN(dnnl_memory_create(&lin->w_t, &wbt, cpu_engine, lin->wc.buf));
	PLAN(dnnl_memory_create(&lin->dy_t, &dybt, cpu_engine, lin->dyc.buf));
	PLAN(mem_create(&lin->y, &y));
	PLAN(mem_create(&lin->dx, &dx));
	PLAN(mem_create(&lin->dw, &dw));
	impl_name(lin->fwd.pd, lin->kern.impl, sizeof(lin->kern.impl));
#undef PLAN
	return dnnl_success;
}

/* Sets lin up to emulate kern.prec with sgemm on rounded copies. */
static int linear_set_emulated(struct be_linear *lin)
{
	linear_unplan(lin);
	strfmt_label(lin->kern.impl, sizeof(lin->kern.impl), "sgemm");
	lin->kern.emulated = true;
	lin->round = lin->kern.prec == BE_BF16 ? be_round_bf16 : be_round_fp16;
	if (!lin->xr)
		lin->xr = be_alloc((size_t)lin->n * lin->in);
	if (!lin->wr)
		lin->wr = be_alloc((size_t)lin->out * lin->in);
	if (!lin->dyr)
		lin->dyr = be_alloc((size_t)lin->n * lin->out);
	return lin->xr && lin->wr && lin->dyr ? 0 : -1;
}

/* A candidate's time in ms (tune.h): the median of forward+backward
 * passes after one warm-up, as many as tune_may_repeat allows, on
 * made-up inputs (-1: a pass failed or no memory).  spent_s: the
 * process's tuning seconds so far. */
static double linear_time(struct be_linear *lin, double spent_s)
{
	size_t nx = (size_t)lin->n * lin->in, nw = (size_t)lin->out * lin->in,
	       ny = (size_t)lin->n * lin->out;
	float *x = be_alloc(nx), *w = be_alloc(nw), *y = be_alloc(ny), *dy = be_alloc(ny),
	      *dx = be_alloc(nx), *dw = be_alloc(nw);
	struct sbuf err = SBUF_INIT;
	double v[TUNE_REPS], start = omp_get_wtime(), ms = 0, r = -1;
	int n = -1; /* -1: the warm-up */

	if (!x || !w || !y || !dy || !dx || !dw)
		goto out;
	for (size_t i = 0; i < nx; i++)
		x[i] = (float)((i * 2654435761u) >> 22 & 1023) / 1024.0f - 0.5f;
	for (size_t i = 0; i < nw; i++)
		w[i] = (float)((i * 40503u) >> 4 & 255) / 2560.0f - 0.05f;
	for (; n < 0 || tune_may_repeat(v, n, spent_s + omp_get_wtime() - start, ms * 1e-3); n++) {
		double t0 = omp_get_wtime();

		if (be_linear_forward(lin, x, w, y, &err) ||
		    be_linear_backward(lin, x, w, dy, dx, dw, &err))
			goto out;
		ms = (omp_get_wtime() - t0) * 1e3;
		if (n >= 0)
			v[n] = ms;
	}
	r = tune_median(v, n);
out:
	lin->x_last = lin->w_last = NULL;
	be_free(x), be_free(w), be_free(y), be_free(dy), be_free(dx), be_free(dw);
	sbuf_release(&err);
	return r;
}

/* Plans the cached choice for key: 0 none cached, 1 planned, -1 no
 * memory. */
static int linear_cached(struct be_linear *lin, const char *key)
{
	int best = cpu_tune_lookup(key, lin->kern.tuned, sizeof(lin->kern.tuned));

	if (best == 0 || best == 1)
		cpu_tune_record(key, best, lin->kern.tuned, false);
	if (best == 0)
		return 1;
	if (best == 1) {
		strfmt_label(lin->kern.why, sizeof(lin->kern.why), "native bf16 measured slower");
		return linear_set_emulated(lin) ? -1 : 1;
	}
	lin->kern.tuned[0] = '\0';
	return 0;
}

/* Native bf16 against emulation, by measurement (tune.h), when both
 * plan and the tuning is on; else native where it plans.  Emulation is
 * timed while the process's budget lasts; if it is not, the start line
 * says so and nothing is cached. */
static int linear_choose(struct be_linear *lin)
{
	struct tune_cand c[2] = { { "native", TUNE_NOT_REACHED }, { "emulated", TUNE_NOT_REACHED } };
	double t0 = omp_get_wtime();
	int shape[] = { lin->n, lin->in, lin->out }, r;
	char key[256];

	if (!cpu_tune_on)
		return 0;
	cpu_tune_key("linear", lin->kern.prec, shape, 3, key, sizeof(key));
	r = linear_cached(lin, key);
	if (r)
		return r < 0 ? -1 : 0;
	if (tune_may_go_on(cpu_tune_spent, 0)) {
		c[0].ms = linear_time(lin, cpu_tune_spent);
		if (c[0].ms < 0) /* native planned but cannot run: no comparison */
			c[0].ms = c[1].ms = TUNE_NOT_PLANNED;
	}
	if (c[0].ms >= 0 && tune_may_go_on(cpu_tune_spent + omp_get_wtime() - t0,
					   omp_get_wtime() - t0)) {
		if (linear_set_emulated(lin))
			return -1;
		c[1].ms = linear_time(lin, cpu_tune_spent + omp_get_wtime() - t0);
		if (c[1].ms < 0)
			c[1].ms = TUNE_NOT_PLANNED;
	}
	if (lin->kern.emulated && tune_pick(c, 2) == 0) {
		lin->kern.emulated = false;
		lin->round = NULL;
		if (linear_plan_bf16(lin) != dnnl_success)
			return -1;
	} else if (lin->kern.emulated) {
		strfmt_label(lin->kern.why, sizeof(lin->kern.why), "native bf16 measured slower");
	}
	tune_describe(c, 2, lin->kern.tuned, sizeof(lin->kern.tuned));
	cpu_tune_record(key, lin->kern.emulated, lin->kern.tuned, tune_is_complete(c, 2));
	cpu_tune_spent += omp_get_wtime() - t0;
	return 0;
}

struct be_linear *be_linear_create(int n, int in, int out, enum be_precision prec,
				   struct sbuf *err)
{
	struct be_linear *lin = calloc(1, sizeof(*lin));

	if (!lin) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	*lin = (struct be_linear){ .n = n, .in = in, .out = out, .kern = { .prec = prec } };
	strfmt_label(lin->kern.impl, sizeof(lin->kern.impl), "sgemm");
	cpu_refused[0] = '\0';
	if (prec == BE_BF16 && cpu_bf16_native && linear_plan_bf16(lin) == dnnl_success) {
		if (!linear_choose(lin))
			return lin;
		sbuf_addstr(err, "out of memory");
		be_linear_free(lin);
		return NULL;
	}
	linear_unplan(lin);
	strfmt_label(lin->kern.impl, sizeof(lin->kern.impl), "sgemm");
	if (prec == BE_FP32)
		return lin;
	cpu_why_emulated(&lin->kern);
	if (linear_set_emulated(lin)) {
		sbuf_addstr(err, "out of memory");
		be_linear_free(lin);
		return NULL;
	}
	return lin;
}

/* The low-precision copies of x and w, made unless the last call made
 * them of the same pointers. */
static dnnl_status_t linear_inputs(struct be_linear *lin, const float *x, const float *w)
{
	dnnl_memory_t unused;
	dnnl_status_t st = dnnl_success;

	if (x != lin->x_last) {
		if (!lin->round)
			st = relayout_in(&lin->xc, x, &unused);
		else
			lin->round((size_t)lin->n * lin->in, x, lin->xr);
		lin->x_last = x;
	}
	if (st == dnnl_success && w != lin->w_last) {
		if (!lin->round)
			st = relayout_in(&lin->wc, w, &unused);
		else
			lin->round((size_t)lin->out * lin->in, w, lin->wr);
		lin->w_last = w;
	}
	return st;
}

/* Native bf16 runs the planned matmuls; fp32 and emulation sgemm. */
static bool linear_native_lp(const struct be_linear *lin)
{
	return lin->kern.prec != BE_FP32 && !lin->round;
}

int be_linear_forward(struct be_linear *lin, const float *x, const float *w, float *y,
		      struct sbuf *err)
{
	int n = lin->n, in = lin->in, out = lin->out;

	lin->x_last = lin->w_last = NULL; /* the forward always converts afresh */
	if (!linear_native_lp(lin)) {
		if (lin->round) {
			linear_inputs(lin, x, w);
			x = lin->xr, w = lin->wr;
		}
		return be_gemm('n', 't', n, out, in, 1.0f, x, in, w, in, 0.0f, y, out, err);
	}
	DNNL_TRY(linear_inputs(lin, x, w));
	DNNL_TRY(mem_set(lin->y, y));
	dnnl_exec_arg_t a[] = { { DNNL_ARG_SRC, lin->xc.internal },
				{ DNNL_ARG_WEIGHTS, lin->w_t },
				{ DNNL_ARG_DST, lin->y } };
	DNNL_TRY(prim_run(&lin->fwd, 3, a));
	return 0;
fail:
	return -1;
}

int be_linear_backward(struct be_linear *lin, const float *x, const float *w, const float *dy,
		       float *dx, float *dw, struct sbuf *err)
{
	int n = lin->n, in = lin->in, out = lin->out;
	dnnl_memory_t dym;

	if (!linear_native_lp(lin)) {
		if (lin->round) {
			linear_inputs(lin, x, w);
			lin->round((size_t)n * out, dy, lin->dyr);
			x = lin->xr, w = lin->wr, dy = lin->dyr;
		}
		return be_gemm('t', 'n', out, in, n, 1.0f, dy, out, x, in, 0.0f, dw, in, err) ||
		       (dx && be_gemm('n', 'n', n, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in, err))
			       ? -1 : 0;
	}
	DNNL_TRY(linear_inputs(lin, x, w));
	DNNL_TRY(relayout_in(&lin->dyc, dy, &dym));
	DNNL_TRY(mem_set(lin->dw, dw));
	dnnl_exec_arg_t aw[] = { { DNNL_ARG_SRC, lin->dy_t },
				 { DNNL_ARG_WEIGHTS, lin->xc.internal },
				 { DNNL_ARG_DST, lin->dw } };
	DNNL_TRY(prim_run(&lin->bwd_w, 3, aw));
	if (dx) {
		DNNL_TRY(mem_set(lin->dx, dx));
		dnnl_exec_arg_t ad[] = { { DNNL_ARG_SRC, dym },
					 { DNNL_ARG_WEIGHTS, lin->wc.internal },
					 { DNNL_ARG_DST, lin->dx } };
		DNNL_TRY(prim_run(&lin->bwd_data, 3, ad));
	}
	return 0;
fail:
	return -1;
}
