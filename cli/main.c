/* main.c - hpctrain's entry point: one table of subcommands, git-style.
 * Shell: picks the command, runs it, flushes stdout and returns its
 * status.  See cli/builtin.h for what a new subcommand needs. */
#include "cli/builtin.h"  // defines: cmd_* entry points
#include "common/bug.h"      // defines: BUG
#include "common/exitcode.h" // defines: enum hpt_exit
#include "common/fileio.h"   // defines: fileio_self_exe
#include "common/opt.h"      // defines: struct opt_cmd, opt_usage
#include "common/say.h"      // defines: say_set_prefix
#include "common/sbuf.h"     // defines: xcalloc, sbuf_clip
#include "common/suggest.h"  // defines: suggest_best
#include "common/version.h"  // defines: hpt_version
#include "launcher/slurm/slurm.h" // defines: hpt_slurm_fini
#include "common/strfmt.h" // defines: strfmt_label

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fn == NULL marks an external command, run by exec'ing hpctrain-<program>
 * from the same directory (git-style), so the login-node binary never
 * links MPI, oneDNN or CUDA.  With keep_name, the command's own name stays
 * the program's first argument: `hpctrain data convert` runs
 * `hpctrain-train data convert`.
 *
 * flags, as git's RUN_SETUP: NEEDS_SLURM, the command may talk to
 * slurmctld (its first hpt_slurm_init reads the configuration; main
 * frees it after the command, once).  A command that reached Slurm
 * without the flag is a BUG: the table says which commands need a
 * cluster. */
enum command_flags { NEEDS_SLURM = 1 << 0 };

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *program;
	int keep_name;
	unsigned flags;
};

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct command commands[] = {
	{ .name = "validate", .fn = cmd_validate, .summary = "check job specs and print their resolved form and hash" },
	{ .name = "template", .fn = cmd_template, .summary = "list, show and copy the bundled job templates" },
	{ .name = "topo", .fn = cmd_topo, .summary = "show a node's GPUs, NICs, NUMA nodes and cores, and the binding plan" },
	{ .name = "launch", .fn = cmd_launch, .summary = "bind one rank to its GPU, NICs, cores and memory, then exec a program" },
	{ .name = "submit", .fn = cmd_submit, .summary = "submit a job spec to Slurm as a batch job with a run record",
	  .flags = NEEDS_SLURM },
	{ .name = "status", .fn = cmd_status, .summary = "show the Slurm state of a run or job, or of all your jobs",
	  .flags = NEEDS_SLURM },
	{ .name = "cancel", .fn = cmd_cancel, .summary = "cancel the Slurm jobs of runs or job ids",
	  .flags = NEEDS_SLURM },
	{ .name = "logs", .fn = cmd_logs, .summary = "print a run's per-rank logs, one rank or all with labels",
	  .flags = NEEDS_SLURM },
	{ .name = "autopsy", .fn = cmd_autopsy, .summary = "merge a stalled run's rank stacks into groups and name the odd ranks out",
	  .flags = NEEDS_SLURM },
	{ .name = "plan", .fn = cmd_plan, .summary = "predict each job shape's start and finish and pick the first to finish",
	  .flags = NEEDS_SLURM },
	{ .name = "rerun", .fn = cmd_rerun, .summary = "submit a run again as a new attempt of the same run",
	  .flags = NEEDS_SLURM },
	{ .name = "diff", .fn = cmd_diff, .summary = "show what differs between two runs: spec, code, image, data, versions, shape and metrics",
	  .flags = NEEDS_SLURM },
	{ .name = "doctor", .summary = "check every node of an allocation before it trains; keep a ledger of bad nodes (runs hpctrain-doctor)",
	  .program = "doctor" },
	{ .name = "stage", .summary = "copy data sets to every node's cache from one read of the shared file system (runs hpctrain-stage)",
	  .program = "stage" },
	{ .name = "report", .summary = "chart a run or a sweep as PNG files, with a text summary and report.md (runs hpctrain-report)",
	  .program = "report" },
	{ .name = "train", .summary = "train a model with the bundled trainer (runs hpctrain-train)",
	  .program = "train" },
	{ .name = "data", .summary = "convert data sets to the trainer's sharded format (runs hpctrain-train)",
	  .program = "train", .keep_name = 1 },
	{ .name = "help", .fn = cmd_help, .summary = "show help for hpctrain or one of its commands" },
	{ .name = "version", .fn = cmd_version, .summary = "print the version" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char *const main_usage[] = {
	"hpctrain [--version] [--help] <command> [<args>]",
	NULL,
};

static const struct opt_cmd main_cmd = {
	.name = "",
	.usage = main_usage,
	.summary = "Train models on HPC clusters: job specs, binding, Slurm and the trainer.",
	.opts = NULL,
};

static void print_commands(FILE *fp)
{
	opt_usage(fp, &main_cmd);
	fputs("\ncommands:\n", fp);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "  %-12s%s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'hpctrain <command> --help' or 'man hpctrain-<command>' for details.\n", fp);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[NCOMMANDS];
	char clip[SBUF_CLIP_SIZE];
	const char *best;

	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	best = suggest_best(name, names, NCOMMANDS);
	fprintf(stderr, "hpctrain: '%s' is not an hpctrain command", sbuf_clip(name, clip));
	if (best)
		fprintf(stderr, "; did you mean '%s'?", best);
	fputs("\nsee 'hpctrain help'\n", stderr);
	return HPT_EXIT_USAGE;
}

/* Execs hpctrain-<c->program> from the directory of this binary, else
 * from PATH; returns only on failure.  argv[0] is the command's name. */
static int run_external(const struct command *c, int argc, char **argv)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *name = c->program;
	char *prog = NULL, **args;

	/* exe is at most PATH_MAX, so both fit; were one cut, another
	 * program would run: checked all the same */
	if (!fileio_self_exe(exe, sizeof(exe)) &&
	    !strfmt(path, sizeof(path), "%s/hpctrain-%s", dirname(exe), name) && !access(path, X_OK))
		prog = path;
	if (!prog && strfmt(path, sizeof(path), "hpctrain-%s", name))
		BUG("the program name hpctrain-%s does not fit in %zu bytes", name, sizeof(path));
	if (!prog)
		prog = path;
	fflush(stdout);
	args = xcalloc((size_t)argc + 2, sizeof(*args));
	args[0] = prog;
	for (int i = c->keep_name ? 0 : 1, k = 1; i < argc; i++)
		args[k++] = argv[i];
	execvp(prog, args);
	free(args);
	fprintf(stderr, "hpctrain: cannot run %s: %s%s\n", prog, strerror(errno),
		errno == ENOENT ? " (was hpctrain built without its trainer?)" : "");
	return errno == ENOENT ? HPT_EXIT_NOTFOUND : HPT_EXIT_NOEXEC;
}

