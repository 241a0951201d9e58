/* run_straggler.h - a run's slow ranks for status and report: the
 * run's own straggler settings (its resolved spec) applied to its
 * metrics (launcher/report/report_straggler.h).  Shell: reads the run
 * directory. */
#ifndef HPT_RUN_STRAGGLER_H
#define HPT_RUN_STRAGGLER_H

#include <jansson.h>

struct report_run;
struct sbuf;

/* The slow ranks of r, read from the run (or attempt) directory dir,
 * whose resolved spec gives straggler.threshold and straggler.steps (a
 * spec that cannot be read: only the trainer's records count).  A new
 * reference to an array (report_stragglers). */
json_t *run_stragglers(const char *dir, const struct report_run *r);

/* report's summary: a line per slow rank of r, indented by two. */
void run_stragglers_head(const char *dir, const struct report_run *r, struct sbuf *out);

/* Reads dir's metrics.jsonl whole: run_stragglers of it, or an empty
 * array when there is no file (status --json's "stragglers"). */
json_t *run_stragglers_load(const char *dir);

/* status: reads dir's metrics.jsonl whole and appends a line per slow
 * rank (report_stragglers_format); nothing when there is no file or
 * no slow rank. */
void run_stragglers_status(const char *dir, struct sbuf *out);

#endif
