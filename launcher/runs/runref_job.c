/* runref_job.c - the run a Slurm job works in (see runref.h).
 * Shell: asks slurmctld for the job's working directory. */
#include "launcher/runs/runref.h" // defines: runref_job_run, runref_open_run
#include "common/sbuf.h"     // defines: struct sbuf, xasprintf
#include "launcher/slurm/slurm.h"  // defines: hpt_slurm_job, hpt_slurm_array_task

#include <stdlib.h>

int runref_job_run(struct runref *r, struct sbuf *err)
{
	struct hpt_slurm_job j;
	unsigned long id = r->job_id;
	int64_t task = r->task;
	char *dir;
	int status;

	if (r->kind != RUNREF_JOB)
		return 0;
	status = task >= 0 ? hpt_slurm_array_task((uint32_t)id, task, &j, err)
			   : hpt_slurm_job((uint32_t)id, &j, err);
	if (status)
		return status;
	/* an array task runs in the run its index links to (render_array.c) */
	if (j.array_task >= 0)
		dir = xasprintf("%s/%lld", j.work_dir, (long long)j.array_task);
	else
		dir = xstrdup(j.work_dir);
	hpt_slurm_job_release(&j);
	status = runref_open_run(dir, r, err);
	if (status)
		sbuf_addf(err, " (the working directory of job %lu)", id);
	free(dir);
	return status;
}