/* A command speaks as "hpctrain NAME" (common/say.h). */
static int run_command(const struct command *c, int argc, char **argv)
{
	static char who[64];

	int status;

	strfmt_label(who, sizeof(who), "hpctrain %s", c->name);
	say_set_prefix(who);
	status = c->fn ? c->fn(argc, argv) : run_external(c, argc, argv);
	if (hpt_slurm_fini() && !(c->flags & NEEDS_SLURM))
		BUG("hpctrain %s reached Slurm, but the command table has no NEEDS_SLURM for it",
		    c->name);
	return status;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *c;
	char help_flag[] = "--help";
	char *args[3];

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_commands(stdout);
		return HPT_EXIT_OK;
	}
	c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	args[0] = argv[1];
	args[1] = help_flag;
	args[2] = NULL;
	return run_command(c, 2, args);
}

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("hpctrain %s\n", hpt_version);
	return HPT_EXIT_OK;
}

static int finish(int status)
{
	return exitcode_finish("hpctrain", status);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		print_commands(stderr);
		return HPT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return finish(cmd_help(1, argv));
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return finish(cmd_version(1, argv));
	if (argv[1][0] == '-') {
		static const char *const flags[] = { "help", "version" };
		const char *best = suggest_best(argv[1] + strspn(argv[1], "-"), flags, 2);
		char clip[SBUF_CLIP_SIZE];

		fprintf(stderr, "hpctrain: unknown option '%s'", sbuf_clip(argv[1], clip));
		if (best)
			fprintf(stderr, "; did you mean '--%s'?", best);
		fputc('\n', stderr);
		opt_usage(stderr, &main_cmd);
		return HPT_EXIT_USAGE;
	}
	c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return finish(run_command(c, argc - 1, argv + 1));
}
