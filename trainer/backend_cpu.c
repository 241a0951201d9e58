/* backend_cpu.c - the CPU backend: oneDNN primitives for convolution and
 * pooling, oneDNN's sgemm for linear layers.  Shell over oneDNN's C API.
 *
 * Each be_conv plans three primitives at create time (forward with the
 * bias and an optional fused ReLU post-op, backward data, backward
 * weights), lets oneDNN pick the weight layout ("any": blocked for the
 * JIT kernels) and plans the reorders between that layout and the plain
 * (K,C,R,S) arena once.  Activations stay NHWC (channels last), which
 * oneDNN's AVX-512 kernels run directly, so no activation is reordered
 * between layers.  Scratchpads are user-managed and allocated at create
 * time: nothing in the step loop allocates.
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
 * formulation (conv_forms): NHWC dx, blocked dx, backward data, then
 * NHWC activations, then emulation.  Emulation (be_kernel.emulated) is
 * how a precision without native kernels runs: x, w and dy are rounded
 * to bf16 or binary16 (overflow to inf included, which is what loss
 * scaling guards) and the convolution runs in fp32 kernels, giving the
 * precision's numerics at fp32's speed.  bf16 is emulated below
 * avx512_core_bf16 (AVX2, AVX-512 without BF16: oneDNN's own bf16
 * emulation there runs slower than fp32), fp16 always (oneDNN 2.6 has
 * no fp16 CPU kernels).
 * Max pooling is plain C (kernels/maxpool.c: oneDNN 2.6's training-mode
 * max pooling is six times slower than memory allows here); average
 * pooling is oneDNN.  Pooling runs fp32 at every precision: it is
 * memory-bound on fp32 activations.  Linear layers (be_linear) run
 * sgemm at fp32 and emulated precisions, oneDNN matmuls on bf16 copies
 * at native bf16.
 */
#include "trainer/backend.h" // defines: be_conv_*, be_pool_*, be_linear_*, be_gemm
#include "trainer/kernels/kernels.h" // defines: maxpool_fwd_f32, maxpool_bwd_f32
#include "trainer/kernels/cpu_isa.h" // defines: cpu_isa_parse, cpu_isa_set_level
#include "cli/sbuf.h"        // defines: struct sbuf, sbuf_addf

#include <dnnl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dnnl_engine_t engine;
static dnnl_stream_t stream;
static char describe_isa[128], describe[160];
/* The CPU (as capped) has bf16 dot products: bf16 runs natively. */
static bool bf16_native;
/* The last reference implementation plan_check() refused, for errors. */
static char refused[64];

#define DNNL_TRY(call)                                                                     \
	do {                                                                               \
		dnnl_status_t st_ = (call);                                                \
		if (st_ != dnnl_success) {                                                 \
			sbuf_addf(err, "oneDNN: %s failed with status %d (%s:%d)", #call,  \
				  (int)st_, __FILE__, __LINE__);                           \
			goto fail;                                                         \
		}                                                                          \
	} while (0)

static const char *isa_name(dnnl_cpu_isa_t isa)
{
	switch (isa) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
	case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	default: return "generic";
	}
}

static bool isa_has(dnnl_cpu_isa_t isa, dnnl_cpu_isa_t part)
{
	return ((unsigned)isa & (unsigned)part) == (unsigned)part;
}

/* oneDNN's effective ISA as a rung of cpu_isa.h. */
static enum cpu_isa isa_rung(dnnl_cpu_isa_t isa)
{
	if (isa_has(isa, dnnl_cpu_isa_avx512_core_amx))
		return CPU_ISA_AVX512_CORE_AMX;
	if (isa_has(isa, dnnl_cpu_isa_avx512_core_bf16))
		return CPU_ISA_AVX512_CORE_BF16;
	if (isa_has(isa, dnnl_cpu_isa_avx512_core))
		return CPU_ISA_AVX512_CORE;
	if (isa_has(isa, dnnl_cpu_isa_avx2))
		return CPU_ISA_AVX2;
	return CPU_ISA_BASELINE;
}

