/* again.c - fresh or resumed, asked of a completed run (again.h). */
#include "launcher/job/again.h"        // defines: job_again_check
#include "common/exitcode.h"           // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"               // defines: struct sbuf
#include "launcher/runs/attempt.h"     // defines: struct attempt
#include "launcher/runs/attempt_end.h" // defines: attempt_end_load, attempt_end_completed
#include "launcher/runs/rundir.h"      // defines: struct rundir, rundir_open, rundir_create, rundir_resume
#include "launcher/slurm/slurm.h"      // defines: hpt_slurm_job, hpt_slurm_array_task

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The controller's word, for an attempt that wrote no end.json (killed
 * with its script, or written by an older hpctrain). */
static bool slurm_says_completed(const struct rundir *rd, unsigned long *job_id)
{
	struct hpt_slurm_job j = { 0 };
	struct sbuf err = SBUF_INIT;
	int64_t task = -1;
	bool done = false;

	if (!rundir_job_id(rd, job_id, &task, &err) &&
	    !(task >= 0 ? hpt_slurm_array_task((uint32_t)*job_id, task, &j, &err)
			: hpt_slurm_job((uint32_t)*job_id, &j, &err)))
		done = j.completed;
	hpt_slurm_job_release(&j);
	sbuf_release(&err);
	return done;
}

int job_again_check(const char *run, enum job_again again, const char *cmd, struct sbuf *err)
{
	struct rundir rd = RUNDIR_INIT;
	struct attempt_end end;
	struct sbuf ignored = SBUF_INIT;
	unsigned long job_id = 0;
	struct stat st;
	bool done;

	if (again != JOB_AGAIN_ASK || stat(run, &st) || rundir_open(run, &rd, &ignored)) {
		sbuf_release(&ignored);
		return 0;
	}
	if (!attempt_end_load(rd.dir, &end)) {
		done = attempt_end_completed(&end);
		job_id = (unsigned long)end.job_id;
	} else {
		done = slurm_says_completed(&rd, &job_id);
	}
	if (done)
		sbuf_addf(err, "%s completed (attempt %d, job %lu): %s --fresh trains it again from "
			  "step 0 into new checkpoints, %s --resume goes on from its last checkpoint",
			  rd.dir, rd.attempt, job_id, cmd, cmd);
	rundir_release(&rd);
	sbuf_release(&ignored);
	return done ? HPT_EXIT_USAGE : 0;
}

/* A fresh attempt made, linked to the run's checkpoints for RESUME. */
static int resume_if_asked(struct rundir *rd, enum job_again again, struct sbuf *err)
{
	if (again != JOB_AGAIN_RESUME || !rundir_resume(rd, err))
		return 0;
	rundir_abandon(rd);
	return HPT_EXIT_IO;
}

int job_again_create(const struct attempt *a, enum job_again again, const char *cmd,
		     struct rundir *rd, struct sbuf *err)
{
	char *run = rundir_path(a->job.output.dir, a->job.name, a->sha256);
	int status = run ? job_again_check(run, again, cmd, err) : 0;

	free(run);
	if (status)
		return status;
	if (rundir_create(a->job.output.dir, a->job.name, a->sha256, a->resolved.buf,
			  a->resolved.len, rd, err))
		return HPT_EXIT_IO;
	return resume_if_asked(rd, again, err);
}

int job_again_attempt(const char *run, enum job_again again, const char *cmd, struct rundir *rd,
		      struct sbuf *err)
{
	int status = job_again_check(run, again, cmd, err);

	if (status)
		return status;
	if (rundir_new_attempt(run, rd, err))
		return HPT_EXIT_IO;
	return resume_if_asked(rd, again, err);
}
