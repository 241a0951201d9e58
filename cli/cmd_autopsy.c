/* cmd_autopsy.c - `hpctrain autopsy`: where every rank of a stopped job stood.
 * Shell: finds the attempt (launcher/runs/rundir), its size from resolved.yaml,
 * and merges the ranks' stacks (launcher/supervise/stackfile, autopsy)
 * into RUN/autopsy.txt, which it prints. */
#include "cli/builtin.h"        // defines: cmd_autopsy
#include "common/say.h" // defines: say
#include "common/diag.h"           // defines: struct diag_list
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/opt.h"            // defines: struct opt, opt_next
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/spec/spec.h"           // defines: struct job
#include "common/spec/specfile.h"       // defines: specfile_load_run
#include "launcher/runs/runref.h"    // defines: struct runref, runref_resolve, runref_job_run
#include "launcher/slurm/slurm.h"    // defines: hpt_slurm_init
#include "launcher/supervise/stackfile.h" // defines: stackfile_autopsy

#include <stdio.h>
#include <stdlib.h>

static const char *const autopsy_usage[] = {
	"hpctrain autopsy [--quiet] (<run> | <jobid> | <name>)",
	NULL,
};

static const struct opt autopsy_opts[] = {
	{ "quiet", no_argument, NULL, 'q', NULL, "write RUN/autopsy.txt without printing it" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd autopsy_cmd = {
	.name = "autopsy",
	.usage = autopsy_usage,
	.summary = "Merge the stacks that supervised ranks recorded when a job stalled or ignored "
		"its preemption signal into groups of identical stacks, name the odd ranks out, "
		"and write RUN/autopsy.txt.",
	.opts = autopsy_opts,
};

/* The number of ranks the run was for; 0 when its spec cannot be read. */
static unsigned world_of(const struct rundir *rd)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct job job;
	unsigned world = 0;

	if (!specfile_load_run(rd->dir, &job, &dl, &where, NULL))
		world = (unsigned)(job.resources.nodes * job.resources.ranks_per_node);
	job_release(&job);
	diag_list_release(&dl);
	sbuf_release(&where);
	return world;
}

int cmd_autopsy(int argc, char **argv)
{
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	struct runref ref = RUNREF_INIT;
	int c, quiet = 0, rc, status;

	opt_reset();
	while ((c = opt_next(&autopsy_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 'h':
			opt_usage(stdout, &autopsy_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&autopsy_cmd, optind >= argc ? "no run given" : "one run at a time");
	if (opt_check_operands(&autopsy_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	status = runref_resolve(argv[optind], &ref, &err);
	if (ref.note)
		say("%s", ref.note);
	if (!status && ref.kind == RUNREF_JOB && !(status = hpt_slurm_init(&err)))
		status = runref_job_run(&ref, &err);
	if (!status && ref.kind == RUNREF_SWEEP) {
		sbuf_addf(&err, "autopsy reads one run, not the sweep %s (name a point: NAME/HASH)",
			  ref.sweep);
		status = HPT_EXIT_USAGE;
	}
	if (status) {
		say("%s", err.buf);
		goto out;
	}
	rc = stackfile_autopsy(ref.rd.dir, world_of(&ref.rd), &text, &err);
	if (rc) {
		say("%s", err.buf);
		status = rc > 0 ? HPT_EXIT_NO_INPUT : HPT_EXIT_IO;
	} else if (!quiet) {
		fputs(text.buf, stdout);
		if (fflush(stdout) || ferror(stdout))
			status = HPT_EXIT_IO;
	}
out:
	runref_release(&ref);
	sbuf_release(&err);
	sbuf_release(&text);
	return status;
}