static const dnnl_cpu_isa_t dnnl_rungs[] = {
	[CPU_ISA_BASELINE] = dnnl_cpu_isa_sse41,
	[CPU_ISA_AVX2] = dnnl_cpu_isa_avx2,
	[CPU_ISA_AVX512_CORE] = dnnl_cpu_isa_avx512_core,
	[CPU_ISA_AVX512_CORE_BF16] = dnnl_cpu_isa_avx512_core_bf16,
	[CPU_ISA_AVX512_CORE_AMX] = dnnl_cpu_isa_avx512_core_amx,
	[CPU_ISA_ALL] = dnnl_cpu_isa_all,
};

/* Applies HPCTRAIN_MAX_CPU_ISA to oneDNN (before its first primitive:
 * the cap cannot change later) and sets the trainer's kernels to
 * oneDNN's effective rung, which ONEDNN_MAX_CPU_ISA alone caps too. */
static int apply_isa_cap(const char **capped_by, struct sbuf *err)
{
	const char *cap = getenv("HPCTRAIN_MAX_CPU_ISA");
	enum cpu_isa want;
	dnnl_cpu_isa_t eff;

	*capped_by = NULL;
	if (cap && *cap) {
		if (cpu_isa_parse(cap, &want)) {
			sbuf_addf(err, "HPCTRAIN_MAX_CPU_ISA: unknown instruction set \"%s\"; "
				  "expected one of " CPU_ISA_NAMES, cap);
			return -1;
		}
		if (dnnl_set_max_cpu_isa(dnnl_rungs[want]) != dnnl_success &&
		    isa_rung(dnnl_get_effective_cpu_isa()) > want) {
			sbuf_addstr(err, "HPCTRAIN_MAX_CPU_ISA: oneDNN refused the cap "
					 "(set before the backend started?)");
			return -1;
		}
		if (want != CPU_ISA_ALL)
			*capped_by = "HPCTRAIN_MAX_CPU_ISA";
	} else if (getenv("ONEDNN_MAX_CPU_ISA") && *getenv("ONEDNN_MAX_CPU_ISA")) {
		*capped_by = "ONEDNN_MAX_CPU_ISA";
	}
	eff = dnnl_get_effective_cpu_isa();
	cpu_isa_set_level(isa_rung(eff));
	bf16_native = isa_has(eff, dnnl_cpu_isa_avx512_core_bf16);
	return 0;
}

int backend_init(int threads, struct sbuf *err)
{
	const dnnl_version_t *v = dnnl_version();
	const char *capped_by;

	if (threads > 0)
		omp_set_num_threads(threads);
	if (!engine) {
		if (apply_isa_cap(&capped_by, err))
			return -1;
		DNNL_TRY(dnnl_engine_create(&engine, dnnl_cpu, 0));
		DNNL_TRY(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
		snprintf(describe_isa, sizeof(describe_isa), "oneDNN %d.%d.%d, %s%s%s%s", v->major,
			 v->minor, v->patch, isa_name(dnnl_get_effective_cpu_isa()),
			 capped_by ? " (capped by " : "", capped_by ? capped_by : "",
			 capped_by ? ")" : "");
	}
	snprintf(describe, sizeof(describe), "%s, %d threads", describe_isa, omp_get_max_threads());
	return 0;
fail:
	return -1;
}

const char *backend_describe(void)
{
	return describe;
}

const char *be_precision_name(enum be_precision prec)
{
	return prec == BE_BF16 ? "bf16" : prec == BE_FP16 ? "fp16" : "fp32";
}

/* Rounds n floats to the nearest binary16 value (ties to even), kept as
 * float; beyond 65504 (from 65520 up) they become inf, as in fp16
 * hardware.  Bit arithmetic on the float, no conversion instructions:
 * the loop vectorises on any x86-64 (F16C or AVX512-FP16 are not
 * assumed, and GCC's _Float16 without them calls libgcc per element).
 * Normal range: round the mantissa to 10 bits; below 2^-14 (fp16
 * subnormals) the step is 2^-24: adding 0.5 to |x| rounds it there. */
void be_round_fp16(size_t n, const float *x, float *y)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u, a;
		float ax, r;

		memcpy(&u, &x[i], 4);
		a = u & 0x7fffffffu;
		memcpy(&ax, &a, 4);
		if (a >= 0x477ff000u) { /* >= 65520, inf or NaN */
			a = a > 0x7f800000u ? a : 0x7f800000u;
		} else if (a < 0x38800000u) { /* < 2^-14 */
			r = (ax + 0.5f) - 0.5f;
			memcpy(&a, &r, 4);
		} else {
			a = (a + 0x0fffu + ((a >> 13) & 1)) & ~0x1fffu;
		}
		u = (u & 0x80000000u) | a;
		memcpy(&y[i], &u, 4);
	}
}

