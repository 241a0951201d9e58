/* comm_pack.c - fp32 <-> fp16/bf16 for compressed gradient allreduce.
 * Core.  Bit-level conversions (no _Float16, no F16C) so the result is
 * the same on every x86-64 and aarch64 build; the cost (a few ns per
 * element) is small next to moving the bytes.  See comm_pack.h. */
#include "trainer/comm/comm_pack.h" // defines: comm_pack, comm_unpack, comm_pack_sum

#include <string.h>

static uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float float_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint16_t to_bf16(float f)
{
	uint32_t u = bits_of(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1); /* round to nearest even */
	return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
	return float_of((uint32_t)h << 16);
}

/* IEEE binary16, round to nearest even, with subnormals. */
static uint16_t to_fp16(float f)
{
	uint32_t u = bits_of(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;

	if (a > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);
	if (a >= 0x477ff000u) /* >= 65520 rounds to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 0x38800000u) { /* below 2^-14: subnormal or zero */
		/* value * 2^24 rounded: add 0.5 (as a float at exponent 2^-1 of
		 * the subnormal grid) and let the FPU round */
		float v = float_of(a) + 0.5f;

		return (uint16_t)(sign | (bits_of(v) - 0x3f000000u));
	}
	a += 0xc8000fffu + ((a >> 13) & 1); /* rebias 127 -> 15, round */
	return (uint16_t)(sign | (a >> 13));
}

static float from_fp16(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;

	if (e == 0x1f)
		return float_of(sign | 0x7f800000u | (m << 13));
	if (e == 0) { /* subnormal: m * 2^-24 */
		float v = (float)m * 5.9604644775390625e-8f;

		return sign ? -v : v;
	}
	return float_of(sign | ((e + 112) << 23) | (m << 13));
}

void comm_pack(enum comm_pack_kind k, const float *src, uint16_t *dst, size_t n)
{
	if (k == COMM_PACK_BF16)
		for (size_t i = 0; i < n; i++)
			dst[i] = to_bf16(src[i]);
	else
		for (size_t i = 0; i < n; i++)
			dst[i] = to_fp16(src[i]);
}

void comm_unpack(enum comm_pack_kind k, const uint16_t *src, float *dst, size_t n)
{
	if (k == COMM_PACK_BF16)
		for (size_t i = 0; i < n; i++)
			dst[i] = from_bf16(src[i]);
	else
		for (size_t i = 0; i < n; i++)
			dst[i] = from_fp16(src[i]);
}

void comm_pack_sum(enum comm_pack_kind k, const uint16_t *in, uint16_t *inout, size_t n)
{
	if (k == COMM_PACK_BF16)
		for (size_t i = 0; i < n; i++)
			inout[i] = to_bf16(from_bf16(in[i]) + from_bf16(inout[i]));
	else
		for (size_t i = 0; i < n; i++)
			inout[i] = to_fp16(from_fp16(in[i]) + from_fp16(inout[i]));
}

double comm_pack_unit(enum comm_pack_kind k)
{
	return k == COMM_PACK_BF16 ? 1.0 / 256 : 1.0 / 2048;
}
