/* run_state.h - where each run of a sweep (or one run) stands, for
 * hpctrain status: its job as Slurm has it, how far its metrics.jsonl
 * got, and a sweep's line of states, steps and ETA.
 *
 * Core (run_state.c): rows in, states and text out; a test fills rows by
 * hand.  Its loader (run_state_load.c, shell): the sweep record, the runs'
 * metrics.jsonl and Slurm's records, once per poll.
 */
#ifndef HPT_RUN_STATE_H
#define HPT_RUN_STATE_H

#include "launcher/runs/progress.h" // defines: struct run_progress
#include "launcher/slurm/slurm.h"   // defines: struct hpt_slurm_job

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct runref;
struct sbuf;

/* One run: a sweep's point, or the run status was named. */
struct run_state_row {
	const struct runref *ref;  /* RUN; rd.dir NULL for a run that is gone */
	json_t *params;            /* a sweep point's values, borrowed; or NULL */
	struct hpt_slurm_job job;  /* meaningful when known */
	bool known;                /* Slurm still knows the job */
	struct run_progress prog;
};

/* The rows of one run (n 1, sweep NULL) or of a sweep's points, in point
 * order.  run_state_load_open fills it; run_state_load_release frees it. */
struct run_state {
	struct run_state_row *rows;
	size_t n;
	const char *sweep;         /* the sweep's name, or NULL for one run */
	json_t *doc;               /* the sweep record (its "arrays" give caps), or NULL */
	struct runref *points;     /* the sweep's runs, owned; rows[i].ref points here */
};

/* Slurm's state of the row's job, or what the run's files say once Slurm
 * has forgotten it: NO-RUN (its directory is gone), UNSUBMITTED (no job
 * id), ENDED (a summary in metrics.jsonl) or FORGOTTEN. */
const char *run_state_name(const struct run_state_row *r);
/* Whether the row's job has ended, or Slurm no longer knows it. */
bool run_state_row_is_done(const struct run_state_row *r);
/* Whether every row is done. */
bool run_state_is_done(const struct run_state *w);

/* The cap an array of sweep record doc runs under: M of its spec
 * "0-5%M"; 0 for none, and for a job the record does not list. */
size_t run_state_array_cap(json_t *doc, unsigned long job_id);

/* When the sweep's last point ends, in seconds from the rows' paces: the
 * latest of its arrays' queues, each run under its own cap (see
 * progress_queue_eta_s).  -1 when no point has a pace yet. */
double run_state_eta_s(const struct run_state *w);

/* The --wait line: a run's progress (progress_format), or a sweep's count
 * of states, steps and ETA ("sweep-x.json: 2 RUNNING, 1 PENDING  steps
 * 120/600  ETA 1m12s"); key gets its states alone (a run's state, or
 * " 2 RUNNING, 1 PENDING"), which the line is printed again for on a pipe.
 * At most 16 distinct states are counted. */
void run_state_progress_line(const struct run_state *w, struct sbuf *out, struct sbuf *key);

/* run_state_load.c (shell) */

/* Rows for ref, a RUN or a SWEEP (its record read, rows in point order).
 * 0, or a status with err. */
int run_state_load_open(const struct runref *ref, struct run_state *w, struct sbuf *err);
/* Reloads every row: its run's metrics.jsonl, and its job from Slurm
 * (hpt_slurm_init first), each job asked once however many rows it runs.
 * A job Slurm has forgotten is no error (the row is not known).  0, or a
 * status with err. */
int run_state_load_rows(struct run_state *w, struct sbuf *err);
void run_state_load_release(struct run_state *w);

#endif
