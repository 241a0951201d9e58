/* cmd_rerun.c - `hpctrain rerun`: submit a run again, as a new attempt.
 * Shell: finds the run (launcher/runs/runref) and hands it to
 * launcher/job/rerun.c, a sweep to launcher/job/submit_sweep.c. */
#include "common/json_print.h" // defines: json_print
#include "common/say.h" // defines: say
#include "cli/builtin.h"       // defines: cmd_rerun
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/fileio.h"       // defines: fileio_self_exe
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf
#include "launcher/job/rerun.h"        // defines: rerun_attempt
#include "launcher/job/submit_sweep.h" // defines: submit_sweep_rerun
#include "launcher/runs/runref.h"  // defines: runref_resolve, runref_job_run
#include "launcher/slurm/slurm.h"   // defines: hpt_slurm_init, hpt_slurm_hostlist_check

#include <limits.h>
#include <stdio.h>
#include <string.h>

enum { OPT_EXCLUDE = 256, OPT_NO_LEDGER, OPT_ALL, OPT_IMAGE_CHANGED_OK, OPT_DATA_CHANGED_OK,
       OPT_RESUME, OPT_FRESH };

static const char *const rerun_usage[] = {
	"hpctrain rerun [--exclude <nodes>] [--no-ledger] [--image-changed-ok] [--data-changed-ok] [--fresh | --resume] [--json] (<run> | <jobid> | <name>)",
	"hpctrain rerun [--all] [--exclude <nodes>] [--no-ledger] [--image-changed-ok] [--data-changed-ok] [--json] <sweep>",
	NULL,
};

static const struct opt rerun_opts[] = {
	{ "exclude", required_argument, NULL, OPT_EXCLUDE, "NODES",
	  "never run on these nodes (a Slurm hostlist, e.g. node[3,7])" },
	{ "no-ledger", no_argument, NULL, OPT_NO_LEDGER, NULL,
	  "do not leave out the nodes that hpctrain doctor's ledger holds in cooldown" },
	{ "all", no_argument, NULL, OPT_ALL, NULL,
	  "for a sweep: run every point again, not only those that did not complete" },
	{ "image-changed-ok", no_argument, NULL, OPT_IMAGE_CHANGED_OK, NULL,
	  "run again even though the container image's content differs from the run's" },
	{ "data-changed-ok", no_argument, NULL, OPT_DATA_CHANGED_OK, NULL,
	  "run again even though a data.stage entry's content differs from the run's" },
	{ "fresh", no_argument, NULL, OPT_FRESH, NULL,
	  "the new attempt trains from step 0 into checkpoints of its own (needed for a run "
	  "that completed; the default otherwise)" },
	{ "resume", no_argument, NULL, OPT_RESUME, NULL,
	  "the new attempt resumes from the run's checkpoints (RUN/checkpoints)" },
	{ "json", no_argument, NULL, 'j', NULL, "print the new attempt's record as JSON" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd rerun_cmd = {
	.name = "rerun",
	.usage = rerun_usage,
	.summary = "Submit a run's job again as a new attempt (RUN/attempts/N) of the same run; "
		   "a sweep's unfinished points again as arrays.",
	.opts = rerun_opts,
};

/* What the user named: a run, a job's run, or a sweep. */
static int rerun_of(const char *arg, const char *exclude, int ledger, int json, int all,
		    int changed_ok, int data_ok, enum job_again again)
{
	struct sbuf err = SBUF_INIT;
	struct runref ref = RUNREF_INIT;
	char exe[PATH_MAX];
	int status = runref_resolve(arg, &ref, &err);

	if (ref.note)
		say("%s", ref.note);
	if (!status && ref.kind == RUNREF_JOB && !(status = hpt_slurm_init(&err)))
		status = runref_job_run(&ref, &err);
	if (!status && ref.kind == RUNREF_RUN && all) {
		sbuf_addstr(&err, "--all is for a sweep; a run is always run again whole");
		status = HPT_EXIT_USAGE;
	}
	if (!status && ref.kind == RUNREF_SWEEP && again) {
		sbuf_addstr(&err, "--fresh and --resume are for a run; a sweep's points run again "
			    "from the start");
		status = HPT_EXIT_USAGE;
	}
	if (status) {
		say("%s", err.buf);
	} else if (fileio_self_exe(exe, sizeof(exe))) {
		say("cannot find the hpctrain executable");
		status = HPT_EXIT_INTERNAL;
	} else if (ref.kind == RUNREF_SWEEP) {
		struct sweep_request req = { .where = ref.sweep, .exclude = exclude,
					     .no_ledger = !ledger, .json = json, .hpctrain = exe,
					     .image_changed_ok = changed_ok,
					     .data_changed_ok = data_ok };

		status = submit_sweep_rerun(&req, ref.sweep, all);
	} else {
		struct rerun_request req = { .exclude = exclude, .ledger = ledger, .json = json,
					     .image_changed_ok = changed_ok,
					     .data_changed_ok = data_ok, .again = again,
					     .hpctrain = exe };

		status = rerun_attempt(&ref.rd, &req);
	}
	runref_release(&ref);
	sbuf_release(&err);
	return status;
}

int cmd_rerun(int argc, char **argv)
{
	int c, json = 0, ledger = 1, all = 0, changed_ok = 0, data_ok = 0;
	enum job_again again = JOB_AGAIN_ASK;
	const char *exclude = NULL;
	struct sbuf err = SBUF_INIT;

	opt_reset();
	while ((c = opt_next(&rerun_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case OPT_EXCLUDE:
			if (hpt_slurm_hostlist_check(optarg, &err)) {
				c = opt_error(&rerun_cmd, "--exclude: %s", err.buf);
				sbuf_release(&err);
				return c;
			}
			exclude = optarg;
			break;
		case OPT_NO_LEDGER:
			ledger = 0;
			break;
		case OPT_ALL:
			all = 1;
			break;
		case OPT_IMAGE_CHANGED_OK:
			changed_ok = 1;
			break;
		case OPT_DATA_CHANGED_OK:
			data_ok = 1;
			break;
		case OPT_FRESH:
		case OPT_RESUME:
			if (again)
				return opt_error(&rerun_cmd, "--fresh and --resume: one or the other");
			again = c == OPT_FRESH ? JOB_AGAIN_FRESH : JOB_AGAIN_RESUME;
			break;
		case 'h':
			opt_usage(stdout, &rerun_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&rerun_cmd, optind >= argc ? "no run given" : "one run at a time");
	if (opt_check_operands(&rerun_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	return rerun_of(argv[optind], exclude, ledger, json, all, changed_ok, data_ok, again);
}
