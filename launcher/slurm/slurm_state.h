/* slurm_state.h - a Slurm job's state word (job_info_t.job_state: a base
 * state in JOB_STATE_BASE, flags above it) as status shows it.
 * Core: a function of the word alone, so every base state and flag has
 * a tested answer (tests/unit/test_slurm_state.c).  The base state
 * alone said COMPLETED for a job still COMPLETING on a node whose slurmd
 * had stopped, and `status --wait` printed COMPLETED and went on waiting.
 */
#ifndef HPT_SLURM_STATE_H
#define HPT_SLURM_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct hpt_slurm_state {
	const char *name; /* static: Slurm's word, a flag's before the base
			   * state's (COMPLETING, not COMPLETED), as squeue */
	bool pending;     /* the base state is PENDING (queued, or held) */
	bool finished;    /* ended, and nothing of it is left to happen: a
			   * final base state and no flag of a job in transit
			   * (COMPLETING, REQUEUED, STAGE_OUT, SIGNALING, ...) */
	bool completed;   /* finished, and the base state is COMPLETED */
};

/* What word means.  An unknown base state is "UNKNOWN", not finished:
 * a newer Slurm's state is waited on, never taken for an end. */
void hpt_slurm_state_of(uint32_t word, struct hpt_slurm_state *out);

#endif