/* Round to nearest even on the upper 16 bits; NaNs stay NaN (quieted),
 * and values past bf16's largest round to inf as the carry says. */
void be_round_bf16(size_t n, const float *x, float *y)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u;

		memcpy(&u, &x[i], 4);
		if ((u & 0x7fffffffu) > 0x7f800000u)
			u |= 0x00400000u;
		else
			u += 0x7fffu + ((u >> 16) & 1);
		u &= 0xffff0000u;
		memcpy(&y[i], &u, 4);
	}
}

float *be_alloc(size_t nfloats)
{
	size_t bytes = (nfloats * sizeof(float) + 63) / 64 * 64;
	float *p = aligned_alloc(64, bytes ? bytes : 64);

	if (p)
		memset(p, 0, bytes);
	return p;
}

void be_free(float *p)
{
	free(p);
}

/* Refuses a reference implementation: oneDNN falls back to one where no
 * JIT kernel takes a layout or type combination, and it runs 100-1000
 * times slower (a bf16 convolution took 13 s per call instead of 4 ms). */
static dnnl_status_t plan_check(const_dnnl_primitive_desc_t pd)
{
	const char *impl = NULL;

	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
	    !impl)
		return dnnl_success;
	if (strncmp(impl, "ref", 3) && !strstr(impl, ":ref"))
		return dnnl_success;
	snprintf(refused, sizeof(refused), "%s", impl);
	return dnnl_unimplemented;
}

/* The implementation name of a planned primitive. */
static void impl_name(const_dnnl_primitive_desc_t pd, char *buf, size_t size)
{
	const char *impl = NULL;

	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
	    !impl)
		impl = "unknown";
	snprintf(buf, size, "%s", impl);
}

/* A primitive with its user-managed scratchpad. */
struct prim {
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t p;
	dnnl_memory_t scratch;
	void *scratch_buf;
};

static dnnl_status_t prim_create(struct prim *pr, const_dnnl_op_desc_t op,
				 const_dnnl_primitive_desc_t hint, const dnnl_post_ops_t po)
{
	dnnl_primitive_attr_t attr = NULL;
	const dnnl_memory_desc_t *smd;
	dnnl_status_t st;

	st = dnnl_primitive_attr_create(&attr);
	if (st == dnnl_success)
		st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
	if (st == dnnl_success && po)
		st = dnnl_primitive_attr_set_post_ops(attr, po);
	if (st == dnnl_success)
		st = dnnl_primitive_desc_create(&pr->pd, op, attr, engine, hint);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (st == dnnl_success)
		st = plan_check(pr->pd);
	if (st != dnnl_success)
		return st;
	st = dnnl_primitive_create(&pr->p, pr->pd);
	if (st != dnnl_success)
		return st;
	smd = dnnl_primitive_desc_query_md(pr->pd, dnnl_query_scratchpad_md, 0);
	if (smd && dnnl_memory_desc_get_size(smd)) {
		pr->scratch_buf = aligned_alloc(64, (dnnl_memory_desc_get_size(smd) + 63) / 64 * 64);
		if (!pr->scratch_buf)
			return dnnl_out_of_memory;
		st = dnnl_memory_create(&pr->scratch, smd, engine, pr->scratch_buf);
	}
	return st;
}

