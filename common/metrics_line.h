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
 */
#ifndef HPT_METRICS_LINE_H
#define HPT_METRICS_LINE_H

#include <jansson.h>
#include <stddef.h>

/* The record in line[0..n), a new reference, or NULL; *bad is counted
 * up for a line that was not one record. */
json_t *metrics_line_load(const char *line, size_t n, size_t *bad);

#endif
