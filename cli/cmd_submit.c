/* cmd_submit.c - `hpctrain submit`: validate, render, record, submit.
 * Shell: loads the spec, learns the nodes to leave out (--exclude and
 * the node ledger, launcher/doctor/exclude), renders the batch script
 * once (launcher/runs/attempt), makes the run record and submits it
 * (launcher/runs/attempt_submit); a sweep goes to launcher/job/submit_sweep.c. */
#include "common/json_print.h" // defines: json_print
#include "common/say.h" // defines: say
#include "cli/builtin.h"      // defines: cmd_submit
#include "launcher/job/data_pin.h"     // defines: data_pin_describe, data_pin_json
#include "launcher/job/job_prepare.h"  // defines: job_prepare
#include "launcher/job/submit_report.h" // defines: submit_report, submit_report_exclude
#include "launcher/job/submit_sweep.h"  // defines: submit_sweep
#include "common/spec/sweep.h" // defines: struct sweep, sweep_parse, SWEEP_BAD_FLAG
#include "common/spec/template.h" // defines: TEMPLATE_OVERRIDE_FORM
#include "common/spec/specfile.h"     // defines: specfile_load, specfile_overrides_*
#include "common/diag.h"         // defines: struct diag_list, diag_report, diag_report_as
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/fileio.h"       // defines: fileio_self_exe, fileio_check_regular
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf, SBUF_CLIP
#include "common/spec/spec.h"         // defines: struct job
#include "launcher/runs/attempt.h" // defines: struct attempt, attempt_resolve, attempt_render
#include "launcher/job/plan_shapes.h"       // defines: struct plan_shapes_request, plan_shapes_weigh, plan_shapes_load
#include "launcher/job/again.h"   // defines: job_again_create
#include "launcher/runs/rundir.h"  // defines: struct rundir
#include "launcher/slurm/slurm.h"   // defines: hpt_slurm_init, hpt_slurm_hostlist_check
#include "topology/plan.h"    // defines: plan_slices
#include "launcher/rank/policy.h"  // defines: policy_from_spec
#include "launcher/rank/precision.h" // defines: precision_check
#include "topology/probe.h"   // defines: probe_load
#include "topology/show.h"    // defines: show_plan_table, show_json_plan
#include "topology/topo.h"    // defines: struct node_topo

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_TOPOLOGY = 256, OPT_EXCLUDE, OPT_NO_LEDGER, OPT_SWEEP, OPT_ZIP, OPT_MAX_PARALLEL,
       OPT_SHAPE, OPT_FRESH, OPT_RESUME };

static const char *const submit_usage[] = {
	"hpctrain submit [--set <key>=<value>]... [--shape auto] [--exclude <nodes>] [--no-ledger] [--fresh | --resume] [--dry-run [--topology <file>]] [--json] <spec>",
	"hpctrain submit [--sweep <key>=<v1>,<v2>...]... [--zip] [--max-parallel <n>] [--set <key>=<value>]... [--dry-run] [--json] <spec>",
	NULL,
};

