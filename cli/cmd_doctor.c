/* cmd_doctor.c - `hpctrain doctor`: check the nodes of an allocation
 * before they train, and remember the bad ones.
 *
 * Shell: one task per node (srun --mpi=pmix hpctrain doctor), or alone
 * on one node.  This file parses the options, sets up MPI and the
 * timeout, calls launcher/doctor/ and prints: each task checks its node
 * (doctor_self.c), then measures and exchanges over MPI
 * (doctor_exchange.c); the container probe on each node (doctor_container.c)
 * is killed at --timeout; the first task grades across nodes (doctor_grade.c), prints the table or the JSON, records the node
 * ledger (doctor_verdict.c, doctor_record.c) and, as a job's preflight
 * step, submits the run again without the nodes that failed
 * (doctor_preflight.c).  Built as bin/hpctrain-doctor: MPI and oneDNN
 * stay out of the login-node binary. */
#include "common/json_print.h"                   // defines: json_print
#include "common/say.h"                       // defines: say, say_lines
#include "common/diag.h"                      // defines: struct diag_list, diag_report
#include "common/envvar.h"                    // defines: envvar_int
#include "common/exitcode.h"                  // defines: enum hpt_exit
#include "common/mpistep.h"   // defines: mpistep_launched, mpistep_check_alone, mpistep_exit_on_term, mpistep_fence
#include "common/fileio.h"                    // defines: fileio_write_atomic, fileio_check_owned, fileio_exists
#include "common/opt.h"                       // defines: struct opt, opt_next
#include "common/sbuf.h"                      // defines: struct sbuf, SBUF_CLIP
#include "common/spec/spec.h"                 // defines: struct job, job_release
#include "common/spec/specfile.h"             // defines: specfile_load, specfile_load_run
#include "common/jsonb.h" // defines: jsonb_set, jsonb_text
#include "launcher/doctor/doctor.h"           // defines: doctor_compare, doctor_table, doctor_json
#include "launcher/doctor/doctor_exchange.h"  // defines: doctor_exchange_probe, doctor_exchange_gather
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_after
#include "launcher/doctor/doctor_record.h"    // defines: doctor_record_ledger
#include "launcher/doctor/doctor_self.h"      // defines: struct doctor_self, doctor_self_check
#include "launcher/doctor/doctor_verdict.h"   // defines: struct doctor_verdict, doctor_verdict_make
#include "launcher/doctor/ledger.h"           // defines: ledger_repair, ledger_forget, ledger_format
#include "launcher/doctor/doctor_lost.h"      // defines: doctor_lost_run
#include "launcher/job/rerun.h"               // defines: rerun_from_job
#include "topology/plan.h"                    // defines: PLAN_MAX_RANKS

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { OPT_SPEC = 256, OPT_PREFLIGHT, OPT_RANKS, OPT_SCRATCH, OPT_MIN_FREE, OPT_TIMEOUT,
       OPT_EXCLUDE_FILE, OPT_LEDGER, OPT_FORGET, OPT_RESET, OPT_NO_LEDGER, OPT_STRAGGLER,
       OPT_ROOT, OPT_LOST };

static const char *const doctor_usage[] = {
	"srun --mpi=pmix --ntasks-per-node=1 hpctrain doctor [--spec <file>] [options]",
	"hpctrain doctor [--spec <file>] [--json] [--exclude-file <file>]",
	"hpctrain doctor --ledger [--json]",
	"hpctrain doctor --forget <node>",
	"hpctrain doctor --reset",
	NULL,
};