static void prim_release(struct prim *pr)
{
	if (pr->p)
		dnnl_primitive_destroy(pr->p);
	if (pr->pd)
		dnnl_primitive_desc_destroy(pr->pd);
	if (pr->scratch)
		dnnl_memory_destroy(pr->scratch);
	free(pr->scratch_buf);
	memset(pr, 0, sizeof(*pr));
}

/* Runs pr with args plus its scratchpad, then waits. */
static dnnl_status_t prim_run(struct prim *pr, int nargs, dnnl_exec_arg_t *args)
{
	dnnl_exec_arg_t all[8];
	dnnl_status_t st;

	memcpy(all, args, nargs * sizeof(*args));
	if (pr->scratch)
		all[nargs++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, pr->scratch };
	st = dnnl_primitive_execute(pr->p, stream, nargs, all);
	return st == dnnl_success ? dnnl_stream_wait(stream) : st;
}

/* A memory object whose handle is set before each use. */
static dnnl_status_t mem_create(dnnl_memory_t *m, const dnnl_memory_desc_t *md)
{
	return dnnl_memory_create(m, md, engine, DNNL_MEMORY_NONE);
}

static dnnl_status_t mem_set(dnnl_memory_t m, const void *p)
{
	return dnnl_memory_set_data_handle(m, (void *)p);
}

/* A planned conversion between the plain layout and a primitive's. */
struct relayout {
	struct prim r;          /* no primitive when the layouts agree */
	dnnl_memory_t plain, internal;
	float *buf;             /* the internal copy */
};

static dnnl_status_t relayout_create(struct relayout *rl, const dnnl_memory_desc_t *from,
				     const dnnl_memory_desc_t *to, int to_internal)
{
	const dnnl_memory_desc_t *internal = to_internal ? to : from;
	dnnl_status_t st;

	st = mem_create(&rl->plain, to_internal ? from : to);
	if (st != dnnl_success || dnnl_memory_desc_equal(from, to))
		return st;
	rl->buf = be_alloc(dnnl_memory_desc_get_size(internal) / sizeof(float) + 16);
	if (!rl->buf)
		return dnnl_out_of_memory;
	st = dnnl_memory_create(&rl->internal, internal, engine, rl->buf);
	if (st == dnnl_success)
		st = dnnl_reorder_primitive_desc_create(&rl->r.pd, from, engine, to, engine, NULL);
	if (st == dnnl_success)
		st = plan_check(rl->r.pd);
	if (st == dnnl_success)
		st = dnnl_primitive_create(&rl->r.p, rl->r.pd);
	return st;
}

static void relayout_release(struct relayout *rl)
{
	prim_release(&rl->r);
	if (rl->plain)
		dnnl_memory_destroy(rl->plain);
	if (rl->internal)
		dnnl_memory_destroy(rl->internal);
	be_free(rl->buf);
	memset(rl, 0, sizeof(*rl));
}

/* Returns the memory a primitive should use for the plain buffer p:
 * p itself when the layouts agree, else the internal copy (converted
 * from p first when to_internal). */
static dnnl_status_t relayout_in(struct relayout *rl, const float *p, dnnl_memory_t *out)
{
	dnnl_status_t st = mem_set(rl->plain, p);

	if (st != dnnl_success)
		return st;
	*out = rl->plain;
	if (!rl->r.p)
		return st;
	*out = rl->internal;
	dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, rl->plain }, { DNNL_ARG_TO, rl->internal } };
	st = dnnl_primitive_execute(rl->r.p, stream, 2, a);
	return st == dnnl_success ? dnnl_stream_wait(stream) : st;
}

/* After a primitive wrote into the memory relayout_out_mem() gave, copy
 * it out to the plain buffer. */
