/* comm.h - data parallelism over MPI: the trainer's hooks that broadcast
 * rank 0's state, allreduce gradient buckets while backward runs, agree
 * on preemption, and abort a stalled job instead of letting it hang.
 *
 * Shell (MPI, signals, clocks).  One struct comm per process.
 *
 *  - MPI is used only when an MPI launcher started the process (mpirun,
 *    or srun --mpi=pmix: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK in
 *    the environment); otherwise rank 0 of 1, no MPI calls at all, and
 *    the same hooks still give delayed updates and preemption.
 *  - Buckets: the gradient arena (reverse layer order, so backward
 *    finishes it front to back) is cut into buckets of
 *    train.allreduce.bucket_mb.  on_grad_ready starts each bucket's
 *    MPI_Iallreduce as soon as backward has passed its end and tests the
 *    ones in flight (progress between layers); before_update waits for
 *    them and reduces the buckets finished by the last layer with a
 *    blocking MPI_Allreduce (nothing is left to overlap, and it is about
 *    twice as fast as libnbc's MPI_Iallreduce here).  The reduction is a
 *    plain sum: on_start has the trainer fold 1/world into the loss
 *    gradient (train_average_gradients_over), so every rank's gradients
 *    leave backward pre-divided and the sum is the average with no pass
 *    over the buckets (exact for power-of-two worlds).
 *  - delayed: the update of step t uses the average of step t-1; step
 *    t's reduction runs in a second buffer behind step t+1's forward and
 *    backward.  The first step of a process makes no update.
 *  - compress fp16|bf16: buckets travel as 16-bit values; the MPI_Op
 *    sums in fp32 and rounds once per partial sum (comm_pack.h states
 *    the error bound).
 *  - Watchdog: every wait polls with MPI_Test; each rank tells the others
 *    (a tiny MPI_Isend) when it enters wait number k, and repeats it every
 *    0.25 s while it waits, so a wait older than stall_timeout_s names
 *    the ranks that never got there or went silent (stopped, dead), then
 *    calls MPI_Abort.  A rank whose launcher died exits at once.
 *  - Synchronised batch norm (train.batchnorm: sync, more than one
 *    rank): on_start gives the model a struct bn_sync (layer.h) whose
 *    allreduce_sum sums a batch-norm layer's per-channel partial sums
 *    (doubles) over all ranks: two small allreduces per batch-norm layer
 *    and step, blocking the layer that asks.  They run on a duplicate of
 *    MPI_COMM_WORLD, so they can never match a gradient bucket's
 *    collective, and are polled through the watchdog like every wait;
 *    the polling also progresses the bucket reductions in flight during
 *    backward.  Batch-norm gamma/beta gradients are bucketed and averaged
 *    like all others; running statistics (the state arena) are never
 *    reduced: with sync they are the same on every rank anyway.
 *  - Slow ranks (straggle.h): after each step, the step's time less its
 *    exposed communication, plus on_grad_ready's own time (starting and
 *    testing reductions waits for no peer), goes into a window; every
 *    window rank 0 compares the ranks and names a persistently slow one.
 *  - Preemption: SIGUSR2, SIGTERM (and the spec's preempt.signal) set a
 *    flag; should_stop agrees on it with one MPI_Iallreduce(MAX) of an
 *    int per step; train.c then has rank 0 write the checkpoint and
 *    comm_finish() makes the others wait for it before exit 75.
 */
#ifndef HPT_COMM_H
#define HPT_COMM_H

#include "trainer/comm/comm_pack.h" // defines: enum comm_pack_kind
#include "trainer/model/layer.h"     // defines: struct bn_sync
#include "trainer/comm/watchdog.h"  // defines: struct watchdog
#include "trainer/comm/straggle.h"  // defines: struct straggle

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;
struct sbuf;
struct train_hooks;

/* One bucket: arena range [lo, hi); req[p] is its request in buffer p
 * (p alternates per step in delayed mode, else 0); started[p] says the
 * reduction was started and not yet finished. */
struct grad_bucket {
	size_t lo, hi;
	void *req[2]; /* MPI_Request, boxed so this header needs no mpi.h */
	bool started[2];
};

struct comm {
	int rank, world;
	bool mpi;          /* MPI_Init_thread was called here */
	const struct job *job;
	float *grads;      /* the model's gradient arena */
	size_t n;
	struct grad_bucket *b;
	size_t nb;
	float *fbuf[2];    /* delayed fp32 buffers */
	uint16_t *hbuf[2]; /* compressed buffers */
	bool compress;
	enum comm_pack_kind pack;
	int64_t step;      /* the step of the current backward */
	bool pending;      /* delayed: a previous step's reduction is in flight */
	struct watchdog wd; /* stall detection of every wait (watchdog.c) */
	/* time */
	double step_comm_s;  /* exposed communication in the current step */
	double step_own_s;   /* the part that waits for no peer (on_grad_ready's
			      * starts and tests), for slow ranks named */
	double last_own_s;   /* step_own_s of the step just done */
	struct straggle sg;  /* slow ranks named (straggle.c) */
	double total_comm_s;
	void *ctl;         /* MPI_Comm for control traffic, boxed; wd borrows it */
	void *op16;        /* MPI_Op of the compressed sum, boxed */
	void *bn_comm;     /* MPI_Comm of the batch-norm allreduces, boxed; NULL: none */
	struct bn_sync bn; /* what the model calls with sync batch norm */
};

/* The flag the preemption signals set (0 or the signal number). */
extern volatile sig_atomic_t comm_preempt_signal;

/* Starts MPI when an MPI launcher started this process (else world 1)
 * and installs the preemption signal handlers.  0, or an enum hpt_exit
 * status with err filled. */
int comm_init(struct comm *c, const struct job *job, struct sbuf *err);
/* Cuts the gradient arena grads[0, n) into buckets and allocates the
 * delayed or compressed buffers (comm_hooks' on_start does this; the
 * benchmark calls it directly).  0, or -1 out of memory. */
int comm_setup(struct comm *c, float *grads, size_t n);
/* Undoes comm_setup (no reduction may be in flight). */
void comm_teardown(struct comm *c);
/* The trainer hooks bound to c. */
void comm_hooks(struct comm *c, struct train_hooks *h);
/* After train_run returned status (and its error was printed): a
 * failure on one rank of several aborts the job (MPI_Abort does not
 * return), so no peer is left waiting; otherwise all ranks meet (the
 * others wait for rank 0's checkpoint).  Returns the status to exit
 * with.  comm_release() finalises MPI. */
int comm_finish(struct comm *c, int status);
void comm_release(struct comm *c);

#endif