static const struct opt doctor_opts[] = {
	{ "spec", required_argument, NULL, OPT_SPEC, "FILE",
	  "check for this job: its binding, env (NCCL/UCX names), ranks, preflight keys "
	  "and container" },
	{ "lost", required_argument, NULL, OPT_LOST, "RUN",
	  "after RUN's preflight or training step failed: go on inside the job without the "
	  "nodes lost, or resubmit RUN without them" },
	{ "preflight", required_argument, NULL, OPT_PREFLIGHT, "RUN",
	  "run as the job's first step: the spec is RUN/resolved.yaml; record RUN/preflight.json "
	  "and resubmit without failed nodes" },
	{ "ranks-per-node", required_argument, NULL, OPT_RANKS, "N",
	  "binding slots to check (default: the spec's, else 1)" },
	{ "scratch", required_argument, NULL, OPT_SCRATCH, "DIR",
	  "node-local scratch to check (default: preflight.scratch, $TMPDIR, /tmp)" },
	{ "min-free-gb", required_argument, NULL, OPT_MIN_FREE, "GB",
	  "less free space fails the files check (default: preflight.min_free_gb, 1)" },
	{ "straggler", required_argument, NULL, OPT_STRAGGLER, "RATIO",
	  "a node whose GEMM runs below RATIO of the fastest node's fails (default: "
	  "preflight.straggler, 0.5)" },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT, "SECONDS",
	  "give up on a node or link that has not answered (default 60)" },
	{ "exclude-file", required_argument, NULL, OPT_EXCLUDE_FILE, "FILE",
	  "write the failed nodes there as a Slurm hostlist (empty when none)" },
	{ "json", no_argument, NULL, 'j', NULL, "print JSON instead of the table" },
	{ "verbose", no_argument, NULL, 'v', NULL, "give the reason of every cell, not only problems" },
	{ "no-ledger", no_argument, NULL, OPT_NO_LEDGER, NULL, "do not record this run in the node ledger" },
	{ "ledger", no_argument, NULL, OPT_LEDGER, NULL, "show the node ledger and exit" },
	{ "forget", required_argument, NULL, OPT_FORGET, "NODE",
	  "clear a node's ledger entry and exit (a corrupt ledger is kept aside and started anew)" },
	{ "reset", no_argument, NULL, OPT_RESET, NULL,
	  "empty the ledger, keeping the old file beside it, and exit" },
	{ "root", required_argument, NULL, OPT_ROOT, "DIR",
	  "read sysfs and /proc below DIR (recorded trees, for tests)" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd doctor_cmd = {
	.name = "doctor",
	.usage = doctor_usage,
	.summary = "Check every node of an allocation (GPUs, NICs, binding, compute, network, files, "
		   "munge, clocks and the job's container) and keep a ledger of nodes that failed.",
	.opts = doctor_opts,
};

/* The command's options, then what it loaded and where it runs; what
 * the checks found on this node is self's (launcher/doctor/doctor_self.h). */
struct doctor {
	const char *spec, *run, *scratch, *exclude_file, *forget, *root, *lost;
	bool json, verbose, ledger_show, no_ledger, reset;
	long ranks;
	double min_free_gb, timeout_s, straggler;
	struct doctor_limits lim;

	struct job job;
	bool have_job;
	int rank, size;
	bool mpi;
	struct doctor_self self;
};

static int load_spec(struct doctor *d)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	int status;

	if (!d->spec && !d->run)
		return HPT_EXIT_OK;
	/* --preflight writes RUN/preflight.json and resubmits RUN: another
	 * user's run, or one others may write, is refused as train and
	 * launch refuse it.  A missing one is left to specfile_load_run. */
	if (d->run && fileio_exists(d->run) && fileio_check_owned(d->run, &where)) {
		say("%s", where.buf);
		sbuf_release(&where);
		return HPT_EXIT_IO;
	}
	status = d->run ? specfile_load_run(d->run, &d->job, &dl, &where, NULL)
			: specfile_load(d->spec, NULL, &d->job, &dl, &where);
	if (status)
		diag_report(stderr, &dl);
	d->have_job = !status;
	diag_list_release(&dl);
	sbuf_release(&where);
	return status;
}

/* --- preflight --- */

/* What the doctor decided: a new attempt of run that resumes from its
 * checkpoints, without the nodes in exclude.  0 or the rerun's status. */
static int resubmit(const char *run, const char *exclude)
{
	struct rerun_request req = { .exclude = exclude, .ledger = 1, .again = JOB_AGAIN_RESUME };
	int rc;

	alarm(0); /* the preflight's --timeout is for the checks, not Slurm */
	if ((rc = rerun_from_job(run, &req)))
		say("the resubmission failed (status %d)", rc);
	return rc;
}

/* Writes RUN/preflight.json; on a failure, resubmits without the failed
 * nodes while preflight.max_resubmits allows and enough nodes are left. */
static void preflight_after(struct doctor *d, json_t *doc, const char *const *failed, size_t k)
{
	struct sbuf msg = SBUF_INIT, run = SBUF_INIT, excl = SBUF_INIT;
	int again = !doctor_preflight_after(d->run, &d->job, doc, failed, k, &run, &excl, &msg);

	say_lines(msg.buf);
	(void)(again && resubmit(run.buf, excl.buf));
	sbuf_release(&msg);
	sbuf_release(&run);
	sbuf_release(&excl);
}

/* --lost RUN: 0 when the run goes on (resubmitted, or here: stdout) */
static int lost(struct doctor *d)
{
	struct sbuf run = SBUF_INIT, excl = SBUF_INIT;
	int status = doctor_lost_run(d->lost, &d->job, &run, &excl);

	if (status == DOCTOR_LOST_ANSWER)
		status = fputs(run.buf, stdout) < 0 || fflush(stdout) ? HPT_EXIT_IO : 0;
	else if (!status)
		status = resubmit(run.buf, excl.buf) ? 1 : 0;
	sbuf_release(&run);
	sbuf_release(&excl);
	return status;
}

