/* cpu_internal.h - what the CPU backend's files share: oneDNN's engine
 * and stream, the ISA facts backend_cpu.c sets at start, and the
 * plumbing of cpu_prim.c (primitives with their scratchpads, planned
 * reorders between the layers' plain layouts and a kernel's own, and the
 * check that refuses reference implementations).  Not for the layers:
 * they see backend.h only. */
#ifndef HPT_CPU_INTERNAL_H
#define HPT_CPU_INTERNAL_H

#include "trainer/cpu/backend.h" // defines: struct be_kernel
#include "common/sbuf.h"        // defines: sbuf_addf (in DNNL_TRY)

#include <dnnl.h>
#include <stdbool.h>

extern dnnl_engine_t cpu_engine;
extern dnnl_stream_t cpu_stream;
/* The CPU (as capped) has bf16 dot products: bf16 runs natively. */
extern bool cpu_bf16_native;
/* Kernel tuning (tune.h): on unless HPCTRAIN_KERNELS=fixed; the
 * seconds it has spent in this process, planning and timing. */
extern bool cpu_tune_on;
extern double cpu_tune_spent;
/* The measured choices (cpu_tune.c): the key of a layer (op "conv" or
 * "linear", its precision and shape) on this CPU, oneDNN, ISA and
 * thread count; the index of the candidate that won for key, rank 0's
 * or cached, with its measured text in tuned, or -1; and recording the
 * choice a layer was planned with (cache_it: a complete comparison,
 * tune_is_complete, that the cache keeps). */
void cpu_tune_key(const char *op, enum be_precision prec, const int *shape, size_t n,
		  char *buf, size_t size);
int cpu_tune_lookup(const char *key, char *tuned, size_t size);
void cpu_tune_record(const char *key, int choice, const char *tuned, bool cache_it);
/* The last reference implementation plan_check() refused, for errors. */
extern char cpu_refused[64];

/* oneDNN's effective instruction set, e.g. "avx512_core_bf16". */
const char *cpu_isa_in_use(void);
/* Fills k->why with the reason k->prec is emulated rather than native. */
void cpu_why_emulated(struct be_kernel *k);

#define DNNL_TRY(call)                                                                     \
	do {                                                                               \
		dnnl_status_t st_ = (call);                                                \
		if (st_ != dnnl_success) {                                                 \
			sbuf_addf(err, "oneDNN: %s failed with status %d (%s:%d)", #call,  \
				  (int)st_, __FILE__, __LINE__);                           \
			goto fail;                                                         \
		}                                                                          \
	} while (0)

/* A primitive with its user-managed scratchpad. */
struct prim {
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t p;
	dnnl_memory_t scratch;
	void *scratch_buf;
};

/* A planned conversion between the plain layout and a primitive's. */
struct relayout {
	struct prim r;          /* no primitive when the layouts agree */
	dnnl_memory_t plain, internal;
	float *buf;             /* the internal copy */
};

/* dnnl_unimplemented (and the name in cpu_refused) for a reference
 * implementation, else dnnl_success. */
dnnl_status_t plan_check(const_dnnl_primitive_desc_t pd);
/* The implementation name of a planned primitive, e.g. "brg:avx512_core". */
void impl_name(const_dnnl_primitive_desc_t pd, char *buf, size_t size);

/* Plans op (with hint for backward passes, and post-ops po) and its
 * scratchpad; refuses reference implementations. */
dnnl_status_t prim_create(struct prim *pr, const_dnnl_op_desc_t op,
			  const_dnnl_primitive_desc_t hint, const dnnl_post_ops_t po);
void prim_release(struct prim *pr);
/* Runs pr with args plus its scratchpad, then waits. */
dnnl_status_t prim_run(struct prim *pr, int nargs, dnnl_exec_arg_t *args);
/* A memory object whose handle is set before each use. */
dnnl_status_t mem_create(dnnl_memory_t *m, const dnnl_memory_desc_t *md);
dnnl_status_t mem_set(dnnl_memory_t m, const void *p);

/* Plans the conversion from -> to; to_internal: the primitive's side is
 * to (an input), else from (an output). */
dnnl_status_t relayout_create(struct relayout *rl, const dnnl_memory_desc_t *from,
			      const dnnl_memory_desc_t *to, int to_internal);
void relayout_release(struct relayout *rl);
/* The memory a primitive should read for the plain buffer p: p itself
 * when the layouts agree, else the internal copy converted from p. */
dnnl_status_t relayout_in(struct relayout *rl, const float *p, dnnl_memory_t *out);
/* The memory a primitive should write for the plain buffer p; then
 * relayout_out_finish() copies it out to p. */
dnnl_status_t relayout_out_mem(struct relayout *rl, float *p, dnnl_memory_t *out);
dnnl_status_t relayout_out_finish(struct relayout *rl);

#endif
