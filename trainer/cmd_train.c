/* cmd_train.c - `hpctrain train SPEC`: load the spec, pick the device,
 * make the run directory, start the backend, run the loop.  Shell. */
#include "trainer/cmd.h"      // defines: cmd_train
#include "common/say.h" // defines: say
#include "trainer/cpu/backend.h"  // defines: backend_init, be_tune_off
#include "trainer/cuda/backend_cuda.h" // defines: be_cuda_built, be_cuda_device_count
#include "trainer/comm/comm.h"     // defines: struct comm, comm_init, comm_hooks, comm_finish
#include "trainer/cuda/comm_cuda.h" // defines: struct comm_cuda, comm_cuda_*
#include "trainer/train.h"    // defines: train_run, struct train_config
#include "trainer/train_env.h" // defines: train_env_check
#include "common/diag.h"         // defines: struct diag_list, diag_report
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/fileio.h"       // defines: fileio_private_dir, fileio_write_atomic, fileio_exists
#include "common/opt.h"          // defines: struct opt, opt_next, opt_usage, opt_error
#include "common/sbuf.h"         // defines: struct sbuf, SBUF_CLIP
#include "common/spec/spec.h"         // defines: spec_emit_resolved, spec_hash
#include "common/spec/template.h" // defines: TEMPLATE_OVERRIDE_FORM
#include "common/spec/specfile.h"   // defines: specfile_load, specfile_overrides_*, SPECFILE_RUN_SPEC

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_RUN = 256, OPT_MAX_STEPS, OPT_THREADS, OPT_FRESH, OPT_NEW_GLOBAL_BATCH };

static const char *const train_usage[] = {
	"hpctrain train [--set <key>=<value>]... [--run <dir>] [--max-steps <n>] [--threads <n>] [--fresh] [--new-global-batch] <spec>",
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
	{ "new-global-batch", no_argument, NULL, OPT_NEW_GLOBAL_BATCH, NULL,
	  "resume at ranks x batch_per_rank, not the checkpoint's global batch" },
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
				 (long long)max, SBUF_CLIP(arg));
	*out = v;
	return 0;
}

/* Why there is no GPU: "this trainer was built without CUDA", or "no GPU
 * is visible (CUDA_VISIBLE_DEVICES=...)" (or "... unset)"). */
static void add_why_no_gpu(struct sbuf *sb)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");

	if (!be_cuda_built())
		sbuf_addstr(sb, "this trainer was built without CUDA");
	else if (v)
		sbuf_addf(sb, "no GPU is visible (CUDA_VISIBLE_DEVICES=%s)", SBUF_CLIP(v));
	else
		sbuf_addstr(sb, "no GPU is visible (CUDA_VISIBLE_DEVICES unset)");
}

/* train.device: cuda insists on a GPU (HPT_EXIT_UNAVAILABLE without
 * one), cpu declines it, auto takes it when this trainer has CUDA, a GPU
 * is visible and the spec asks for GPUs (resources.gpus_per_node > 0);
 * rank 0 says why auto does not when GPUs were asked for (and nothing
 * otherwise, so CPU jobs on GPU nodes print what they always did).
 * Under auto the ranks agree, so a job never has ranks in NCCL waiting
 * for ranks on the CPU.  0 or a status with err. */
static int pick_device(const struct job *job, struct comm *comm, bool *cuda, struct sbuf *err)
{
	const struct job_train *tr = &job->train;
	struct sbuf note = SBUF_INIT;
	int gpus = be_cuda_device_count(), st;
	bool want;

	if (tr->device == DEVICE_CUDA && gpus < 1) {
		sbuf_addstr(err, "train.device: cuda, but ");
		add_why_no_gpu(err);
		return HPT_EXIT_UNAVAILABLE;
	}
	*cuda = tr->device == DEVICE_CUDA;
	/* decided by the spec alone, so the same on every rank (cuda: or a
	 * rank failed above) */
	if (tr->device != DEVICE_AUTO || job->resources.gpus_per_node < 1)
		return 0;
	want = *cuda = gpus > 0;
	if (!want) {
		sbuf_addf(&note, "resources.gpus_per_node is %lld, but ",
			  (long long)job->resources.gpus_per_node);
		add_why_no_gpu(&note);
	}
	st = comm_cuda_agree(comm, cuda, err); /* collective: every rank gets here */
	if (!st && want && !*cuda)
		sbuf_addstr(&note, "not every rank sees a GPU");
	if (!st && note.len && !comm->rank)
		say("train.device: auto: %s; training on the CPU",
			note.buf);
	sbuf_release(&note);
	return st;
}

