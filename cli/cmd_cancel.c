/* cmd_cancel.c - `hpctrain cancel`: cancel the jobs of runs, sweeps or job ids.
 * Shell: resolves each argument (launcher/runs/runref) and cancels through
 * libslurm (launcher/slurm), as scancel does; a sweep, point by point. */
#include "cli/builtin.h"     // defines: cmd_cancel
#include "common/say.h" // defines: say
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/exitcode.h"    // defines: enum hpt_exit
#include "common/opt.h"         // defines: struct opt, opt_next
#include "common/sbuf.h"        // defines: struct sbuf
#include "launcher/runs/runref.h" // defines: runref_resolve, runref_sweep_points
#include "launcher/slurm/slurm.h"  // defines: hpt_slurm_cancel
#include "common/strfmt.h" // defines: strfmt_label

#include <stdio.h>

static const char *const cancel_usage[] = {
	"hpctrain cancel (<run> | <sweep> | <jobid> | <name>)...",
	NULL,
};

static const struct opt cancel_opts[] = {
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd cancel_cmd = {
	.name = "cancel",
	.usage = cancel_usage,
	.summary = "Cancel the Slurm jobs of runs, sweeps (every point) or job ids; they end "
		   "CANCELLED.",
	.opts = cancel_opts,
};

/* One job, or one task of an array; what (a run, a point) names it. */
static int cancel_job(unsigned long id, int64_t task, const char *what)
{
	struct sbuf err = SBUF_INIT;
	char job[48];
	bool done;
	int status = hpt_slurm_cancel((uint32_t)id, task, &done, &err);

	runref_job_text(id, task, job, sizeof(job));
	if (status)
		say("%s%s%s", err.buf, what ? ": " : "",
			what ? what : "");
	else if (done)
		say("job %s had already finished%s%s", job,
			what ? ": " : "", what ? what : "");
	else
		printf("cancelled job %s%s%s\n", job, what ? ": " : "", what ? what : "");
	sbuf_release(&err);
	return status;
}

/* Every point's latest attempt: its array task, or the job a rerun made. */
static int cancel_sweep(const char *record)
{
	struct sbuf err = SBUF_INIT;
	struct runref *v;
	json_t *doc;
	size_t n;
	int status = runref_sweep_points(record, &doc, &v, &n, &err);

	if (status)
		say("%s", err.buf);
	for (size_t i = 0; i < n; i++) {
		char what[64];
		int s;

		strfmt_label(what, sizeof(what), "point %zu", i);
		if (!v[i].job_id) {
			say("point %zu was never submitted", i);
			continue;
		}
		s = cancel_job(v[i].job_id, v[i].task, what);
		status = status ? status : s;
	}
	if (n)
		runref_release_all(v, n);
	json_decref(doc);
	sbuf_release(&err);
	return status;
}

static int cancel_one(const char *arg)
{
	struct sbuf err = SBUF_INIT;
	struct runref ref = RUNREF_INIT;
	int status = runref_resolve(arg, &ref, &err);

	if (ref.note)
		say("%s", ref.note);
	if (status)
		say("%s", err.buf);
	else if (ref.kind == RUNREF_SWEEP)
		status = cancel_sweep(ref.sweep);
	else if (!ref.job_id) {
		say("%s was never submitted (no " RUNFILE_SUBMIT ")", ref.rd.dir);
		status = HPT_EXIT_NO_INPUT;
	} else {
		status = cancel_job(ref.job_id, ref.task, NULL);
	}
	runref_release(&ref);
	sbuf_release(&err);
	return status;
}

int cmd_cancel(int argc, char **argv)
{
	struct sbuf err = SBUF_INIT;
	int c, status;

	opt_reset();
	while ((c = opt_next(&cancel_cmd, argc, argv)) != -1) {
		if (c == 'h') {
			opt_usage(stdout, &cancel_cmd);
			return HPT_EXIT_OK;
		}
		return HPT_EXIT_USAGE;
	}
	if (optind >= argc)
		return opt_error(&cancel_cmd, "no run, sweep or job id given");
	if (opt_check_operands(&cancel_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	status = hpt_slurm_init(&err);
	if (status) {
		say("%s", err.buf);
		sbuf_release(&err);
		return status;
	}
	/* every argument is tried; the first failure's status is kept */
	for (int i = optind; i < argc; i++) {
		int s = cancel_one(argv[i]);

		if (!status)
			status = s;
	}
	sbuf_release(&err);
	return status;
}
