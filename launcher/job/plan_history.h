/* plan_history.h - what happened to each planned run, for hpctrain plan
 * --history: Slurm's start and end of its job, and how it ended; for a
 * job the controller has forgotten (no accounting, MinJobAge after it
 * ended), the end its attempt recorded in end.json (attempt_end.h),
 * marked as from the record.
 * Shell: asks Slurm (hpt_slurm_init first), reads end.json.
 */
#ifndef HPT_PLAN_HISTORY_H
#define HPT_PLAN_HISTORY_H

#include "launcher/shape/shape_history.h" // defines: struct shape_planned

#include <stdbool.h>
#include <stddef.h>

/* How a planned run's job ended, as far as anyone knows. */
struct plan_history_end {
	char state[16];   /* COMPLETED, FAILED, REQUEUED, ...; "" while it runs or unknown */
	int exit_code;    /* of the batch script, when it ended */
	bool forgotten;   /* Slurm no longer knows the job */
	bool from_record; /* state and exit_code are end.json's, not Slurm's */
};

/* Fills v[i].check's start and end from Slurm, and ends[i] (n of them,
 * caller-owned).  *forgotten counts the jobs Slurm forgot, whether or
 * not their record says how they ended.  0, or a status after a line
 * (a controller that does not answer). */
int plan_history_times(struct shape_planned *v, size_t n, struct plan_history_end *ends,
		       size_t *forgotten);

/* ends[i] in words, appended: "; ended COMPLETED (exit 0)", "; ended
 * COMPLETED (exit 0), from the record: Slurm forgot the job", or ";
 * forgotten by Slurm, with no record of its end"; nothing while it
 * runs. */
struct sbuf;
void plan_history_format(const struct plan_history_end *e, struct sbuf *out);

#endif
