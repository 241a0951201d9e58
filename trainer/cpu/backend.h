/* backend.h - the compute backend behind the layers: convolution, pooling
 * and the GEMMs of linear layers, each planned once per shape and reused
 * every step.
 *
 * backend_cpu.c implements it with oneDNN's C API.  The GPU path
 * (backend_cuda.h, model_cuda.c) has its own device-side interface and
 * is chosen at run time by train.c.  Layers never see oneDNN types.  Buffers passed in are the layers' own, in the layouts of
 * kernels.h (activations NHWC, weights in PyTorch order); whatever
 * layout the backend prefers internally (blocked weights) is its
 * business, converted inside with reorders planned at create time.
 *
 * Contract: *_create returns NULL and fills err on failure (an
 * unsupported shape or precision); forward/backward return 0 or -1 with
 * err filled, never exit; *_free accepts NULL.  No call after create
 * allocates.  Results are deterministic at a fixed thread count.
 */
#ifndef HPT_BACKEND_H
#define HPT_BACKEND_H

#include "trainer/kernels/kernels.h" // defines: struct conv_geom, struct pool_geom

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* Precision of convolution inputs (activations, weights, output
 * gradients); accumulation, outputs, gradients of weights and the
 * master weights stay fp32 at every precision.  What each backend does
 * with it is stated at the top of its file. */
enum be_precision { BE_FP32, BE_BF16, BE_FP16 };

/* "fp32", "bf16", "fp16". */
const char *be_precision_name(enum be_precision prec);
/* y = x rounded to the nearest binary16 value (inf beyond +-65504);
 * y may be x.  Emulates fp16 storage where no fp16 kernel exists. */
void be_round_fp16(size_t n, const float *x, float *y);
/* y = x rounded to the nearest bfloat16 value (ties to even, as oneDNN
 * converts); y may be x.  Emulates bf16 where the CPU has no bf16 dot
 * product. */
void be_round_bf16(size_t n, const float *x, float *y);

/* What a planned convolution or linear layer really runs.  prec is the
 * precision its arithmetic inputs have: the one asked, or fp32 where a
 * layer keeps fp32 (why says so).  emulated: the inputs are rounded to
 * prec and the arithmetic runs in fp32 kernels, because the CPU (or the
 * cap on it) has no native kernel for prec; why names the reason.  impl
 * names the forward kernel, as oneDNN reports it (e.g.
 * "jit_bf16:avx512_core_bf16").  tuned: when the planner chose among
 * several correct formulations by timing them (tune.h), each candidate
 * with its forward+backward time, the winner first ("emulated nhwc
 * 2.10 ms, native 2.60 ms"), then any the budget left untimed
 * (tune_describe); empty when one candidate alone planned or the tuning
 * is off (HPCTRAIN_KERNELS=fixed). */
struct be_kernel {
	enum be_precision prec;
	bool emulated;
	char impl[64];
	char why[128];
	char tuned[128];
};

enum be_flags {
	BE_RELU = 1 << 0,    /* fuse ReLU after the bias (forward post-op) */
	BE_NEED_DX = 1 << 1, /* plan the backward pass to the input too */
};

/* Starts the backend with the given number of threads (0 = leave the
 * runtime's default).  Returns 0 or -1 with err filled. */
int backend_init(int threads, struct sbuf *err);
/* One line naming the implementation and the instruction set in use,
 * e.g. "oneDNN 2.6.3, avx512_core_bf16, 2 threads", with the cap when
 * one is set ("..., avx2 (capped by HPCTRAIN_MAX_CPU_ISA), ...").  The
 * kernels of each layer are be_conv_kernel() and be_linear_kernel().
 *
 * The cap: HPCTRAIN_MAX_CPU_ISA (or oneDNN's ONEDNN_MAX_CPU_ISA) limits
 * oneDNN and the trainer's own kernels to one rung of cpu_isa.h, so one
 * machine runs what a lower CPU would.  backend_init() fails (exit 2 in
 * the trainer) on a name it does not know. */
const char *backend_describe(void);
/* oneDNN's version ("2.6.3") and the instruction set its kernels use
 * ("avx512_core_bf16"), for the run's software record (common/software.h). */
const char *backend_onednn_version(void);
const char *backend_isa(void);
/* Every oneDNN primitive the backend plans is checked by the
 * implementation oneDNN chose: reference implementations ("ref:any",
 * "gemm:ref", ...) run 100-1000 times slower than the JIT kernels and
 * are never used; the planner takes another formulation instead. */

/* Why prec cannot train faster than fp32 on this CPU as capped, as one
 * phrase ("Intel AVX512-BF16 without AMX computes bf16 dot products at
 * the fp32 FMA rate"), or NULL where it can: bf16 with AMX, or with
 * AVX512-BF16 on AMD Zen 4/5 (a dot product at twice the FMA rate).
 * fp16: never (oneDNN 2.6 has no fp16 CPU kernels); fp32: NULL. */
