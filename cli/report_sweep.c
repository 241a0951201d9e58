/* report_sweep.c - `hpctrain report` of a sweep (report_sweep.h).
 * Shell: reads the record and each point's run, and charts the final
 * metrics against each axis, the scaling against ranks and every point's
 * training loss. */
#include "cli/report_sweep.h"      // defines: report_sweep
#include "cli/report_out.h"        // defines: struct report_out, report_out_*
#include "common/diag.h"           // defines: struct diag_list
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/fileio.h"         // defines: fileio_exists
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/spec/spec.h"      // defines: struct job, job_release
#include "common/spec/specfile.h"  // defines: specfile_load
#include "launcher/report/report_chart.h" // defines: struct chart
#include "launcher/report/report_data.h"  // defines: struct report_run, report_throughput
#include "launcher/runs/runref.h"       // defines: runref_sweep_points

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point {
	json_t *params;     /* borrowed from the record */
	struct report_run r;
	bool loaded;
	int64_t ranks;      /* the summary's, else resolved.yaml's nodes x ranks_per_node */
};

/* Keys whose values set how many ranks a point runs. */
static bool is_rank_key(const char *k)
{
	static const char *const keys[] = { "params.nodes", "resources.nodes", "params.ranks",
					    "resources.ranks_per_node", "params.ranks_per_node" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

/* "lr=0.05 seed=2": a point's values but key's (and, with no_ranks, but
 * those of rank keys), naming its series. */
static char *others_label(json_t *params, const char *key, bool no_ranks)
{
	struct sbuf out = SBUF_INIT;
	const char *pk;
	json_t *pv;

	json_object_foreach(params, pk, pv) {
		char *t;

		if ((key && !strcmp(pk, key)) || (no_ranks && is_rank_key(pk)))
			continue;
		t = json_dumps(pv, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
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

static double final_metric(const struct point *p, int metric)
{
	if (!p->loaded || !p->r.summary)
		return NAN;
	return metric ? p->r.test_loss : p->r.test_accuracy;
}

/* A categorical axis's value as text. */
static char *value_text(json_t *v)
{
	return json_is_string(v) ? xstrdup(json_string_value(v))
				 : json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
}

/* Chart of metric (0: test accuracy, 1: test loss) against axis k: one
 * series per combination of the other axes' values. */
static void sweep_final(struct report_out *o, struct point *p, size_t n, json_t *axis, int metric)
{
	const char *key = json_string_value(json_object_get(axis, "key"));
	json_t *vals = json_object_get(axis, "values");
	size_t nv = json_array_size(vals);
	char **names = xcalloc(nv + 1, sizeof(*names)), **label = xcalloc(n + 1, sizeof(*label));
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	char title[256], file[160];
	bool numeric = true, whole = true;
	struct chart c;

	for (size_t j = 0; j < nv; j++) {
		numeric &= json_is_number(json_array_get(vals, j));
		whole &= json_is_integer(json_array_get(vals, j));
		names[j] = value_text(json_array_get(vals, j));
	}
	snprintf(title, sizeof(title), "final test %s against %s", metric ? "loss" : "accuracy", key);
	chart_init(&c, title, key, metric ? "test loss" : "test accuracy", o->width, o->height);
	c.x_whole = whole;
	if (!numeric) {
		c.xnames = (const char *const *)names;
		c.nxnames = nv;
	}
	for (size_t i = 0; i < n; i++)
		label[i] = others_label(p[i].params, key, false);
	for (size_t i = 0; i < n; i++) {
		size_t m = 0, missing = 0;
		bool seen = false;
		char *name;

		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(label[j], label[i]);
		if (seen)
			continue; /* its group is drawn */
		for (size_t j = i; j < n; j++) {
			if (strcmp(label[j], label[i]))
				continue;
			x[m] = axis_x(vals, json_object_get(p[j].params, key), numeric);
			y[m] = final_metric(&p[j], metric);
			missing += isnan(y[m++]);
		}
		/* a point not finished is a gap; the legend says how many */
		name = missing ? xasprintf("%s%s(%zu not finished)", label[i], *label[i] ? " " : "",
					   missing)
			       : xstrdup(label[i]);
		chart_add(&c, name, x, y, m)->points = true;
		free(name);
	}
	snprintf(file, sizeof(file), "final_%s_%.60s", metric ? "loss" : "accuracy", key);
	for (char *f = file; *f; f++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", *f))
			*f = '_';
	report_out_emit(o, &c, file, "no point has finished");
	for (size_t i = 0; i < n; i++)
		free(label[i]);
	for (size_t j = 0; j < nv; j++)
		free(names[j]);
	free(names);
	free(label);
	free(x);
	free(y);
}

/* The points of one group (same values but for rank keys) by ranks:
 * their throughput, and its efficiency against *base, the per-rank
 * throughput at the group's fewest ranks that finished. */
static size_t scaling_group(struct point *p, size_t n, char **label, size_t g, double *x,
			    double *y, double *e, double *base)
{
	size_t m = 0;

	for (size_t i = g; i < n; i++) {
		size_t k;

		if (strcmp(label[i], label[g]) || p[i].ranks <= 0)
			continue;
		for (k = m; k > 0 && x[k - 1] > (double)p[i].ranks; k--) {
			x[k] = x[k - 1];
			y[k] = y[k - 1];
		}
		x[k] = (double)p[i].ranks;
		y[k] = p[i].loaded ? report_throughput(&p[i].r, p[i].ranks) : NAN;
		m++;
	}
	*base = NAN;
	for (size_t k = 0; k < m && isnan(*base); k++)
		if (isfinite(y[k]))
			*base = y[k] / x[k];
	for (size_t k = 0; k < m; k++)
		e[k] = y[k] / (*base * x[k]);
	return m;
}

/* Throughput and efficiency against total ranks, when points differ in
 * it: a series per combination of the other keys' values. */
static void sweep_scaling(struct report_out *o, struct point *p, size_t n)
{
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	double *e = xcalloc(n + 1, sizeof(double));
	char **label = xcalloc(n + 1, sizeof(*label));
	int64_t lo = 0, hi = 0;
	size_t groups = 0;
	double base = NAN, base0 = NAN;
	struct chart tc, ec;

	for (size_t i = 0; i < n; i++) {
		if (p[i].ranks <= 0)
			continue;
		lo = lo && lo < p[i].ranks ? lo : p[i].ranks;
		hi = hi > p[i].ranks ? hi : p[i].ranks;
	}
	if (lo == hi) {
		char why[96];

		snprintf(why, sizeof(why), "every point runs %lld ranks", (long long)lo);
		report_out_skip(o, "scaling", "throughput against ranks", why);
		goto out;
	}
	chart_init(&tc, "throughput against ranks", "ranks", "samples/s (all ranks)", o->width,
		   o->height);
	chart_init(&ec, "scaling efficiency: throughput / (ranks x per-rank throughput at the "
		   "fewest ranks)", "ranks", "efficiency", o->width, o->height);
	tc.y_from_zero = ec.y_from_zero = true;
	tc.x_whole = ec.x_whole = true;
	for (size_t i = 0; i < n; i++)
		label[i] = others_label(p[i].params, NULL, true);
	for (size_t g = 0; g < n; g++) {
		bool seen = false;
		size_t m;

		for (size_t j = 0; j < g; j++)
			seen |= !strcmp(label[j], label[g]);
		if (seen)
			continue;
		m = scaling_group(p, n, label, g, x, y, e, &base);
		chart_add(&tc, *label[g] ? label[g] : "measured", x, y, m)->points = true;
		chart_add(&ec, *label[g] ? label[g] : "measured", x, e, m)->points = true;
		if (!groups++)
			base0 = base;
	}
	/* one group: the line it would follow if it scaled perfectly */
	if (groups == 1 && isfinite(base0)) {
		for (size_t k = 0; k < tc.series[0].n; k++)
			y[k] = base0 * tc.series[0].x[k];
		chart_add(&tc, "linear from the fewest ranks", tc.series[0].x, y,
			  tc.series[0].n)->dashed = true;
	}
	report_out_emit(o, &tc, "scaling", "no point has finished");
	report_out_emit(o, &ec, "efficiency", "no point has finished");
out:
	for (size_t i = 0; i < n; i++)
		free(label[i]);
	free(label);
	free(x);
	free(y);
	free(e);
}

static void sweep_loss(struct report_out *o, struct point *p, size_t n)
{
	struct chart c;

	chart_init(&c, "training loss of each point", "step", "loss", o->width, o->height);
	for (size_t i = 0; i < n; i++) {
		char *v = others_label(p[i].params, NULL, false);
		char *label = xasprintf("%zu %s", i, v);

		if (p[i].loaded)
			report_out_step_series(&p[i].r, &c, label,
					       offsetof(struct report_step, loss));
		free(label);
		free(v);
	}
	report_out_emit(o, &c, "loss", "no point has logged a step");
}

/* The point's ranks: the summary's, else its resolved.yaml's nodes x
 * ranks_per_node; 0 when neither can be read. */
static int64_t point_ranks(const char *dir, const struct report_run *r)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct job job;
	char *path;
	int64_t ranks = 0;

	if (r->ranks > 0)
		return r->ranks;
	path = xasprintf("%s/resolved.yaml", dir);
	memset(&job, 0, sizeof(job));
	if (!specfile_load(path, NULL, &job, &dl, &where))
		ranks = job.resources.nodes * job.resources.ranks_per_node;
	job_release(&job);
	diag_list_release(&dl);
	sbuf_release(&where);
	free(path);
	return ranks;
}

/* What the charts need of the record, beyond what runref checks. */
static int check_record(const char *path, json_t *doc)
{
	json_t *axes = json_object_get(doc, "axes"), *points = json_object_get(doc, "points");

	for (size_t k = 0; json_is_array(axes) && k < json_array_size(axes); k++) {
		json_t *a = json_array_get(axes, k), *vals = json_object_get(a, "values");

		if (!json_is_string(json_object_get(a, "key")) || !json_is_array(vals) ||
		    !json_array_size(vals))
			axes = NULL;
		for (size_t j = 0; axes && j < json_array_size(vals); j++)
			if (json_is_object(json_array_get(vals, j)) || json_is_array(json_array_get(vals, j)))
				axes = NULL;
	}
	for (size_t i = 0; axes && i < json_array_size(points); i++)
		if (!json_is_object(json_object_get(json_array_get(points, i), "params")))
			points = NULL;
	if (json_is_array(axes) && points)
		return 0;
	fprintf(stderr, "hpctrain report: %s is not a sweep record (%s)\n", path,
		!json_is_array(axes) ? "its axes are not a list of keys with their values"
				     : "a point without its params");
	return HPT_EXIT_NO_INPUT;
}

static void point_line(const struct point *p, size_t i, struct sbuf *head)
{
	char *vals = json_dumps(p->params, JSON_COMPACT | JSON_REAL_PRECISION(6));

	if (p->loaded && p->r.summary)
		sbuf_addf(head, "  %zu %s: test accuracy %.4f, test loss %.4f, %.0f samples/s, "
			  "%lld ranks\n", i, vals ? vals : "", p->r.test_accuracy, p->r.test_loss,
			  report_throughput(&p->r, p->ranks), (long long)p->ranks);
	else if (p->loaded)
		sbuf_addf(head, "  %zu %s: not finished (%zu logged steps, last %lld)\n", i,
			  vals ? vals : "", p->r.nsteps,
			  p->r.nsteps ? (long long)p->r.steps[p->r.nsteps - 1].step : 0LL);
	else
		sbuf_addf(head, "  %zu %s: not finished (no metrics.jsonl)\n", i, vals ? vals : "");
	free(vals);
}

static json_t *point_json(const struct point *p, size_t i, const struct runref *ref)
{
	bool done = p->loaded && p->r.summary;

	return json_pack("{s:I, s:O, s:o, s:b, s:I, s:o, s:o, s:o, s:I}", "index", (json_int_t)i,
			 "params", p->params, "run", ref->rd.dir ? json_string(ref->rd.dir) : json_null(),
			 "finished", done, "logged_steps", (json_int_t)(p->loaded ? p->r.nsteps : 0),
			 "test_accuracy", report_out_num(final_metric(p, 0)),
			 "test_loss", report_out_num(final_metric(p, 1)),
			 "samples_per_s",
			 report_out_num(done ? report_throughput(&p->r, p->ranks) : NAN),
			 "ranks", (json_int_t)p->ranks);
}

static void load_points(struct point *p, const struct runref *v, size_t n, json_t *doc)
{
	for (size_t i = 0; i < n; i++) {
		p[i].params = json_object_get(json_array_get(json_object_get(doc, "points"), i),
					      "params");
		char *metrics = v[i].rd.dir ? xasprintf("%s/metrics.jsonl", v[i].rd.dir) : NULL;

		/* a run not started has no metrics.jsonl: not finished, not an error */
		if (metrics && fileio_exists(metrics))
			p[i].loaded = !report_out_load_run(v[i].rd.dir, &p[i].r);
		if (v[i].rd.dir)
			p[i].ranks = point_ranks(v[i].rd.dir, &p[i].r);
		free(metrics);
	}
}

int report_sweep(const char *path, struct report_out *o)
{
	struct sbuf err = SBUF_INIT, head = SBUF_INIT;
	struct runref *v = NULL;
	json_t *doc = NULL, *axes, *pts = json_array();
	struct point *p = NULL;
	char *dir = NULL;
	size_t n = 0;
	int status = runref_sweep_points(path, &doc, &v, &n, &err);

	if (status)
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
	else
		status = check_record(path, doc);
	if (status)
		goto out;
	p = xcalloc(n + 1, sizeof(*p));
	load_points(p, v, n, doc);
	sbuf_addf(&head, "%s: %zu points\n", path, n);
	for (size_t i = 0; i < n; i++) {
		point_line(&p[i], i, &head);
		json_array_append_new(pts, point_json(&p[i], i, &v[i]));
	}
	if (!o->json)
		fputs(head.buf, stdout);
	if (!o->dir) {
		dir = xstrdup(path);
		strcpy(strrchr(dir, '.') ? strrchr(dir, '.') : dir + strlen(dir), "-report");
		o->dir = dir;
	}
	status = report_out_make_dir(o);
	axes = json_object_get(doc, "axes");
	for (size_t k = 0; !status && k < json_array_size(axes); k++) {
		sweep_final(o, p, n, json_array_get(axes, k), 0);
		sweep_final(o, p, n, json_array_get(axes, k), 1);
	}
	if (!status) {
		sweep_scaling(o, p, n);
		sweep_loss(o, p, n);
		status = report_out_write_md(o, head.buf);
		status = o->status ? o->status : status;
		if (o->json) {
			int rc = report_out_print_json(o, json_pack("{s:s, s:O}", "sweep", path,
								    "points", pts));

			status = status ? status : rc;
		}
	}
out:
	for (size_t i = 0; p && i < n; i++)
		if (p[i].loaded)
			report_run_release(&p[i].r);
	free(p);
	free(dir);
	runref_release_all(v, n);
	json_decref(doc);
	json_decref(pts);
	sbuf_release(&err);
	sbuf_release(&head);
	return status;
}
