/* cmd_report.c - `hpctrain report`: a run or a sweep in PNG charts, a text
 * summary and report.md.
 * Shell: resolves the argument (launcher/runref), reads metrics.jsonl
 * (launcher/report_data parses it) and draws (launcher/report_chart). */
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/fileio.h"         // defines: fileio_read, fileio_mkdirs, fileio_write_atomic
#include "common/opt.h"            // defines: struct opt, opt_next
#include "common/sbuf.h"           // defines: struct sbuf
#include "launcher/report_chart.h" // defines: struct chart, chart_write_png
#include "launcher/report_data.h"  // defines: struct report_run, report_parse
#include "launcher/runref.h"       // defines: runref_resolve, runref_sweep_points
#include "launcher/slurm.h"        // defines: hpt_slurm_init

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A metrics file larger than this is not one a run of days writes. */
#define METRICS_MAX_BYTES (512u << 20)

int cmd_report(int argc, char **argv);

enum { OPT_SIZE = 256 };

static const char *const report_usage[] = {
	"hpctrain report [-o <dir>] [--size <w>x<h>] (<run> | <sweep> | <jobid> | <name>)",
	NULL,
};

static const struct opt report_opts[] = {
	{ "output", required_argument, NULL, 'o', "DIR",
	  "write the charts and report.md here (default: RUN/report, or SWEEP-report beside "
	  "the sweep record)" },
	{ "size", required_argument, NULL, OPT_SIZE, "WxH",
	  "each chart's size in pixels (default 960x540; 200x150 to 8000x8000)" },
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

struct out {
	const char *dir;
	int width, height;
	struct sbuf md;     /* report.md */
	int status;
};

/* Writes one chart as NAME.png (skipped, and said, when it has no data). */
static void emit(struct out *o, struct chart *c, const char *name, const char *why_none)
{
	struct sbuf err = SBUF_INIT;
	char *path = xasprintf("%s/%s.png", o->dir, name);

	if (!chart_has_data(c)) {
		printf("  %s.png: not drawn: %s\n", name, why_none);
		sbuf_addf(&o->md, "- %s: not drawn (%s)\n", c->title, why_none);
	} else if (chart_write_png(c, path, &err)) {
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
		o->status = HPT_EXIT_IO;
	} else {
		printf("  %s\n", path);
		sbuf_addf(&o->md, "![%s](%s.png)\n\n", c->title, name);
	}
	chart_release(c);
	free(path);
	sbuf_release(&err);
}

static int load_run(const char *dir, struct report_run *r)
{
	char *path = xasprintf("%s/metrics.jsonl", dir);
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	int rc = fileio_read(path, METRICS_MAX_BYTES, &text, &err);

	if (rc)
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
	else
		report_parse(text.buf, text.len, r);
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	return rc ? HPT_EXIT_NO_INPUT : 0;
}

/* Per step: field of each logged step. */
static void step_series(const struct report_run *r, struct chart *c, const char *label,
			size_t field)
{
	double *x = xcalloc(r->nsteps + 1, sizeof(double)), *y = xcalloc(r->nsteps + 1, sizeof(double));

	for (size_t i = 0; i < r->nsteps; i++) {
		x[i] = (double)r->steps[i].step;
		y[i] = *(const double *)((const char *)&r->steps[i] + field);
	}
	chart_add(c, label, x, y, r->nsteps);
	free(x);
	free(y);
}

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

static void mark_epochs(const struct report_run *r, struct chart *c)
{
	for (size_t i = 0; i < r->nepochs; i++)
		chart_mark(c, (double)r->epochs[i].step);
}

static void run_throughput(struct out *o, const struct report_run *r)
{
	size_t ranks = report_max_ranks(r);
	struct chart c;

	chart_init(&c, "samples/s per rank (a straggler is a lower line)", "step", "samples/s",
		   o->width, o->height);
	c.y_from_zero = true;
	if (!ranks)
		step_series(r, &c, "rank 0", offsetof(struct report_step, samples_per_s));
	for (size_t k = 0; k < ranks; k++) {
		double *x = xcalloc(r->nsteps + 1, sizeof(double));
		double *y = xcalloc(r->nsteps + 1, sizeof(double));
		char label[32];

		for (size_t i = 0; i < r->nsteps; i++) {
			x[i] = (double)r->steps[i].step;
			y[i] = k < r->steps[i].nranks ? r->steps[i].rank_rates[k] : NAN;
		}
		snprintf(label, sizeof(label), "rank %zu", k);
		chart_add(&c, label, x, y, r->nsteps);
		free(x);
		free(y);
	}
	emit(o, &c, "throughput", "no step records");
}

static void run_comm_lr(struct out *o, const struct report_run *r)
{
	struct chart c;
	double *x = xcalloc(r->nsteps + 1, sizeof(double)), *y = xcalloc(r->nsteps + 1, sizeof(double));

	chart_init(&c, "exposed communication share of each step", "step", "comm_ms / step_ms",
		   o->width, o->height);
	c.y_from_zero = true;
	for (size_t i = 0; i < r->nsteps; i++) {
		x[i] = (double)r->steps[i].step;
		y[i] = r->steps[i].comm_ms / r->steps[i].step_ms;
	}
	chart_add(&c, "", x, y, r->nsteps);
	mark_epochs(r, &c);
	emit(o, &c, "comm", "no comm_ms in the step records: a single-rank run");
	free(x);
	free(y);
	chart_init(&c, "learning rate", "step", "lr", o->width, o->height);
	c.y_from_zero = true;
	step_series(r, &c, "", offsetof(struct report_step, lr));
	mark_epochs(r, &c);
	emit(o, &c, "lr", "no lr in the step records");
}

static void run_charts(struct out *o, const struct report_run *r)
{
	struct chart c;

	chart_init(&c, "loss (dashed lines: epoch ends)", "step", "loss", o->width, o->height);
	step_series(r, &c, "training", offsetof(struct report_step, loss));
	epoch_series(r, &c, "test", offsetof(struct report_epoch, test_loss));
	final_point(r, &c, r->test_loss);
	mark_epochs(r, &c);
	emit(o, &c, "loss", "no step records");
	chart_init(&c, "accuracy (dashed lines: epoch ends)", "step", "accuracy", o->width,
		   o->height);
	step_series(r, &c, "training", offsetof(struct report_step, accuracy));
	epoch_series(r, &c, "test", offsetof(struct report_epoch, test_accuracy));
	final_point(r, &c, r->test_accuracy);
	mark_epochs(r, &c);
	emit(o, &c, "accuracy", "no step records");
	run_throughput(o, r);
	run_comm_lr(o, r);
}

static void run_summary(const char *dir, const struct report_run *r, struct sbuf *out)
{
	const struct report_step *last = r->nsteps ? &r->steps[r->nsteps - 1] : NULL;

	sbuf_addf(out, "run %s\n", dir);
	if (last)
		sbuf_addf(out, "  %zu logged steps, last step %lld: loss %.4f, %.0f samples/s\n",
			  r->nsteps, (long long)last->step, last->loss, last->samples_per_s);
	if (r->summary)
		sbuf_addf(out, "  final: test accuracy %.4f, test loss %.4f, %.0f samples/s per rank\n",
			  r->test_accuracy, r->test_loss, r->mean_samples_per_s);
	else
		sbuf_addstr(out, "  not finished (no summary record)\n");
	if (report_max_ranks(r))
		sbuf_addf(out, "  samples/s of each of %zu ranks at every logged step\n",
			  report_max_ranks(r));
	if (r->bad_lines)
		sbuf_addf(out, "  %zu lines of metrics.jsonl were not records and were skipped\n",
			  r->bad_lines);
}

static int make_dir(const char *dir)
{
	struct sbuf err = SBUF_INIT;
	int rc = fileio_mkdirs(dir, 0700, &err);

	if (rc)
		fprintf(stderr, "hpctrain report: cannot create %s: %s\n", dir, err.buf);
	sbuf_release(&err);
	return rc ? HPT_EXIT_IO : 0;
}

static int write_md(struct out *o, const char *head)
{
	struct sbuf err = SBUF_INIT, doc = SBUF_INIT;
	char *path = xasprintf("%s/report.md", o->dir);
	int rc;

	sbuf_addf(&doc, "# hpctrain report\n\n```\n%s```\n\n%s", head, o->md.buf);
	rc = fileio_write_atomic(path, doc.buf, doc.len, 0600, 0, &err);
	if (rc)
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
	else
		printf("  %s\n", path);
	free(path);
	sbuf_release(&err);
	sbuf_release(&doc);
	return rc ? HPT_EXIT_IO : 0;
}

static int report_run(const struct runref *ref, struct out *o)
{
	struct report_run r;
	struct sbuf head = SBUF_INIT;
	char *dir = o->dir ? NULL : xasprintf("%s/report", ref->rd.dir);
	int status = load_run(ref->rd.dir, &r);

	if (status)
		goto out;
	o->dir = o->dir ? o->dir : dir;
	run_summary(ref->rd.dir, &r, &head);
	fputs(head.buf, stdout);
	status = make_dir(o->dir);
	if (!status) {
		run_charts(o, &r);
		status = write_md(o, head.buf);
		status = o->status ? o->status : status;
	}
	report_run_release(&r);
out:
	free(dir);
	sbuf_release(&head);
	return status;
}

/* ---- sweeps ---------------------------------------------------------- */

struct point {
	json_t *params;     /* borrowed from the record */
	struct report_run r;
	bool loaded;
	int64_t ranks;      /* nodes x ranks_per_node, from resolved.yaml's summary */
};

/* "lr=0.05 seed=2": a point's values but key's, naming its series. */
static char *others_label(json_t *params, const char *key)
{
	struct sbuf out = SBUF_INIT;
	const char *pk;
	json_t *pv;

	json_object_foreach(params, pk, pv) {
		char *t = json_dumps(pv, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));

		if (strcmp(pk, key))
			sbuf_addf(&out, "%s%s=%s", out.len ? " " : "",
				  strrchr(pk, '.') ? strrchr(pk, '.') + 1 : pk, t ? t : "?");
		free(t);
	}
	return sbuf_detach(&out, NULL);
}

