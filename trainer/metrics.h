/* metrics.h - training metrics: JSON lines into RUN/metrics.jsonl and a
 * progress line for people.
 *
 * Shell.  Each record is one line of JSON, appended (a resumed run
 * continues the file, which is opened with fileio_open_append: made 0600,
 * never through a link, never another user's file):
 *   {"event":"step","step":S,"total_steps":N,"epoch":E,"loss":L,"accuracy":A,
 *    "lr":LR,"samples_per_s":X,"step_ms":T}
 *   {"event":"epoch","epoch":E,"steps":S,"train_loss":L,"train_accuracy":A,
 *    "test_loss":L,"test_accuracy":A,"samples_per_s":X}
 *   {"event":"data","dataset":D,"path":P,"staged":B,"bytes":N,"seconds":S,
 *    "bytes_per_s":R}
 *   {"event":"resume","checkpoint_step":S,"load_s":X}
 *   {"event":"summary","steps":S,"epochs":E,"test_accuracy":A,"test_loss":L,
 *    "mean_samples_per_s":X,"gflops":G}
 *   {"event":"straggler","step":S,"rank":R,"node":N,"from_step":F,
 *    "slower":X,"cause":"compute"|"communication","compute_ms":C,
 *    "median_compute_ms":MC,"comm_ms":M,"median_comm_ms":MM,
 *    "threshold":T,"steps":K,"action":"warn"|"exclude"}
 * and, in data-parallel runs and on a GPU, the fields described at
 * struct metrics.
 * Floats are written with 9 significant digits, so an fp32 loss reads
 * back bit for bit.  The progress line goes to stderr: rewritten in place
 * on a terminal, one plain line per log interval otherwise.
 */
#ifndef HPT_METRICS_H
#define HPT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct layer_time;
struct sbuf;

/* Where the steps' time goes, beside the layers' own timers (model.h
 * model_layer_times): seconds summed over the steps from from_step on,
 * for metrics.jsonl's "profile" record (train_profile.c
 * gathers them). */
struct step_profile {
	int64_t from_step, steps;
	double step_s;   /* whole steps, as step_ms */
	double data_s;   /* the batch: loader_micro_batch */
	double loss_s;   /* the loss and its gradient, loss scaling */
	double wait_s;   /* before_update: the gradients' allreduce, waited for */
	double update_s; /* unscale, the optimizer, after_update */
};

struct metrics {
	FILE *fp; /* NULL: records are not written (ranks other than 0) */
	bool tty, quiet;
	int64_t total_steps;
	/* Data parallelism (comm.c sets these from its hooks).  ranks > 0
	 * adds "compute_ms" and "comm_ms" (exposed communication: time the
	 * step spent in communication calls that did not overlap compute)
	 * to step records and, to the summary, "ranks",
	 * "global_samples_per_s", "exposed_comm_share" and
	 * "scaling_efficiency" = 1 - exposed_comm_share over the logged
	 * steps: the weak-scaling efficiency when a rank computes as fast
	 * as a lone process (make bench measures the real one). */
	int ranks;
	double comm_ms, sum_comm_ms, sum_step_ms;
	/* Every rank's samples/s at the logged step (comm.c gathers them):
	 * adds "rank_samples_per_s" to step records, so stragglers show. */
	double *rank_rates;
	int nrank_rates;
	/* On a GPU (train.c sets these every step): gpu adds "copy_ms" (the
	 * batch's copy, host and device time) and "sync_ms" (the host's
	 * waits for the GPU) to step records. */
	bool gpu;
	double copy_ms, sync_ms;
	/* The step's global batch (train.c sets it every step):
	 * resume_batch_hash() of its sample indices, as "batch_hash". */
	uint64_t batch_hash;
};

int metrics_open(struct metrics *mt, const char *path, bool quiet, int64_t total_steps,
		 struct sbuf *err);
/* 0, or -1 when the file cannot be written (checked on every record). */
int metrics_step(struct metrics *mt, int64_t step, int64_t epoch, double loss, double acc,
		 double lr, double samples_per_s, double step_ms, bool show);
int metrics_epoch(struct metrics *mt, int64_t epoch, int64_t steps, double train_loss,
		  double train_acc, double test_loss, double test_acc, double samples_per_s);
/* How rank 0 read a stored data set at its start: dataset as the spec
 * names it, path what it read (staged: the node's staged copy), bytes
 * of files read in seconds. */
int metrics_data(struct metrics *mt, const char *dataset, const char *path, bool staged,
		 uint64_t bytes, double seconds);
/* Rank 0 resumed from the checkpoint of step, read in load_s seconds:
 * a recovery's checkpoint load (launcher/runs/attempt_restart.h). */
int metrics_resume(struct metrics *mt, int64_t step, double load_s);
int metrics_summary(struct metrics *mt, int64_t steps, int64_t epochs, double test_loss,
		    double test_acc, double samples_per_s, double gflops);
/* Where the steps' time went (train_profile.c), as means per step:
 *   {"event":"profile","steps":N,"step_ms":T,"layers":[{"layer":NAME,
 *    "forward_ms":F,"backward_ms":B,"gflops":G},...],"data_ms":D,
 *    "loss_ms":L,"comm_wait_ms":W,"update_ms":U,"other_ms":O}
 * G is the layer's FLOPs over its time at samples per step (0 for
 * layers whose work is not FLOPs); O is the step less all the rest. */
int metrics_profile(struct metrics *mt, const struct step_profile *p,
		    const struct layer_time *layers, size_t n, double samples_per_step);
/* A slow rank named (trainer/comm/straggle.c, common/straggler.h): the
 * "straggler" record above, S the step it was named at, node NULL or
 * the node's name; threshold, steps and action are the spec's.  0 or
 * -1 (also on ranks that write nothing: 0). */
struct straggler_hit;
int metrics_straggler(struct metrics *mt, const struct straggler_hit *h, const char *node,
		      double threshold, int64_t steps, const char *action);
int metrics_close(struct metrics *mt);

#endif
