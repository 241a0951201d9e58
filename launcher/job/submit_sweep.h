/* submit_sweep.h - `hpctrain submit` of a sweep and `hpctrain rerun` of
 * one: every point validated, then one Slurm array job per resource
 * shape (launcher/runs/sweep_plan.h, sweep_submit.h).  Prints. */
#ifndef HPT_SUBMIT_SWEEP_H
#define HPT_SUBMIT_SWEEP_H

#include <stddef.h>

struct specfile_overrides;
struct sweep;

struct sweep_request {
	const char *where;  /* the spec's path, as diagnostics name it */
	const char *text;   /* its text */
	size_t len;
	const struct specfile_overrides *sets; /* --set, for every point */
	const struct sweep *sweep;
	const char *exclude; /* --exclude, or NULL */
	int no_ledger, dry_run, json;
	const char *hpctrain; /* absolute path of this executable */
	int image_changed_ok; /* rerun: submit points whose image changed */
	int data_changed_ok;  /* rerun: submit points whose staged data changed */
	char **record;        /* out, or NULL: the sweep record's path once a job of
			       * it was submitted (free it), else NULL */
};

/* Loads every point; one bad point refuses the whole sweep
 * (HPT_EXIT_BAD_SPEC, every problem reported, nothing written).  Then,
 * the exclude list known, renders each point once and prints the plan
 * (dry_run) or submits the arrays, writes each point's run and the
 * sweep record, and reports them.  Returns an exit status. */
int submit_sweep(const struct sweep_request *req);

/* `hpctrain rerun SWEEP`: new attempts of the points of the sweep record
 * whose latest attempt ended without completing (all: every point that
 * has ended), as arrays again; req gives --exclude, --no-ledger, --json,
 * --image-changed-ok and the executable (its spec and sweep are unused).  Returns an exit
 * status (0 also when nothing needed a rerun). */
int submit_sweep_rerun(const struct sweep_request *req, const char *record, int all);

#endif
