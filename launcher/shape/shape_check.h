/* shape_check.h - a planned run's prediction against what happened: the
 * start Slurm gave and the run time it took, for hpctrain status and
 * plan --history.
 * Core: the prediction (submit.json's "plan", as submit --shape auto
 * recorded it) and Slurm's times in; errors and text out.
 */
#ifndef HPT_SHAPE_CHECK_H
#define HPT_SHAPE_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct sbuf;

struct shape_check {
	unsigned nodes, ranks_per_node;
	time_t pred_start;     /* Slurm's estimate when planned */
	double pred_run_s, rel_err;
	time_t start, end;     /* what happened: 0 when not (yet) known */
};

/* The prediction from plan (a "plan" object); 0, or -1 when it lacks
 * a field.  start and end are left 0: the caller sets them. */
int shape_check_from_json(json_t *plan, struct shape_check *c);

/* Whether the run's start, and its whole run, are known. */
bool shape_check_started(const struct shape_check *c);
bool shape_check_ended(const struct shape_check *c);
/* The start's error in seconds (late > 0) and the run's, relative
 * (longer > 0); meaningful once started, ended. */
double shape_check_start_err_s(const struct shape_check *c);
double shape_check_run_err(const struct shape_check *c);

/* One line: "plan: 3x1, start predicted 20:30:40, was 20:31:02 (+22 s);
 * run predicted 0:22:40 +-11%, took 0:23:10 (+2%)", or so far. */
void shape_check_format(const struct shape_check *c, time_t now, struct sbuf *out);
json_t *shape_check_json(const struct shape_check *c);

/* Over n checks: the mean absolute start error (s) and run error
 * (relative) of those that started and ended, and how many. */
struct shape_check_summary {
	size_t started, ended;
	double mean_abs_start_s, mean_abs_run_err, mean_run_err;
};
void shape_check_summarize(const struct shape_check *v, size_t n, struct shape_check_summary *out);

#endif
