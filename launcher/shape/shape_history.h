/* shape_history.h - a job's past runs as the points its model is fitted
 * to (shape_model.h).
 * Shell: lists the runs under the spec's output.dir/<name>/ and reads
 * each one's resolved.yaml and metrics.jsonl.
 * Each stretch of a run's steps at one world size (the world_size of
 * its step records: a requeue or a resubmission may run on fewer nodes
 * than the spec asked) is a point of its own, filed under the shape it
 * ran at, not the one its spec asked for.
 * A past run counts when it ran the same program the same way: the same
 * command, or for the bundled trainer the same model, data set,
 * precision, device and batch per rank.  Its shape may differ: that is
 * what the fit needs.  The format read is METRICS FORMAT of
 * hpctrain-report(1), which any program may write.
 */
#ifndef HPT_SHAPE_HISTORY_H
#define HPT_SHAPE_HISTORY_H

#include "common/sbuf.h"                // defines: struct sbuf
#include "launcher/shape/shape_check.h" // defines: struct shape_check
#include "launcher/shape/shape_model.h" // defines: struct shape_point

#include <stddef.h>
#include <stdint.h>

struct job;

struct shape_history {
	struct shape_point *v;    /* one per run (or stretch of a run at one
				   * world size) with step records */
	size_t n;
	double samples_per_epoch; /* from a run's epoch records; 0: none */
	int64_t steps;            /* the most steps a run logged (its last step) */
	struct sbuf shapes;       /* "1x1 (2 runs), 2x1 (1 run)" */
	size_t skipped;           /* runs of the name that ran otherwise */
	struct sbuf unread;       /* a line per run not read: its metrics.jsonl
				   * ("cannot read X: it is a FIFO, not a regular
				   * file"), or the run another user's ("refusing
				   * X: it belongs to uid 65534, not to uid 0") */
	size_t nunread;
	struct sbuf capped;       /* a line per run whose metrics.jsonl was read
				   * only up to METRICS_FILE_MAX (metrics_line.h) */
};

/* The point of one run's metrics on nodes of ranks_per_node: the median
 * step and communication times of its step records but the first (its
 * warm-up), and the global batch and one rank's samples a step where
 * logged.  0, or -1 when it logged no step time. */
struct report_run;
int shape_history_point(const struct report_run *r, unsigned nodes, unsigned ranks_per_node,
			struct shape_point *out);

/* Loads the points of job's past runs.  A missing output.dir/<name>
 * is no error: there are no points.  0, or -1 with err (a directory
 * that cannot be read). */
int shape_history_load(const struct job *job, struct shape_history *out, struct sbuf *err);
void shape_history_release(struct shape_history *h);

/* A run of the job that submit --shape auto planned: its directory, its
 * job and the prediction (start and end left 0, for Slurm's times). */
struct shape_planned {
	char *dir;
	unsigned long job_id;
	struct shape_check check;
};

/* One run (or attempt) directory: 0 with *out filled (out->dir owned)
 * when its submit.json holds a plan, else -1. */
int shape_history_planned_run(const char *dir, struct shape_planned *out);

/* The planned runs (and attempts) under output.dir/<name>/, in no
 * particular order: *v allocated, each dir owned.  Runs without a plan
 * in their submit.json are left out.  0 always (an unreadable run is
 * one without a plan). */
int shape_history_planned(const struct job *job, struct shape_planned **v, size_t *n);
void shape_history_planned_free(struct shape_planned *v, size_t n);

#endif