/* --- output --- */

static int report(struct doctor *d, struct doctor_node *nodes, size_t n)
{
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;
	struct doctor_verdict v;
	json_t *doc;
	int status;

	doctor_compare(nodes, n, &d->lim);
	doctor_verdict_make(nodes, n, &v);
	doc = doctor_json(nodes, n, v.exclude.buf);
	if (v.job_fault.len)
		jsonb_set(&doc, "job_fault", jsonb_text(v.job_fault.buf));
	if (d->json) {
		json_print(json_incref(doc));
	} else {
		doctor_table(nodes, n, d->verbose, &out);
		if (v.n_failed)
			sbuf_addf(&out, "\nexclude: %s\n", v.exclude.buf);
		fputs(out.buf, stdout);
	}
	if (v.job_fault.len)
		say("%s: the job's problem, not the nodes': none is recorded or excluded", v.job_fault.buf);
	fflush(stdout);
	if (d->exclude_file) {
		sbuf_reset(&out);
		if (v.n_failed)
			sbuf_addf(&out, "%s\n", v.exclude.buf);
		/* atomic, never through a link; 0644: a hostlist is no secret,
		 * and scripts of other users may pass it to sbatch --exclude */
		if (fileio_write_atomic(d->exclude_file, out.buf, out.len, 0644, 0, &err))
			say("%s", err.buf);
	}
	sbuf_reset(&err);
	if (!d->no_ledger && doctor_record_ledger(v.events, v.n, &err))
		say("warning: %s", err.buf);
	if (d->run)
		preflight_after(d, doc, v.failed, v.n_failed);
	status = v.n_failed || v.job_fault.len ? HPT_EXIT_FAILURE : HPT_EXIT_OK;
	json_decref(doc);
	doctor_verdict_release(&v);
	sbuf_release(&out);
	sbuf_release(&err);
	return status;
}

/* --- the ledger commands --- */

/* --forget NODE or --reset, repairing a corrupt ledger on the way. */
static int ledger_change(struct doctor *d, const char *path)
{
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;
	int status = d->reset ? ledger_reset(path, &note, &err)
			      : ledger_forget_node(path, d->forget, &note, &err);

	if (note.len)
		say("%s", note.buf);
	if (status == 1 && !note.len) {
		say("%s is not in the ledger %s", d->forget, path);
		status = HPT_EXIT_NO_INPUT;
	} else if (status && status != 1) {
		say("%s", err.buf);
	} else if (d->reset) {
		printf("the ledger %s is empty\n", path);
	} else {
		/* not in a ledger that was corrupt: forgotten with the rest of it */
		status = 0;
		printf("forgot %s\n", d->forget);
	}
	sbuf_release(&err);
	sbuf_release(&note);
	return status;
}

