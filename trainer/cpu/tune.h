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

/* The tuning's limit per process: never over 2 s.  There is
 * no limit per layer: one of 2% of 1,000 of the layer's own passes could
 * not pay even the planning of a second candidate for a fast layer, so
 * on an idle AMX node native bf16 ran without ever being compared with
 * emulation, and nothing was cached.  A complete comparison is cached,
 * so a kind of node pays it once, not every run. */
#define TUNE_MAX_S 2.0

/* A candidate's time: the median of TUNE_MIN_REPS to TUNE_REPS
 * forward+backward passes after one warm-up, so that a pass slowed by a
 * neighbour on a shared node does not decide (the fastest of two, used
 * before, was one pass's luck).  The passes are short (one layer, one
 * batch); the first TUNE_MIN_REPS are always taken once a candidate is
 * admitted, the rest only while they disagree by more than TUNE_SPREAD
 * of their median, and while the budget lasts (tune_may_repeat): three
 * passes that agree settle it, and a quiet node pays four passes a
 * candidate, not six (the cnn's bf16 tuning was 2.2% of a 1,000-step
 * run with six). */
#define TUNE_MIN_REPS 3
#define TUNE_REPS 5
#define TUNE_SPREAD 0.10

/* One candidate: ms >= 0 when timed, else one of the reasons below. */
struct tune_cand {
	const char *name;
	double ms;
};
#define TUNE_NOT_PLANNED (-1.0) /* no kernel but a reference one, or a pass failed */
#define TUNE_NOT_REACHED (-2.0) /* the budget ended the tuning before it */

/* The index of the fastest timed candidate (the earlier on a tie), or
 * -1 when none was timed. */
int tune_pick(const struct tune_cand *c, size_t n);

/* Whether another candidate (or repetition) may be timed: spent_s
 * seconds of the process's TUNE_MAX_S are spent, and the next costs
 * about next_s. */
bool tune_may_go_on(double spent_s, double next_s);

/* Whether a candidate takes another timed pass: done taken, their
 * times in v[0, done), spent_s seconds of the process's TUNE_MAX_S
 * spent, a pass costs about pass_s.  Never more than TUNE_REPS, so a
 * caller's array of TUNE_REPS holds them all. */
bool tune_may_repeat(const double *v, int done, double spent_s, double pass_s);

/* The median of v[0, n) (sorts v; the mean of the two middle values
 * for even n; 0 for n < 1). */
double tune_median(double *v, int n);

/* Whether a layer's comparison is worth caching: no candidate was left
 * untimed by the budget, and at least two were timed. */
bool tune_is_complete(const struct tune_cand *c, size_t n);

/* Writes what the tuning of one layer found, for the start line: the
 * winner (tune_pick) and the other timed candidates with their times,
 * then those the budget left untimed ("emulated nhwc 2.10 ms, native
 * 2.60 ms; 2 s budget spent before emulated blocked"); "" when there is
 * nothing to say (fewer than two timed and none left untimed).  Returns
 * the length it needs, as snprintf does. */
int tune_describe(const struct tune_cand *c, size_t n, char *buf, size_t size);

/* The cache format's version, the key's first field: a change in what a
 * cached line means (in how candidates are timed or which are compared)
 * bumps it, and lines of older versions are never read again.  Version 1
 * had no field. */
#define TUNE_KEY_VERSION 2

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

/* Writes the key as one line-safe word ("|"-separated fields after
 * "v<TUNE_KEY_VERSION>", spaces and "|" in the CPU name replaced by "_")
 * into buf; returns the length it needs, as snprintf does (>= size:
 * truncated). */
int tune_key_format(const struct tune_key *k, char *buf, size_t size);

/* HPCTRAIN_KERNELS: NULL, "" or "tune" = measure (true), "fixed" = the
 * first candidate that plans (false).  0, or -1 for any other value. */
int tune_parse_mode(const char *s, bool *tune);

#endif
