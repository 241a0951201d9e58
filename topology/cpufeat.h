/* cpufeat.h - the CPU instruction-set features that decide how fast a
 * node trains: which vector units it has, and which low precisions it
 * computes natively.
 *
 * Core (pure): strings in, a bitmask out.  The strings are Linux
 * /proc/cpuinfo "flags" lines (space-separated kernel names such as
 * "avx2 fma avx512f"), which probe.c reads for the live node and keeps in
 * a saved topology as the root's HPCTrainCPUFlags info.  Nothing here
 * reads a file or runs cpuid.
 */
#ifndef HPT_CPUFEAT_H
#define HPT_CPUFEAT_H

#include <stdbool.h>

struct sbuf;

enum cpufeat {
	CPUFEAT_AVX2 = 1u << 0,
	CPUFEAT_FMA = 1u << 1,
	CPUFEAT_AVX512F = 1u << 2,
	CPUFEAT_AVX512_BF16 = 1u << 3,
	CPUFEAT_AVX512_FP16 = 1u << 4,
	CPUFEAT_AMX_TILE = 1u << 5,
	CPUFEAT_AMX_BF16 = 1u << 6,
	CPUFEAT_AMX_FP16 = 1u << 7,
};

#define CPUFEAT_COUNT 8
#define CPUFEAT_ALL ((1u << CPUFEAT_COUNT) - 1)

struct cpufeat_desc {
	unsigned bit;
	const char *flag; /* the kernel's name, which JSON keys use: "avx512_bf16" */
	const char *name; /* the vendor's name, for people: "AVX512-BF16" */
};

/* Every feature, lowest bit first. */
extern const struct cpufeat_desc cpufeat_descs[CPUFEAT_COUNT];

/* The features a flags string names.  Flags match whole words only
 * ("avx512f" is not "avx512fp16"); unknown flags are ignored. */
unsigned cpufeat_parse(const char *flags);

/* The flags that every processor of a /proc/cpuinfo text lists, space-
 * separated, in the first processor's order: what a process may use
 * wherever it is scheduled.  NULL (nothing allocated) when the text has
 * no "flags" line, as on non-x86 machines; otherwise free() it. */
char *cpufeat_common_flags(const char *cpuinfo);

/* The features of which a precision needs one to be computed natively:
 * "bf16" AVX512-BF16 or AMX-BF16, "fp16" AVX512-FP16; 0 for "fp32" and
 * any other name (nothing to check). */
unsigned cpufeat_native_for(const char *precision);

/* How fast bf16 can train on a CPU against fp32, from its flags:
 *  AMX       AMX-BF16 tiles, several times the fp32 FMA rate;
 *  DOT_2X    a native bf16 dot product at twice the fp32 FMA rate
 *            (AVX512-BF16 on AMD Zen 4/5, told apart by AMD's sse4a);
 *  SAME_RATE a native dot product at the fp32 FMA rate (Intel
 *            AVX512-BF16 without AMX: vdpbf16ps issues on one port, FMA
 *            on two), so conversions make native bf16 no faster than fp32;
 *  EMULATED  no bf16 arithmetic: fp32 kernels on bf16-rounded inputs. */
enum cpufeat_bf16_speed {
	CPUFEAT_BF16_EMULATED,
	CPUFEAT_BF16_SAME_RATE,
	CPUFEAT_BF16_DOT_2X,
	CPUFEAT_BF16_AMX,
};

enum cpufeat_bf16_speed cpufeat_bf16_speed(const char *flags);
/* "amx", "dot_2x", "same_rate", "emulated": the JSON value. */
const char *cpufeat_bf16_speed_key(enum cpufeat_bf16_speed s);
/* One phrase for people, e.g. "native dot product at the fp32 FMA rate
 * (Intel AVX512-BF16 without AMX)". */
const char *cpufeat_bf16_speed_text(enum cpufeat_bf16_speed s);
/* Whether bf16 can train faster than fp32 at this speed class. */
bool cpufeat_bf16_can_win(enum cpufeat_bf16_speed s);

/* Appends the vendor names of the features in mask, lowest bit first,
 * joined by sep; nothing when mask is 0. */
void cpufeat_format(unsigned mask, const char *sep, struct sbuf *out);

#endif
