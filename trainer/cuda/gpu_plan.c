/* gpu_plan.c - the decisions of the CUDA path (gpu_plan.h).  Pure core. */
#include "trainer/cuda/gpu_plan.h" // defines: gpu_*
#include "common/sbuf.h"         // defines: struct sbuf, sbuf_addf

#include <strings.h>

int gpu_device_for(int local, int count)
{
	return local % count;
}

int gpu_check_sharing(const char (*bus)[GPU_BUS_ID_LEN], int n, bool share, struct sbuf *err)
{
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			if (strncasecmp(bus[a], bus[b], GPU_BUS_ID_LEN))
				continue;
			if (share)
				return 1;
			sbuf_addf(err,
				  "ranks %d and %d of this node would both run on GPU %.*s, and NCCL "
				  "cannot put two ranks of one job on one GPU: start at most one rank "
				  "per GPU on each node (hpctrain launch gives each rank its own in "
				  "CUDA_VISIBLE_DEVICES), or set " GPU_SHARE_ENV "=1 to share GPUs "
				  "and average the gradients through MPI on the host",
				  a, b, GPU_BUS_ID_LEN, bus[a]);
			return -1;
		}
	return 0;
}

unsigned gpu_alignment(uintptr_t p)
{
	unsigned a = 1;

	while (a < 256 && !(p & a))
		a <<= 1;
	return a;
}

/* Pass 0: deterministic and in the math mode; 1: deterministic; 2: any. */
static bool acceptable(const struct gpu_algo *a, enum be_precision prec, int pass)
{
	if (!a->ok || (prec == BE_FP32 && a->kind != GPU_ALGO_GEMM))
		return false;
	return pass == 2 || (a->deterministic && (pass == 1 || a->math_matches));
}

int gpu_pick_algo(const struct gpu_algo *v, int n, enum be_precision prec)
{
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < n; i++)
			if (acceptable(&v[i], prec, pass))
				return i;
	return -1;
}

enum be_precision gpu_conv_precision(int c, enum be_precision prec)
{
	return c < GPU_LP_MIN_CHANNELS || c % 8 ? BE_FP32 : prec;
}
