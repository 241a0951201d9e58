/* train.h - the training loop and its hooks.
 *
 * One step: load the rank's batch, forward, loss, backward (calling
 * on_grad_ready per finished layer range of the arena), before_update,
 * optimizer update, after_update, metrics, checkpoint, should_stop.  The
 * hooks are where the other concerns plug in without touching the loop:
 *   - data parallelism (comm.c, comm_cuda.c): on_grad_ready starts a bucket's
 *     MPI_Iallreduce, before_update waits for all buckets (or, delayed,
 *     swaps in last step's), should_stop agrees on a preemption flag;
 *   - mixed precision (amp.c): before_update unscales the gradients and
 *     returns 1 to skip the update after an overflow, after_update grows
 *     the loss scale.
 * With no hooks (NULL) this is the single-process fp32 trainer.
 *
 * Device: with cfg->cuda the model trains on the GPU be_cuda_init()
 * selected, through a mirror of the host model (model_cuda.h); the
 * loss, metrics, evaluation's accuracy and checkpoints stay on the
 * host, which gets the device's parameters and state back before each
 * checkpoint.  Hooks then see device gradients: data parallelism on the
 * GPU wraps comm.c's hooks (comm_cuda.h).
 */
#ifndef HPT_TRAIN_H
#define HPT_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ckpt_state;
struct job;
struct metrics;
struct model;
struct model_cuda;
struct optim;
struct sbuf;
struct trainer;

struct train_hooks {
	void *ctx;
	/* Once, after the model is built and rank 0 has loaded any
	 * checkpoint, before the first step: data parallelism broadcasts
	 * rank 0's state here.  0 or -1. */
	int (*on_start)(void *ctx, struct trainer *t);
	/* Gradients of arena[lo, hi) are final; 0 or -1 (error in err). */
	int (*on_grad_ready)(void *ctx, size_t lo, size_t hi);
	/* Before the optimizer: 0 update, 1 skip this update, -1 error. */
	int (*before_update)(void *ctx, struct trainer *t);
	int (*after_update)(void *ctx, struct trainer *t);
	/* At every logged step, on every rank, with this rank's samples/s:
	 * data parallelism gathers them into the step record.  0 or -1. */
	int (*on_log)(void *ctx, struct trainer *t, double samples_per_s);
	/* After every step (1-based), on every rank, with its seconds: data
	 * parallelism compares the ranks' times without the wait
	 * (trainer/comm/straggle.h), a collective every few steps.  0 or
	 * -1. */
	int (*on_step_time)(void *ctx, struct trainer *t, int64_t step, double seconds);
	/* At a step boundary: true writes a checkpoint and stops with
	 * HPT_EXIT_PREEMPTED. */
	bool (*should_stop)(void *ctx, struct trainer *t);
	/* Collectives of a few numbers, on every rank: share gives v[0..n)
	 * rank 0's values (before the model is built: the batch shape,
	 * train_plan.h); sum replaces v[0..n) by its sum over the ranks
	 * (every step: the loss and right predictions of the global batch).
	 * 0 or -1. */
	int (*share)(void *ctx, int64_t *v, int n);
	int (*sum)(void *ctx, double *v, int n);
	/* Before the model is built, on every rank: rank 0's text (its
	 * kernel choices) replaces s on the others.  0 or -1. */
	int (*share_text)(void *ctx, struct sbuf *s);
};

struct train_config {
	const struct job *job;
	const char *run_dir;  /* metrics.jsonl and checkpoints/ go here; it exists */
	const char *hash;     /* the spec's SHA-256, hex */
	int rank, world;      /* only rank 0 loads and writes checkpoints and metrics */
	int64_t max_steps;    /* stop after this many updates in total (0 = no limit) */
	bool fresh;           /* ignore and remove earlier checkpoints */
	bool new_global_batch; /* resume at ranks x batch_per_rank, not the checkpoint's */
	bool quiet;           /* no progress lines */
	bool cuda;            /* train on the GPU (be_cuda_init done); else the CPU */
};

/* Runs training to the end (or max_steps, or a stop); prints the final
 * summary on stdout.  Returns an enum hpt_exit status; on failure err
 * holds one line naming what failed (file, step, ...). */
int train_run(const struct train_config *cfg, const struct train_hooks *hooks,
	      struct sbuf *err);

/* From on_start: backward divides every gradient by world (through the
 * loss gradient, in which backward is linear), so the sum over ranks
 * that an allreduce makes is the average with no pass of its own. */
void train_average_gradients_over(struct trainer *t, int world);

/* What hooks may read and change (valid during train_run). */
struct model *train_get_model(struct trainer *t);
struct optim *train_get_optim(struct trainer *t);
struct ckpt_state *train_get_ckpt_state(struct trainer *t);
struct metrics *train_get_metrics(struct trainer *t);
/* The model's device mirror; NULL when the CPU trains. */
struct model_cuda *train_get_model_cuda(struct trainer *t);

#endif
