/* cmd_plan.c - `hpctrain plan`: the job shape that finishes first, from
 * the job's past runs (launcher/shape) and Slurm's start estimate.
 * Parses, reads the spec, reaches Slurm, weighs the shapes
 * (launcher/job/plan_shapes.h) and prints the predictions and the pick. */
#include "cli/builtin.h"       // defines: cmd_plan
#include "common/say.h" // defines: say
#include "common/json_print.h"    // defines: json_print
#include "launcher/job/submit_report.h" // defines: submit_report_exclude
#include "common/diag.h"       // defines: struct diag_list, diag_report
#include "common/duration.h"   // defines: duration_add_hms
#include "common/exitcode.h"   // defines: enum hpt_exit
#include "common/fileio.h"     // defines: fileio_self_exe
#include "common/opt.h"        // defines: struct opt, opt_next
#include "common/sbuf.h"       // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"     // defines: struct job
#include "common/spec/specfile.h" // defines: specfile_load, struct specfile_overrides
#include "launcher/job/plan_shapes.h"  // defines: struct plan_shapes_request, struct plan_shapes_result, plan_shapes_weigh
#include "launcher/job/plan_calibrate.h" // defines: struct plan_calibration, plan_calibrate
#include "launcher/job/plan_history.h"  // defines: plan_history_times, plan_history_format
#include "launcher/shape/shape_batch.h"   // defines: shape_batch_describe
#include "launcher/shape/shape_check.h"   // defines: struct shape_check, shape_check_summarize
#include "launcher/shape/shape_history.h" // defines: shape_history_planned
#include "launcher/shape/shape_pick.h" // defines: struct shape_candidate, shape_parse_list
#include "launcher/slurm/slurm.h"      // defines: hpt_slurm_init, hpt_slurm_partition
#include "common/strfmt.h" // defines: strfmt_label
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OPT_SHAPES = 256, OPT_MAX_NODES, OPT_DEADLINE, OPT_HISTORY, OPT_CALIBRATE };

static const char *const plan_usage[] = {
	"hpctrain plan [--shapes <list> | --max-nodes <n>] [--calibrate <steps>] [--deadline <time>] [--set <key>=<value>]... [--json] <spec>",
	"hpctrain plan --history [--set <key>=<value>]... [--json] <spec>",
	NULL,
};

