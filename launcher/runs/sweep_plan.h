/* sweep_plan.h - a sweep's points as Slurm array jobs, planned.
 *
 * Core (no Slurm, no files): each point is an attempt of its own run,
 * already resolved and rendered once (launcher/runs/attempt.h); points
 * whose Slurm options are equal share one array job, in point order,
 * and a shape with more points than the cluster's MaxArraySize becomes
 * several arrays.  The sweep is named by the hash of its points' hashes,
 * and its record (launcher/runs/sweep_record.h) is built here.  Writing
 * the runs and submitting the arrays is sweep_submit.h's.
 */
#ifndef HPT_SWEEP_PLAN_H
#define HPT_SWEEP_PLAN_H

#include "common/sbuf.h"            // defines: struct sbuf
#include "launcher/runs/attempt.h"  // defines: struct attempt
#include "launcher/runs/rundir.h"   // defines: struct rundir, RUNDIR_HASH_LEN
#include "launcher/slurm/render.h"  // defines: struct render_opts

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag_list;
struct sweep;

/* One point: its attempt, and where it runs. */
struct sweep_plan_point {
	struct attempt at;
	struct rundir rd;   /* its run's attempt, once made */
	size_t array, task; /* which array runs it, as which task */
	size_t index;       /* its number in the sweep */
	char *run;          /* a rerun's: the point's existing run, for a new attempt */
};

/* One array job: its points in task order. */
struct sweep_plan_array {
	size_t *points;
	size_t n;
	char *dir;              /* its working directory, once made */
	unsigned long job_id;   /* once submitted */
	struct render_opts opts;
	struct sbuf script;
};

struct sweep_plan {
	const struct sweep *sweep;  /* the axes; NULL for a rerun, whose record holds them */
	struct sweep_plan_point *p;
	size_t n;
	struct sweep_plan_array *a;
	size_t na;
	char sha256[65];
	char name[6 + RUNDIR_HASH_LEN + 1]; /* "sweep-" and 12 hex digits */
	int64_t max_parallel;  /* each array's %cap; 0: none */
	size_t max_tasks;      /* the cluster's MaxArraySize; 0: no limit */
	bool split;            /* max_tasks cut a shape into several arrays */
	char *record;          /* OUTPUT/NAME/sweep-HASH12.json, once the runs exist */
};

/* Frees every point, array and string; accepts a zeroed struct. */
void sweep_plan_release(struct sweep_plan *pl);

/* Two points that resolve to one job would share one run: an error in
 * dl (at where) naming both.  0 or HPT_EXIT_BAD_SPEC. */
int sweep_plan_check_distinct(const struct sweep_plan *pl, const char *where,
			      struct diag_list *dl);

/* Names the sweep: the hash of "hpctrain sweep\n" and each point's hash
 * on a line, in point order, and "sweep-" with its first 12 digits. */
void sweep_plan_identity(struct sweep_plan *pl);

/* Groups the rendered points into arrays (again: earlier arrays are
 * dropped) and renders each array's options and script.  0, or
 * HPT_EXIT_INTERNAL for a point not rendered or a bad sweep name. */
int sweep_plan_arrays(struct sweep_plan *pl);

/* path relative to base when it lies below it, else path itself. */
const char *sweep_plan_relative(const char *path, const char *base);

/* The sweep's record: its axes, and each point with its values, run,
 * array and task (and, once made, its directory relative to parent);
 * "arrays" is an empty list.  A new reference. */
json_t *sweep_plan_record(const struct sweep_plan *pl, const char *parent);

#endif
