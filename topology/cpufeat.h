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

struct sbuf;

enum cpufeat {
	CPUFEAT_AVX2 = 1u << 0,
	CPUFEAT_FMA = 1u << 1,
	CPUFEAT_AVX512F = 1u << 2,
	CPUFEAT_AVX512_BF16 = 1u << 3,
	CPUFEAT_AVX512_FP16 = 1u << 4,
	CPUFEAT_AMX_TILE = 1u << 5,
	CPUFEAT_AMX_BF16 = 1u << 6,
};

#define CPUFEAT_COUNT 7
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

/* Appends the vendor names of the features in mask, lowest bit first,
 * joined by sep; nothing when mask is 0. */
void cpufeat_format(unsigned mask, const char *sep, struct sbuf *out);

#endif
