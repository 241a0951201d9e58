/* cpu_conv.h - what the CPU backend's two convolution files share: a
 * planned convolution (struct be_conv), the candidate formulations the
 * tuning chooses among, planning one of them (cpu_conv.c) and choosing
 * among them by measurement (cpu_conv_tune.c).  Not for the layers: they
 * see backend.h only. */
#ifndef HPT_CPU_CONV_H
#define HPT_CPU_CONV_H

#include "trainer/cpu/cpu_internal.h" // defines: struct prim, struct relayout
#include "trainer/kernels/kernels.h" // defines: struct conv_geom

#include <dnnl.h>
#include <stddef.h>

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
	bool dy_rounded;      /* the caller rounds dy (be_conv_set_dy_rounded) */
	float *wflip;         /* dx as a forward: w transposed and flipped */
};

/* The candidates the planner chooses among (tune.h), in the order the
 * fixed mode tries them: native low precision (the first of lp_forms
 * that plans), emulation on fp32 kernels in NHWC or blocked layouts,
 * and plain fp32 in NHWC or blocked layouts; their names on the start
 * line. */
enum conv_cand { CAND_NATIVE, CAND_EMU_NHWC, CAND_EMU_BLOCKED, CAND_NHWC, CAND_BLOCKED };
extern const char *const conv_cand_names[];

/* What the tuner does to the convolution it tunes, cpu_conv.c's own
 * operations: handed to conv_choose, so that the tuner reaches the
 * planner only through them and cpu_conv.c and cpu_conv_tune.c do not
 * call each other.  plan plans candidate c from scratch (oneDNN's
 * status, dnnl_unimplemented where only a reference kernel exists);
 * forward and backward are the passes it times. */
struct conv_tune_ops {
	dnnl_status_t (*plan)(struct be_conv *cv, enum conv_cand c);
	int (*forward)(struct be_conv *cv, const float *x, const float *w, const float *b,
		       float *y, struct sbuf *err);
	int (*backward)(struct be_conv *cv, const float *x, const float *dy, float *dx, float *dw,
			float *db, struct sbuf *err);
};

/* Plans the fastest of the n candidates c by measurement, or the first
 * that plans without tuning (cpu_conv_tune.c); cv->kern says which and
 * what was measured. */
dnnl_status_t conv_choose(struct be_conv *cv, const enum conv_cand *c, size_t n,
			  const struct conv_tune_ops *ops);

#endif
