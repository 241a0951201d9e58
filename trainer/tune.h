/* tune.h - choosing a layer's kernel by measurement, as cuDNN's
 * benchmark mode does: the pure part (which candidate won, whether the
 * tuning may go on, the name a choice is cached under, the mode asked).
 *
 * Core (pure): no clock, no oneDNN, no environment; cpu_conv.c and
 * cpu_linear.c time the candidates and call these.  A candidate is one
 * correct formulation of a layer at its precision (native bf16, emulated
 * bf16 = fp32 kernels on bf16-rounded inputs, fp32 in NHWC or in the
 * kernel's blocked layout); all give the precision's numerics, so the
 * choice changes speed only.
 */
#ifndef HPT_TUNE_H
#define HPT_TUNE_H

#include <stdbool.h>
#include <stddef.h>

/* The tuning's hard limit per process, and its share of a 1,000-step
 * run (the issue-30 budget: 2%, never over 2 s). */
#define TUNE_MAX_S 2.0
#define TUNE_SHARE 0.02
#define TUNE_RUN_STEPS 1000

/* One candidate: ms < 0 when it did not plan (no kernel but a reference
 * one) or was not timed. */
struct tune_cand {
	const char *name;
	double ms;
};

/* The index of the fastest timed candidate (the earlier on a tie), or
 * -1 when none was timed. */
int tune_pick(const struct tune_cand *c, size_t n);

/* Whether another candidate may be timed: spent_s seconds are spent,
 * and the next costs about next_s.  The limit is TUNE_MAX_S, and
 * TUNE_SHARE of TUNE_RUN_STEPS steps of step_s seconds each where
 * step_s > 0 estimates a step (0: not known yet, the hard limit alone). */
bool tune_may_go_on(double spent_s, double next_s, double step_s);

/* What a choice depends on, for its cache key. */
struct tune_key {
	const char *cpu;    /* the CPU model, e.g. "GenuineIntel 6/207 Intel(R) Xeon(R)" */
	const char *onednn; /* "2.6.3" */
	const char *isa;    /* the effective (capped) ISA, "avx512_core_bf16" */
	int threads;
	const char *op;     /* "conv", "linear" */
	const char *prec;   /* "fp32", "bf16", "fp16" */
	const int *shape;   /* the layer's dimensions and flags */
	size_t nshape;
};

/* Writes the key as one line-safe word ("|"-separated fields, spaces
 * and "|" in the CPU name replaced by "_") into buf; returns the length
 * it needs, as snprintf does (>= size: truncated). */
int tune_key_format(const struct tune_key *k, char *buf, size_t size);

/* HPCTRAIN_KERNELS: NULL, "" or "tune" = measure (true), "fixed" = the
 * first candidate that plans (false).  0, or -1 for any other value. */
int tune_parse_mode(const char *s, bool *tune);

#endif
