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

#endif