static const struct opt submit_opts[] = {
	{ "set", required_argument, NULL, 's', "KEY=VALUE",
	  "override a spec key or template parameter (params.NAME=VALUE)" },
	{ "dry-run", no_argument, NULL, 'n', NULL,
	  "print the batch script instead of submitting it; write nothing" },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY, "FILE",
	  "with --dry-run, also show the binding plan for a node saved as hwloc XML, "
	  "and warn if its CPU lacks native train.precision" },
	{ "sweep", required_argument, NULL, OPT_SWEEP, "KEY=V1,V2,...",
	  "submit one run per value (a spec key or params.NAME), adding to the spec's sweep: "
	  "one Slurm array job per resource shape" },
	{ "zip", no_argument, NULL, OPT_ZIP, NULL,
	  "pair the sweep's lists element by element instead of taking every combination" },
	{ "max-parallel", required_argument, NULL, OPT_MAX_PARALLEL, "N",
	  "run at most N tasks of each array at once (0: no cap; default sweep.max_parallel)" },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE, "NODES",
	  "never run on these nodes (a Slurm hostlist, e.g. node[3,7])" },
	{ "no-ledger", no_argument, NULL, OPT_NO_LEDGER, NULL,
	  "do not leave out the nodes that hpctrain doctor's ledger holds in cooldown" },
	{ "fresh", no_argument, NULL, OPT_FRESH, NULL,
	  "a run of this spec that completed trains again from step 0, into new checkpoints" },
	{ "resume", no_argument, NULL, OPT_RESUME, NULL,
	  "a run of this spec that exists goes on from its last checkpoint" },
	{ "shape", required_argument, NULL, OPT_SHAPE, "auto",
	  "submit the shape hpctrain plan picks (the earliest finish) and record its "
	  "prediction in submit.json" },
	{ "json", no_argument, NULL, 'j', NULL, "print the result as JSON" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd submit_cmd = {
	.name = "submit",
	.usage = submit_usage,
	.summary = "Submit a job spec or template to Slurm as a batch job, with a run record "
		   "under output.dir.",
	.opts = submit_opts,
};

struct submit_args {
	struct specfile_overrides sets;
	int dry_run, json, no_ledger, zip, shape_auto;
	enum job_again again;
	long long max_parallel; /* -1: the spec's */
	const char *topology, *exclude;
	const char **sweeps;
	size_t nsweeps;
};

/* The binding plan of one node of the job, for --dry-run --topology, and
 * the warnings about that node. */
static int plan_for(const struct job *job, const char *file, struct sbuf *text, json_t **json)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct plan_request req = { .ranks = (unsigned)job->resources.ranks_per_node };
	struct node_topo t;
	struct plan p;
	struct sbuf why = SBUF_INIT;
	int status = HPT_EXIT_OK;

	policy_from_spec(&req.policy, &job->binding);
	topo_init(&t);
	plan_init(&p);
	if (fileio_check_regular(file, &why)) { /* a FIFO would hang hwloc */
		say("%s", why.buf);
		status = HPT_EXIT_NO_INPUT;
	} else if (probe_load(file, &t, &dl) || plan_slices(&t, &req, &p, &dl)) {
		diag_report_as(stderr, "hpctrain submit", &dl);
		status = HPT_EXIT_TOPOLOGY;
	} else {
		precision_check(job, file, &t, &dl);
		diag_report(stderr, &dl);
		if (json)
			*json = show_json_plan(&t, &p);
		else
			show_plan_table(&t, &p, text);
	}
	plan_release(&p);
	topo_release(&t);
	diag_list_release(&dl);
	sbuf_release(&why);
	return status;
}

static int dry_run(struct attempt *at, const struct submit_args *a, const size_t *files)
{
	struct sbuf plan = SBUF_INIT, staged = SBUF_INIT;
	json_t *plan_json = NULL;
	int status = HPT_EXIT_OK;

	if (a->topology)
		status = plan_for(&at->job, a->topology, &plan, a->json ? &plan_json : NULL);
	if (status)
		goto out;
	if (a->json) {
		json_t *doc = json_pack("{s:s, s:s, s:s, s:s}", "name", at->job.name, "sha256",
					at->sha256, "resolved", at->resolved.buf, "script",
					at->script.buf);

		if ((plan_json && json_object_set_new(doc, "plan", plan_json)) ||
		    json_object_set_new(doc, "stage", data_pin_json(&at->job, files))) {
			json_decref(doc);
			doc = NULL; /* a part left out would lie: json_print says why */
		}
		status = json_print(doc);
		goto out;
	}
	fputs(at->script.buf, stdout);
	data_pin_describe(&at->job, files, &staged);
	if (staged.len) /* comments, so that the output stays a valid script */
		printf("\n%s", staged.buf);
	if (a->topology) {
		/* as comments, so that the output stays a valid script */
		printf("\n# binding plan for each node, from %s:\n# ", a->topology);
		for (const char *c = plan.buf; *c; c++) {
			putchar(*c);
			if (*c == '\n' && c[1])
				fputs("# ", stdout);
		}
	}
out:
	sbuf_release(&plan);
	sbuf_release(&staged);
	return status;
}

/* With Slurm reached: the exclude list (the ledger's nodes are this
 * cluster's), the one render, the run, the job. */
static int submit(struct attempt *at, const struct submit_args *a, const char *exe)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	int status = hpt_slurm_init(&err);

	if (status)
		goto out;
	status = submit_report_exclude(a->exclude, !a->no_ledger, &at->exclude, &err);
	if (!status)
		at->nodes_idle = submit_report_idle(at->exclude);
	if (!status && (status = attempt_render(at, exe, &dl)))
		diag_report(stderr, &dl);
	else if (!status && !(status = job_again_create(at, a->again, "submit", &rd, &err)))
		status = submit_report(at, &rd, a->json, &err);
out:
	if (status && err.len)
		say("%s", err.buf);
	rundir_release(&rd);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}

static void args_release(struct submit_args *a)
{
	specfile_overrides_release(&a->sets);
	free(a->sweeps);
}

