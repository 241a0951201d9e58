/* cpu_isa.c - the instruction-set level the trainer's CPU kernels may
 * use (cpu_isa.h): its names and the level in force. */
#include "trainer/kernels/cpu_isa.h"

#include <stddef.h>
#include <strings.h>

/* The names hpctrain-train(1) documents; sse41 and avx, which oneDNN
 * also takes, are not: below AVX2 nothing the trainer runs changes. */
static const struct {
	const char *name;
	enum cpu_isa isa;
} isa_names[] = {
	{ "avx2", CPU_ISA_AVX2 },
	{ "avx2_vnni", CPU_ISA_AVX2 },
	{ "avx512_core", CPU_ISA_AVX512_CORE },
	{ "avx512_core_vnni", CPU_ISA_AVX512_CORE },
	{ "avx512_core_bf16", CPU_ISA_AVX512_CORE_BF16 },
	{ "avx512_core_amx", CPU_ISA_AVX512_CORE_AMX },
	{ "all", CPU_ISA_ALL },
};

static enum cpu_isa level = CPU_ISA_ALL;

int cpu_isa_parse(const char *name, enum cpu_isa *isa)
{
	for (size_t i = 0; name && i < sizeof(isa_names) / sizeof(*isa_names); i++)
		if (!strcasecmp(name, isa_names[i].name)) {
			*isa = isa_names[i].isa;
			return 0;
		}
	return -1;
}

const char *cpu_isa_name(enum cpu_isa isa)
{
	switch (isa) {
	case CPU_ISA_BASELINE: return "sse41";
	case CPU_ISA_AVX2: return "avx2";
	case CPU_ISA_AVX512_CORE: return "avx512_core";
	case CPU_ISA_AVX512_CORE_BF16: return "avx512_core_bf16";
	case CPU_ISA_AVX512_CORE_AMX: return "avx512_core_amx";
	default: return "all";
	}
}

enum cpu_isa cpu_isa_level(void)
{
	return level;
}

void cpu_isa_set_level(enum cpu_isa isa)
{
	level = isa;
}
