/* backend_cpu.c - the CPU backend's start: oneDNN's engine and stream,
 * the instruction-set cap (HPCTRAIN_MAX_CPU_ISA, cpu_isa.h), the
 * description line, rounding to bf16 and binary16 for emulation,
 * aligned buffers and sgemm.  The ops live beside it: cpu_conv.c,
 * cpu_pool.c, cpu_linear.c, over the plumbing of cpu_prim.c
 * (cpu_internal.h).  Shell over oneDNN's C API.
 *
 * Precision in short (each op's file says more): bf16 runs oneDNN's
 * bf16 kernels where the CPU as capped has AVX512-BF16 and is emulated
 * below (inputs rounded to bf16, fp32 kernels); fp16 is always emulated
 * (oneDNN 2.6 has no fp16 CPU kernels); pooling runs fp32.
 */
#include "trainer/cpu/cpu_internal.h"     // defines: cpu_engine, cpu_stream, cpu_bf16_native
#include "trainer/kernels/cpu_isa.h" // defines: cpu_isa_parse, cpu_isa_set_level
#include "trainer/kernels/kernels.h" // defines: round_bf16_f32, round_fp16_f32
#include "trainer/cpu/tune.h"            // defines: tune_parse_mode
#include "common/strfmt.h" // defines: strfmt_label

#include <cpuid.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dnnl_engine_t cpu_engine;
dnnl_stream_t cpu_stream;
bool cpu_bf16_native;
bool cpu_tune_on = true;
double cpu_tune_spent;
char cpu_refused[64];
static char describe_isa[128], describe[256]; /* describe: describe_isa and 128 more */

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
			char clip[SBUF_CLIP_SIZE];

			sbuf_addf(err, "HPCTRAIN_MAX_CPU_ISA: unknown instruction set \"%s\"; "
				  "expected one of " CPU_ISA_NAMES, sbuf_clip(cap, clip));
			return -1;
		}
		if (dnnl_set_max_cpu_isa(dnnl_rungs[want]) != dnnl_success &&
		    isa_rung(dnnl_get_effective_cpu_isa()) > want) {
			sbuf_addstr(err, "HPCTRAIN_MAX_CPU_ISA: oneDNN cpu_refused the cap "
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
	cpu_bf16_native = isa_has(eff, dnnl_cpu_isa_avx512_core_bf16);
	return 0;
}

int backend_init(int threads, struct sbuf *err)
{
	const dnnl_version_t *v = dnnl_version();
	const char *capped_by;

	if (threads > 0)
		omp_set_num_threads(threads);
	if (tune_parse_mode(getenv("HPCTRAIN_KERNELS"), &cpu_tune_on)) {
		char clip[SBUF_CLIP_SIZE];

		sbuf_addf(err, "HPCTRAIN_KERNELS: expected one of tune, fixed, got \"%s\"",
			  sbuf_clip(getenv("HPCTRAIN_KERNELS"), clip));
		return -1;
	}
	if (!cpu_engine) {
		if (apply_isa_cap(&capped_by, err))
			return -1;
		DNNL_TRY(dnnl_engine_create(&cpu_engine, dnnl_cpu, 0));
		DNNL_TRY(dnnl_stream_create(&cpu_stream, cpu_engine, dnnl_stream_default_flags));
		strfmt_label(describe_isa, sizeof(describe_isa), "oneDNN %d.%d.%d, %s%s%s%s", v->major,
			 v->minor, v->patch, isa_name(dnnl_get_effective_cpu_isa()),
			 capped_by ? " (capped by " : "", capped_by ? capped_by : "",
			 capped_by ? ")" : "");
	}
	return 0;
fail:
	return -1;
}

const char *backend_describe(void)
{
	char spent[32] = "";

	if (cpu_tune_on)
		strfmt_label(spent, sizeof(spent), " in %.2f s", cpu_tune_spent);
	strfmt_label(describe, sizeof(describe), "%s, kernels %s%s, %d threads", describe_isa,
		 cpu_tune_on ? "tuned by measurement" : "fixed (HPCTRAIN_KERNELS=fixed)", spent,
		 omp_get_max_threads());
	return describe;
}

const char *backend_onednn_version(void)
{
	static char v[32];
	const dnnl_version_t *d = dnnl_version();

	/* encode-ok: three ints fit in 32 bytes */
	snprintf(v, sizeof(v), "%d.%d.%d", d->major, d->minor, d->patch);
	return v;
}

const char *backend_isa(void)
{
	return cpu_isa_in_use();
}

const char *be_precision_name(enum be_precision prec)
{
	return prec == BE_BF16 ? "bf16" : prec == BE_FP16 ? "fp16" : "fp32";
}

const char *cpu_isa_in_use(void)
{
	return isa_name(dnnl_get_effective_cpu_isa());
}

/* Why kern.prec is emulated rather than native. */
void cpu_why_emulated(struct be_kernel *k)
{
	if (k->prec == BE_FP16)
		strfmt_label(k->why, sizeof(k->why), "oneDNN %d.%d has no fp16 CPU kernels",
			 dnnl_version()->major, dnnl_version()->minor);
	else if (!cpu_bf16_native)
		strfmt_label(k->why, sizeof(k->why), "no AVX512-BF16: this CPU runs %s",
			 cpu_isa_in_use());
	else
		strfmt_label(k->why, sizeof(k->why), "no bf16 kernel but the reference one (%s)",
			 cpu_refused);
}

/* AMD's vendor string: its AVX512-BF16 (Zen 4/5) computes a bf16 dot
 * product at twice the fp32 FMA rate, Intel's without AMX at the same. */
static bool cpu_is_amd(void)
{
	unsigned a, b, c, d;
	char v[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return false;
	memcpy(v, &b, 4), memcpy(v + 4, &d, 4), memcpy(v + 8, &c, 4);
	v[12] = '\0';
	return !strcmp(v, "AuthenticAMD");
}

const char *be_precision_limit(enum be_precision prec)
{
	static char why[160];
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();

	if (prec == BE_FP16) {
		strfmt_label(why, sizeof(why), "oneDNN %d.%d has no fp16 CPU kernels, so fp16 is "
			 "emulated in fp32 kernels", dnnl_version()->major, dnnl_version()->minor);
		return why;
	}
	if (prec != BE_BF16 || isa_has(isa, dnnl_cpu_isa_avx512_core_amx))
		return NULL;
	if (!cpu_bf16_native) {
		strfmt_label(why, sizeof(why), "no AVX512-BF16 (this CPU runs %s), so bf16 is "
			 "emulated in fp32 kernels", isa_name(isa));
		return why;
	}
	if (cpu_is_amd())
		return NULL;
	return "Intel AVX512-BF16 without AMX computes bf16 dot products at the fp32 FMA rate";
}

void be_round_fp16(size_t n, const float *x, float *y)
{
	round_fp16_f32(n, x, y);
}

void be_round_bf16(size_t n, const float *x, float *y)
{
	round_bf16_f32(n, x, y);
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

int be_gemm(char ta, char tb, int m, int n, int k, float alpha, const float *a, int lda,
	    const float *b, int ldb, float beta, float *c, int ldc, struct sbuf *err)
{
	DNNL_TRY(dnnl_sgemm(ta == 't' ? 'T' : 'N', tb == 't' ? 'T' : 'N', m, n, k, alpha, a, lda,
			    b, ldb, beta, c, ldc));
	return 0;
fail:
	return -1;
}
