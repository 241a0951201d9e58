/* report_data.h - a run's metrics.jsonl as series, for hpctrain report.
 *
 * Core: text in, arrays out (no I/O but report_read's, from a stream
 * its caller opened).  The format is the trainer's (see
 * trainer/metrics.h and hpctrain-report(1), METRICS FORMAT), which any
 * program may write.  A requeued run appends to its file and logs again
 * the steps after the checkpoint it resumed from: a step record at or
 * before the last one starts over from there, so the last record of a
 * step wins and the steps stay in order.  Lines that are not JSON
 * objects (a torn last line of a killed run), and records with a figure
 * no run could log (metrics_line_plausible: a step_ms of 1e308, a
 * negative step), are counted and skipped; a record glued onto a torn
 * line (the resumed run's first) is kept.
 * A run's attempts are read into one report_run, one file after the
 * other (report_run_attempt, report_read_more): its timeline says where
 * each went on, and where Slurm requeued it or its size changed.
 */
#ifndef HPT_REPORT_DATA_H
#define HPT_REPORT_DATA_H

#include "common/data_read.h" // defines: struct data_read
#include "launcher/report/report_timeline.h" // defines: struct report_timeline

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One logged step.  NAN where the record lacks the field. */
struct report_step {
	int64_t step, epoch;
	double loss, accuracy, lr, samples_per_s, step_ms, comm_ms;
	double global_batch;  /* samples of the step over all ranks (NAN: not said) */
	int64_t world_size;   /* the ranks it ran on (0: not said) */
	int64_t attempt;      /* HPCTRAIN_ATTEMPT it ran in (0: not said) */
	double *rank_rates; /* owned; nranks entries, or NULL */
	size_t nranks;
};

/* One epoch's evaluation, at the step it ended on. */
struct report_epoch {
	int64_t epoch, step;
	double train_loss, train_accuracy, test_loss, test_accuracy;
};

struct report_run {
	struct report_step *steps; /* by step, each step once */
	size_t nsteps;
	struct report_epoch *epochs; /* by epoch, each once */
	size_t nepochs;
	bool summary;          /* a summary record was found */
	double test_accuracy, test_loss, mean_samples_per_s, global_samples_per_s;
	int64_t ranks;         /* the summary's ranks (0: not said) */
	bool capped;           /* the last file read went on past METRICS_FILE_MAX
				* (common/metrics_line.h): the rest was not read */
	size_t bad_lines;      /* lines that are not JSON objects, or records
				* of implausible figures, skipped */
	size_t restarts;       /* requeues: times the steps went back (a resume)
				* or the restart changed within an attempt */
	size_t superseded;     /* step records a restart replaced */
	struct data_read data; /* the trainer's last "data" record (how fast it read) */
	struct report_timeline timeline; /* requeues, attempts, resizes */
	/* The trainer's "straggler" records (slow ranks named), as read:
	 * an array (owned), launcher/report/report_straggler.h says them. */
	json_t *stragglers;
};

/* Parses text (len bytes) into *out.  Always succeeds. */
void report_parse(const char *text, size_t len, struct report_run *out);

/* The same, one line at a time: report_run_init, then report_add_line
 * for each line (without its newline). */
void report_run_init(struct report_run *r);
void report_add_line(struct report_run *r, const char *line, size_t n);

/* Reads metrics.jsonl from fp, a line at a time, into *out: memory goes
 * to the records kept and the longest line, not to the file, so a long
 * run's file of any size can be read.  A line over REPORT_LINE_MAX is
 * dropped unread and counted in bad_lines (nothing the trainer writes
 * comes near it: 100,000 ranks' rates are under 2 MiB).  It stops after
 * METRICS_FILE_MAX bytes, setting capped when the file goes on (the
 * caller warns, naming it: metrics_line_say_capped).  0, or -1 when
 * reading failed (ferror; errno says why); *out holds what was read. */
#define REPORT_LINE_MAX (64u << 20)
int report_read(FILE *fp, struct report_run *out);
/* The same, onto what *out holds already (report_run_init first): the
 * next attempt's file, after report_run_attempt. */
int report_read_more(FILE *fp, struct report_run *out);
/* The records that follow are attempt's (1 is the run's own directory):
 * the first step of each attempt after one that logged is an attempt
 * event, and its steps going back are not a requeue. */
void report_run_attempt(struct report_run *r, int64_t attempt);
void report_run_release(struct report_run *r);

/* Whether any step has that field (comm_ms, rank rates). */
bool report_has_comm(const struct report_run *r);
size_t report_max_ranks(const struct report_run *r);

/* The run's throughput: global samples/s from the summary, else the mean
 * per-rank samples/s times ranks; NAN without a summary. */
double report_throughput(const struct report_run *r, int64_t ranks);

#endif