static dnnl_status_t relayout_out_mem(struct relayout *rl, float *p, dnnl_memory_t *out)
{
	dnnl_status_t st = mem_set(rl->plain, p);

	*out = rl->r.p ? rl->internal : rl->plain;
	return st;
}

static dnnl_status_t relayout_out_finish(struct relayout *rl)
{
	dnnl_status_t st;

	if (!rl->r.p)
		return dnnl_success;
	dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, rl->internal }, { DNNL_ARG_TO, rl->plain } };
	st = dnnl_primitive_execute(rl->r.p, stream, 2, a);
	return st == dnnl_success ? dnnl_stream_wait(stream) : st;
}

/* Below this many input channels a convolution runs fp32 at every
 * precision: with C*R*S = 9 (a grey image's first layer) there is no
 * reduction for bf16 to speed up, and oneDNN's bf16 kernel for it ran
 * slower than fp32 here (3.3 ms against 2.9 ms forward, 128x28x28x1). */
#define LP_MIN_CHANNELS 16

/* How the input gradient is computed: a forward convolution of dy with
 * flipped weights writing NHWC dx, the same writing dx in the layout
 * the kernel prefers (then reordered), or oneDNN's backward data. */
enum dx_form { DX_FWD_NHWC, DX_FWD_ANY, DX_BWD };

/* One formulation of a convolution; conv_forms lists them in the order
 * they are tried. */
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

/* Sets up emulation of kern.prec: rounded copies, fp32 kernels. */
static dnnl_status_t conv_plan_emulated(struct be_conv *cv)
{
	const struct conv_geom *g = &cv->g;

	cv->kern.emulated = true;
	cv->round = cv->kern.prec == BE_BF16 ? be_round_bf16 : be_round_fp16;
	cv->xr = be_alloc((size_t)g->n * g->h * g->w * g->c);
	cv->wr = be_alloc((size_t)g->k * g->c * g->r * g->s);
	cv->dyr = be_alloc((size_t)g->n * g->p * g->q * g->k);
	if (!cv->xr || !cv->wr || !cv->dyr)
		return dnnl_out_of_memory;
	return conv_plan_first(cv, dnnl_f32, fp32_forms, 2);
}

/* Why kern.prec is emulated rather than native. */
static void why_emulated(struct be_kernel *k)
{
	if (k->prec == BE_FP16)
		snprintf(k->why, sizeof(k->why), "oneDNN %d.%d has no fp16 CPU kernels",
			 dnnl_version()->major, dnnl_version()->minor);
	else if (!bf16_native)
		snprintf(k->why, sizeof(k->why), "no AVX512-BF16: this CPU runs %s",
			 isa_name(dnnl_get_effective_cpu_isa()));
	else
		snprintf(k->why, sizeof(k->why), "no bf16 kernel but the reference one (%s)",
			 refused);
}

struct be_conv *be_conv_create(const struct conv_geom *g, unsigned flags,
			       enum be_precision prec, struct sbuf *err)
{
	struct be_conv *cv = calloc(1, sizeof(*cv));
	dnnl_status_t st = dnnl_unimplemented;