/* Loads the spec argument the way every hpctrain command does. */
static int load_spec(const char *arg, const struct specfile_overrides *sets, struct job *job)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	int st = specfile_load(arg, sets, job, &dl, &where);

	diag_report(stderr, &dl);
	diag_list_release(&dl);
	sbuf_release(&where);
	return st;
}

/* What the command line asked for. */
struct train_args {
	struct specfile_overrides sets;
	const char *run;  /* --run DIR, or NULL: OUTPUT/NAME/HASH12 */
	const char *spec;
	int64_t max_steps, threads;
	bool fresh, new_global_batch, quiet, help;
};

/* The trainer's environment, before the run directory is made: a
 * misspelt variable is a usage error, an OMP_NUM_THREADS above the CPUs
 * is clamped (train_env.h); a->threads becomes the count in force. */
static int check_env(struct train_args *a)
{
	struct sbuf err = SBUF_INIT, warn = SBUF_INIT;
	int threads = 0, st = HPT_EXIT_OK;

	if (train_env_check(a->threads, &threads, &err, &warn)) {
		say("%s", err.buf);
		st = HPT_EXIT_USAGE;
	} else if (warn.len) {
		say("warning: %s", warn.buf);
	}
	a->threads = threads;
	sbuf_release(&err);
	sbuf_release(&warn);
	return st;
}

/* 0 with a filled, or a status (usage error printed).  --help prints
 * the usage and sets a->help. */
