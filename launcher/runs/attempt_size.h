/* attempt_size.h - the size Slurm granted each attempt of a run, and
 * what a rank is told about its attempt.
 *
 * Shell: reads and writes ATTEMPT/nodes.json ({"nodes": N,
 * "world_size": W, "restart": R, "prev_world_size": P}), written by
 * rank 0's `hpctrain launch` from SLURM_STEP_NUM_NODES (the nodes its step trains on;
 * else SLURM_JOB_NUM_NODES or SLURM_NNODES),
 * the job's world size and SLURM_RESTART_COUNT, so a job that asked for
 * a range MIN-MAX records what it got; `hpctrain status` shows it.  The
 * next attempt's ranks learn the previous world size from it, and so do
 * the ranks of a job Slurm requeued (preempted, or a node failed): the
 * same attempt, run again at the size Slurm granted this time.
 */
#ifndef HPT_ATTEMPT_SIZE_H
#define HPT_ATTEMPT_SIZE_H

#include "common/runfile.h" // defines: RUNFILE_NODES

#include <stdint.h>

struct sbuf;

#define ATTEMPT_SIZE_FILE RUNFILE_NODES

/* What a rank of an attempt is told (HPCTRAIN_ATTEMPT,
 * HPCTRAIN_PREV_WORLD_SIZE, HPCTRAIN_CHECKPOINT_DIR). */
struct attempt_size_ctx {
	int attempt;             /* 1, 2, ... */
	int64_t prev_world_size; /* the world size of the run before this one:
				  * this attempt's before Slurm requeued it, else
				  * the latest earlier attempt's; 0 when none
				  * recorded one */
	char *checkpoint_dir;    /* owned: RUN/checkpoints, RUN the run's first
				  * directory, shared by the first attempt and
				  * every one that resumes (rundir_resume); a
				  * later fresh attempt's own checkpoints, with
				  * prev_world_size 0 but after a requeue */
};

void attempt_size_ctx_release(struct attempt_size_ctx *c);

/* Fills c for attempt directory dir (as rundir_open reads it).  0, or
 * -1 with err when dir is no run. */
int attempt_size_ctx_load(const char *dir, struct attempt_size_ctx *c, struct sbuf *err);

/* Writes dir/nodes.json: the nodes the step trains on
 * (SLURM_STEP_NUM_NODES, else SLURM_JOB_NUM_NODES or SLURM_NNODES; 0
 * when none is a number), world_size, the
 * job's restart count (SLURM_RESTART_COUNT, 0 without), and the world
 * size of this attempt's run before a requeue (0 when none).  0 or -1
 * with err. */
int attempt_size_record(const char *dir, int64_t world_size, struct sbuf *err);

/* Reads dir/nodes.json.  0 with *nodes and *world_size, or -1 when the
 * attempt recorded none (never started, or an older hpctrain). */
int attempt_size_load(const char *dir, int64_t *nodes, int64_t *world_size);

#endif