	if (!cv) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	cv->g = *g;
	cv->flags = flags;
	cv->kern.prec = prec;
	refused[0] = '\0';
	if (prec != BE_FP32 && g->c < LP_MIN_CHANNELS) {
		cv->kern.prec = BE_FP32;
		snprintf(cv->kern.why, sizeof(cv->kern.why), "%d input channel%s", g->c,
			 g->c == 1 ? "" : "s");
	}
	if (cv->kern.prec == BE_FP32)
		st = conv_plan_first(cv, dnnl_f32, fp32_forms, 2);
	else if (cv->kern.prec == BE_FP16 || bf16_native)
		st = conv_plan_first(cv, cv->kern.prec == BE_BF16 ? dnnl_bf16 : dnnl_f16, lp_forms,
				     sizeof(lp_forms) / sizeof(*lp_forms));
	if (st != dnnl_success && cv->kern.prec != BE_FP32) {
		why_emulated(&cv->kern);
		st = conv_plan_emulated(cv);
	}
	if (st != dnnl_success) {
		sbuf_addf(err, "oneDNN: cannot plan a %s convolution %dx%dx%d -> %d (%dx%d, stride %d) "
			  "on this CPU (%s): %s",
			  be_precision_name(prec), g->h, g->w, g->c, g->k, g->r, g->s, g->stride,
			  isa_name(dnnl_get_effective_cpu_isa()),
			  refused[0] ? "only a reference kernel exists" : "status");
		if (refused[0])
			sbuf_addf(err, " (%s)", refused);
		else
			sbuf_addf(err, " %d", (int)st);
		goto fail;
	}
	return cv;
fail:
	be_conv_free(cv);
	return NULL;
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

/* Max pooling runs kernels/maxpool.c (see there why not oneDNN) with
 * its argmax in arg; average pooling runs oneDNN. */
struct be_pool {
	struct pool_geom g;
	int32_t *arg;
	struct prim fwd, bwd;
	dnnl_memory_t x, y, dy, dx, ws;
	void *ws_buf;
};

void be_pool_free(struct be_pool *pl)
{
	if (!pl)
		return;
	prim_release(&pl->fwd);
	prim_release(&pl->bwd);
	if (pl->x)
		dnnl_memory_destroy(pl->x);
	if (pl->y)
		dnnl_memory_destroy(pl->y);
	if (pl->dy)
		dnnl_memory_destroy(pl->dy);
	if (pl->dx)
		dnnl_memory_destroy(pl->dx);
	if (pl->ws)
		dnnl_memory_destroy(pl->ws);
	free(pl->ws_buf);
	free(pl->arg);
	free(pl);
}

struct be_pool *be_pool_create(const struct pool_geom *g, bool max, unsigned flags,
			       enum be_precision prec, struct sbuf *err)
{
	struct be_pool *pl = calloc(1, sizeof(*pl));
	dnnl_memory_desc_t x_md, y_md;
	dnnl_dims_t xd = { g->n, g->c, g->h, g->w }, yd = { g->n, g->c, g->p, g->q };
	dnnl_dims_t strides = { g->stride, g->stride }, kernel = { g->k, g->k }, pad = { 0, 0 };
	dnnl_alg_kind_t alg = max ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding;
	dnnl_pooling_desc_t d;
	const dnnl_memory_desc_t *wsmd;

	if (!pl) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	(void)prec; /* pooling runs fp32 at every precision (see the top) */
	pl->g = *g;
	if (max) {
		pl->arg = calloc((size_t)g->n * g->p * g->q * g->c, sizeof(*pl->arg));
		if (!pl->arg) {
			sbuf_addstr(err, "out of memory");
			goto fail;
		}
		return pl;
	}
	DNNL_TRY(dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dnnl_f32, dnnl_nhwc));
	DNNL_TRY(dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dnnl_f32, dnnl_nhwc));
	DNNL_TRY(dnnl_pooling_forward_desc_init(&d, dnnl_forward_training, alg, &x_md, &y_md,
						strides, kernel, pad, pad));
	DNNL_TRY(prim_create(&pl->fwd, &d, NULL, NULL));
	wsmd = dnnl_primitive_desc_query_md(pl->fwd.pd, dnnl_query_workspace_md, 0);
	if (wsmd && dnnl_memory_desc_get_size(wsmd)) {
		pl->ws_buf = aligned_alloc(64, (dnnl_memory_desc_get_size(wsmd) + 63) / 64 * 64);
		if (!pl->ws_buf) {
			sbuf_addstr(err, "out of memory");
			goto fail;
		}
		DNNL_TRY(dnnl_memory_create(&pl->ws, wsmd, engine, pl->ws_buf));
	}
	if (flags & BE_NEED_DX) {
		DNNL_TRY(dnnl_pooling_backward_desc_init(&d, alg, &x_md, &y_md, strides, kernel,
							 pad, pad));
		DNNL_TRY(prim_create(&pl->bwd, &d, pl->fwd.pd, NULL));
	}
	DNNL_TRY(mem_create(&pl->x, &x_md));
	DNNL_TRY(mem_create(&pl->y, &y_md));
	DNNL_TRY(mem_create(&pl->dx, &x_md));
	DNNL_TRY(mem_create(&pl->dy, &y_md));
	return pl;
