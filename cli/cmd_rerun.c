/* cmd_rerun.c - `hpctrain rerun`: submit a run again, as a new attempt.
 * Shell: reloads the run's resolved.yaml, renders it with this hpctrain,
 * makes RUN/attempts/N (launcher/rundir) and submits (launcher/attempt). */
#include "cli/json_print.h" // defines: json_print
#include "cli/builtin.h"       // defines: cmd_rerun
#include "cli/submit_report.h" // defines: submit_report
#include "common/spec/specfile.h"     // defines: specfile_load
#include "common/diag.h"         // defines: struct diag_list, diag_report
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf
#include "launcher/attempt.h" // defines: struct attempt, attempt_prepare
#include "launcher/rundir.h"  // defines: rundir_open, rundir_new_attempt
#include "launcher/slurm.h"   // defines: hpt_slurm_init

#include <limits.h>
#include <stdio.h>
#include <string.h>

enum { OPT_EXCLUDE = 256, OPT_NO_LEDGER };

static const char *const rerun_usage[] = {
	"hpctrain rerun [--exclude <nodes>] [--no-ledger] [--json] <run>",
	NULL,
};

static const struct opt rerun_opts[] = {
	{ "exclude", required_argument, NULL, OPT_EXCLUDE, "NODES",
	  "never run on these nodes (a Slurm hostlist, e.g. node[3,7])" },
	{ "no-ledger", no_argument, NULL, OPT_NO_LEDGER, NULL,
	  "do not leave out the nodes that hpctrain doctor's ledger holds in cooldown" },
	{ "json", no_argument, NULL, 'j', NULL, "print the new attempt's record as JSON" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd rerun_cmd = {
	.name = "rerun",
	.usage = rerun_usage,
	.summary = "Submit a run's job again as a new attempt (RUN/attempts/N) of the same run.",
	.opts = rerun_opts,
};

/* Loads run/resolved.yaml and checks it still resolves to itself: an
 * edited file, or one from an hpctrain whose canonical form differs,
 * would start a job that is not this run. */
static int load_run(const struct rundir *rd, struct attempt *at, const char *exe)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, path = SBUF_INIT, old = SBUF_INIT;
	int status;

	sbuf_addf(&path, "%s/resolved.yaml", rd->run);
	status = specfile_load(path.buf, NULL, &at->job, &dl, &where);
	if (!status)
		status = attempt_prepare(at, exe, &dl);
	diag_report(stderr, &dl);
	if (!status) {
		FILE *fp = fopen(path.buf, "r");
		char buf[8192];
		size_t k;

		while (fp && (k = fread(buf, 1, sizeof(buf), fp)) > 0)
			sbuf_add(&old, buf, k);
		if (fp)
			fclose(fp);
		if (old.len != at->resolved.len || memcmp(old.buf, at->resolved.buf, old.len)) {
			fprintf(stderr,
				"hpctrain rerun: %s no longer resolves to itself (edited, or from "
				"another hpctrain version); submit the spec again instead\n",
				path.buf);
			status = HPT_EXIT_BAD_SPEC;
		}
	}
	diag_list_release(&dl);
	sbuf_release(&where);
	sbuf_release(&path);
	sbuf_release(&old);
	return status;
}

/* A new attempt of run: its spec re-resolved as it was, submitted. */
static int rerun(const char *run, const char *exclude, int ledger, int json)
{
	struct sbuf err = SBUF_INIT;
	struct rundir found = RUNDIR_INIT, rd = RUNDIR_INIT;
	struct attempt at;
	char exe[PATH_MAX];
	int status;

	attempt_init(&at);
	if (rundir_open(run, &found, &err)) {
		fprintf(stderr, "hpctrain rerun: %s\n", err.buf);
		status = HPT_EXIT_NO_INPUT;
		goto out;
	}
	if (attempt_self_path(exe, sizeof(exe))) {
		fprintf(stderr, "hpctrain rerun: cannot find the hpctrain executable\n");
		status = HPT_EXIT_INTERNAL;
		goto out;
	}
	status = load_run(&found, &at, exe);
	if (status)
		goto out;
	status = hpt_slurm_init(&err);
	if (!status)
		status = submit_exclude(&at, exclude, ledger, exe, &err);
	if (status) {
		fprintf(stderr, "hpctrain rerun: %s\n", err.buf);
		goto out;
	}
	if (rundir_new_attempt(found.run, &rd, &err))
		status = HPT_EXIT_IO;
	else
		status = submit_report(&at, &rd, json, &err);
	if (status)
		fprintf(stderr, "hpctrain rerun: %s\n", err.buf);
	hpt_slurm_fini();
out:
	attempt_release(&at);
	rundir_release(&found);
	rundir_release(&rd);
	sbuf_release(&err);
	return status;
}

int cmd_rerun(int argc, char **argv)
{
	int c, json = 0, ledger = 1;
	const char *exclude = NULL;
	struct sbuf err = SBUF_INIT;

	opt_reset();
	while ((c = opt_next(&rerun_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case OPT_EXCLUDE:
			if (submit_check_hostlist(optarg, &err)) {
				c = opt_error(&rerun_cmd, "--exclude: %s", err.buf);
				sbuf_release(&err);
				return c;
			}
			exclude = optarg;
			break;
		case OPT_NO_LEDGER:
			ledger = 0;
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
	return rerun(argv[optind], exclude, ledger, json);
}
