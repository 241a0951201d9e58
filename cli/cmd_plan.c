/* cmd_plan.c - `hpctrain plan`: the job shape that finishes first, from
 * the job's past runs (launcher/shape) and Slurm's start estimate.
 * Shell: loads the spec once per candidate shape, renders it as submit
 * would (launcher/runs/attempt), asks Slurm when each would start
 * (hpt_slurm_will_run), then prints the predictions and the pick. */
#include "cli/builtin.h"       // defines: cmd_plan
#include "cli/json_print.h"    // defines: json_print
#include "cli/submit_report.h" // defines: submit_report_exclude
#include "common/diag.h"       // defines: struct diag_list, diag_report
#include "common/exitcode.h"   // defines: enum hpt_exit
#include "common/fileio.h"     // defines: fileio_self_exe
#include "common/opt.h"        // defines: struct opt, opt_next
#include "common/sbuf.h"       // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"     // defines: struct job
#include "common/spec/specfile.h" // defines: specfile_load, struct specfile_overrides
#include "launcher/runs/attempt.h"        // defines: struct attempt, attempt_prepare
#include "launcher/shape/shape_history.h" // defines: struct shape_history, shape_history_load
#include "launcher/shape/shape_model.h"   // defines: struct shape_fit, shape_model_fit
#include "launcher/shape/shape_pick.h"    // defines: struct shape_candidate, shape_pick
#include "launcher/slurm/slurm.h"         // defines: hpt_slurm_will_run, hpt_slurm_partition

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_NODES 16

enum { OPT_SHAPES = 256, OPT_MAX_NODES, OPT_DEADLINE };

static const char *const plan_usage[] = {
	"hpctrain plan [--shapes <list> | --max-nodes <n>] [--deadline <time>] [--set <key>=<value>]... [--json] <spec>",
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
	time_t deadline;
	int json;
};

static int parse_args(int argc, char **argv, struct plan_args *a)
{
	char *end;
	long v;
	int c;

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
			if (shape_parse_deadline(optarg, time(NULL), &a->deadline))
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
	a->spec = argv[optind];
	return 0;
}

/* The spec (text, read once: it may be stdin) with one shape's nodes
 * and ranks per node set, after the user's --set flags, as --set sets
 * them. */
static int load_shape(const struct plan_args *a, const struct sbuf *where, const struct sbuf *text,
		      const struct shape_candidate *c, struct job *job, struct diag_list *dl)
{
	struct specfile_overrides o = SPECFILE_OVERRIDES_INIT;
	char *n = xasprintf("resources.nodes=%u", c->nodes);
	char *r = xasprintf("resources.ranks_per_node=%u", c->ranks_per_node);
	int status = 0;

	for (size_t i = 0; i < a->sets.n && !status; i++)
		status = specfile_overrides_add(&o, a->sets.v[i].arg);
	if (!status)
		status = specfile_overrides_add(&o, n) || specfile_overrides_add(&o, r);
	if (!status && spec_load(where->buf, text->buf, text->len, o.v, o.n, job, dl))
		status = HPT_EXIT_BAD_SPEC;
	else if (status)
		status = HPT_EXIT_INTERNAL;
	specfile_overrides_release(&o);
	free(n);
	free(r);
	return status;
}

/* When Slurm would start the shape: c->start, or c->why.  A status only
 * for a controller that cannot be reached. */
