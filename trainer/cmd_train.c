/* cmd_train.c - `hpctrain train SPEC`: load the spec, make the run
 * directory, start the backend, run the loop.  Shell. */
#include "trainer/cmd.h"      // defines: cmd_train
#include "trainer/backend.h"  // defines: backend_init
#include "trainer/train.h"    // defines: train_run, struct train_config
#include "cli/diag.h"         // defines: struct diag_list, diag_report
#include "cli/exitcode.h"     // defines: enum hpt_exit
#include "cli/fileio.h"       // defines: fileio_read, fileio_write_atomic, fileio_exists
#include "cli/opt.h"          // defines: struct opt, opt_next, opt_usage, opt_error
#include "cli/sbuf.h"         // defines: struct sbuf
#include "cli/spec.h"         // defines: spec_load, spec_emit_resolved, spec_hash
#include "cli/template_dir.h" // defines: template_dir_find, template_dir_is_name
#include "cli/yamltree.h"     // defines: YAMLTREE_MAX_BYTES

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_RUN = 256, OPT_MAX_STEPS, OPT_THREADS, OPT_FRESH };

static const char *const train_usage[] = {
	"hpctrain train [--set <key>=<value>]... [--run <dir>] [--max-steps <n>] [--threads <n>] [--fresh] <spec>",
	NULL,
};

static const struct opt train_opts[] = {
	{ "set", required_argument, NULL, 's', "KEY=VALUE",
	  "override a spec key or template parameter (params.NAME=VALUE)" },
	{ "run", required_argument, NULL, OPT_RUN, "DIR",
	  "run directory (default OUTPUT.DIR/NAME/HASH12)" },
	{ "max-steps", required_argument, NULL, OPT_MAX_STEPS, "N",
	  "stop after N updates in total; the schedule is unchanged" },
	{ "threads", required_argument, NULL, OPT_THREADS, "N",
	  "compute threads (default: OMP_NUM_THREADS, else all cores)" },
	{ "fresh", no_argument, NULL, OPT_FRESH, NULL,
	  "start over: remove the run's checkpoints and metrics" },
	{ "quiet", no_argument, NULL, 'q', NULL, "print no progress lines" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd train_cmd = {
	.name = "train",
	.usage = train_usage,
	.summary = "Train the spec's model with the bundled trainer (a <spec> is a file or a template name).",
	.opts = train_opts,
};

static int parse_count(const char *arg, const char *what, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > max)
		return opt_error(&train_cmd, "%s: expected an integer 1..%lld, got \"%s\"", what,
				 (long long)max, arg);
	*out = v;
	return 0;
}

/* mkdir -p. */
static int make_dirs(const char *path, struct sbuf *err)
{
	char *p = xstrdup(path);

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0777) && errno != EEXIST) {
			sbuf_addf(err, "cannot create %s: %s", p, strerror(errno));
			free(p);
			return -1;
		}
		if (!c)
			break;
		*s = c;
	}
	free(p);
	return 0;
}

static int load_spec(const char *arg, const struct spec_override *sets, size_t nsets,
		     struct job *job)
{
	struct sbuf where = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	int st = 0;

	memset(job, 0, sizeof(*job));
	if (template_dir_is_name(arg) && !fileio_exists(arg) && template_dir_find(arg, &where)) {
		fprintf(stderr, "hpctrain train: %s: no such file, and no template of that name\n", arg);
		st = HPT_EXIT_NO_INPUT;
	} else {
		if (!where.len)
			sbuf_addstr(&where, arg);
		if (fileio_read(where.buf, YAMLTREE_MAX_BYTES, &text, &err)) {
			fprintf(stderr, "hpctrain train: %s\n", err.buf);
			st = HPT_EXIT_NO_INPUT;
		} else if (spec_load(where.buf, text.buf, text.len, sets, nsets, job, &dl)) {
			st = HPT_EXIT_BAD_SPEC;
		}
		diag_report(stderr, &dl);
	}
	diag_list_release(&dl);
	sbuf_release(&where);
	sbuf_release(&text);
	sbuf_release(&err);
	return st;
}

int cmd_train(int argc, char **argv)
{
	struct spec_override *sets = NULL;
	size_t nsets = 0;
	struct train_config cfg = { 0 };
	struct sbuf resolved = SBUF_INIT, err = SBUF_INIT;
	const char *run = NULL;
	char hash[65], *run_dir = NULL, *path;
	int64_t threads = 0;
	struct job job = { 0 };
	int c, st;

	cfg.rank = 0;
	cfg.world = 1;
	opt_reset();
	while ((c = opt_next(&train_cmd, argc, argv)) != -1) {
		switch (c) {
		case 's':
			sets = xrealloc(sets, (nsets + 1) * sizeof(*sets));
			sets[nsets].arg = optarg;
			sets[nsets++].where = NULL;
			break;
		case OPT_RUN:
			run = optarg;
			break;
		case OPT_MAX_STEPS:
			if ((st = parse_count(optarg, "--max-steps", INT64_C(1) << 40, &cfg.max_steps)))
				goto out;
			break;
		case OPT_THREADS:
			if ((st = parse_count(optarg, "--threads", 4096, &threads)))
				goto out;
			break;
		case OPT_FRESH:
			cfg.fresh = true;
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'h':
			opt_usage(stdout, &train_cmd);
			st = HPT_EXIT_OK;
			goto out;
		default:
			st = HPT_EXIT_USAGE;
			goto out;
		}
	}
	if (optind != argc - 1) {
		st = opt_error(&train_cmd, optind >= argc ? "no job spec given" : "more than one job spec given");
		goto out;
	}
	st = load_spec(argv[optind], sets, nsets, &job);
	if (st)
		goto out;
	if (job.command.n) {
		fprintf(stderr, "hpctrain train: %s: the spec names a command; run it with 'hpctrain launch'\n",
			argv[optind]);
		st = HPT_EXIT_BAD_SPEC;
		goto out;
	}
	if (spec_emit_resolved(&job, &resolved)) {
		fprintf(stderr, "hpctrain train: cannot emit the resolved spec\n");
		st = HPT_EXIT_INTERNAL;
		goto out;
	}
	spec_hash(resolved.buf, resolved.len, hash);
	run_dir = run ? xstrdup(run) : xasprintf("%s/%s/%.12s", job.output.dir, job.name, hash);
	if (make_dirs(run_dir, &err)) {
		st = HPT_EXIT_IO;
		goto report;
	}
	path = xasprintf("%s/resolved.yaml", run_dir);
	if (!fileio_exists(path) &&
	    fileio_write_atomic(path, resolved.buf, resolved.len, 0644, 0, &err)) {
		free(path);
		st = HPT_EXIT_IO;
		goto report;
	}
	free(path);
	if (backend_init((int)threads, &err)) {
		st = HPT_EXIT_INTERNAL;
		goto report;
	}
	cfg.job = &job;
	cfg.run_dir = run_dir;
	cfg.hash = hash;
	st = train_run(&cfg, NULL, &err);
report:
	if (st && err.len)
		fprintf(stderr, "hpctrain train: %s\n", err.buf);
out:
	job_release(&job);
	sbuf_release(&resolved);
	sbuf_release(&err);
	free(run_dir);
	free(sets);
	return st;
}
