/* submit_report.h - what submit and rerun share once a run directory is
 * ready: submitting the attempt and telling the user, in one voice.
 * Shell (Slurm, stdout, stderr). */
#ifndef HPT_SUBMIT_REPORT_H
#define HPT_SUBMIT_REPORT_H

struct attempt;
struct rundir;
struct sbuf;

/* Submits at into rd (attempt_submit), prints its warnings to stderr,
 * then the job's record as JSON (json set) or "submitted job N: DIR".
 * Returns attempt_submit's status, else json_print's, with err filled
 * when the submission failed. */
int submit_report(struct attempt *at, struct rundir *rd, int json, struct sbuf *err);

/* Sets at->exclude (then renders at again) to the hosts of user (a
 * hostlist from --exclude, or NULL) and, when ledger is set, the nodes
 * of this cluster that the node ledger holds in cooldown, saying on
 * stderr why each is left out.  Needs hpt_slurm_init.  A ledger that
 * cannot be read is a warning, not a failure.  0 or a status with err. */
int submit_exclude(struct attempt *at, const char *user, int ledger, const char *hpctrain,
		   struct sbuf *err);

/* Loads run rd's resolved.yaml into at and renders it, checking that it
 * still resolves to itself: an edited file, or one from an hpctrain whose
 * canonical form differs, would start a job that is not this run.
 * Problems go to stderr.  0 or an exit status. */
int submit_load_run(const struct rundir *rd, struct attempt *at, const char *exe);

/* 0 when s is a hostlist --exclude can take, else -1 with err. */
int submit_check_hostlist(const char *s, struct sbuf *err);

#endif
