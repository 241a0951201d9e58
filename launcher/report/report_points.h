/* report_points.h - the points of a sweep as chart series, for
 * hpctrain report of a sweep record.
 *
 * Core: the points (their values, their runs' metrics, their ranks) in,
 * struct chart out; nothing is read, drawn or written here (cli/
 * report_sweep.c reads the record and the runs, launcher/job/report_out.c draws
 * and writes).  Charts: the final test accuracy and loss against each
 * axis, one series per combination of the other axes' values; and
 * throughput and scaling efficiency against ranks, one series per
 * combination of the values of the keys that are not rank keys.
 */
#ifndef HPT_REPORT_POINTS_H
#define HPT_REPORT_POINTS_H

#include "launcher/report/chart.h" // defines: struct chart
#include "launcher/report/report_data.h"  // defines: struct report_run

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One point of a sweep. */
struct report_point {
	json_t *params;     /* its values ({"train.lr": 0.05, ...}), borrowed from the record */
	struct report_run r;
	bool loaded;        /* r holds its run's metrics.jsonl */
	int64_t ranks;      /* the summary's, else resolved.yaml's nodes x ranks_per_node;
			     * 0 when unknown */
	int64_t nodes;      /* resolved.yaml's nodes; 0 when unknown */
};

/* What the charts need of a sweep record doc beyond what runref checks:
 * axes a list of {key, values} with at least one value and no object or
 * list among them, and every point with its params.  NULL when doc has
 * it, else why not (static text). */
const char *report_points_check_record(json_t *doc);

/* Whether key's values set how many ranks a point runs (params.nodes,
 * resources.ranks_per_node, ...). */
bool report_points_is_rank_key(const char *key);

/* "lr=0.05 seed=2": params' values, each key by its last part, but key's
 * (NULL: none left out) and, with no_ranks, but those of rank keys; it
 * names a series.  Allocated; never NULL. */
char *report_points_label(json_t *params, const char *key, bool no_ranks);

/* The point's final test accuracy (metric 0) or test loss (1); NAN when
 * its run has not finished (no summary). */
double report_points_final_metric(const struct report_point *p, int metric);

/* The chart of a final metric against one axis, with what it borrows:
 * chart.title points to title and chart.xnames to names, so the struct
 * stays where report_points_final put it until it is released. */
struct report_points_axis {
	struct chart chart;
	char title[256];
	char file[160];     /* its file's name, without .png: final_accuracy_<key> */
	char **names;       /* a categorical axis's values as text, owned; or NULL */
	size_t nnames;
};

/* Fills a with the chart of metric (0: test accuracy, 1: test loss) of
 * the n points p against axis ({key, values}, as report_points_check_record
 * accepts): x is the value (numeric axis) or its index (categorical: the
 * ticks are named), one series per combination of the other axes'
 * values, and a point not finished is a gap its series' label counts:
 * "lr=0.1 (1 not finished)". */
void report_points_final(struct report_points_axis *a, const struct report_point *p, size_t n,
			 json_t *axis, int metric, int width, int height);
/* Releases a's chart (again, if the caller did already) and names. */
void report_points_axis_release(struct report_points_axis *a);

/* Fills tc with throughput against total ranks and ec with scaling
 * efficiency (throughput / (ranks x per-rank throughput at the group's
 * fewest ranks that finished)), one series per group of points that
 * differ in rank keys alone ("measured" when no other key); with one
 * group, tc also gets the dashed line of perfect scaling from its base.
 * A point not finished is a gap.  Points of unknown ranks are left out.
 * Returns 0 (release both charts), or -1 when every point runs the
 * same number of ranks, *ranks (charts untouched). */
int report_points_scaling(const struct report_point *p, size_t n, int width, int height,
			  struct chart *tc, struct chart *ec, int64_t *ranks);

#endif