static int ledger_command(struct doctor *d)
{
	struct sbuf path = SBUF_INIT, err = SBUF_INIT, out = SBUF_INIT;
	json_t *doc = NULL;
	int status;

	if (ledger_path(&path, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	} else if (d->forget || d->reset) {
		status = ledger_change(d, path.buf);
	} else if ((status = ledger_load(path.buf, &doc, &err))) {
		say("%s", err.buf);
	} else if (d->json) {
		json_print(json_incref(doc));
	} else {
		ledger_format(doc, time(NULL), &out);
		printf("ledger %s\n%s", path.buf, out.buf);
	}
	json_decref(doc);
	sbuf_release(&path);
	sbuf_release(&err);
	sbuf_release(&out);
	return status;
}

/* --- the command --- */

static void on_alarm(int sig)
{
	static const char msg[] = "hpctrain doctor: no answer within --timeout: a node or link "
				  "is hung; giving up\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(HPT_EXIT_FAILURE);
	_exit(HPT_EXIT_FAILURE);
}

static int parse_args(struct doctor *d, int argc, char **argv)
{
	double v;
	int c;

	opt_reset();
	while ((c = opt_next(&doctor_cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_SPEC: d->spec = optarg; break;
		case OPT_PREFLIGHT: d->run = optarg; break;
		case OPT_LOST: d->run = d->lost = optarg; break;
		case OPT_SCRATCH: d->scratch = optarg; break;
		case OPT_EXCLUDE_FILE: d->exclude_file = optarg; break;
		case OPT_FORGET: d->forget = optarg; break;
		case OPT_ROOT: d->root = optarg; break;
		case OPT_LEDGER: d->ledger_show = true; break;
		case OPT_RESET: d->reset = true; break;
		case OPT_NO_LEDGER: d->no_ledger = true; break;
		case 'j': d->json = true; break;
		case 'v': d->verbose = true; break;
		case OPT_RANKS:
			if (opt_number(&doctor_cmd, "ranks-per-node", optarg, 1, PLAN_MAX_RANKS, &v))
				return HPT_EXIT_USAGE;
			d->ranks = (long)v;
			break;
		case OPT_MIN_FREE:
			if (opt_number(&doctor_cmd, "min-free-gb", optarg, 0, 1e6, &d->min_free_gb))
				return HPT_EXIT_USAGE;
			break;
		case OPT_STRAGGLER:
			if (opt_number(&doctor_cmd, "straggler", optarg, 0, 1, &d->straggler))
				return HPT_EXIT_USAGE;
			break;
		case OPT_TIMEOUT:
			if (opt_number(&doctor_cmd, "timeout", optarg, 1, 86400, &d->timeout_s))
				return HPT_EXIT_USAGE;
			break;
		case 'h':
			opt_usage(stdout, &doctor_cmd);
			return -1;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return opt_error(&doctor_cmd, "unexpected argument '%s'", SBUF_CLIP(argv[optind]));
	if (d->spec && d->run)
		return opt_error(&doctor_cmd, "--spec and --preflight both name a spec; give one");
	if ((d->ledger_show || d->forget || d->reset) && (d->spec || d->run))
		return opt_error(&doctor_cmd, "--ledger, --forget and --reset take no spec");
	if ((d->ledger_show + !!d->forget + d->reset) > 1)
		return opt_error(&doctor_cmd, "--ledger, --forget and --reset exclude each other");
	return 0;
}

static void doctor_release(struct doctor *d)
{
	job_release(&d->job);
	doctor_self_release(&d->self);
}

static int run_doctor(struct doctor *d)
{
	struct doctor_self_opts o = {
		.job = d->have_job ? &d->job : NULL, .root = d->root, .run = d->run,
		.scratch = d->scratch, .ranks_per_node = d->ranks,
	};
	struct doctor_node *nodes;
	size_t n;
	int status;

	if (d->min_free_gb < 0)
		d->min_free_gb = d->have_job ? d->job.preflight.min_free_gb : 1;
	doctor_limits_straggler(&d->lim, d->straggler >= 0 ? d->straggler
					 : d->have_job ? d->job.preflight.straggler : 0.5);
	if (d->mpi) {
		MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	}
	o.min_free_gb = d->min_free_gb;
	o.timeout_s = d->timeout_s;
	/* the container probe may take all of --timeout and is killed
	 * then (a podman container is removed, up to 30 s more): the whole
	 * run's alarm waits for it, then starts again */
	if (o.job && o.job->container.image)
		alarm((unsigned)(2 * d->timeout_s + 40));
	doctor_self_check(&d->self, &o);
	alarm((unsigned)d->timeout_s);
	doctor_exchange_probe(&d->self, d->rank, d->size, d->timeout_s);
	nodes = doctor_exchange_gather(&d->self.me, d->rank, d->size, &n);
	status = d->rank == 0 ? report(d, nodes, n) : HPT_EXIT_OK;
	for (size_t i = 0; i < n; i++)
		doctor_node_release(&nodes[i]);
	free(nodes);
	/* every task exits as the first decided, so srun's status is the verdict */
	if (d->mpi) {
		MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
		mpistep_exit_on_term(status);
	}
	return status;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { .ranks = 0, .min_free_gb = -1, .timeout_s = 60, .straggler = -1,
			    .size = 1, .lim = DOCTOR_LIMITS_INIT };
	int status;

	doctor_self_init(&d.self);
	status = parse_args(&d, argc, argv);
	if (status)
		return status < 0 ? HPT_EXIT_OK : status;
	if (d.ledger_show || d.forget || d.reset) {
		status = ledger_command(&d);
		goto out;
	}
	if ((status = load_spec(&d)))
		goto out;
	if (d.lost) {
		status = lost(&d);
		goto out;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned)d.timeout_s);
	if (mpistep_launched()) {
		if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
			say("MPI_Init failed");
			status = HPT_EXIT_UNAVAILABLE;
			goto out;
		}
		mpistep_fence();
		d.mpi = true;
	} else {
		struct sbuf err = SBUF_INIT;

		if ((status = mpistep_check_alone("doctor", &err)))
			say("%s", err.buf);
		sbuf_release(&err);
		if (status)
			goto out;
	}
	status = run_doctor(&d);
	alarm(0);
	if (d.mpi)
		MPI_Finalize();
out:
	doctor_release(&d);
	return status;
}