fail:
	be_pool_free(pl);
	return NULL;
}

int be_pool_forward(struct be_pool *pl, const float *x, float *y, struct sbuf *err)
{
	dnnl_exec_arg_t a[3] = { { DNNL_ARG_SRC, pl->x }, { DNNL_ARG_DST, pl->y },
				 { DNNL_ARG_WORKSPACE, pl->ws } };

	if (pl->arg) {
		maxpool_fwd_f32(&pl->g, x, y, pl->arg);
		return 0;
	}
	DNNL_TRY(mem_set(pl->x, x));
	DNNL_TRY(mem_set(pl->y, y));
	DNNL_TRY(prim_run(&pl->fwd, pl->ws ? 3 : 2, a));
	return 0;
fail:
	return -1;
}

int be_pool_backward(struct be_pool *pl, const float *dy, float *dx, struct sbuf *err)
{
	dnnl_exec_arg_t a[3] = { { DNNL_ARG_DIFF_DST, pl->dy }, { DNNL_ARG_DIFF_SRC, pl->dx },
				 { DNNL_ARG_WORKSPACE, pl->ws } };

	if (pl->arg) {
		maxpool_bwd_f32(&pl->g, dy, pl->arg, dx);
		return 0;
	}
	if (!pl->bwd.p) {
		sbuf_addstr(err, "be_pool_backward: pooling planned without a backward pass");
		return -1;
	}
	DNNL_TRY(mem_set(pl->dy, dy));
	DNNL_TRY(mem_set(pl->dx, dx));
	DNNL_TRY(prim_run(&pl->bwd, pl->ws ? 3 : 2, a));
	return 0;
fail:
	return -1;
}

int be_gemm(char ta, char tb, int m, int n, int k, float alpha, const float *a, int lda,
	    const float *b, int ldb, float beta, float *c, int ldc, struct sbuf *err)
{
	DNNL_TRY(dnnl_sgemm(ta == 't' ? 'T' : 'N', tb == 't' ? 'T' : 'N', m, n, k, alpha, a, lda,
			    b, ldb, beta, c, ldc));
	return 0;
fail:
	return -1;
}

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
	PLAN(dnnl_memory_create(&lin->w_t, &wbt, engine, lin->wc.buf));
	PLAN(dnnl_memory_create(&lin->dy_t, &dybt, engine, lin->dyc.buf));
	PLAN(mem_create(&lin->y, &y));
	PLAN(mem_create(&lin->dx, &dx));
	PLAN(mem_create(&lin->dw, &dw));
	impl_name(lin->fwd.pd, lin->kern.impl, sizeof(lin->kern.impl));
#undef PLAN
	return dnnl_success;
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
	snprintf(lin->kern.impl, sizeof(lin->kern.impl), "sgemm");
	refused[0] = '\0';
	if (prec == BE_BF16 && bf16_native && linear_plan_bf16(lin) == dnnl_success)
		return lin;
	linear_unplan(lin);
	snprintf(lin->kern.impl, sizeof(lin->kern.impl), "sgemm");
	if (prec == BE_FP32)
		return lin;
	why_emulated(&lin->kern);
	lin->kern.emulated = true;
	lin->round = prec == BE_BF16 ? be_round_bf16 : be_round_fp16;
	lin->xr = be_alloc((size_t)n * in);
	lin->wr = be_alloc((size_t)out * in);
	lin->dyr = be_alloc((size_t)n * out);
	if (!lin->xr || !lin->wr || !lin->dyr) {
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