static const struct opt plan_opts[] = {
	{ "shapes", required_argument, NULL, OPT_SHAPES, "LIST",
	  "the shapes to weigh, NODESxRANKS_PER_NODE, comma separated (e.g. 1x4,2x4,4x4)" },
	{ "max-nodes", required_argument, NULL, OPT_MAX_NODES, "N",
	  "weigh 1 to N nodes at the spec's ranks per node (default: the partition's size, "
	  "at most 16)" },
	{ "deadline", required_argument, NULL, OPT_DEADLINE, "TIME",
	  "pick the fewest node-hours that finish by TIME (+90m, +2h, +1d, or "
	  "YYYY-MM-DDTHH:MM[:SS] local time)" },
	{ "calibrate", required_argument, NULL, OPT_CALIBRATE, "STEPS",
	  "first run the bundled trainer STEPS steps at each shape, as one sweep, wait for "
	  "it, then plan from its runs too" },
	{ "history", no_argument, NULL, OPT_HISTORY, NULL,
	  "show how far the predictions of the job's planned runs (submit --shape auto) "
	  "were from what happened" },
	{ "set", required_argument, NULL, 's', "KEY=VALUE",
	  "override a spec key or template parameter, as submit does" },
	{ "json", no_argument, NULL, 'j', NULL, "print the plan as JSON" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd plan_cmd = {
	.name = "plan",
	.usage = plan_usage,
	.summary = "Predict when each job shape would start and finish, from the job's past "
		   "runs and Slurm's estimate, and pick the one that finishes first.",
	.opts = plan_opts,
};

struct plan_args {
	struct specfile_overrides sets;
	const char *shapes, *spec;
	unsigned max_nodes;
	struct shape_deadline deadline;
	int json, history;
	long calibrate;   /* --calibrate STEPS; 0: none */
};

static int parse_args(int argc, char **argv, struct plan_args *a)
{
	char *end;
	long v;
	int c, rc;

	opt_reset();
	while ((c = opt_next(&plan_cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_SHAPES:
			a->shapes = optarg;
			break;
		case OPT_MAX_NODES:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 100000)
				return opt_error(&plan_cmd, "--max-nodes: expected 1..100000, got '%s'",
						 SBUF_CLIP(optarg));
			a->max_nodes = (unsigned)v;
			break;
		case OPT_DEADLINE:
			if ((rc = shape_parse_deadline(optarg, time(NULL), &a->deadline)) == -2)
				return opt_error(&plan_cmd, "--deadline: '%s' is no such local date "
						 "and time", SBUF_CLIP(optarg));
			if (rc)
				return opt_error(&plan_cmd, "--deadline: expected +90m, +2h, +1d or "
						 "YYYY-MM-DDTHH:MM[:SS], got '%s'", SBUF_CLIP(optarg));
			break;
		case 's':
			if (specfile_overrides_add(&a->sets, optarg))
				return opt_error(&plan_cmd, "--set: expected KEY=VALUE, got '%s'",
						 SBUF_CLIP(optarg));
			break;
		case 'j':
			a->json = 1;
			break;
		case OPT_HISTORY:
			a->history = 1;
			break;
		case OPT_CALIBRATE:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 1000000)
				return opt_error(&plan_cmd, "--calibrate: expected 1..1000000 steps, "
						 "got '%s'", SBUF_CLIP(optarg));
			a->calibrate = v;
			break;
		case 'h':
			opt_usage(stdout, &plan_cmd);
			return -1;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&plan_cmd, optind >= argc ? "no job spec given"
							   : "only one job spec at a time");
	if (a->shapes && a->max_nodes)
		return opt_error(&plan_cmd, "--shapes and --max-nodes exclude each other");
	if (a->history && (a->shapes || a->max_nodes || a->deadline.set || a->calibrate))
		return opt_error(&plan_cmd, "--history takes none of --shapes, --max-nodes, "
				 "--calibrate and --deadline");
	a->spec = argv[optind];
	return 0;
}

static void clock_text(time_t t, time_t now, char *buf, size_t len)
{
	struct tm tm;

	if (t <= now + 1) {
		strfmt_label(buf, len, "now");
		return;
	}
	localtime_r(&t, &tm);
	strftime(buf, len, t - now < 86400 ? "%H:%M:%S" : "%Y-%m-%dT%H:%M", &tm);
}

static void print_fit(const struct job *job, const struct plan_shapes_result *p)
{
	const struct shape_work *w = &p->w;
	const struct shape_fit *f = &p->f;
	struct sbuf batch = SBUF_INIT;

	printf("plan for %s: ", job->name);
	if (w->fixed_steps)
		printf("%lld steps at any shape (the most its past runs logged)\n",
		       (long long)w->max_steps);
	else if (w->max_steps > 0)
		printf("%lld steps of %u rank%s (train.max_steps)", (long long)w->max_steps,
		       w->spec_ranks, w->spec_ranks == 1 ? "" : "s");
	else
		printf("%lld epochs of %.0f samples", (long long)w->epochs, w->samples_per_epoch);
	if (!w->fixed_steps)
		printf(", %lld samples per rank a step\n", (long long)w->batch_per_rank);
	if (job->command.n) {
		shape_batch_describe(&p->b, &batch);
		printf("program: %s\n", batch.buf);
		sbuf_release(&batch);
	}
	/* a term no run measured borrows the other's (shape_model.h) */
	double node = f->node_known ? f->node_s : f->net_known ? f->net_s : 0;
	double net = f->net_known ? f->net_s : f->node_known ? f->node_s : 0;

	if (f->together)
		node = f->node_s, net = f->net_s;
	printf("model: a step takes %.2f ms of compute%s + %.2f ms x 2(R-1)/R within a node of R "
	       "ranks%s + %.2f ms x 2(N-1)/N between N nodes%s", f->compute_s * 1e3,
	       f->global_batch > 0 ? " / (N x R)" : "", node * 1e3,
	       f->together ? "" : f->node_known ? "" : " (assumed)", net * 1e3,
	       f->together ? " (half each: measured together)" : f->net_known ? "" : " (assumed)");
	printf(", +-%.0f%% (fitted to %u run%s: %s)\n", f->rel_err * 100, f->runs,
	       f->runs == 1 ? "" : "s", p->h.shapes.buf);
	if (f->rel_err > 0.5)
		printf("warning: the model fits these runs poorly (+-%.0f%%): their steps vary "
		       "more than the shape explains; run each shape you mean to use\n",
		       f->rel_err * 100);
}

static void print_table(const struct shape_candidate *v, size_t n, long pick, time_t now)
{
	printf("%-8s %6s  %-9s %-14s %-9s %10s\n", "shape", "ranks", "start", "run", "finish",
	       "node-hours");
	for (size_t i = 0; i < n; i++) {
		const struct shape_candidate *c = &v[i];
		char shape[32], start[32], finish[32];
		struct sbuf run = SBUF_INIT;

		strfmt_label(shape, sizeof(shape), "%ux%u", c->nodes, c->ranks_per_node);
		if (!c->runnable) {
			printf("%-8s %6u  cannot run: %s\n", shape, c->nodes * c->ranks_per_node,
			       c->why ? c->why : "?");
			continue;
		}
		clock_text(c->start, now, start, sizeof(start));
		clock_text(c->finish, now, finish, sizeof(finish));
		duration_add_hms(&run, c->run_s);
		sbuf_addf(&run, " +-%.0f%%", c->rel_err * 100);
		printf("%-8s %6u  %-9s %-14s %-9s %10.2f%s\n", shape, c->nodes * c->ranks_per_node,
		       start, run.buf, finish, c->node_hours, (long)i == pick ? "  <- pick" : "");
		sbuf_release(&run);
	}
}

/* Prints the plan; the exit status its pick gives. */
static int decide(const struct plan_args *a, const struct job *job, const struct plan_shapes_result *p)
{
	time_t now = time(NULL);

	if (a->json) {
		json_print(plan_shapes_json(p, a->deadline));
	} else {
		print_fit(job, p);
		print_table(p->v, p->n, p->pick, now);
	}
	if (!p->runnable) {
		say("no shape fits: Slurm would run none of them");
		return HPT_EXIT_REJECTED;
	}
	if (p->pick < 0) {
		char t[32];

		clock_text(p->v[p->fastest].finish, now, t, sizeof(t));
		say("no shape finishes by the deadline; the earliest "
			"finish is %ux%u at %s", p->v[p->fastest].nodes,
			p->v[p->fastest].ranks_per_node, t);
		return HPT_EXIT_FAILURE;
	}
	if (!a->json)
		printf("pick: %ux%u, %s\n", p->v[p->pick].nodes, p->v[p->pick].ranks_per_node,
		       a->deadline.set ? "the fewest node-hours that finish by the deadline"
				   : "the earliest finish");
	return 0;
}

/* --history: the job's planned runs, prediction against what happened,
 * and the mean errors. */
static int history(const struct plan_args *a, const struct job *job)
{
	struct shape_check_summary sum;
	struct shape_check *checks;
	struct plan_history_end *ends;
	struct shape_planned *v;
	size_t n, forgotten;
	int status;

	shape_history_planned(job, &v, &n);
	if (!n) {
		say("no run of %s under %s/%s was planned (submit "
			"--shape auto)", job->name, job->output.dir, job->name);
		return HPT_EXIT_NO_INPUT;
	}
	ends = xcalloc(n, sizeof(*ends));
	if ((status = plan_history_times(v, n, ends, &forgotten))) {
		shape_history_planned_free(v, n);
		free(ends);
		return status;
	}
	checks = xcalloc(n, sizeof(*checks));
	for (size_t i = 0; i < n; i++)
		checks[i] = v[i].check;
	shape_check_summarize(checks, n, &sum);
	if (a->json) {
		json_t *runs = json_array();

		for (size_t i = 0; i < n; i++) {
			json_t *o = shape_check_json(&v[i].check);

			jsonb_set(&o, "dir", jsonb_text(v[i].dir));
			jsonb_set(&o, "job_id", json_integer((json_int_t)v[i].job_id));
			jsonb_set(&o, "result", ends[i].state[0] ? json_pack("{s:o, s:i, s:b}",
				  "state", jsonb_text(ends[i].state), "exit_code", ends[i].exit_code,
				  "from_record", ends[i].from_record) : json_null());
			jsonb_append(&runs, o);
		}
		json_print(json_pack("{s:o, s:i, s:i, s:i, s:f, s:f, s:f}", "runs", runs,
				     "started", (int)sum.started, "ended", (int)sum.ended,
				     "forgotten", (int)forgotten, "mean_abs_start_err_s",
				     sum.mean_abs_start_s, "mean_abs_run_err", sum.mean_abs_run_err,
				     "mean_run_err", sum.mean_run_err));
	} else {
		for (size_t i = 0; i < n; i++) {
			struct sbuf line = SBUF_INIT;

			shape_check_format(&v[i].check, time(NULL), &line);
			plan_history_format(&ends[i], &line);
			printf("%s (job %lu): %s\n", v[i].dir, v[i].job_id, line.buf);
			sbuf_release(&line);
		}
		printf("%zu planned run%s: %zu started, the start off by %.0f s on average; %zu "
		       "ended, the run off by %.0f%% on average (%+.0f%% mean)", n, n == 1 ? "" : "s",
		       sum.started, sum.mean_abs_start_s, sum.ended, sum.mean_abs_run_err * 100,
		       sum.mean_run_err * 100);
		if (forgotten)
			printf("; %zu forgotten by Slurm", forgotten);
		printf("\n");
	}
	free(checks);
	free(ends);
	shape_history_planned_free(v, n);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a = { .sets = SPECFILE_OVERRIDES_INIT };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	struct hpt_slurm_partition part = { 0 };
	struct plan_shapes_result p = { .pick = -1 };
	struct plan_shapes_request r = { 0 };
	struct shape_candidate *shapes = NULL;
	size_t nshapes = 0;
	struct job job;
	char exe[PATH_MAX], *exclude = NULL;
	int status = parse_args(argc, argv, &a);

	memset(&job, 0, sizeof(job));
	sbuf_init(&p.h.shapes);
	if (status)
		goto out;
	if (a.shapes && shape_parse_list(a.shapes, &shapes, &nshapes, &err)) {
		status = opt_error(&plan_cmd, "--shapes: %s", err.buf);
		goto out;
	}
	if ((status = specfile_read(a.spec, &text, &where, &dl)))
		goto report;
	if (spec_load(where.buf, text.buf, text.len, a.sets.v, a.sets.n, &job, &dl)) {
		status = HPT_EXIT_BAD_SPEC;
		goto report;
	}
	if (a.history) {
		status = history(&a, &job);
		goto report;
	}
	if (fileio_self_exe(exe, sizeof(exe))) {
		say("cannot find the hpctrain executable");
		status = HPT_EXIT_INTERNAL;
		goto report;
	}
	if ((status = hpt_slurm_init(&err)))
		goto report;
	if ((status = hpt_slurm_partition(job.resources.partition, &part, &err)))
		goto report;
	if (a.calibrate) {
		/* with --json, stdout is the plan's: the sweep's lines go to stderr */
		int out = a.json ? dup(STDOUT_FILENO) : -1;
		struct plan_calibration cal = { .steps = a.calibrate, .sets = &a.sets,
						.where = &where, .text = &text, .exe = exe,
						.part = &part, .shapes = shapes, .nshapes = nshapes,
						.max_nodes = a.max_nodes };

		fflush(stdout);
		if (out >= 0)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		status = plan_calibrate(&cal, &job);
		fflush(stdout);
		if (out >= 0) {
			dup2(out, STDOUT_FILENO);
			close(out);
		}
		if (status)
			goto report;
	}
	if ((status = submit_report_exclude(NULL, 1, &exclude, &err)))
		goto report;
	r.where = where.buf;
	r.text = text.buf;
	r.len = text.len;
	r.sets = a.sets.v;
	r.nsets = a.sets.n;
	r.shapes = shapes;
	r.nshapes = nshapes;
	r.max_nodes = a.max_nodes;
	r.deadline = a.deadline;
	r.exe = exe;
	r.exclude = exclude;
	r.part = &part;
	status = plan_shapes_weigh(&r, &job, &p);
	if (!status)
		status = decide(&a, &job, &p);
report:
	diag_report(stderr, &dl);
	if (status && err.len)
		say("%s", err.buf);
out:
	plan_shapes_release(&p);
	shape_candidates_free(shapes, nshapes);
	hpt_slurm_partition_release(&part);
	job_release(&job);
	free(exclude);
	diag_list_release(&dl);
	specfile_overrides_release(&a.sets);
	sbuf_release(&where);
	sbuf_release(&text);
	sbuf_release(&err);
	return status < 0 ? HPT_EXIT_OK : status;
}