/* x of value v on axis vals: the number, or its index (categorical). */
static double axis_x(json_t *vals, json_t *v, bool numeric)
{
	if (numeric)
		return json_number_value(v);
	for (size_t q = 0; q < json_array_size(vals); q++)
		if (json_equal(v, json_array_get(vals, q)))
			return (double)q;
	return NAN;
}

/* Chart of metric (0: test accuracy, 1: test loss) against axis k: one
 * series per combination of the other axes' values. */
static void sweep_final(struct out *o, struct point *p, size_t n, json_t *axes, size_t k,
			int metric)
{
	const char *key = json_string_value(json_object_get(json_array_get(axes, k), "key"));
	json_t *vals = json_object_get(json_array_get(axes, k), "values");
	const char **names = xcalloc(json_array_size(vals) + 1, sizeof(*names));
	char **label = xcalloc(n + 1, sizeof(*label));
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	char title[256], file[160];
	bool numeric = true;
	struct chart c;

	for (size_t j = 0; j < json_array_size(vals); j++) {
		json_t *v = json_array_get(vals, j);

		numeric &= json_is_number(v);
		names[j] = json_is_string(v) ? json_string_value(v) : json_is_true(v) ? "true"
											  : "false";
	}
	snprintf(title, sizeof(title), "final test %s against %s", metric ? "loss" : "accuracy", key);
	chart_init(&c, title, key, metric ? "test loss" : "test accuracy", o->width, o->height);
	if (!numeric) {
		c.xnames = names;
		c.nxnames = json_array_size(vals);
	}
	for (size_t i = 0; i < n; i++)
		label[i] = others_label(p[i].params, key);
	for (size_t i = 0; i < n; i++) {
		size_t m = 0, seen = 0;

		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(label[j], label[i]);
		if (seen)
			continue; /* its group is drawn */
		for (size_t j = i; j < n; j++) {
			if (strcmp(label[j], label[i]))
				continue;
			x[m] = axis_x(vals, json_object_get(p[j].params, key), numeric);
			y[m++] = !p[j].loaded || !p[j].r.summary ? NAN
				 : metric ? p[j].r.test_loss : p[j].r.test_accuracy;
		}
		chart_add(&c, label[i], x, y, m)->points = true;
	}
	snprintf(file, sizeof(file), "final_%s_%.60s", metric ? "loss" : "accuracy", key);
	for (char *f = file; *f; f++)
		if (*f == '.')
			*f = '_';
	emit(o, &c, file, "no point has finished");
	for (size_t i = 0; i < n; i++)
		free(label[i]);
	free(label);
	free(x);
	free(y);
	free((void *)names);
}

