/* doctor_preflight.h - doctor as a job's first step (--preflight RUN):
 * its result kept in the attempt's directory, and the decision to submit
 * the run again without the nodes that failed, a bounded number of
 * times (the command resubmits: launcher/job/rerun.h).
 *
 * Shell (doctor_preflight.c): reads and writes the run's files (layout
 * in launcher/runs/rundir.h).  Nothing here prints: what the doctor
 * says about it comes back as text.
 */
#ifndef HPT_DOCTOR_PREFLIGHT_H
#define HPT_DOCTOR_PREFLIGHT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;
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

/* Whether the controller's nodes less the hostlist exclude are enough
 * for the next attempt (resize_next: resources.nodes's MIN, or its
 * number); appends to msg (a line of its own) how many it can have at
 * most, or why not.  When the controller cannot say, true: Slurm
 * decides. */
bool doctor_preflight_enough_left(const struct job *job, const char *exclude, struct sbuf *msg);

/* After the preflight of attempt directory dir: writes DIR/preflight.json
 * (doc) and, when the k nodes in failed failed, decides on resubmitting
 * (doctor_preflight_plan, doctor_preflight_enough_left), saying so in
 * msg.  0: resubmit again (the run's first directory) without exclude;
 * 1: do not.  A job whose script goes on inside its allocation
 * (render_restarts_in_place) is never resubmitted from here: its script
 * asks doctor --lost next (doctor_lost.h), which first tries a new
 * attempt in the allocation without the failed nodes. */
int doctor_preflight_after(const char *dir, const struct job *job, const json_t *doc,
			   const char *const *failed, size_t k, struct sbuf *again,
			   struct sbuf *exclude, struct sbuf *msg);

/* The nodes the preflight of attempt directory dir failed: the exclude
 * hostlist of its preflight.json, as names into *nodes (free with
 * hpt_slurm_node_names_free), and what failed first on each, "node2:
 * nics: NCCL_SOCKET_IFNAME=ibx0 names ..." ("; " between nodes), into
 * why.  Returns how many; 0 (nothing allocated) when dir has no failed
 * preflight with a node in its exclude list (passed, not run,
 * unreadable, or the job's own fault, which excludes no node). */
size_t doctor_preflight_failed(const char *dir, char ***nodes, struct sbuf *why);

#endif
