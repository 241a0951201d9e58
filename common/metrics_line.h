/* metrics_line.h - one line of a run's metrics.jsonl as a record: the
 * one decoder that status (launcher/runs/progress.c), report and plan
 * (launcher/report/report_data.c) read records with, so that they agree
 * on every line.
 *
 * Core: bytes in, a JSON object out.  A line is a record when it is a
 * JSON object with no key twice (which value would count?).  A line
 * that is not JSON may be a torn record (a writer killed mid-line) with
 * the next run's first record glued to it: that record is kept.  Either
 * way the line counts as bad.
 *
 * A record is also bad when a figure it gives is one no run could have
 * logged (metrics_line_plausible): a step_ms of 1e308 made plan print a
 * run of -2562047788015215:-30:-8 and pick it, one of 1e-300 a fit of
 * +-inf%.  A figure not given is fine: the readers take it as "not said".
 */
#ifndef HPT_METRICS_LINE_H
#define HPT_METRICS_LINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* The record in line[0..n), a new reference, or NULL; *bad is counted
 * up for a line that was not one record. */
json_t *metrics_line_load(const char *line, size_t n, size_t *bad);

/* The bounds of a record's figures: a step of a nanosecond to 115 days;
 * above 0 and up to 10^12 samples a second or a step (a rank's own rate
 * may be 0); communication as long as a step; counts (step, epoch,
 * ranks, attempt, ...) not negative. */
#define METRICS_STEP_MS_MIN 1e-6
#define METRICS_STEP_MS_MAX 1e7
#define METRICS_RATE_MAX 1e12

/* true when every figure o gives (step_ms, comm_ms, samples_per_s, the
 * rank rates, global_batch, the summary's rates, and the counts) is
 * within the bounds above; the reader counts a record that is not as a
 * bad line and takes nothing from it. */
bool metrics_line_plausible(json_t *o);

/* The most of one metrics.jsonl a reader takes: readers bound each line
 * (REPORT_LINE_MAX) and read a file a line at a time, but would read a
 * file of 100 GB (planted in a shared output.dir, or a runaway writer)
 * to its end, a long while for plan, which reads every past run.  A
 * real run's file stays far below: a line per 50 steps, a few hundred
 * bytes, or about 20 KiB with the rates of 1,000 ranks. */
#define METRICS_FILE_MAX ((size_t)1 << 30)
#define METRICS_FILE_MAX_TEXT "1 GiB"

/* The one warning of a reader that stopped at METRICS_FILE_MAX, naming
 * the file: "PATH is larger than 1 GiB: only its first 1 GiB was read".
 * Pure. */
void metrics_line_say_capped(const char *path, struct sbuf *out);

#endif
