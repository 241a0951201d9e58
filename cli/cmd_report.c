/* cmd_report.c - `hpctrain report`: a run or a sweep in PNG charts, a text
 * summary and report.md.
 * Shell: resolves the argument (launcher/runs/runref), reads the metrics.jsonl
 * of every attempt of a run as one timeline (launcher/job/report_attempts;
 * launcher/report/report_data parses it) and draws (launcher/report/chart);
 * cli/report_out writes the files, cli/report_sweep does a sweep and
 * cli/report_stage a run's staging step. */
#include "launcher/job/report_out.h"        // defines: struct report_out, report_out_*
#include "launcher/job/report_attempts.h"   // defines: struct report_attempts, report_attempts_*
#include "launcher/job/run_straggler.h"     // defines: run_stragglers, run_stragglers_head
#include "common/say.h" // defines: say
#include "common/runfile.h" // defines: RUNFILE_*
#include "launcher/job/report_stage.h"      // defines: report_stage_head, report_stage_section
#include "launcher/job/report_sweep.h"      // defines: report_sweep
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/opt.h"            // defines: struct opt, opt_next
#include "common/sbuf.h"           // defines: struct sbuf, SBUF_CLIP, sbuf_add_number
#include "launcher/report/chart.h" // defines: struct chart
#include "launcher/report/report_data.h"  // defines: struct report_run
#include "launcher/report/report_timeline.h" // defines: report_timeline_label, report_timeline_count
#include "launcher/runs/runref.h"       // defines: runref_resolve
#include "launcher/slurm/slurm.h"        // defines: hpt_slurm_init, hpt_slurm_job
#include "launcher/shape/shape_check.h"   // defines: shape_check_format, shape_check_json
#include "launcher/shape/shape_history.h" // defines: shape_history_planned_run
#include "common/strfmt.h" // defines: strfmt_label
#include "common/jsonb.h" // defines: jsonb_set

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_report(int argc, char **argv);

enum { OPT_SIZE = 256 };

static const char *const report_usage[] = {
	"hpctrain report [-o <dir>] [--size <w>x<h>] [--json] (<run> | <sweep> | <jobid> | <name>)",
	NULL,
};

