/* rerun.h - a new attempt of a run: `hpctrain rerun RUN`, and the
 * resubmission `hpctrain doctor` decides on after a failed preflight or
 * a lost node.  Prints (launcher/job/submit_report.h). */
#ifndef HPT_RERUN_H
#define HPT_RERUN_H

#include "launcher/job/again.h" // defines: enum job_again

struct rundir;

struct rerun_request {
	const char *exclude;   /* --exclude, or NULL */
	int ledger;            /* also leave out the ledger's nodes in cooldown */
	int json;              /* print the attempt's record as JSON */
	int image_changed_ok;  /* submit though the image's content changed */
	int data_changed_ok;   /* submit though a data.stage entry changed */
	enum job_again again;  /* RESUME: from RUN/checkpoints; FRESH: from step 0;
				* ASK: fresh, but a completed run is refused (again.h) */
	const char *hpctrain;  /* absolute path of hpctrain (rerun_from_job: NULL,
				* the one beside this program) */
};

/* Reloads found's resolved.yaml (job_prepare_run: it must resolve to
 * itself, its image and data as pinned), renders it once with the nodes to leave
 * out, makes RUN/attempts/N and submits it.  Says why on stderr when it
 * does not.  Returns an exit status. */
int rerun_attempt(const struct rundir *found, const struct rerun_request *req);

/* rerun_attempt of the run whose first directory is run, for a job's
 * doctor: without the job's own SLURM_* variables (but SLURM_CONF), so
 * the new job inherits neither this job's identity nor its shape. */
int rerun_from_job(const char *run, const struct rerun_request *req);

#endif
