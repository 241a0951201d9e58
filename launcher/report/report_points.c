/* report_points.c - a sweep's points as chart series (report_points.h).
 * Core: fills struct chart from the points; no I/O. */
#include "launcher/report/report_points.h" // defines: struct report_point, report_points_*
#include "common/sbuf.h"                   // defines: struct sbuf, x* allocators
#include "common/spec/sweep.h"             // defines: sweep_params_label
#include "launcher/report/chart.h"  // defines: chart_init, chart_add
#include "launcher/report/report_data.h"   // defines: report_throughput
#include "common/strfmt.h" // defines: strfmt_label

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

/* The points grouped by label (label[i] names point i's group): order
 * lists every point, group by group, the groups in the order of their
 * first point and each group's points in index order; group g is
 * order[start[g] .. start[g + 1]).  By sorting: O(n log n).  Finding
 * each point's group by comparing it with every point before it was
 * O(n^2), 5 * 10^7 comparisons per chart at 10,000 points. */
struct groups {
	size_t *order, *start, n;
};

struct labelled {
	const char *label;
	size_t i;
};

static int by_label(const void *a, const void *b)
{
	const struct labelled *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

struct span {
	size_t first, begin, end; /* its first point; its part of the sorted points */
};

static int by_first(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

static void groups_make(struct groups *g, char **label, size_t n)
{
	struct labelled *l = xcalloc(n + 1, sizeof(*l));
	struct span *s = xcalloc(n + 1, sizeof(*s));
	size_t ns = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		l[i] = (struct labelled){ label[i], i };
	qsort(l, n, sizeof(*l), by_label);
	for (size_t i = 0; i < n; i++) {
		if (!i || strcmp(l[i].label, l[i - 1].label))
			s[ns++] = (struct span){ l[i].i, i, i };
		s[ns - 1].end = i + 1;
	}
	qsort(s, ns, sizeof(*s), by_first);
	g->order = xcalloc(n + 1, sizeof(*g->order));
	g->start = xcalloc(ns + 1, sizeof(*g->start));
	g->n = ns;
	for (size_t j = 0; j < ns; j++) {
		g->start[j] = k;
		for (size_t i = s[j].begin; i < s[j].end; i++)
			g->order[k++] = l[i].i;
	}
	g->start[ns] = k;
	free(l);
	free(s);
}

static void groups_release(struct groups *g)
{
	free(g->order);
	free(g->start);
}

/* One series per combination of the other axes' values (label[i] names
 * point i's): its points' metric against key. */
static void final_series(struct chart *c, const struct report_point *p, size_t n,
			 char **label, json_t *vals, const char *key, bool numeric, int metric)
{
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	struct groups g;

	groups_make(&g, label, n);
	for (size_t j = 0; j < g.n; j++) {
		size_t m = 0, missing = 0;
		const char *l = label[g.order[g.start[j]]];
		char *name;

		for (size_t q = g.start[j]; q < g.start[j + 1]; q++) {
			const struct report_point *pt = &p[g.order[q]];

			x[m] = axis_x(vals, json_object_get(pt->params, key), numeric);
			y[m] = report_points_final_metric(pt, metric);
			missing += isnan(y[m++]);
		}
		/* a point not finished is a gap; the legend says how many */
		name = missing ? xasprintf("%s%s(%zu not finished)", l, *l ? " " : "", missing)
			       : xstrdup(l);
		chart_add(c, name, x, y, m)->points = true;
		free(name);
	}
	groups_release(&g);
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
	strfmt_label(a->title, sizeof(a->title), "final test %s against %s",
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
	/* encode-ok: a file name cut to 60 bytes of the key on purpose, in 160 */
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

/* A point of a scaling group: its ranks, its throughput, its index. */
struct ranked {
	double ranks, y;
	size_t i;
};

static int by_ranks(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->ranks != y->ranks)
		return x->ranks < y->ranks ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* The points of one group (same values but for rank keys; member[0..m)
 * their indices) by ranks: their throughput, and its efficiency against
 * *base, the per-rank throughput at the group's fewest ranks that
 * finished.  r is room for m.  Returns how many have known ranks. */
static size_t scaling_group(const struct report_point *p, const size_t *member, size_t m,
			    struct ranked *r, double *x, double *y, double *e, double *base)
{
	size_t k = 0;

	for (size_t q = 0; q < m; q++) {
		const struct report_point *pt = &p[member[q]];

		if (pt->ranks <= 0)
			continue;
		r[k++] = (struct ranked){ (double)pt->ranks,
					  pt->loaded ? report_throughput(&pt->r, pt->ranks) : NAN,
					  member[q] };
	}
	qsort(r, k, sizeof(*r), by_ranks);
	for (size_t q = 0; q < k; q++) {
		x[q] = r[q].ranks;
		y[q] = r[q].y;
	}
	*base = NAN;
	for (size_t q = 0; q < k && isnan(*base); q++)
		if (isfinite(y[q]))
			*base = y[q] / x[q];
	for (size_t q = 0; q < k; q++)
		e[q] = y[q] / (*base * x[q]);
	return k;
}

/* The series of every group into tc and ec; with one group, the line it
 * would follow if it scaled perfectly. */
static void scaling_series(const struct report_point *p, size_t n, struct chart *tc,
			   struct chart *ec)
{
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	double *e = xcalloc(n + 1, sizeof(double));
	struct ranked *r = xcalloc(n + 1, sizeof(*r));
	char **label = xcalloc(n + 1, sizeof(*label));
	double base = NAN, base0 = NAN;
	struct groups g;

	for (size_t i = 0; i < n; i++)
		label[i] = report_points_label(p[i].params, NULL, true);
	groups_make(&g, label, n);
	for (size_t j = 0; j < g.n; j++) {
		const char *l = label[g.order[g.start[j]]];
		size_t m = scaling_group(p, g.order + g.start[j], g.start[j + 1] - g.start[j], r, x,
					 y, e, &base);

		chart_add(tc, *l ? l : "measured", x, y, m)->points = true;
		chart_add(ec, *l ? l : "measured", x, e, m)->points = true;
		if (!j)
			base0 = base;
	}
	if (g.n == 1 && isfinite(base0)) {
		for (size_t k = 0; k < tc->series[0].n; k++)
			y[k] = base0 * tc->series[0].x[k];
		chart_add(tc, "linear from the fewest ranks", tc->series[0].x, y,
			  tc->series[0].n)->dashed = true;
	}
	groups_release(&g);
	for (size_t i = 0; i < n; i++)
		free(label[i]);
	free(label);
	free(r);
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
