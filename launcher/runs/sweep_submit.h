/* sweep_submit.h - a planned sweep's runs made and its arrays submitted.
 *
 * Shell (files, Slurm; hpt_slurm_init first).  Prints nothing: notes
 * for the user (a job_submit plugin's message, a point left alone) are
 * appended to a notes buffer, failures to err; the command reports.
 *
 * Each point becomes an attempt of its own run (OUTPUT/NAME/HASH12/), as
 * if submitted alone.  An array's working directory is
 * OUTPUT/NAME/sweep-HASH12.arrays/K/: array.sbatch and one link per task
 * to its point's run, so the task's batch log, checkpoints and requeue
 * are its point's.
 */
#ifndef HPT_SWEEP_SUBMIT_H
#define HPT_SWEEP_SUBMIT_H

#include <stdbool.h>

struct attempt;
struct diag_list;
struct rundir;
struct sbuf;
struct sweep_plan;

/* Sets pl->max_tasks to the cluster's MaxArraySize.  0, a Slurm status,
 * or HPT_EXIT_REJECTED where the cluster has no arrays (err says why). */
int sweep_submit_limit(struct sweep_plan *pl, struct sbuf *err);

/* Makes the runs of every array, submits the arrays in order and
 * records each point's attempt (its submit.json names the array job and
 * task), then appends this submission's arrays to the sweep record
 * (pl->record, made here).  Stops at the first array that fails (its
 * runs are removed again); the record still lists the arrays that went
 * in.  cluster: Slurm's ClusterName, for the records.  0 or an exit
 * status with err. */
int sweep_submit(struct sweep_plan *pl, const char *cluster, struct sbuf *notes,
		 struct sbuf *err);

/* How a point is loaded from its run as a new attempt (not rendered):
 * launcher/job's job_prepare_run, which also checks what the run
 * pinned.  0 or an exit status, said on stderr or in dl. */
struct sweep_point_loader {
	int (*load)(const struct rundir *rd, void *arg, struct attempt *at, struct diag_list *dl);
	void *arg;
};

/* A rerun of the sweep recorded at record: pl gets the points whose
 * latest attempt ended without completing (all: every point that has
 * ended), each loaded by loader, and the sweep's name and cap.  A point
 * still queued or running is left alone, said in notes.  0 (pl->n may
 * be 0), or an exit status with err or with diagnostics in dl. */
int sweep_submit_rerun_points(struct sweep_plan *pl, const char *record, bool all,
			      const struct sweep_point_loader *loader, struct sbuf *notes,
			      struct diag_list *dl, struct sbuf *err);

#endif
