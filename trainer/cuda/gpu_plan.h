/* gpu_plan.h - the decisions of the CUDA path, free of CUDA so that they
 * build and are tested everywhere (test_gpu_plan runs without a GPU):
 * which GPU a rank takes and whether two ranks of a node would share
 * one, the operand alignment cuBLASLt is told, which cuDNN algorithms a
 * precision may use, and the precision a convolution runs at.
 *
 * Pure core: backend_cuda.cu and comm_cuda.c gather the facts from CUDA,
 * cuDNN and MPI and act on the answers.
 */
#ifndef HPT_GPU_PLAN_H
#define HPT_GPU_PLAN_H

#include "trainer/cpu/backend.h" // defines: enum be_precision

#include <stdbool.h>
#include <stdint.h>

struct sbuf;

/* ---- devices ---- */

/* The GPU a rank takes among the count it sees: its rank on the node
 * modulo count (under hpctrain launch each rank sees its own GPU alone,
 * so that is device 0).  count > 0. */
int gpu_device_for(int local, int count);

/* Set to 1, it lets ranks of a node share a GPU (gpu_check_sharing). */
#define GPU_SHARE_ENV "HPCTRAIN_GPU_SHARE"

/* A PCI bus id as cudaDeviceGetPCIBusId writes it ("0000:3b:00.0"). */
#define GPU_BUS_ID_LEN 32

/* NCCL refuses a communicator with two ranks on one GPU ("duplicate
 * GPU"), whatever CUDA_VISIBLE_DEVICES made of the device numbers, so
 * the node's ranks compare the bus ids of their GPUs (bus[i]: local rank
 * i's).  0: every rank has its own GPU.  1: some share one and share
 * says that is wanted: the gradients must then go through MPI on the
 * host.  -1: some share one, err says which ranks and how to avoid it. */
int gpu_check_sharing(const char (*bus)[GPU_BUS_ID_LEN], int n, bool share, struct sbuf *err);

/* ---- cuBLASLt ---- */

/* The alignment in bytes cuBLASLt may assume of an operand at p: the
 * largest power of two dividing the address, at most 256 (cuBLASLt's
 * default assumption, which a view into an arena may not meet). */
unsigned gpu_alignment(uintptr_t p);

/* ---- cuDNN ---- */

enum gpu_algo_kind {
	GPU_ALGO_GEMM,     /* implicit, precomputed or explicit GEMM, direct */
	GPU_ALGO_WINOGRAD, /* fused or not */
	GPU_ALGO_FFT,      /* whole or tiled */
};

/* What cuDNN's heuristic says of one algorithm, in its order. */
struct gpu_algo {
	bool ok;            /* status success: it runs this convolution */
	bool deterministic; /* the same bits every time */
	bool math_matches;  /* rated in the descriptor's math mode */
	enum gpu_algo_kind kind;
};

/* The algorithm a convolution uses, or -1 when none may: the first
 * usable one that is deterministic and rated in the descriptor's math
 * mode, else the first deterministic one, else the first at all (exact
 * resume needs the same bits for the same step; some backward
 * algorithms add with atomics).  At fp32 never Winograd nor FFT: their
 * transforms lose more than the 1e-5 that fp32 on the GPU promises
 * against the CPU (the implicit GEMM algorithms are always there). */
int gpu_pick_algo(const struct gpu_algo *v, int n, enum be_precision prec);

/* Below this many input channels a convolution runs fp32 at every
 * precision, as on the CPU (backend_cpu.c): there is too little
 * reduction for tensor cores to gain, and the GPU and CPU then round the
 * same convolutions. */
#define GPU_LP_MIN_CHANNELS 16

/* The precision a convolution of c input channels runs at when the
 * model asks for prec: fp32 below GPU_LP_MIN_CHANNELS or when c is no
 * multiple of 8 (cuDNN's tensor-core NHWC kernels need C % 8 == 0, and
 * for a one-channel first layer it may have no bf16/fp16 engine). */
enum be_precision gpu_conv_precision(int c, enum be_precision prec);

#endif