/* Throughput and efficiency against total ranks, when points differ in it. */
static void sweep_scaling(struct out *o, struct point *p, size_t n)
{
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	double *e = xcalloc(n + 1, sizeof(double)), *ideal = xcalloc(n + 1, sizeof(double));
	int64_t lo = 0, hi = 0;
	double base = NAN;
	size_t *order = xcalloc(n + 1, sizeof(size_t)), m = 0;
	struct chart c;

	for (size_t i = 0; i < n; i++) {
		if (!p[i].ranks)
			continue;
		lo = lo && lo < p[i].ranks ? lo : p[i].ranks;
		hi = hi > p[i].ranks ? hi : p[i].ranks;
	}
	if (lo == hi) {
		printf("  scaling.png: not drawn: every point runs %lld ranks\n", (long long)lo);
		goto out;
	}
	/* points by ranks, for lines that go left to right */
	for (int64_t rk = lo; rk <= hi; rk++)
		for (size_t i = 0; i < n; i++)
			if (p[i].ranks == rk)
				order[m++] = i;
	for (size_t k = 0; k < m; k++) {
		struct point *q = &p[order[k]];

		x[k] = (double)q->ranks;
		y[k] = q->loaded ? report_throughput(&q->r, q->ranks) : NAN;
		if (q->ranks == lo && isnan(base) && isfinite(y[k]))
			base = y[k] / (double)lo;
	}
	for (size_t k = 0; k < m; k++) {
		ideal[k] = base * x[k];
		e[k] = y[k] / ideal[k];
	}
	chart_init(&c, "throughput against ranks", "ranks", "samples/s (all ranks)", o->width,
		   o->height);
	c.y_from_zero = true;
	chart_add(&c, "measured", x, y, m)->points = true;
	chart_add(&c, "linear from the fewest ranks", x, ideal, m)->dashed = true;
	emit(o, &c, "scaling", "no point has finished");
	chart_init(&c, "scaling efficiency against ranks", "ranks", "efficiency", o->width,
		   o->height);
	c.y_from_zero = true;
	chart_add(&c, "throughput / (ranks x per-rank throughput at the fewest ranks)", x, e, m)
		->points = true;
	emit(o, &c, "efficiency", "no point has finished");
out:
	free(x);
	free(y);
	free(e);
	free(ideal);
	free(order);
}

