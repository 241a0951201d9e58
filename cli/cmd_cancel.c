/* cmd_cancel.c - `hpctrain cancel`: cancel the jobs of runs or job ids.
 * Shell: resolves each argument (launcher/rundir) and cancels through
 * libslurm (launcher/slurm), as scancel does. */
#include "cli/builtin.h"     // defines: cmd_cancel
#include "common/exitcode.h"    // defines: enum hpt_exit
#include "common/opt.h"         // defines: struct opt, opt_next
#include "common/sbuf.h"        // defines: struct sbuf
#include "launcher/rundir.h" // defines: rundir_resolve
#include "launcher/slurm.h"  // defines: hpt_slurm_cancel

#include <stdio.h>

static const char *const cancel_usage[] = {
	"hpctrain cancel (<run> | <jobid>)...",
	NULL,
};

static const struct opt cancel_opts[] = {
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd cancel_cmd = {
	.name = "cancel",
	.usage = cancel_usage,
	.summary = "Cancel the Slurm jobs of runs or job ids; they end CANCELLED.",
	.opts = cancel_opts,
};

static int cancel_one(const char *arg)
{
	struct sbuf err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	unsigned long id;
	bool done;
	int status = HPT_EXIT_OK;

	if (rundir_resolve(arg, &rd, &id, &err)) {
		status = HPT_EXIT_NO_INPUT;
	} else if (!(status = hpt_slurm_cancel((uint32_t)id, &done, &err))) {
		if (done)
			fprintf(stderr, "hpctrain cancel: job %lu had already finished\n", id);
		else
			printf("cancelled job %lu\n", id);
	}
	if (status)
		fprintf(stderr, "hpctrain cancel: %s\n", err.buf);
	rundir_release(&rd);
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
		return opt_error(&cancel_cmd, "no run or job id given");
	status = hpt_slurm_init(&err);
	if (status) {
		fprintf(stderr, "hpctrain cancel: %s\n", err.buf);
		sbuf_release(&err);
		return status;
	}
	/* every argument is tried; the first failure's status is kept */
	for (int i = optind; i < argc; i++) {
		int s = cancel_one(argv[i]);

		if (!status)
			status = s;
	}
	hpt_slurm_fini();
	sbuf_release(&err);
	return status;
}
