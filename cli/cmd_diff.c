/* cmd_diff.c - `hpctrain diff RUN_A RUN_B`: what differs between two
 * runs (spec, code, image, data, versions, shape) and their final
 * metrics side by side; exit 0 when the same, 1 when not, as diff(1).
 * Shell: resolves the two names (launcher/runs/runref), compares
 * (launcher/job/run_diff) and prints (launcher/job/run_diff_text, or
 * JSON). */
#include "cli/builtin.h"                // defines: cmd_diff
#include "common/exitcode.h"            // defines: enum hpt_exit
#include "common/json_print.h"          // defines: json_print
#include "common/opt.h"                 // defines: struct opt, opt_next
#include "common/say.h"                 // defines: say
#include "common/sbuf.h"                // defines: struct sbuf
#include "launcher/job/run_diff.h"      // defines: run_diff
#include "launcher/job/run_diff_text.h" // defines: run_diff_text, RUN_DIFF_TEXT_STAT
#include "launcher/runs/runref.h"       // defines: runref_resolve, runref_job_run
#include "launcher/slurm/slurm.h"       // defines: hpt_slurm_init

#include <stdio.h>

enum { OPT_STAT = 256 };

static const char *const diff_usage[] = {
	"hpctrain diff [--stat] [--json] <run-a> <run-b>",
	NULL,
};

static const struct opt diff_opts[] = {
	{ "stat", no_argument, NULL, OPT_STAT, NULL,
	  "show the code section's counts of changed lines, not its diffs" },
	{ "json", no_argument, NULL, 'j', NULL, "print one JSON object with every section" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd diff_cmd = {
	.name = "diff",
	.usage = diff_usage,
	.summary = "Show what differs between two runs: resolved spec, code, image digest, "
		   "data manifests, versions and shape, then their final metrics side by side.",
	.opts = diff_opts,
};

/* arg as a run (or attempt) directory: a sweep names several runs, so
 * it is refused with the form that names one of its points; a job id
 * asks Slurm which run it worked in.  0 or a status, said. */
static int resolve(const char *arg, struct runref *ref)
{
	struct sbuf err = SBUF_INIT;
	int status = runref_resolve(arg, ref, &err);

	if (ref->note)
		say("%s", ref->note);
	if (!status && ref->kind == RUNREF_SWEEP) {
		status = opt_error(&diff_cmd, "%s is a sweep; name one of its points (NAME/HASH)",
				   SBUF_CLIP(arg));
		sbuf_release(&err);
		return status;
	}
	if (!status && ref->kind == RUNREF_JOB)
		status = hpt_slurm_init(&err);
	if (!status)
		status = runref_job_run(ref, &err);
	if (status && err.len)
		say("%s", err.buf);
	sbuf_release(&err);
	return status;
}

static int compare(const char *dir_a, const char *dir_b, unsigned flags, int json)
{
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	json_t *doc = NULL;
	int status = run_diff(dir_a, dir_b, &doc, &err), same;

	if (status) {
		say("%s", err.buf);
		sbuf_release(&err);
		return status;
	}
	same = json_is_true(json_object_get(doc, "same"));
	if (json) {
		status = json_print(doc);
	} else {
		run_diff_text(doc, flags, &text);
		fwrite(text.buf, 1, text.len, stdout);
		json_decref(doc);
	}
	sbuf_release(&text);
	sbuf_release(&err);
	return status ? status : same ? HPT_EXIT_OK : HPT_EXIT_FAILURE;
}

int cmd_diff(int argc, char **argv)
{
	struct runref a = RUNREF_INIT, b = RUNREF_INIT;
	unsigned flags = 0;
	int c, json = 0, status;

	opt_reset();
	while ((c = opt_next(&diff_cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_STAT:
			flags |= RUN_DIFF_TEXT_STAT;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			opt_usage(stdout, &diff_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (argc - optind != 2)
		return opt_error(&diff_cmd, argc - optind < 2 ? "two runs are needed, got %d"
							      : "two runs at a time, got %d",
				 argc - optind);
	if (opt_check_operands(&diff_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	status = resolve(argv[optind], &a);
	if (!status)
		status = resolve(argv[optind + 1], &b);
	if (!status)
		status = compare(a.rd.dir, b.rd.dir, flags, json);
	runref_release(&a);
	runref_release(&b);
	return status;
}
