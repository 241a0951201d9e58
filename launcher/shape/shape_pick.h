/* shape_pick.h - each candidate shape's predicted run and finish, and the
 * one to take: the choice hpctrain plan makes.
 * Core: a fit (shape_model.h), the job's work and Slurm's start times in;
 * predictions and a pick out.  No clock: times are what the caller gives.
 */
#ifndef HPT_SHAPE_PICK_H
#define HPT_SHAPE_PICK_H

#include "launcher/shape/shape_model.h" // defines: struct shape_fit

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* What the job must do, in samples, whatever its shape: max_steps
 * steps of the spec's global batch (spec_ranks * batch_per_rank), else
 * epochs over samples_per_epoch samples; batch_per_rank at a time on
 * each rank. */
struct shape_work {
	int64_t max_steps;          /* > 0: this many steps at the spec's shape */
	unsigned spec_ranks;        /* the spec's nodes * ranks_per_node */
	int64_t epochs;
	double samples_per_epoch;   /* from past runs' records; 0: unknown */
	int64_t batch_per_rank;
	bool fixed_steps;           /* a user's program: max_steps steps at any shape
				     * (its past runs' count; its batch is its own) */
};

/* One shape: its nodes and ranks, Slurm's answer, the prediction. */
struct shape_candidate {
	unsigned nodes, ranks_per_node;
	bool runnable;       /* Slurm would run it (will-run answered a start) */
	char *why;           /* owned: why not, when !runnable */
	time_t start;        /* Slurm's predicted start */
	int64_t steps;       /* predicted by shape_predict */
	double run_s;        /* the run, start to end */
	double rel_err;      /* of run_s */
	time_t finish;       /* start + run_s */
	double node_hours;   /* nodes * run_s */
};

/* Steps the work takes at ranks ranks, each of ranks * batch_per_rank
 * samples; 0 when it cannot be known (no max_steps, and epochs without
 * samples_per_epoch) or would not fit int64_t. */
int64_t shape_steps(const struct shape_work *w, unsigned ranks);

/* Fills c's steps, run_s, rel_err, finish and node_hours from the fit:
 * steps * t(ranks) plus overhead_s (the job's start: srun, preflight).
 * c->start must be set.  A run past 100 years, or not a number, or a
 * finish past time_t makes c not runnable, with why: never picked, never
 * printed as a time. */
void shape_predict(struct shape_candidate *c, const struct shape_fit *f,
		   const struct shape_work *w, double overhead_s);

/* A deadline, or none: a flag, never a sentinel time (1970-01-01T00:00
 * is a time, if a past one, and was once taken for "none").  Zeroed:
 * none. */
struct shape_deadline {
	bool set;
	time_t at; /* valid when set */
};

/* The candidate to take, an index into v, or -1 when none is runnable
 * (or, with a deadline, none finishes by it).  Without a deadline: the
 * earliest finish, ties to fewer node-hours.  With one: the fewest
 * node-hours among those that finish by it, ties to the earlier
 * finish. */
long shape_pick(const struct shape_candidate *v, size_t n, struct shape_deadline d);

/* Parses "1x4,2x4" (NODESxRANKS_PER_NODE, comma separated) into *v and
 * *n (allocated, candidates zeroed but for nodes and ranks_per_node).
 * 0, or -1 with err naming the bad item. */
struct sbuf;
int shape_parse_list(const char *s, struct shape_candidate **v, size_t *n, struct sbuf *err);

/* Parses a deadline: "+90m", "+2h", "+1d", "+3600" (seconds) from now,
 * or a local "YYYY-MM-DDTHH:MM[:SS]" that names a real time: one that
 * mktime(3) reads back field for field ("2026-02-30T10:00", or a local
 * time a DST change skips, would be moved, not taken).  0 and *out
 * (set), -1 for another form, -2 for a date or time that does not
 * exist. */
int shape_parse_deadline(const char *s, time_t now, struct shape_deadline *out);

void shape_candidates_free(struct shape_candidate *v, size_t n);

#endif
