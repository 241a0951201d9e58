/* comm_cuda.h - data parallelism for a model on the GPU: the device of
 * each rank, an NCCL communicator bootstrapped over MPI, and trainer
 * hooks that wrap comm.c's.
 *
 * Shell (MPI, CUDA, NCCL).  comm.c stays in charge of what is host-side
 * anyway: starting MPI, broadcasting rank 0's state on_start (train.c
 * uploads it to the device afterwards), the preemption agreement
 * (should_stop), metrics (after_update) and the final barrier.  The
 * gradient exchange moves to the device: on_grad_ready starts an NCCL
 * sum (be_cuda_allreduce_start; the gradients are pre-divided by world,
 * comm.h) of each bucket of the device
 * gradient arena as soon as backward has passed it, before_update
 * starts the rest, makes the compute stream wait for them and waits for
 * the stream itself, under comm.c's stall watchdog.  Buckets are cut as
 * comm.c cuts them (train.allreduce.bucket_mb, arena prefix order); with
 * overlap false all start in before_update.
 *
 * The device of a rank is its local rank (MPI_COMM_TYPE_SHARED) modulo
 * the visible devices: under `hpctrain launch` CUDA_VISIBLE_DEVICES
 * holds the rank's one GPU, so that is device 0.  NCCL cannot have two
 * ranks on one GPU, so the ranks of each node compare their GPUs' PCI
 * bus ids first and refuse (HPT_EXIT_BAD_SPEC) when two would share
 * one, unless HPCTRAIN_GPU_SHARE=1 asks for it: then no NCCL at all,
 * before_update copies the device gradients to the host, has comm.c's
 * hooks average them there and copies them back (slow; for tests and
 * small nodes).
 *
 * Not on the GPU (refused with HPT_EXIT_BAD_SPEC): allreduce.delayed and
 * allreduce.compress (they change the arithmetic even on one rank) and
 * batchnorm: sync on more than one rank.
 *
 * Built without nvcc, comm_cuda_none.c agrees on the CPU and fails to
 * start.
 */
#ifndef HPT_COMM_CUDA_H
#define HPT_COMM_CUDA_H

#include "trainer/train.h" // defines: struct train_hooks

#include <stdbool.h>
#include <stddef.h>

struct comm;
struct sbuf;

struct comm_cuda {
	struct comm *c;           /* comm.c's state: MPI, watchdog, preemption */
	struct train_hooks inner; /* comm.c's hooks, wrapped */
	int device;               /* the CUDA device of this rank */
	bool nccl;                /* more than one rank: gradients go through NCCL */
	bool host;                /* ranks share a GPU: gradients go through comm.c */
	bool overlap;             /* train.allreduce.overlap */
	float *grads;             /* the device gradient arena (from on_start) */
	size_t n, cap;            /* its size; bucket size in floats */
	size_t next;              /* the first bucket not yet started this step */
};

/* *cuda becomes true on every rank only if it was true on every rank
 * (one MPI_Allreduce when MPI runs with more than one rank): a job
 * whose ranks disagree trains on the CPU rather than hang with half of
 * its ranks in NCCL.  0, or an enum hpt_exit status with err. */
int comm_cuda_agree(struct comm *c, bool *cuda, struct sbuf *err);
/* Refuses what the GPU path lacks (HPT_EXIT_BAD_SPEC), selects this
 * rank's device (be_cuda_init) and, with more than one rank, joins the
 * NCCL communicator (HPT_EXIT_UNAVAILABLE when either fails).  Call
 * after comm_init; collective when MPI runs.  0 or a status with err. */
int comm_cuda_init(struct comm_cuda *cc, struct comm *c, struct sbuf *err);
/* h holds comm_hooks(c) on entry and the wrapped hooks on return. */
void comm_cuda_hooks(struct comm_cuda *cc, struct train_hooks *h);
/* NCCL and the CUDA backend down; accepts a zeroed struct. */
void comm_cuda_release(struct comm_cuda *cc);

#endif
