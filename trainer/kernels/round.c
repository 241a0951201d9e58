/* round.c - fp32 values rounded to bf16 or binary16 and kept as fp32:
 * how a low precision is emulated on fp32 kernels (cpu_conv.c and
 * cpu_linear.c round each emulated layer's x, w and dy with these, via
 * backend.h be_round_*).  Core.
 *
 * Bit arithmetic on the float, no conversion instructions, so every
 * vector width gives the same bits.  Each body is built for baseline
 * x86-64 (SSE2), AVX2 and AVX-512, and the widest the CPU has within
 * the cap (cpu_isa.h) runs: an emulated layer makes three passes a step,
 * and a pass over 1.6 MB took 0.12 ms on two threads at SSE2's width
 * against 0.06 ms at AVX2's and 0.04 ms at AVX-512's (Xeon model 207).
 *
 * Below ROUND_PARALLEL_MIN floats a pass stays on one thread: waking the
 * team costs more than the pass (a 128 KiB pass takes a few
 * microseconds).  Above it every thread of the step rounds its share:
 * one thread alone left the others idle for a pass over each
 * activation, weight and gradient of an emulated layer. */
#include "trainer/kernels/kernels.h" // defines: round_bf16_f32, round_fp16_f32
#include "trainer/kernels/cpu_isa.h" // defines: cpu_isa_level

#include <stdint.h>
#include <string.h>

#define ROUND_PARALLEL_MIN ((size_t)1 << 15)

/* Round to nearest even on the upper 16 bits; NaNs stay NaN (quieted),
 * and values past bf16's largest round to inf as the carry says. */
#define BF16_BODY                                                                          \
	_Pragma("omp parallel for simd schedule(static) if (n >= ROUND_PARALLEL_MIN)")    \
	for (size_t i = 0; i < n; i++) {                                                   \
		uint32_t u;                                                                \
                                                                                           \
		memcpy(&u, &x[i], 4);                                                      \
		if ((u & 0x7fffffffu) > 0x7f800000u)                                       \
			u |= 0x00400000u;                                                  \
		else                                                                       \
			u += 0x7fffu + ((u >> 16) & 1);                                    \
		u &= 0xffff0000u;                                                          \
		memcpy(&y[i], &u, 4);                                                      \
	}

/* To the nearest binary16 value (ties to even); beyond 65504 (from
 * 65520 up) inf, as in fp16 hardware.  Normal range: round the mantissa
 * to 10 bits; below 2^-14 (fp16 subnormals) the step is 2^-24: adding
 * 0.5 to |x| rounds it there.  (F16C or AVX512-FP16 are not assumed,
 * and GCC's _Float16 without them calls libgcc per element.) */
#define FP16_BODY                                                                          \
	_Pragma("omp parallel for simd schedule(static) if (n >= ROUND_PARALLEL_MIN)")    \
	for (size_t i = 0; i < n; i++) {                                                   \
		uint32_t u, a;                                                             \
		float ax, r;                                                               \
                                                                                           \
		memcpy(&u, &x[i], 4);                                                      \
		a = u & 0x7fffffffu;                                                       \
		memcpy(&ax, &a, 4);                                                        \
		if (a >= 0x477ff000u) { /* >= 65520, inf or NaN */                         \
			a = a > 0x7f800000u ? a : 0x7f800000u;                             \
		} else if (a < 0x38800000u) { /* < 2^-14 */                                \
			r = (ax + 0.5f) - 0.5f;                                            \
			memcpy(&a, &r, 4);                                                 \
		} else {                                                                   \
			a = (a + 0x0fffu + ((a >> 13) & 1)) & ~0x1fffu;                    \
		}                                                                          \
		u = (u & 0x80000000u) | a;                                                 \
		memcpy(&y[i], &u, 4);                                                      \
	}

#define ROUNDERS(suffix, target)                                                           \
	target static void bf16_##suffix(size_t n, const float *x, float *y) \
	{                                                                                  \
		BF16_BODY                                                                  \
	}                                                                                  \
	target static void fp16_##suffix(size_t n, const float *x, float *y) \
	{                                                                                  \
		FP16_BODY                                                                  \
	}

ROUNDERS(base, )
#if defined(__x86_64__) && defined(__GNUC__)
ROUNDERS(avx2, __attribute__((target("avx2"))))
ROUNDERS(avx512, __attribute__((target("avx512f,avx512bw"))))

/* 0 baseline, 1 AVX2, 2 AVX-512: the widest this CPU has under the cap. */
static int width(void)
{
	enum cpu_isa cap = cpu_isa_level();

	if (cap >= CPU_ISA_AVX512_CORE && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw"))
		return 2;
	return cap >= CPU_ISA_AVX2 && __builtin_cpu_supports("avx2");
}
#else
#define bf16_avx2 bf16_base
#define bf16_avx512 bf16_base
#define fp16_avx2 fp16_base
#define fp16_avx512 fp16_base
static int width(void)
{
	return 0;
}
#endif

void round_bf16_f32(size_t n, const float *x, float *y)
{
	int w = width();

	(w == 2 ? bf16_avx512 : w ? bf16_avx2 : bf16_base)(n, x, y);
}

void round_fp16_f32(size_t n, const float *x, float *y)
{
	int w = width();

	(w == 2 ? fp16_avx512 : w ? fp16_avx2 : fp16_base)(n, x, y);
}
