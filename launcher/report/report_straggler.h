/* report_straggler.h - a run's slow ranks, as status and report say
 * them: the bundled trainer's "straggler" records (trainer/metrics.h),
 * else, for a program that logs each rank's rate (rank_samples_per_s),
 * the same detector (common/straggler.h) run over its step records, a
 * rank's time being the inverse of its rate and the steps between two
 * logged ones counted as observed.
 *
 * Core: a parsed run in, lines or JSON out. */
#ifndef HPT_REPORT_STRAGGLER_H
#define HPT_REPORT_STRAGGLER_H

#include "launcher/report/report_data.h" // defines: struct report_run

#include <jansson.h>
#include <stdint.h>

struct sbuf;

/* The slow ranks of r as a JSON array of records in the trainer's
 * format (those found from rates carry "cause": "rate", no node, and
 * "from_rates": true), threshold and steps the run's spec's (a
 * threshold not above 1: the records only).  A new reference; an
 * empty array when none. */
json_t *report_stragglers(const struct report_run *r, double threshold, int64_t steps);

/* One line per record of report_stragglers, each after indent and
 * ending in a newline: "slow rank: rank 1 on node2 is 1.43x slower than the median over
 * steps 11-60: its compute (41.2 ms a step against 28.8 ms)"; nothing
 * when the array is empty. */
void report_stragglers_format(const json_t *a, const char *indent, struct sbuf *out);

#endif
