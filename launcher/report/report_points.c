/* report_points.c - a sweep's points as chart series (report_points.h).
 * Core: fills struct chart from the points; no I/O. */
#include "launcher/report/report_points.h" // defines: struct report_point, report_points_*
#include "common/sbuf.h"                   // defines: struct sbuf, x* allocators
#include "common/spec/sweep.h"             // defines: sweep_params_label
#include "launcher/report/chart.h"  // defines: chart_init, chart_add
#include "launcher/report/report_data.h"   // defines: report_throughput

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool report_points_is_rank_key(const char *k)
{
	static const char *const keys[] = { "params.nodes", "resources.nodes", "params.ranks",
					    "resources.ranks_per_node", "params.ranks_per_node" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

struct label_skip {
	const char *key;
	bool no_ranks;
};

static bool label_skips(const char *key, const void *arg)
{
	const struct label_skip *s = arg;

	return (s->key && !strcmp(key, s->key)) || (s->no_ranks && report_points_is_rank_key(key));
}

char *report_points_label(json_t *params, const char *key, bool no_ranks)
{
	struct label_skip skip = { key, no_ranks };
	struct sbuf out = SBUF_INIT;

	sweep_params_label(params, label_skips, &skip, &out);
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

double report_points_final_metric(const struct report_point *p, int metric)
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

/* One series per combination of the other axes' values (label[i] names
 * point i's): its points' metric against key.  O(n^2) in the points of a
 * sweep, a few hundred at most. */
static void final_series(struct chart *c, const struct report_point *p, size_t n,
			 char **label, json_t *vals, const char *key, bool numeric, int metric)
{
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));

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
			y[m] = report_points_final_metric(&p[j], metric);
			missing += isnan(y[m++]);
		}
		/* a point not finished is a gap; the legend says how many */
		name = missing ? xasprintf("%s%s(%zu not finished)", label[i], *label[i] ? " " : "",
					   missing)
			       : xstrdup(label[i]);
		chart_add(c, name, x, y, m)->points = true;
		free(name);
	}
	free(x);
	free(y);
}

void report_points_final(struct report_points_axis *a, const struct report_point *p, size_t n,
			 json_t *axis, int metric, int width, int height)
{
	const char *key = json_string_value(json_object_get(axis, "key"));
	json_t *vals = json_object_get(axis, "values");
	char **label = xcalloc(n + 1, sizeof(*label));
	bool numeric = true, whole = true;

	memset(a, 0, sizeof(*a));
	a->nnames = json_array_size(vals);
	a->names = xcalloc(a->nnames + 1, sizeof(*a->names));
	for (size_t j = 0; j < a->nnames; j++) {
		numeric &= json_is_number(json_array_get(vals, j));
		whole &= json_is_integer(json_array_get(vals, j));
		a->names[j] = value_text(json_array_get(vals, j));
	}
	snprintf(a->title, sizeof(a->title), "final test %s against %s",
		 metric ? "loss" : "accuracy", key);
	chart_init(&a->chart, a->title, key, metric ? "test loss" : "test accuracy", width, height);
	a->chart.x_whole = whole;
	if (!numeric) {
		a->chart.xnames = (const char *const *)a->names;
		a->chart.nxnames = a->nnames;
	}
	for (size_t i = 0; i < n; i++)
		label[i] = report_points_label(p[i].params, key, false);
	final_series(&a->chart, p, n, label, vals, key, numeric, metric);
	snprintf(a->file, sizeof(a->file), "final_%s_%.60s", metric ? "loss" : "accuracy", key);
	for (char *f = a->file; *f; f++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", *f))
			*f = '_';
	for (size_t i = 0; i < n; i++)
		free(label[i]);
	free(label);
}

void report_points_axis_release(struct report_points_axis *a)
{
	chart_release(&a->chart);
	for (size_t j = 0; j < a->nnames; j++)
		free(a->names[j]);
	free(a->names);
	a->names = NULL;
	a->nnames = 0;
}

/* The points of one group (same values but for rank keys) by ranks:
 * their throughput, and its efficiency against *base, the per-rank
 * throughput at the group's fewest ranks that finished. */
static size_t scaling_group(const struct report_point *p, size_t n, char **label, size_t g,
			    double *x, double *y, double *e, double *base)
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

/* The series of every group into tc and ec; with one group, the line it
 * would follow if it scaled perfectly. */
static void scaling_series(const struct report_point *p, size_t n, struct chart *tc,
			   struct chart *ec)
{
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	double *e = xcalloc(n + 1, sizeof(double));
	char **label = xcalloc(n + 1, sizeof(*label));
	double base = NAN, base0 = NAN;
	size_t groups = 0;

	for (size_t i = 0; i < n; i++)
		label[i] = report_points_label(p[i].params, NULL, true);
	for (size_t g = 0; g < n; g++) {
		bool seen = false;
		size_t m;

		for (size_t j = 0; j < g; j++)
			seen |= !strcmp(label[j], label[g]);
		if (seen)
			continue;
		m = scaling_group(p, n, label, g, x, y, e, &base);
		chart_add(tc, *label[g] ? label[g] : "measured", x, y, m)->points = true;
		chart_add(ec, *label[g] ? label[g] : "measured", x, e, m)->points = true;
		if (!groups++)
			base0 = base;
	}
	if (groups == 1 && isfinite(base0)) {
		for (size_t k = 0; k < tc->series[0].n; k++)
			y[k] = base0 * tc->series[0].x[k];
		chart_add(tc, "linear from the fewest ranks", tc->series[0].x, y,
			  tc->series[0].n)->dashed = true;
	}
	for (size_t i = 0; i < n; i++)
		free(label[i]);
	free(label);
	free(x);
	free(y);
	free(e);
}

int report_points_scaling(const struct report_point *p, size_t n, int width, int height,
			  struct chart *tc, struct chart *ec, int64_t *ranks)
{
	int64_t lo = 0, hi = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i].ranks <= 0)
			continue;
		lo = lo && lo < p[i].ranks ? lo : p[i].ranks;
		hi = hi > p[i].ranks ? hi : p[i].ranks;
	}
	if (lo == hi) {
		*ranks = lo;
		return -1;
	}
	chart_init(tc, "throughput against ranks", "ranks", "samples/s (all ranks)", width, height);
	chart_init(ec, "scaling efficiency: throughput / (ranks x per-rank throughput at the "
		   "fewest ranks)", "ranks", "efficiency", width, height);
	tc->y_from_zero = ec->y_from_zero = true;
	tc->x_whole = ec->x_whole = true;
	scaling_series(p, n, tc, ec);
	return 0;
}

const char *report_points_check_record(json_t *doc)
{
	json_t *axes = json_object_get(doc, "axes"), *points = json_object_get(doc, "points");

	for (size_t k = 0; json_is_array(axes) && k < json_array_size(axes); k++) {
		json_t *a = json_array_get(axes, k), *vals = json_object_get(a, "values");

		if (!json_is_string(json_object_get(a, "key")) || !json_is_array(vals) ||
		    !json_array_size(vals))
			axes = NULL;
		for (size_t j = 0; axes && j < json_array_size(vals); j++)
			if (json_is_object(json_array_get(vals, j)) ||
			    json_is_array(json_array_get(vals, j)))
				axes = NULL;
	}
	for (size_t i = 0; axes && i < json_array_size(points); i++)
		if (!json_is_object(json_object_get(json_array_get(points, i), "params")))
			points = NULL;
	if (json_is_array(axes) && points)
		return NULL;
	return !json_is_array(axes) ? "its axes are not a list of keys with their values"
				    : "a point without its params";
}
