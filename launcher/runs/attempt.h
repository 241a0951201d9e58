/* attempt.h - one attempt of a run: resolve, render once, submit.
 *
 * attempt.c: the spec resolved and hashed, then rendered once into the
 * batch script and the Slurm options it was written from, with the
 * nodes the attempt must avoid already known (no Slurm, no clock).
 * attempt_submit.c (shell): job.sbatch and submit.json in the run
 * directory, the job through libslurm.  `hpctrain submit`, `rerun`
 * and a sweep's points record and submit in exactly this one way.
 * Prints nothing; the commands report.
 */
#ifndef HPT_ATTEMPT_H
#define HPT_ATTEMPT_H

#include "common/sbuf.h"            // defines: struct sbuf
#include "common/spec/spec.h"       // defines: struct job
#include "launcher/slurm/render.h"  // defines: struct render_opts

#include <jansson.h>

struct diag_list;
struct rundir;

struct attempt {
	struct job job;          /* owned; filled by job_prepare (launcher/job),
				  * and never changed once attempt_resolve hashed
				  * it (attempt_render shapes a copy) */
	struct sbuf resolved;    /* canonical resolved form, after attempt_resolve */
	char sha256[65];         /* of resolved */
	char *exclude;           /* owned: nodes this attempt must avoid (a hostlist), or NULL;
				  * set before attempt_render */
	int64_t nodes_idle;      /* idle nodes outside exclude, -1 when not known (the
				  * default); set before attempt_render: a range
				  * MIN-MAX then asks for at least as many of them as
				  * it can use, so Slurm grants the largest size the
				  * free nodes allow, never below MIN */
	struct render_opts opts; /* the Slurm options, after attempt_render */
	struct sbuf script;      /* job.sbatch, written from opts, after attempt_render */
	unsigned renders;        /* times attempt_render rendered: 1 when submitted */
	int resubmits;           /* preflight resubmissions that led to this attempt */
	json_t *code;            /* owned: the code snapshot's record (launcher/job/code_pin.h),
				  * written as code.json into each attempt; NULL: no code */
	json_t *venv;            /* owned: environment.venv's packages (launcher/job/venv_pin.h),
				  * software.json's "venv"; NULL: no venv */
	json_t *plan;            /* owned: hpctrain plan's prediction of this shape
				  * (submit --shape auto), recorded as submit.json's
				  * "plan"; or NULL */
};

void attempt_init(struct attempt *a);
/* Releases job and buffers; accepts a zeroed struct. */
void attempt_release(struct attempt *a);

/* Emits the resolved form and hashes it.  0 or HPT_EXIT_INTERNAL. */
int attempt_resolve(struct attempt *a);

/* Renders the batch script that runs hpctrain (an absolute path) for
 * the resolved job, with a->exclude as its --exclude, and the options
 * it was written from.  Returns 0 or HPT_EXIT_BAD_SPEC (render refused
 * a value, with diagnostics). */
int attempt_render(struct attempt *a, const char *hpctrain, struct diag_list *dl);

/* attempt_resolve, then attempt_render: for an attempt whose exclude
 * list is known already.  0 or an exit status. */
int attempt_prepare(struct attempt *a, const char *hpctrain, struct diag_list *dl);


/* Writes job.sbatch (and code.json) into rd (a fresh attempt), submits the job with
 * a->opts and writes submit.json; *record gets that document
 * (json_decref it).  The attempt must have been rendered exactly once:
 * what the script says is what Slurm is asked for.  On a failure before
 * Slurm took the job, the attempt is abandoned (removed) and the status
 * (HPT_EXIT_UNAVAILABLE, _REJECTED, _IO) returned with err.  If Slurm
 * took the job but submit.json could not be written, returns
 * HPT_EXIT_IO with *record set and err saying so.  warn receives notes
 * that do not fail the submission (a job_submit plugin message). */
int attempt_submit(struct attempt *a, struct rundir *rd, json_t **record, struct sbuf *err,
		   struct sbuf *warn);

/* 0, or HPT_EXIT_NO_INPUT with err naming it, when a path submit.json
 * must name exactly (the run directory, the image, the code directory)
 * is not UTF-8, which JSON cannot carry: asked before Slurm has the job,
 * so a job is never left without its record. */
int attempt_record_check(const struct attempt *a, const struct rundir *rd, struct sbuf *err);

/* Writes a->code, when set, as rd's code.json (0600, atomically, never
 * over an existing one), and rd's software.json with this hpctrain's
 * version and a->venv (common/software.h).  0, or -1 with err. */
int attempt_write_records(const struct attempt *a, const struct rundir *rd, struct sbuf *err);

/* Writes rd's submit.json for job job_id, which Slurm has taken, and
 * returns the document in *record (json_decref it).  task >= 0: the
 * attempt is task `task` of array job job_id, a point of sweep (its
 * name); the record then says so (array_task_id, sweep).  0, or -1 with
 * err (*record may still be set: the job exists either way). */
int attempt_record(const struct attempt *a, const struct rundir *rd, uint32_t job_id,
		   int64_t task, const char *sweep, const char *cluster, json_t **record,
		   struct sbuf *err);

#endif
