/* attempt.h - one attempt of a run: prepare (resolve, hash, render) and submit.
 *
 * Shell: joins the pure renderer with the run record (launcher/rundir) and
 * Slurm (launcher/slurm), so `hpctrain submit` and `hpctrain rerun` record
 * and submit in exactly one way.  Prints nothing; the commands report.
 */
#ifndef HPT_ATTEMPT_H
#define HPT_ATTEMPT_H

#include "common/sbuf.h" // defines: struct sbuf
#include "common/spec/spec.h" // defines: struct job

#include <jansson.h>

struct diag_list;
struct rundir;

struct attempt {
	struct job job;       /* owned; filled by the caller (spec_load) */
	struct sbuf resolved; /* canonical resolved form, after attempt_prepare */
	struct sbuf script;   /* job.sbatch, after attempt_prepare */
	char sha256[65];      /* of resolved */
	char *exclude;        /* owned: nodes this attempt must avoid (a hostlist), or NULL */
	int resubmits;        /* preflight resubmissions that led to this attempt */
};

void attempt_init(struct attempt *a);
/* Releases job and buffers; accepts a zeroed struct. */
void attempt_release(struct attempt *a);

/* Emits the resolved form, hashes it and renders the batch script (with
 * a->exclude as its --exclude) that
 * runs hpctrain (an absolute path) for it.  Returns 0 or an exit status
 * (HPT_EXIT_BAD_SPEC when render refuses a value, with diagnostics). */
int attempt_prepare(struct attempt *a, const char *hpctrain, struct diag_list *dl);

/* Writes job.sbatch into rd (a fresh attempt), submits the job and
 * writes submit.json; *record gets that document (json_decref it).  On a
 * failure before Slurm took the job, the attempt is abandoned (removed)
 * and the status (HPT_EXIT_UNAVAILABLE, _REJECTED, _IO) returned with
 * err.  If Slurm took the job but submit.json could not be written,
 * returns HPT_EXIT_IO with *record set and err saying so.  warn receives
 * notes that do not fail the submission (a job_submit plugin message). */
int attempt_submit(struct attempt *a, struct rundir *rd, json_t **record, struct sbuf *err,
		   struct sbuf *warn);

/* Writes rd's submit.json for job job_id, which Slurm has taken, and
 * returns the document in *record (json_decref it).  task >= 0: the
 * attempt is task `task` of array job job_id, a point of sweep (its
 * name); the record then says so (array_task_id, sweep).  0, or -1 with
 * err (*record may still be set: the job exists either way). */
int attempt_record(const struct attempt *a, const struct rundir *rd, uint32_t job_id,
		   int64_t task, const char *sweep, const char *cluster, json_t **record,
		   struct sbuf *err);

/* The absolute path of the running hpctrain; 0 or -1. */
int attempt_self_path(char *buf, size_t len);

#endif
