/* progress.h - how far a run has come, from the tail of its metrics.jsonl.
 *
 * Core (progress_parse, progress_format: text in, text out) and one
 * reader (progress_load).  status reads the last step record (step,
 * total_steps, samples_per_s, step_ms), the last epoch record and the
 * summary: enough for a progress line and a sweep's table, without
 * reading a long run's whole file.
 */
#ifndef HPT_PROGRESS_H
#define HPT_PROGRESS_H

#include "common/data_read.h" // defines: struct data_read

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* The tail status reads: a 10,000-step run logs well under this per
 * hundred steps. */
#define PROGRESS_TAIL_BYTES (64 * 1024)

struct run_progress {
	bool step_seen;
	int64_t step, total_steps;       /* total 0: not said */
	double samples_per_s, step_ms;
	bool epoch_seen;
	int64_t epoch;
	double epoch_test_accuracy, epoch_test_loss;
	bool summary_seen;
	double test_accuracy, test_loss, mean_samples_per_s;
	struct data_read data;           /* the latest "data" record seen */
};

/* Reads the records of a metrics.jsonl text (or its tail: a first,
 * partial line is skipped, as are lines that are not JSON objects). */
void progress_parse(const char *text, size_t len, struct run_progress *p);

/* Seconds left at the last logged pace, or -1 when unknown. */
double progress_eta_s(const struct run_progress *p);

/* One point of a sweep's array, for the sweep's ETA. */
struct queued_point {
	const struct run_progress *prog;
	bool done;      /* ended: nothing left */
	bool running;   /* holds one of the array's slots */
};

/* Seconds until the last of n points of one array ends, when at most cap
 * run at once (0: no cap) and each goes at its logged pace; a point not
 * started yet takes as long as the started points' mean.  -1 when no
 * point has logged a pace yet.  Slurm may start fewer than cap: the
 * figure is what the array's own cap allows, not a forecast of the
 * cluster. */
double progress_queue_eta_s(const struct queued_point *pt, size_t n, size_t cap);

/* "1m12s": a duration as the progress line writes it; "-" for one that
 * is negative or not a number, "2.78e+304h" for one too long to count
 * (a pace in metrics.jsonl may be anything). */
void progress_add_duration(struct sbuf *out, double s);

/* "RUNNING  step 120/500 (24%)  2345 samples/s  ETA 1m12s"; a rate that
 * is not finite prints as "-", a huge one in %g form (sbuf_add_number). */
void progress_format(const char *state, const struct run_progress *p, struct sbuf *out);

/* The final (or, before the summary, latest) test accuracy and loss;
 * false when the run has not evaluated yet. */
bool progress_final(const struct run_progress *p, double *acc, double *loss);

/* The head status reads for the trainer's "data" record, written before
 * the first step: a long run's tail no longer holds it. */
#define PROGRESS_HEAD_BYTES (16 * 1024)

/* Reads DIR/metrics.jsonl's tail into p (zeroed when there is none),
 * and its head for a "data" record the tail lacks (a resumed run's
 * later one, when in the tail, wins). */
void progress_load(const char *dir, struct run_progress *p);

#endif