static int parse_max_parallel(const char *arg, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || *out < 0 || *out > SWEEP_MAX_POINTS)
		return opt_error(&submit_cmd, "--max-parallel: expected an integer 0..%d, got '%s'",
				 SWEEP_MAX_POINTS, SBUF_CLIP(arg));
	return 0;
}

/* Options; 0, or the status to exit with (help printed: -1). */
static int parse_args(int argc, char **argv, struct submit_args *a)
{
	int c;

	a->max_parallel = -1;
	opt_reset();
	while ((c = opt_next(&submit_cmd, argc, argv)) != -1) {
		switch (c) {
		case 's':
			if (specfile_overrides_add(&a->sets, optarg))
				return opt_error(&submit_cmd, "--set: expected " TEMPLATE_OVERRIDE_FORM
						 ", got '%s'", SBUF_CLIP(optarg));
			break;
		case 'n':
			a->dry_run = 1;
			break;
		case OPT_TOPOLOGY:
			a->topology = optarg;
			break;
		case 'j':
			a->json = 1;
			break;
		case OPT_EXCLUDE:
			a->exclude = optarg;
			break;
		case OPT_NO_LEDGER:
			a->no_ledger = 1;
			break;
		case OPT_SWEEP:
			a->sweeps = xrealloc(a->sweeps, (a->nsweeps + 1) * sizeof(*a->sweeps));
			a->sweeps[a->nsweeps++] = optarg;
			break;
		case OPT_ZIP:
			a->zip = 1;
			break;
		case OPT_FRESH:
		case OPT_RESUME:
			if (a->again)
				return opt_error(&submit_cmd, "--fresh and --resume: one or the other");
			a->again = c == OPT_FRESH ? JOB_AGAIN_FRESH : JOB_AGAIN_RESUME;
			break;
		case OPT_SHAPE:
			if (strcmp(optarg, "auto"))
				return opt_error(&submit_cmd, "--shape: expected auto, got '%s'",
						 SBUF_CLIP(optarg));
			a->shape_auto = 1;
			break;
		case OPT_MAX_PARALLEL:
			if (parse_max_parallel(optarg, &a->max_parallel))
				return HPT_EXIT_USAGE;
			break;
		case 'h':
			opt_usage(stdout, &submit_cmd);
			return -1;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&submit_cmd, optind >= argc ? "no job spec given"
							      : "only one job spec at a time");
	if (opt_check_operands(&submit_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	if (a->topology && !a->dry_run)
		return opt_error(&submit_cmd, "--topology needs --dry-run");
	if (a->shape_auto && a->nsweeps)
		return opt_error(&submit_cmd, "--shape auto plans one job; a sweep sets its shapes");
	if (a->again && a->nsweeps)
		return opt_error(&submit_cmd, "--fresh and --resume are for one run; a sweep's points start fresh");
	if (a->exclude) {
		struct sbuf err = SBUF_INIT;
		int status = 0;

		if (hpt_slurm_hostlist_check(a->exclude, &err))
			status = opt_error(&submit_cmd, "--exclude: %s", err.buf);
		sbuf_release(&err);
		return status;
	}
	return 0;
}

/* What --shape auto plans from: the command line and the spec's text. */
struct submit_shape {
	const struct submit_args *a;
	const char *where;
	const struct sbuf *text;
	const char *exe;
};

/* --shape auto (job_prepare's shape step): the job at the shape hpctrain
 * plan picks, its prediction kept for submit.json.  0, or the status
 * plan would exit with, after a line saying why. */
static int plan_auto(struct attempt *at, struct diag_list *dl, void *arg)
{
	const struct submit_shape *sh = arg;
	const struct submit_args *a = sh->a;
	const char *where = sh->where, *exe = sh->exe;
	const struct sbuf *text = sh->text;
	struct hpt_slurm_partition part = { 0 };
	struct plan_shapes_request r = { .where = where, .text = text->buf,
				  .len = text->len, .sets = a->sets.v, .nsets = a->sets.n,
				  .exe = exe, .part = &part };
	struct plan_shapes_result p = { .pick = -1 };
	struct sbuf err = SBUF_INIT;
	char *exclude = NULL;
	int status = hpt_slurm_init(&err);

	sbuf_init(&p.h.shapes);
	if (!status && !(status = hpt_slurm_partition(at->job.resources.partition, &part, &err)) &&
	    !(status = submit_report_exclude(a->exclude, !a->no_ledger, &exclude, &err))) {
		r.exclude = exclude;
		status = plan_shapes_weigh(&r, &at->job, &p);
	}
	if (!status && p.pick < 0) {
		sbuf_addstr(&err, "--shape auto: no shape fits: Slurm would run none of them "
				  "(hpctrain plan says why)");
		status = HPT_EXIT_REJECTED;
	}
	if (!status) {
		const struct shape_candidate *c = &p.v[p.pick];

		job_release(&at->job);
		memset(&at->job, 0, sizeof(at->job));
		status = plan_shapes_load(&r, c, &at->job, dl);
		at->plan = plan_shapes_pick_json(&p);
		say("--shape auto: %ux%u, predicted to run %.0f s "
			"(+-%.0f%%) from Slurm's start estimate", c->nodes, c->ranks_per_node,
			c->run_s, c->rel_err * 100);
		/* the spec's steps were of its own global batch: the same
		 * samples at this shape, as the prediction counts them */
		if (!status && !at->job.command.n && at->job.train.max_steps > 0 &&
		    at->job.train.max_steps != c->steps) {
			say("--shape auto: train.max_steps %lld, the "
				"spec's %lld steps of %u rank%s at %u", (long long)c->steps,
				(long long)at->job.train.max_steps, p.w.spec_ranks,
				p.w.spec_ranks == 1 ? "" : "s", c->nodes * c->ranks_per_node);
			at->job.train.max_steps = c->steps;
		}
	}
	if (status && err.len)
		say("%s", err.buf);
	plan_shapes_release(&p);
	hpt_slurm_partition_release(&part);
	free(exclude);
	sbuf_release(&err);
	return status;
}

/* One job: the spec as it is; a dry run renders it with --exclude
 * alone and asks nothing of Slurm or the ledger (but --shape auto's
 * plan, which asks Slurm when each shape would start). */
static int submit_one(struct submit_args *a, const char *where, const struct sbuf *text,
		      const char *exe)
{
	struct submit_shape shape = { a, where, text, exe };
	struct job_prepare_request r = { .where = where, .text = text->buf,
					 .len = text->len, .sets = a->sets.v, .nsets = a->sets.n,
					 .shape = a->shape_auto ? plan_auto : NULL,
					 .shape_arg = &shape,
					 .flags = a->dry_run ? 0 : JOB_PREPARE_STORE_CODE };
	struct diag_list dl = DIAG_LIST_INIT;
	struct attempt at;
	size_t *files = NULL;
	int status;

	attempt_init(&at);
	r.files = &files;
	status = job_prepare(&r, &at, &dl);
	if (!status && a->dry_run) {
		at.exclude = a->exclude ? xstrdup(a->exclude) : NULL;
		status = attempt_render(&at, exe, &dl);
	}
	diag_report(stderr, &dl);
	if (!status)
		status = a->dry_run ? dry_run(&at, a, files) : submit(&at, a, exe);
	free(files);
	attempt_release(&at);
	diag_list_release(&dl);
	return status;
}

int cmd_submit(int argc, char **argv)
{
	struct submit_args a = { 0 };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, text = SBUF_INIT;
	struct sweep sw = SWEEP_INIT;
	char exe[PATH_MAX];
	int status = parse_args(argc, argv, &a);

	if (status) {
		args_release(&a);
		return status < 0 ? HPT_EXIT_OK : status;
	}
	/* read once: the spec may be stdin */
	status = specfile_read(argv[optind], &text, &where, &dl);
	if (!status && (status = sweep_parse(where.buf, text.buf, text.len, a.sweeps, a.nsweeps,
					     a.zip, a.max_parallel, &sw, &dl)))
		status = status == SWEEP_BAD_FLAG ? HPT_EXIT_USAGE : HPT_EXIT_BAD_SPEC;
	if (!status && fileio_self_exe(exe, sizeof(exe))) {
		say("cannot find the hpctrain executable");
		status = HPT_EXIT_INTERNAL;
	}
	diag_report(stderr, &dl);
	if (!status && sw.naxes && a.topology)
		status = opt_error(&submit_cmd, "--topology takes one job, not a sweep");
	if (!status && sw.naxes) {
		struct sweep_request req = { where.buf, text.buf, text.len, &a.sets, &sw,
					     a.exclude, a.no_ledger, a.dry_run, a.json, exe, 0, 0, NULL };

		status = submit_sweep(&req);
	} else if (!status) {
		status = submit_one(&a, where.buf, &text, exe);
	}
	sweep_release(&sw);
	diag_list_release(&dl);
	sbuf_release(&where);
	sbuf_release(&text);
	args_release(&a);
	return status;
}