static int parse_args(int argc, char **argv, struct train_args *a)
{
	int c, st;

	opt_reset();
	while ((c = opt_next(&train_cmd, argc, argv)) != -1) {
		switch (c) {
		case 's':
			if (specfile_overrides_add(&a->sets, optarg))
				return opt_error(&train_cmd, "--set: expected " TEMPLATE_OVERRIDE_FORM
						 ", got '%s'", SBUF_CLIP(optarg));
			break;
		case OPT_RUN:
			a->run = optarg;
			break;
		case OPT_MAX_STEPS:
			if ((st = parse_count(optarg, "--max-steps", INT64_C(1) << 40, &a->max_steps)))
				return st;
			break;
		case OPT_THREADS:
			if ((st = parse_count(optarg, "--threads", TRAIN_ENV_MAX_THREADS, &a->threads)))
				return st;
			break;
		case OPT_FRESH:
			a->fresh = true;
			break;
		case OPT_NEW_GLOBAL_BATCH:
			a->new_global_batch = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			opt_usage(stdout, &train_cmd);
			a->help = true;
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&train_cmd, optind >= argc ? "no job spec given"
							      : "more than one job spec given");
	if (opt_check_operands(&train_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	a->spec = argv[optind];
	return HPT_EXIT_OK;
}

/* The job from its spec, its resolved form and that form's hash: what
 * names the run directory and every checkpoint.  0 or a status. */
static int resolve_job(const struct train_args *a, struct job *job, struct sbuf *resolved,
		       char hash[65])
{
	int st = load_spec(a->spec, &a->sets, job);

	if (st)
		return st;
	if (job->command.n) {
		say("%s: the spec names a command; run it with 'hpctrain launch'",
			a->spec);
		return HPT_EXIT_BAD_SPEC;
	}
	if (spec_emit_resolved(job, resolved)) {
		say("cannot emit the resolved spec");
		return HPT_EXIT_INTERNAL;
	}
	spec_hash(resolved->buf, resolved->len, hash);
	return HPT_EXIT_OK;
}

/* Every rank of a job makes the same run directory; rank 0 writes the
 * resolved spec into it, once.  The directory is private, as submit
 * makes it (0700, files 0600, whatever the umask): the spec's env may
 * hold a token, and a directory another user owns or may write could
 * hold a checkpoint planted for the next resume, or a metrics.jsonl
 * link the trainer would append through.  Such a directory is refused:
 * HPT_EXIT_IO, as for one that cannot be made.  0 or a status with err. */
static int prepare_run_dir(const char *run_dir, int rank, const struct sbuf *resolved,
			   struct sbuf *err)
{
	char *path;
	int st = HPT_EXIT_OK;

	if (fileio_private_dir(run_dir, err))
		return HPT_EXIT_IO;
	path = xasprintf("%s/" SPECFILE_RUN_SPEC, run_dir);
	if (!rank && !fileio_exists(path) &&
	    fileio_write_atomic(path, resolved->buf, resolved->len, 0600, 0, err))
		st = HPT_EXIT_IO;
	free(path);
	return st;
}

/* MPI, the device, the run directory and the backend, then the run.
 * Every failure after MPI started goes through comm_finish, so the
 * other ranks learn of it.  Returns the run's status. */
static int run_job(const struct train_args *a, const struct job *job, const struct sbuf *resolved,
		   const char *hash)
{
	struct train_config cfg = { .job = job, .hash = hash, .max_steps = a->max_steps,
				    .fresh = a->fresh, .new_global_batch = a->new_global_batch, .quiet = a->quiet, .world = 1 };
	struct sbuf err = SBUF_INIT;
	struct comm comm = { 0 };
	struct comm_cuda cc = { 0 };
	struct train_hooks hooks;
	char *run_dir = NULL;
	bool comm_up = false;
	int st;

	/* MPI before anything that depends on the rank. */
	if ((st = comm_init(&comm, job, &err)))
		goto report;
	comm_up = true;
	cfg.rank = comm.rank;
	cfg.world = comm.world;
	if ((st = pick_device(job, &comm, &cfg.cuda, &err)) ||
	    (cfg.cuda && (st = comm_cuda_init(&cc, &comm, &err))))
		goto report;
	run_dir = a->run ? xstrdup(a->run) : xasprintf("%s/%s/%.12s", job->output.dir, job->name, hash);
	if ((st = prepare_run_dir(run_dir, cfg.rank, resolved, &err)))
		goto report;
	if (backend_init((int)a->threads, &err)) {
		st = HPT_EXIT_INTERNAL;
		goto report;
	}
	if (cfg.cuda) /* the host model only holds the parameters */
		be_tune_off();
	cfg.run_dir = run_dir;
	comm_hooks(&comm, &hooks);
	if (cfg.cuda)
		comm_cuda_hooks(&cc, &hooks);
	st = train_run(&cfg, &hooks, &err);
report:
	if (st && err.len && cfg.world > 1)
		say("rank %d: %s", cfg.rank, err.buf);
	else if (st && err.len)
		say("%s", err.buf);
	if (comm_up)
		st = comm_finish(&comm, st);
	comm_cuda_release(&cc); /* after comm_finish: a failed job aborts before NCCL can wait */
	comm_release(&comm);
	free(run_dir);
	sbuf_release(&err);
	return st;
}

int cmd_train(int argc, char **argv)
{
	struct train_args a = { .sets = SPECFILE_OVERRIDES_INIT };
	struct sbuf resolved = SBUF_INIT;
	struct job job = { 0 };
	char hash[65];
	int st = parse_args(argc, argv, &a);

	if (!st && !a.help)
		st = check_env(&a);
	if (!st && !a.help)
		st = resolve_job(&a, &job, &resolved, hash);
	if (!st && !a.help)
		st = run_job(&a, &job, &resolved, hash);
	job_release(&job);
	sbuf_release(&resolved);
	specfile_overrides_release(&a.sets);
	return st;
}
