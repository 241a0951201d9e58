/* submit_report.h - what submit, rerun and a sweep say, in one voice:
 * the nodes left out, and the submitted attempt.  Shell (Slurm, stdout,
 * stderr). */
#ifndef HPT_SUBMIT_REPORT_H
#define HPT_SUBMIT_REPORT_H

#include <stdint.h>

struct attempt;
struct rundir;
struct sbuf;

/* The exclude list of a submission (launcher/doctor/exclude.h): the
 * hosts of user (--exclude, or NULL) and, when ledger is set, the nodes
 * of this cluster the node ledger holds in cooldown, each said on
 * stderr with why.  *list gets the hostlist (malloc'd), or NULL when
 * nothing is left out.  Needs hpt_slurm_init.  0 or a status with err. */
int submit_report_exclude(const char *user, int ledger, char **list, struct sbuf *err);

/* The idle nodes outside list (hpt_slurm_idle_nodes) for attempt's
 * nodes_idle, or -1 when the controller cannot say: Slurm then picks
 * the size in a range.  Needs hpt_slurm_init. */
int64_t submit_report_idle(const char *list);

/* Submits at into rd (attempt_submit), prints its warnings to stderr,
 * then the job's record as JSON (json set) or "submitted job N: DIR".
 * Returns attempt_submit's status, else json_print's, with err filled
 * when the submission failed. */
int submit_report(struct attempt *at, struct rundir *rd, int json, struct sbuf *err);

#endif