static void sweep_loss(struct out *o, struct point *p, size_t n)
{
	struct chart c;

	chart_init(&c, "training loss of each point", "step", "loss", o->width, o->height);
	for (size_t i = 0; i < n; i++) {
		char label[256];
		char *v = json_dumps(p[i].params, JSON_COMPACT | JSON_REAL_PRECISION(6));

		snprintf(label, sizeof(label), "%zu %s", i, v ? v : "");
		free(v);
		if (p[i].loaded)
			step_series(&p[i].r, &c, label, offsetof(struct report_step, loss));
	}
	emit(o, &c, "loss", "no point has logged a step");
}

/* The point's ranks: the summary's, else resolved.yaml's nodes x ranks. */
static int64_t point_ranks(const struct runref *ref, const struct report_run *r)
{
	char *path;
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	long long nodes = 0, rpn = 0;
	const char *s;

	if (r->ranks > 0)
		return r->ranks;
	path = xasprintf("%s/resolved.yaml", ref->rd.dir);
	if (!fileio_read(path, 1 << 20, &text, &err)) {
		if ((s = strstr(text.buf, "\n  nodes: ")))
			nodes = atoll(s + 10);
		if ((s = strstr(text.buf, "\n  ranks_per_node: ")))
			rpn = atoll(s + 19);
	}
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	return nodes * rpn;
}