static int ask_slurm(const struct plan_args *a, const struct sbuf *where, const struct sbuf *text,
		     const char *exe, const char *exclude, struct shape_candidate *c)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct hpt_slurm_will_run w;
	struct sbuf err = SBUF_INIT;
	struct attempt at;
	char cwd[PATH_MAX];
	int status;

	attempt_init(&at);
	at.exclude = exclude ? xstrdup(exclude) : NULL;
	status = load_shape(a, where, text, c, &at.job, &dl);
	if (!status)
		status = attempt_prepare(&at, exe, &dl);
	if (status) {
		struct sbuf why = SBUF_INIT;

		for (size_t i = 0; i < dl.n && !why.len; i++)
			if (dl.v[i].severity == DIAG_ERROR)
				diag_format(&dl.v[i], &why);
		c->why = xasprintf("the spec is invalid at this shape: %s",
				   why.len ? why.buf : "it does not render");
		sbuf_release(&why);
		status = 0;
	} else if (!getcwd(cwd, sizeof(cwd))) {
		c->why = xasprintf("cannot find the current directory: %s", strerror(errno));
	} else if ((status = hpt_slurm_will_run(&at.opts, cwd, &w, &err)) == HPT_EXIT_REJECTED) {
		c->why = xstrdup(err.buf);
		status = 0;
	} else if (!status) {
		c->runnable = true;
		c->start = w.start;
		hpt_slurm_will_run_release(&w);
	}
	if (status)
		fprintf(stderr, "hpctrain plan: %s\n", err.buf);
	attempt_release(&at);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}

/* The shapes to weigh: --shapes, else 1..N nodes at the spec's ranks per
 * node, N from --max-nodes or the partition (at most 16).  A shape
 * larger than the partition is kept, not runnable, saying why. */
static void candidates(const struct plan_args *a, const struct job *job,
		       const struct hpt_slurm_partition *part, struct shape_candidate **v,
		       size_t *n)
{
	unsigned top = a->max_nodes ? a->max_nodes
				    : part->total_nodes < DEFAULT_MAX_NODES ? part->total_nodes
									 : DEFAULT_MAX_NODES;

	if (!a->shapes) {
		*v = xcalloc(top ? top : 1, sizeof(**v));
		for (*n = 0; *n < top; (*n)++) {
			(*v)[*n].nodes = (unsigned)*n + 1;
			(*v)[*n].ranks_per_node = (unsigned)job->resources.ranks_per_node;
		}
	}
	for (size_t i = 0; i < *n; i++) {
		struct shape_candidate *c = &(*v)[i];

		if (c->nodes > part->total_nodes)
			c->why = xasprintf("the partition %s has %u node%s", part->name,
					   part->total_nodes, part->total_nodes == 1 ? "" : "s");
		else if (part->max_nodes && c->nodes > part->max_nodes)
			c->why = xasprintf("the partition %s takes at most %u nodes a job",
					   part->name, part->max_nodes);
	}
}

static void clock_text(time_t t, time_t now, char *buf, size_t len)
{
	struct tm tm;

	if (t <= now + 1) {
		snprintf(buf, len, "now");
		return;
	}
	localtime_r(&t, &tm);
	strftime(buf, len, t - now < 86400 ? "%H:%M:%S" : "%Y-%m-%dT%H:%M", &tm);
}

