/* rerun.c - a new attempt of a run (see rerun.h).
 * Shell: the run's files, Slurm. */
#include "launcher/job/rerun.h"
#include "common/diag.h"                // defines: struct diag_list, diag_report
#include "common/exitcode.h"            // defines: enum hpt_exit
#include "common/fileio.h"              // defines: fileio_self_exe
#include "common/say.h"                 // defines: say
#include "common/sbuf.h"                // defines: struct sbuf
#include "launcher/job/again.h"         // defines: job_again_attempt
#include "launcher/job/job_prepare.h"   // defines: job_prepare_run
#include "launcher/job/submit_report.h" // defines: submit_report, submit_report_exclude
#include "launcher/runs/attempt.h"      // defines: struct attempt, attempt_render
#include "launcher/runs/rundir.h"       // defines: struct rundir, rundir_open
#include "launcher/slurm/slurm.h"       // defines: hpt_slurm_init, hpt_slurm_forget_job

#include <libgen.h>
#include <limits.h>

/* The attempt rendered and submitted, Slurm's connection open. */
static int submit_attempt(const struct rundir *found, struct attempt *at,
			  const struct rerun_request *req, struct diag_list *dl, struct sbuf *err)
{
	struct rundir rd = RUNDIR_INIT;
	int status = submit_report_exclude(req->exclude, req->ledger, &at->exclude, err);

	if (!status) {
		at->nodes_idle = submit_report_idle(at->exclude);
		status = attempt_render(at, req->hpctrain, dl);
	}
	if (!status)
		status = job_again_attempt(found->run, req->again, "rerun", &rd, err);
	if (!status)
		status = submit_report(at, &rd, req->json, err);
	rundir_release(&rd);
	return status;
}

int rerun_attempt(const struct rundir *found, const struct rerun_request *req)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf err = SBUF_INIT;
	struct attempt at;
	int status;

	attempt_init(&at);
	status = job_prepare_run(found, req->image_changed_ok, req->data_changed_ok, &at, &dl);
	if (!status && !(status = hpt_slurm_init(&err)))
		status = submit_attempt(found, &at, req, &dl, &err);
	diag_drop_warnings(&dl);
	diag_report(stderr, &dl);
	if (status && err.len)
		say("%s", err.buf);
	attempt_release(&at);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}

int rerun_from_job(const char *run, const struct rerun_request *req)
{
	struct rerun_request r = *req;
	struct rundir rd = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT, exe = SBUF_INIT;
	char self[PATH_MAX];
	int status;

	hpt_slurm_forget_job();
	/* the job's steps run `hpctrain doctor ...`: the hpctrain beside
	 * this program (bin/hpctrain-doctor), not this program */
	if (!r.hpctrain && !fileio_self_exe(self, sizeof(self))) {
		sbuf_addf(&exe, "%s/hpctrain", dirname(self));
		r.hpctrain = exe.buf;
	}
	if (!r.hpctrain) {
		say("cannot find the hpctrain executable");
		status = HPT_EXIT_INTERNAL;
	} else if ((status = rundir_open(run, &rd, &err) ? HPT_EXIT_NOTFOUND : 0)) {
		say("%s", err.buf);
	} else {
		status = rerun_attempt(&rd, &r);
	}
	rundir_release(&rd);
	sbuf_release(&err);
	sbuf_release(&exe);
	return status;
}