static int report_sweep(const struct runref *ref, struct out *o)
{
	struct sbuf err = SBUF_INIT, head = SBUF_INIT;
	struct runref *v = NULL;
	json_t *doc = NULL, *axes;
	size_t n = 0;
	struct point *p;
	char *dir = NULL;
	int status = runref_sweep_points(ref->sweep, &doc, &v, &n, &err);

	if (status) {
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
		sbuf_release(&err);
		return status;
	}
	p = xcalloc(n + 1, sizeof(*p));
	sbuf_addf(&head, "%s: %zu points\n", ref->sweep, n);
	for (size_t i = 0; i < n; i++) {
		char *vals;

		p[i].params = json_object_get(json_array_get(json_object_get(doc, "points"), i),
					      "params");
		vals = json_dumps(p[i].params, JSON_COMPACT | JSON_REAL_PRECISION(6));
		if (v[i].rd.dir && !load_run(v[i].rd.dir, &p[i].r)) {
			p[i].loaded = true;
			p[i].ranks = point_ranks(&v[i], &p[i].r);
		}
		if (p[i].loaded && p[i].r.summary)
			sbuf_addf(&head, "  %zu %s: test accuracy %.4f, test loss %.4f, %.0f samples/s, "
				  "%lld ranks\n", i, vals ? vals : "", p[i].r.test_accuracy,
				  p[i].r.test_loss, report_throughput(&p[i].r, p[i].ranks),
				  (long long)p[i].ranks);
		else
			sbuf_addf(&head, "  %zu %s: not finished\n", i, vals ? vals : "");
		free(vals);
	}
	fputs(head.buf, stdout);
	if (!o->dir) {
		dir = xstrdup(ref->sweep);
		strcpy(strrchr(dir, '.'), "-report");
		o->dir = dir;
	}
	status = make_dir(o->dir);
	axes = json_object_get(doc, "axes");
	for (size_t k = 0; !status && k < json_array_size(axes); k++) {
		sweep_final(o, p, n, axes, k, 0);
		sweep_final(o, p, n, axes, k, 1);
	}
	if (!status) {
		sweep_scaling(o, p, n);
		sweep_loss(o, p, n);
		status = write_md(o, head.buf);
		status = o->status ? o->status : status;
	}
	for (size_t i = 0; i < n; i++)
		if (p[i].loaded)
			report_run_release(&p[i].r);
	free(p);
	free(dir);
	runref_release_all(v, n);
	json_decref(doc);
	sbuf_release(&err);
	sbuf_release(&head);
	return status;
}

static int parse_size(const char *arg, struct out *o)
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
	struct out o = { .width = 960, .height = 540 };
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
					 "8000x8000, got '%s'", optarg);
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
	sbuf_init(&o.md);
	status = runref_resolve(argv[optind], &ref, &err);
	if (!status && ref.kind == RUNREF_JOB && !(status = hpt_slurm_init(&err))) {
		status = runref_job_run(&ref, &err);
		hpt_slurm_fini();
	}
	if (status)
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
	else if (ref.kind == RUNREF_SWEEP)
		status = report_sweep(&ref, &o);
	else
		status = report_run(&ref, &o);
	runref_release(&ref);
	sbuf_release(&err);
	sbuf_release(&o.md);
	return status;
}
