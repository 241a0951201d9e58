/* plan_calibrate.h - hpctrain plan --calibrate: the candidate shapes
 * measured before they are weighed.
 * Shell: submits the bundled trainer at each shape as one sweep (zipped
 * nodes and ranks per node, one array job per shape), waits for it as
 * status --wait does, and prints what both print.  Shapes larger than
 * the partition are left out.
 */
#ifndef HPT_PLAN_CALIBRATE_H
#define HPT_PLAN_CALIBRATE_H

#include "common/sbuf.h"                 // defines: struct sbuf
#include "launcher/shape/shape_pick.h"   // defines: struct shape_candidate
#include "launcher/slurm/slurm.h"        // defines: struct hpt_slurm_partition

#include <stddef.h>

struct job;
struct specfile_overrides;

struct plan_calibration {
	long steps;                             /* train.max_steps of each run */
	const struct specfile_overrides *sets;  /* the user's --set flags */
	const struct sbuf *where, *text;        /* the spec, read once */
	const char *exe;                        /* this hpctrain */
	const struct hpt_slurm_partition *part;
	const struct shape_candidate *shapes;   /* --shapes, or NULL: 1..max_nodes */
	size_t nshapes;
	unsigned max_nodes;                     /* 0: the partition's size, at most 16 */
};

/* Runs the calibration for job (the spec loaded as c gives it).  0 once
 * the sweep ended (a run that did not complete is said, not an error:
 * the plan fits those that logged steps), or a status after a line (3
 * for a user's program: only the bundled trainer's steps can be set).
 * Needs Slurm not initialised: submit and status reach it themselves. */
int plan_calibrate(const struct plan_calibration *c, const struct job *job);

#endif