static const struct opt report_opts[] = {
	{ "output", required_argument, NULL, 'o', "DIR",
	  "write the charts and report.md here (default: RUN/report, or SWEEP-report beside "
	  "the sweep record)" },
	{ "size", required_argument, NULL, OPT_SIZE, "WxH",
	  "each chart's size in pixels (default 960x540; 200x150 to 8000x8000)" },
	{ "json", no_argument, NULL, 'j', NULL,
	  "print the summary and the charts written as JSON instead of text" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd report_cmd = {
	.name = "report",
	.usage = report_usage,
	.summary = "Chart a run (loss, accuracy, samples/s per rank, communication, learning "
		   "rate) or a sweep (final metrics per parameter, scaling) as PNG files.",
	.opts = report_opts,
};

static void epoch_series(const struct report_run *r, struct chart *c, const char *label,
			 size_t field)
{
	double *x, *y;

	if (!r->nepochs)
		return;
	x = xcalloc(r->nepochs + 1, sizeof(double));
	y = xcalloc(r->nepochs + 1, sizeof(double));
	for (size_t i = 0; i < r->nepochs; i++) {
		x[i] = (double)r->epochs[i].step;
		y[i] = *(const double *)((const char *)&r->epochs[i] + field);
	}
	chart_add(c, label, x, y, r->nepochs)->points = true;
	free(x);
	free(y);
}

/* The summary's test figure at the last step, where no epoch evaluated. */
static void final_point(const struct report_run *r, struct chart *c, double v)
{
	double x;

	if (r->nepochs || !r->summary || !r->nsteps || isnan(v))
		return;
	x = (double)r->steps[r->nsteps - 1].step;
	chart_add(c, "test (final)", &x, &v, 1)->points = true;
}

/* Where the run broke off and went on (requeues, attempts, resizes):
 * a flag at each, on every chart. */
static void mark_breaks(const struct report_run *r, struct chart *c)
{
	char label[64];

	for (size_t i = 0; i < r->timeline.nevents; i++) {
		report_timeline_label(&r->timeline, i, label, sizeof(label));
		chart_flag(c, (double)r->timeline.events[i].step, label);
	}
}

/* Epoch ends dashed, and the breaks flagged. */
static void mark_epochs(const struct report_run *r, struct chart *c)
{
	for (size_t i = 0; i < r->nepochs; i++)
		chart_mark(c, (double)r->epochs[i].step);
	mark_breaks(r, c);
}

/* The run's ranks: the summary's, else how many rates a step carries,
 * else the world size a step said, else what launch recorded or the spec
 * asked (recorded); 0 when nothing says. */
static int64_t run_ranks(const struct report_run *r, int64_t recorded)
{
	if (r->ranks > 0)
		return r->ranks;
	if (report_max_ranks(r))
		return (int64_t)report_max_ranks(r);
	return r->timeline.world_size > 0 ? r->timeline.world_size : recorded;
}

static void run_throughput(struct report_out *o, const struct report_run *r)
{
	size_t ranks = report_max_ranks(r);
	struct chart c;

	chart_init(&c, ranks ? "samples/s per rank (a straggler is a lower line)"
			     : "samples/s (no rates per rank in the step records)", "step",
		   "samples/s", o->width, o->height);
	c.y_from_zero = true;
	if (!ranks)
		report_out_step_series(r, &c, "samples_per_s (rank 0)",
				       offsetof(struct report_step, samples_per_s));
	for (size_t k = 0; k < ranks; k++) {
		double *x = xcalloc(r->nsteps + 1, sizeof(double));
		double *y = xcalloc(r->nsteps + 1, sizeof(double));
		char label[32];

		for (size_t i = 0; i < r->nsteps; i++) {
			x[i] = (double)r->steps[i].step;
			y[i] = k < r->steps[i].nranks ? r->steps[i].rank_rates[k] : NAN;
		}
		strfmt_label(label, sizeof(label), "rank %zu", k);
		chart_add(&c, label, x, y, r->nsteps);
		free(x);
		free(y);
	}
	mark_breaks(r, &c);
	report_out_emit(o, &c, "throughput", "no samples_per_s in the step records");
}

/* Why the communication chart has nothing to show, or NULL.  A lone
 * process logs comm_ms too (0, or the timer's microsecond); a program
 * of several ranks may log none: its ranks say which. */
static const char *no_comm(const struct report_run *r, int64_t ranks)
{
	if (!report_has_comm(r) && ranks > 1)
		return "the program logged no comm_ms in its step records";
	if (!report_has_comm(r))
		return ranks == 1 ? "no comm_ms in the step records: a single-rank run"
				  : "no comm_ms in the step records";
	if (ranks == 1)
		return "a single-rank run: nothing to communicate";
	return NULL;
}

static void run_comm_lr(struct report_out *o, const struct report_run *r, int64_t ranks)
{
	const char *why = no_comm(r, ranks);
	struct chart c;
	double *x = xcalloc(r->nsteps + 1, sizeof(double)), *y = xcalloc(r->nsteps + 1, sizeof(double));

	chart_init(&c, "exposed communication share of each step", "step", "comm_ms / step_ms",
		   o->width, o->height);
	c.y_from_zero = true;
	for (size_t i = 0; i < r->nsteps && !why; i++) {
		x[i] = (double)r->steps[i].step;
		y[i] = r->steps[i].comm_ms / r->steps[i].step_ms;
	}
	if (!why)
		chart_add(&c, "", x, y, r->nsteps);
	mark_epochs(r, &c);
	report_out_emit(o, &c, "comm", why ? why : "no step_ms in the step records");
	free(x);
	free(y);
	chart_init(&c, "learning rate", "step", "lr", o->width, o->height);
	c.y_from_zero = true;
	report_out_step_series(r, &c, "", offsetof(struct report_step, lr));
	mark_epochs(r, &c);
	report_out_emit(o, &c, "lr", "no lr in the step records");
}

static void run_charts(struct report_out *o, const struct report_run *r, int64_t ranks)
{
	struct chart c;

	chart_init(&c, "loss (dashed lines: epoch ends)", "step", "loss", o->width, o->height);
	report_out_step_series(r, &c, "training", offsetof(struct report_step, loss));
	epoch_series(r, &c, "test", offsetof(struct report_epoch, test_loss));
	final_point(r, &c, r->test_loss);
	mark_epochs(r, &c);
	report_out_emit(o, &c, "loss", "no loss in the step records");
	chart_init(&c, "accuracy (dashed lines: epoch ends)", "step", "accuracy", o->width,
		   o->height);
	report_out_step_series(r, &c, "training", offsetof(struct report_step, accuracy));
	epoch_series(r, &c, "test", offsetof(struct report_epoch, test_accuracy));
	final_point(r, &c, r->test_accuracy);
	mark_epochs(r, &c);
	report_out_emit(o, &c, "accuracy", "no accuracy in the step records");
	run_throughput(o, r);
	run_comm_lr(o, r, ranks);
}

/* The last step's and the summary's figures: "-" for one not logged
 * (NAN) or not finite, %g for a huge one (sbuf_add_number). */
static void summary_figures(const struct report_run *r, struct sbuf *out)
{
	const struct report_step *last = r->nsteps ? &r->steps[r->nsteps - 1] : NULL;

	if (last) {
		sbuf_addf(out, "  %zu logged steps, last step %lld: loss ", r->nsteps,
			  (long long)last->step);
		sbuf_add_number(out, last->loss, 4);
		sbuf_addstr(out, ", ");
		sbuf_add_number(out, last->samples_per_s, 0);
		sbuf_addstr(out, " samples/s per rank\n");
	} else {
		sbuf_addstr(out, "  no step records\n");
	}
	if (!r->summary) {
		sbuf_addstr(out, "  not finished (no summary record)\n");
		return;
	}
	sbuf_addstr(out, "  final: test accuracy ");
	sbuf_add_number(out, r->test_accuracy, 4);
	sbuf_addstr(out, ", test loss ");
	sbuf_add_number(out, r->test_loss, 4);
	sbuf_addstr(out, ", ");
	sbuf_add_number(out, r->mean_samples_per_s, 0);
	sbuf_addstr(out, " samples/s per rank\n");
}

/* "3 attempts in one timeline: 1 requeue, 1 resize", then each event
 * and each attempt's recorded end. */
static void timeline_summary(const struct report_run *r, const struct report_attempts *a,
			     struct sbuf *out)
{
	size_t rq = report_timeline_count(&r->timeline, REPORT_EVENT_REQUEUE);
	size_t rs = report_timeline_count(&r->timeline, REPORT_EVENT_RESIZE);

	if (a->n > 1)
		sbuf_addf(out, "  %zu attempts in one timeline: %zu requeue%s, %zu resize%s\n", a->n,
			  rq, rq == 1 ? "" : "s", rs, rs == 1 ? "" : "s");
	report_timeline_format(&r->timeline, out);
	report_attempts_format(a, out);
}

static void run_summary(const char *dir, const struct report_run *r,
			const struct report_attempts *a, struct sbuf *out)
{
	sbuf_addf(out, "run %s\n", dir);
	summary_figures(r, out);
	if (report_max_ranks(r))
		sbuf_addf(out, "  samples/s of each of %zu ranks at every logged step\n",
			  report_max_ranks(r));
	if (r->restarts)
		sbuf_addf(out, "  restarted %zu time%s from a checkpoint: %zu step records were "
			  "logged again and the later ones kept\n", r->restarts,
			  r->restarts == 1 ? "" : "s", r->superseded);
	timeline_summary(r, a, out);
	if (r->bad_lines)
		sbuf_addf(out, "  %zu lines of " RUNFILE_METRICS " were not records, or records of "
			  "figures no run logs, and were skipped\n", r->bad_lines);
}

static json_t *run_json(const char *dir, const struct report_run *r, int64_t ranks)
{
	const struct report_step *last = r->nsteps ? &r->steps[r->nsteps - 1] : NULL;

	return json_pack("{s:s, s:I, s:o, s:I, s:b, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I}",
			 "run", dir, "logged_steps", (json_int_t)r->nsteps,
			 "last_step", last ? json_pack("{s:I, s:o, s:o}", "step", (json_int_t)last->step,
						       "loss", report_out_num(last->loss), "samples_per_s",
						       report_out_num(last->samples_per_s)) : json_null(),
			 "epochs", (json_int_t)r->nepochs, "finished", r->summary,
			 "test_accuracy", report_out_num(r->test_accuracy),
			 "test_loss", report_out_num(r->test_loss),
			 "mean_samples_per_s", report_out_num(r->mean_samples_per_s),
			 "global_samples_per_s", report_out_num(report_throughput(r, ranks)),
			 "ranks", (json_int_t)ranks,
			 "rank_rates", (json_int_t)report_max_ranks(r),
			 "restarts", (json_int_t)r->restarts,
			 "superseded_records", (json_int_t)r->superseded,
			 "skipped_lines", (json_int_t)r->bad_lines);
}

/* A run submitted with --shape auto: its prediction against Slurm's
 * times for its job, where Slurm still has them (else the prediction
 * alone), as status shows it; into head, and *json (or null). */
static void plan_line(const char *dir, struct sbuf *head, json_t **json)
{
	struct shape_planned one;
	struct hpt_slurm_job j;
	struct sbuf err = SBUF_INIT;

	*json = json_null();
	if (shape_history_planned_run(dir, &one))
		return;
	if (!hpt_slurm_init(&err)) {
		if (!hpt_slurm_job((uint32_t)one.job_id, &j, &err)) {
			one.check.start = j.start_time;
			one.check.end = j.finished ? j.end_time : 0;
			hpt_slurm_job_release(&j);
		}
	}
	sbuf_addstr(head, "  ");
	shape_check_format(&one.check, time(NULL), head);
	sbuf_addch(head, '\n');
	json_decref(*json);
	*json = shape_check_json(&one.check);
	free(one.dir);
	sbuf_release(&err);
}

/* A run: every attempt's records as one timeline, unless all is false
 * (one attempt named). */
static int report_one_run(const struct runref *ref, bool all, struct report_out *o)
{
	json_t *plan = NULL;
	struct report_run r;
	struct report_attempts a;
	struct stage_summary st;
	struct sbuf head = SBUF_INIT;
	char *dir = o->dir ? NULL : xasprintf("%s/report", all ? ref->rd.run : ref->rd.dir);
	int status = report_attempts_load(&ref->rd, all, &r, &a);
	int64_t ranks = run_ranks(&r, a.ranks);

	stage_summary_init(&st);
	if (status)
		goto out;
	o->dir = o->dir ? o->dir : dir;
	stage_summary_load(ref->rd.dir, &st);
	run_summary(all ? ref->rd.run : ref->rd.dir, &r, &a, &head);
	plan_line(ref->rd.dir, &head, &plan);
	run_stragglers_head(ref->rd.dir, &r, &head);
	report_stage_head(&st, &r, &head);
	if (!o->json)
		fputs(head.buf, stdout);
	status = report_out_make_dir(o);
	if (!status) {
		run_charts(o, &r, ranks);
		report_stage_section(o, &st);
		status = report_out_write_md(o, head.buf);
		status = o->status ? o->status : status;
		if (o->json) {
			json_t *doc = run_json(all ? ref->rd.run : ref->rd.dir, &r, ranks);
			int rc;

			report_stage_json(&doc, &st, &r);
			report_attempts_json(&doc, &a, &r);
			jsonb_set(&doc, "plan", json_incref(plan));
			jsonb_set(&doc, "stragglers", run_stragglers(ref->rd.dir, &r));
			rc = report_out_print_json(o, doc);

			status = status ? status : rc;
		}
	}
out:
	report_run_release(&r);
	report_attempts_release(&a);
	json_decref(plan);
	stage_summary_release(&st);
	free(dir);
	sbuf_release(&head);
	return status;
}

static int parse_size(const char *arg, struct report_out *o)
{
	char *end;
	long w, h;

	errno = 0;
	w = strtol(arg, &end, 10);
	if (errno || end == arg || *end != 'x')
		return -1;
	h = strtol(end + 1, &end, 10);
	if (errno || *end || w < 200 || h < 150 || w > 8000 || h > 8000)
		return -1;
	o->width = (int)w;
	o->height = (int)h;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_out o = { .width = 960, .height = 540 };
	struct runref ref = RUNREF_INIT;
	struct sbuf err = SBUF_INIT;
	int c, status;

	opt_reset();
	while ((c = opt_next(&report_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			o.dir = optarg;
			break;
		case OPT_SIZE:
			if (parse_size(optarg, &o))
				return opt_error(&report_cmd, "--size: expected WxH, 200x150 to "
					 "8000x8000, got '%s'", SBUF_CLIP(optarg));
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			opt_usage(stdout, &report_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&report_cmd, optind >= argc ? "no run or sweep given"
							      : "one run or sweep at a time");
	if (opt_check_operands(&report_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	sbuf_init(&o.md);
	o.charts = json_array();
	status = runref_resolve(argv[optind], &ref, &err);
	if (ref.note)
		say("%s", ref.note);
	if (!status && ref.kind == RUNREF_JOB && !(status = hpt_slurm_init(&err)))
		status = runref_job_run(&ref, &err);
	if (status)
		say("%s", err.buf);
	else if (ref.kind == RUNREF_SWEEP)
		status = report_sweep(ref.sweep, &o);
	else
		status = report_one_run(&ref, !report_attempts_named(argv[optind], &ref.rd), &o);
	runref_release(&ref);
	sbuf_release(&err);
	report_out_release(&o);
	return status;
}
