/* report_attempts.h - a run's attempts for `hpctrain report`: their
 * metrics.jsonl read as one timeline, and each one's recorded end.
 *
 * Shell: lists RUN/attempts/, opens each attempt's metrics.jsonl with
 * fileio_open_regular (a FIFO must not hang the report) and reads its
 * end.json (attempt_end_load).  After a lost node the run goes on in
 * RUN/attempts/2 from the run's checkpoints: read alone, that attempt's
 * file starts at the checkpoint's step and says nothing of the first.
 * So a run is read from attempt 1 (RUN itself) on, each attempt's file
 * after the last (report_data keeps the last record of a step, and its
 * timeline marks where each attempt went on); an attempt directory
 * named on its own is read alone.
 */
#ifndef HPT_REPORT_ATTEMPTS_H
#define HPT_REPORT_ATTEMPTS_H

#include "launcher/runs/attempt_end.h" // defines: struct attempt_end

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct report_run;
struct rundir;
struct sbuf;

struct report_attempt {
	int attempt;            /* 1, 2, ... */
	char *dir;              /* owned: RUN, or RUN/attempts/N */
	bool metrics;           /* its metrics.jsonl was read */
	bool ended;             /* it has an end.json, in end */
	struct attempt_end end;
};

/* The attempts read, in order. */
struct report_attempts {
	struct report_attempt *v; /* owned */
	size_t n;
	int64_t ranks;  /* the latest attempt's world size as launch recorded
			 * it (nodes.json), else its spec's nodes x
			 * ranks_per_node; 0 when neither says */
};

/* Whether arg, as the user typed it, names one attempt of rd (the
 * directory RUN/attempts/N itself) rather than the run: a run, a name or
 * a job id covers every attempt. */
bool report_attempts_named(const char *arg, const struct rundir *rd);

/* Reads into r (report_run_init'ed here) the metrics of rd's run: with
 * all, those of every attempt of rd->run in order, else rd->dir's
 * alone; an attempt without metrics.jsonl (it never trained) is
 * skipped while another has one.  0, or HPT_EXIT_NO_INPUT after saying
 * why (no attempt has the file, or one could not be read); a and r are
 * safe to release either way. */
int report_attempts_load(const struct rundir *rd, bool all, struct report_run *r,
			 struct report_attempts *a);
void report_attempts_release(struct report_attempts *a);

/* Lines for the summary: each attempt's end from its end.json, "(from
 * the run's record)"; nothing for a lone attempt without one. */
void report_attempts_format(const struct report_attempts *a, struct sbuf *out);

/* Adds to *doc (or drops it, as jsonb_set does) "attempts" (how many were read), "resizes", "events" (the
 * timeline's) and "attempt_ends" ([{attempt, dir, end}], end null or
 * {job_id, exit_status, requeued, restart, source: "run record"}). */
void report_attempts_json(json_t **doc, const struct report_attempts *a,
			  const struct report_run *r);

#endif
