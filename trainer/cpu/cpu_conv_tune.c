/* cpu_conv_tune.c - choosing a convolution's formulation by measurement
 * (cpu_conv.h conv_choose): each candidate is planned and timed on
 * made-up inputs of the layer's sizes, forward and backward, within the
 * process's tuning budget (tune.h), and the fastest kept; a choice is
 * looked up first (rank 0's, then the kernel cache, cpu_tune.c) and
 * recorded after.  Shell: the clock and oneDNN. */
#include "trainer/cpu/cpu_conv.h"     // defines: struct be_conv, enum conv_cand, struct conv_tune_ops
#include "trainer/cpu/cpu_internal.h" // defines: cpu_tune_*, cpu_tune_on, cpu_tune_spent
#include "trainer/cpu/tune.h"         // defines: struct tune_cand, tune_* (pick, budget, median, describe)
#include "common/sbuf.h"          // defines: struct sbuf
#include "common/strfmt.h" // defines: strfmt_label

#include <omp.h>
#include <stdio.h>
#include <string.h>

const char *const conv_cand_names[] = { "native", "emulated nhwc", "emulated blocked", "nhwc",
					"blocked" };

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
static double conv_time(struct be_conv *cv, const struct conv_tune_ops *ops, struct conv_trial *t,
			double spent_s)
{
	struct sbuf err = SBUF_INIT;
	double v[TUNE_REPS], start = omp_get_wtime(), ms = 0;
	int n = -1; /* -1: the warm-up */

	for (; n < 0 || tune_may_repeat(v, n, spent_s + omp_get_wtime() - start, ms * 1e-3); n++) {
		double t0 = omp_get_wtime();

		if (ops->forward(cv, t->x, t->w, t->b, t->y, &err) ||
		    ops->backward(cv, t->x, t->dy, t->dx, t->dw, t->db, &err)) {
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
static bool conv_cached(struct be_conv *cv, const struct conv_tune_ops *ops, const enum conv_cand *c,
			size_t n, const char *key)
{
	int best = cpu_tune_lookup(key, cv->kern.tuned, sizeof(cv->kern.tuned));

	if (best >= 0 && (size_t)best < n && ops->plan(cv, c[best]) == dnnl_success) {
		/* native lost only where it was timed: at fp16 it never plans
		 * (oneDNN 2.6), and cpu_why_emulated says so */
		if (cv->kern.emulated && best && c[0] == CAND_NATIVE &&
		    strstr(cv->kern.tuned, conv_cand_names[CAND_NATIVE]))
			strfmt_label(cv->kern.why, sizeof(cv->kern.why), "native %s measured slower",
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
		strfmt_label(cv->kern.why, sizeof(cv->kern.why), "native %s measured slower",
			 be_precision_name(cv->kern.prec));
	cpu_tune_record(key, best, cv->kern.tuned, tune_is_complete(tc, n));
}

/* Plans each candidate in turn and keeps the fastest by measurement;
 * without tuning the first that plans.  Every candidate that plans is
 * timed while the process's budget (tune.h) lasts; once it is spent,
 * the fastest so far, or the fixed order where none was timed, decides
 * and the start line names the candidates left untimed. */
dnnl_status_t conv_choose(struct be_conv *cv, const enum conv_cand *c, size_t n,
			  const struct conv_tune_ops *ops)
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
		if (conv_cached(cv, ops, c, n, key)) {
			cpu_tune_spent += omp_get_wtime() - t0;
			return dnnl_success;
		}
	}
	tune = choice && budget_left && !trial_init(&trial, cv);
	for (size_t i = 0; i < n; i++)
		tc[i] = (struct tune_cand){ conv_cand_names[c[i]], choice && (tune || !budget_left)
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
		st = ops->plan(cv, c[i]);
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
		tc[i].ms = conv_time(cv, ops, &trial, spent0 + omp_get_wtime() - t0);
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
		st = ops->plan(cv, c[want]);
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