static void duration_text(double s, char *buf, size_t len)
{
	long long t = (long long)(s + 0.5);

	snprintf(buf, len, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
}

static void print_fit(const struct job *job, const struct shape_work *w, const struct shape_fit *f,
		      const struct shape_history *h)
{
	printf("plan for %s: ", job->name);
	if (w->max_steps > 0)
		printf("%lld steps of %u rank%s (train.max_steps)", (long long)w->max_steps,
		       w->spec_ranks, w->spec_ranks == 1 ? "" : "s");
	else
		printf("%lld epochs of %.0f samples", (long long)w->epochs, w->samples_per_epoch);
	printf(", %lld samples per rank a step\n", (long long)w->batch_per_rank);
	printf("model: a step takes %.2f ms of compute", f->compute_s * 1e3);
	if (f->comm_known)
		printf(" + %.2f ms x 2(n-1)/n of allreduce at n ranks", f->comm_s * 1e3);
	else
		printf("; allreduce not measured (no run on more than one rank): scaling assumed "
		       "linear");
	printf(", +-%.0f%% (fitted to %u run%s: %s)\n", f->rel_err * 100, f->runs,
	       f->runs == 1 ? "" : "s", h->shapes.buf);
}

static void print_table(const struct shape_candidate *v, size_t n, long pick, time_t now)
{
	printf("%-8s %6s  %-9s %-14s %-9s %10s\n", "shape", "ranks", "start", "run", "finish",
	       "node-hours");
	for (size_t i = 0; i < n; i++) {
		const struct shape_candidate *c = &v[i];
		char shape[32], start[32], run[32], finish[32];

		snprintf(shape, sizeof(shape), "%ux%u", c->nodes, c->ranks_per_node);
		if (!c->runnable) {
			printf("%-8s %6u  cannot run: %s\n", shape, c->nodes * c->ranks_per_node,
			       c->why ? c->why : "?");
			continue;
		}
		clock_text(c->start, now, start, sizeof(start));
		clock_text(c->finish, now, finish, sizeof(finish));
		duration_text(c->run_s, run, sizeof(run));
		snprintf(run + strlen(run), sizeof(run) - strlen(run), " +-%.0f%%", c->rel_err * 100);
		printf("%-8s %6u  %-9s %-14s %-9s %10.2f%s\n", shape, c->nodes * c->ranks_per_node,
		       start, run, finish, c->node_hours, (long)i == pick ? "  <- pick" : "");
	}
}

static json_t *plan_json(const struct job *job, const struct shape_work *w,
			 const struct shape_fit *f, const struct shape_history *h,
			 const struct shape_candidate *v, size_t n, long pick, time_t deadline)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct shape_candidate *c = &v[i];
		json_t *o = json_pack("{s:i, s:i, s:b}", "nodes", (int)c->nodes, "ranks_per_node",
				      (int)c->ranks_per_node, "runnable", c->runnable);

		if (!c->runnable) {
			json_object_set_new(o, "why", json_string(c->why ? c->why : ""));
		} else {
			json_object_set_new(o, "start", json_integer((json_int_t)c->start));
			json_object_set_new(o, "steps", json_integer((json_int_t)c->steps));
			json_object_set_new(o, "run_s", json_real(c->run_s));
			json_object_set_new(o, "rel_err", json_real(c->rel_err));
			json_object_set_new(o, "finish", json_integer((json_int_t)c->finish));
			json_object_set_new(o, "node_hours", json_real(c->node_hours));
		}
		json_array_append_new(a, o);
	}
	return json_pack("{s:s, s:{s:I, s:I, s:f, s:I}, s:{s:f, s:f, s:b, s:f, s:i, s:s}, s:o, "
			 "s:o, s:o}",
			 "name", job->name, "work", "max_steps", (json_int_t)w->max_steps, "epochs",
			 (json_int_t)w->epochs, "samples_per_epoch", w->samples_per_epoch,
			 "batch_per_rank", (json_int_t)w->batch_per_rank, "model", "compute_s",
			 f->compute_s, "comm_s", f->comm_s, "comm_known", f->comm_known, "rel_err",
			 f->rel_err, "runs", (int)f->runs, "shapes", h->shapes.buf, "candidates", a,
			 "pick", pick >= 0 ? json_integer(pick) : json_null(), "deadline",
			 deadline ? json_integer((json_int_t)deadline) : json_null());
}

/* The work and the fit; a status after a line saying what is missing. */
static int model_of(const struct job *job, struct shape_history *h, struct shape_work *w,
		    struct shape_fit *f)
{
	struct sbuf err = SBUF_INIT;

	if (shape_history_load(job, h, &err)) {
		fprintf(stderr, "hpctrain plan: %s\n", err.buf);
		sbuf_release(&err);
		return HPT_EXIT_NO_INPUT;
	}
	w->max_steps = job->train.max_steps;
	w->spec_ranks = (unsigned)(job->resources.nodes * job->resources.ranks_per_node);
	w->epochs = job->train.epochs;
	w->batch_per_rank = job->train.batch_per_rank;
	w->samples_per_epoch = h->samples_per_epoch;
	if (shape_model_fit(h->v, h->n, f)) {
		fprintf(stderr, "hpctrain plan: no past run of %s under %s/%s logged its steps%s; "
			"run it once at any shape (a few hundred steps will do), then plan\n",
			job->name, job->output.dir, job->name,
			h->skipped ? " the same way (runs of that name ran another program or "
				     "configuration)" : "");
		return HPT_EXIT_NO_INPUT;
	}
	if (w->max_steps <= 0 && w->samples_per_epoch <= 0) {
		fprintf(stderr, "hpctrain plan: %s sets no train.max_steps and no past run logged "
			"an epoch, so the work is unknown; set train.max_steps\n", job->name);
		return HPT_EXIT_NO_INPUT;
	}
	return 0;
}

