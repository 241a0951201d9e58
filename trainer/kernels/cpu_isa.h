/* cpu_isa.h - the instruction-set level the trainer's CPU kernels may use.
 *
 * One level governs both oneDNN and the trainer's own kernels
 * (conv1pool's AVX2 path, the choice between native and emulated bf16),
 * so capping it on one machine reproduces what a lower CPU runs.  The
 * backend sets it once at start from oneDNN's effective ISA, which is
 * this CPU's best capped by HPCTRAIN_MAX_CPU_ISA or ONEDNN_MAX_CPU_ISA;
 * until then it is "all" (only the hardware limits).  The ladder is the
 * one HPC clusters mix: AVX2 (Zen 2/3, Haswell), AVX-512 (Skylake,
 * Cascade Lake, Ice Lake), AVX512-BF16 (Cooper Lake, Zen 4/5), AMX
 * (Sapphire and Emerald Rapids). */
#ifndef HPT_CPU_ISA_H
#define HPT_CPU_ISA_H

enum cpu_isa {
	CPU_ISA_BASELINE,         /* x86-64 with SSE4.1 at most */
	CPU_ISA_AVX2,             /* AVX2 + FMA */
	CPU_ISA_AVX512_CORE,      /* AVX-512 F/BW/VL/DQ */
	CPU_ISA_AVX512_CORE_BF16, /* + AVX512-BF16: native bf16 dot products */
	CPU_ISA_AVX512_CORE_AMX,  /* + AMX-BF16 tiles */
	CPU_ISA_ALL,              /* no cap */
};

/* Parses a cap as oneDNN spells it (case-insensitive): avx2, avx2_vnni,
 * avx512_core, avx512_core_vnni, avx512_core_bf16, avx512_core_amx or
 * all; the VNNI rungs add nothing the trainer uses and map to the rung
 * below them.  Returns 0, or -1 for another name (oneDNN's sse41 and avx
 * too: hpctrain-train(1) documents the list above). */
int cpu_isa_parse(const char *name, enum cpu_isa *isa);
/* The canonical name: "avx2", "avx512_core", ..., "all". */
const char *cpu_isa_name(enum cpu_isa isa);
/* The names cpu_isa_parse() takes, for error messages. */
#define CPU_ISA_NAMES "avx2, avx512_core, avx512_core_bf16, avx512_core_amx, all"

/* The level in force; the backend's start sets it. */
enum cpu_isa cpu_isa_level(void);
void cpu_isa_set_level(enum cpu_isa isa);

#endif