const char *be_precision_limit(enum be_precision prec);

/* The kernel choices made by measurement (HPCTRAIN_KERNELS=tune): every
 * layer's choice this process planned, timed or looked up, as lines of
 * the kernel cache appended to out; and another process's lines, which
 * a layer planned after this takes before the cache or a measurement.
 * Data parallelism makes every rank run rank 0's kernels with them; a
 * rank whose CPU, ISA or threads differ matches none and measures. */
void be_tune_export(struct sbuf *out);
void be_tune_adopt(const char *lines);
/* No measuring from here on, whatever HPCTRAIN_KERNELS says: the first
 * formulation that plans, for a model whose CPU kernels never run (the
 * GPU trains it), so a GPU run pays no tuning for them. */
void be_tune_off(void);

struct be_conv;
struct be_conv *be_conv_create(const struct conv_geom *g, unsigned flags,
			       enum be_precision prec, struct sbuf *err);
/* y = act(conv(x, w) + b); w (K,C,R,S), b (K). */
int be_conv_forward(struct be_conv *cv, const float *x, const float *w, const float *b,
		    float *y, struct sbuf *err);
/* dy is the gradient after the activation; with BE_RELU the caller has
 * already masked it by y > 0.  dx may be NULL (then BE_NEED_DX is not
 * needed); dw and db are overwritten, not accumulated.  w must be the
 * weights of the last forward, and x, when it is the pointer the last
 * forward got, its unchanged input (at bf16 the forward's converted copy
 * is reused). */
int be_conv_backward(struct be_conv *cv, const float *x, const float *dy, float *dx,
		     float *dw, float *db, struct sbuf *err);
void be_conv_free(struct be_conv *cv);
const struct be_kernel *be_conv_kernel(const struct be_conv *cv);
/* An emulated convolution rounds dy to its precision before its
 * backward passes, a pass over a full-size gradient.  A caller whose dy
 * arrives already rounded that way (a max pool without overlap routes
 * the values it is given unchanged, so it can round its 4x smaller
 * gradient instead) takes the pass over: be_conv_dy_round gives the
 * rounding (NULL: the convolution does not round), and after
 * be_conv_set_dy_rounded(cv, true) be_conv_backward uses dy as it is. */
typedef void (*be_round_fn)(size_t n, const float *x, float *y);
be_round_fn be_conv_dy_round(const struct be_conv *cv);
void be_conv_set_dy_rounded(struct be_conv *cv, bool rounded);

struct be_pool;
/* max = true: max pooling (the backward needs the forward's workspace,
 * kept inside); false: average. */
struct be_pool *be_pool_create(const struct pool_geom *g, bool max, unsigned flags,
			       enum be_precision prec, struct sbuf *err);
int be_pool_forward(struct be_pool *pl, const float *x, float *y, struct sbuf *err);
int be_pool_backward(struct be_pool *pl, const float *dy, float *dx, struct sbuf *err);
void be_pool_free(struct be_pool *pl);

/* A linear layer's three GEMMs, planned once, row-major: y = x w^T,
 * dx = dy w, dw = dy^T x for x (n,in), w (out,in), y (n,out); bias and
 * activation stay with the caller.  At BE_BF16 they run on bf16 copies
 * of x, w and dy with fp32 accumulation and fp32 outputs; at BE_FP16 on
 * binary16-rounded copies in fp32 (fp16's numerics, as be_conv); fp32
 * is plain sgemm.  The backward reuses the forward's copies of x and w
 * when given the same pointers, whose contents must not have changed. */
struct be_linear;
struct be_linear *be_linear_create(int n, int in, int out, enum be_precision prec,
				   struct sbuf *err);
int be_linear_forward(struct be_linear *lin, const float *x, const float *w, float *y,
		      struct sbuf *err);
/* dx may be NULL; dw is overwritten. */
int be_linear_backward(struct be_linear *lin, const float *x, const float *w, const float *dy,
		       float *dx, float *dw, struct sbuf *err);
void be_linear_free(struct be_linear *lin);
const struct be_kernel *be_linear_kernel(const struct be_linear *lin);

/* Row-major C = alpha op(A) op(B) + beta C, op = transpose when 't'. */
int be_gemm(char ta, char tb, int m, int n, int k, float alpha, const float *a, int lda,
	    const float *b, int ldb, float beta, float *c, int ldc, struct sbuf *err);

/* Aligned buffers for activations and arenas (64 bytes); NULL on OOM. */
float *be_alloc(size_t nfloats);
void be_free(float *p);

#endif
