/* doctor_preflight.h - doctor as a job's first step (--preflight RUN):
 * its result kept in the attempt's directory, and the run submitted
 * again without the nodes that failed, a bounded number of times.
 *
 * Shell (doctor_preflight.c): reads and writes the run's files (layout
 * in launcher/runs/rundir.h) and runs `hpctrain rerun`.  Nothing here
 * prints: what the doctor says about it comes back as text.
 */
#ifndef HPT_DOCTOR_PREFLIGHT_H
#define HPT_DOCTOR_PREFLIGHT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* Writes doc (indented, keys sorted) to DIR/preflight.json, mode 0600,
 * atomically.  0, or -1 with err (left empty when doc could not be
 * turned into text). */
int doctor_preflight_write(const char *dir, const json_t *doc, struct sbuf *err);

/* How many attempts of run R failed their preflight or lost a node: R,
 * R/attempts/2, R/attempts/3 ... up to the first that does not exist,
 * each counted when its preflight.json, and again when its lost.json
 * (doctor --lost), says "ok": false.  A missing or unreadable
 * preflight.json, or one that is no JSON, is not counted. */
int doctor_preflight_failures(const char *run);

/* Appends the --exclude attempt directory dir was submitted with (the
 * "exclude" of DIR/submit.json, "" when it has none); nothing when
 * submit.json is missing or no JSON. */
void doctor_preflight_exclude(const char *dir, struct sbuf *out);

/* Decides about attempt directory dir, whose preflight failed the k
 * nodes in failed: resubmit while the run's failed preflights (this one
 * included) are at most max_resubmits.  0: resubmit run (the run's
 * first directory) with exclude (the failed nodes added to the
 * attempt's own exclude, as one hostlist); msg says so ("resubmitting R
 * without L (resubmission N of at most M)").  -1: do not; msg says why
 * (no run there, too many failures, an exclude list that would not
 * merge). */
int doctor_preflight_plan(const char *dir, int64_t max_resubmits, const char *const *failed,
			  size_t k, struct sbuf *run, struct sbuf *exclude, struct sbuf *msg);

/* Runs `hpctrain rerun --resume --exclude EXCLUDE RUN` (the new attempt
 * resumes from the run's checkpoints), the hpctrain beside this
 * program, without this job's SLURM_JOB_ID, and waits for it.  Its exit
 * status, or -1 when it could not be run or did not exit.  Stdio is
 * flushed first; a child whose exec fails says so on stderr. */
int doctor_preflight_resubmit(const char *run, const char *exclude);

#endif