/* Predicts every runnable candidate, picks, prints; the exit status. */
static int decide(const struct plan_args *a, const struct job *job, struct shape_candidate *v,
		  size_t n, const struct shape_work *w, const struct shape_fit *f,
		  const struct shape_history *h)
{
	time_t now = time(NULL);
	bool any = false;
	long pick, fastest;

	for (size_t i = 0; i < n; i++)
		if (v[i].runnable) {
			shape_predict(&v[i], f, w, 0);
			any = true;
		}
	pick = shape_pick(v, n, a->deadline);
	fastest = shape_pick(v, n, 0);
	if (a->json) {
		json_print(plan_json(job, w, f, h, v, n, pick, a->deadline));
	} else {
		print_fit(job, w, f, h);
		print_table(v, n, pick, now);
	}
	if (!any) {
		fprintf(stderr, "hpctrain plan: no shape fits: Slurm would run none of them\n");
		return HPT_EXIT_REJECTED;
	}
	if (pick < 0) {
		char t[32];

		clock_text(v[fastest].finish, now, t, sizeof(t));
		fprintf(stderr, "hpctrain plan: no shape finishes by the deadline; the earliest "
			"finish is %ux%u at %s\n", v[fastest].nodes, v[fastest].ranks_per_node, t);
		return HPT_EXIT_FAILURE;
	}
	if (!a->json)
		printf("pick: %ux%u, %s\n", v[pick].nodes, v[pick].ranks_per_node,
		       a->deadline ? "the fewest node-hours that finish by the deadline"
				   : "the earliest finish");
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a = { .sets = SPECFILE_OVERRIDES_INIT };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	struct hpt_slurm_partition part = { 0 };
	struct shape_history h = { 0 };
	struct shape_candidate *v = NULL;
	struct shape_work w = { 0 };
	struct shape_fit f;
	struct job job;
	char exe[PATH_MAX], *exclude = NULL;
	size_t n = 0;
	int status = parse_args(argc, argv, &a);

	memset(&job, 0, sizeof(job));
	sbuf_init(&h.shapes);
	if (status)
		goto out;
	if (a.shapes && shape_parse_list(a.shapes, &v, &n, &err)) {
		status = opt_error(&plan_cmd, "--shapes: %s", err.buf);
		goto out;
	}
	if ((status = specfile_read(a.spec, &text, &where, &dl)))
		goto report;
	if (spec_load(where.buf, text.buf, text.len, a.sets.v, a.sets.n, &job, &dl)) {
		status = HPT_EXIT_BAD_SPEC;
		goto report;
	}
	if ((status = model_of(&job, &h, &w, &f)))
		goto report;
	if (fileio_self_exe(exe, sizeof(exe))) {
		fprintf(stderr, "hpctrain plan: cannot find the hpctrain executable\n");
		status = HPT_EXIT_INTERNAL;
		goto report;
	}
	if ((status = hpt_slurm_init(&err)) ||
	    (status = hpt_slurm_partition(job.resources.partition, &part, &err)) ||
	    (status = submit_report_exclude(NULL, 1, &exclude, &err)))
		goto report;
	candidates(&a, &job, &part, &v, &n);
	for (size_t i = 0; i < n && !status; i++)
		if (!v[i].why)
			status = ask_slurm(&a, &where, &text, exe, exclude, &v[i]);
	if (!status)
		status = decide(&a, &job, v, n, &w, &f, &h);
report:
	diag_report(stderr, &dl);
	if (status && err.len)
		fprintf(stderr, "hpctrain plan: %s\n", err.buf);
out:
	shape_candidates_free(v, n);
	shape_history_release(&h);
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
