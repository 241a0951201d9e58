/* test_report_points.c - launcher/report/report_points: a sweep's points
 * as chart series (final metrics against an axis, throughput and scaling
 * efficiency against ranks), the labels of those series and the check of
 * a sweep record; no file is read or drawn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "launcher/report/chart.h"  // defines: struct chart, chart_release
#include "launcher/report/report_points.h" // defines: struct report_point, report_points_*

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 8

struct points {
	struct report_point p[MAX_POINTS];
	size_t n;
	json_t *params; /* owns every point's params */
};

/* Adds a point of params (JSON text) that ran ranks; finished with
 * samples/s (all ranks) and test accuracy acc when sps > 0. */
static void add(struct points *s, const char *params, int64_t ranks, double sps, double acc)
{
	struct report_point *p = &s->p[s->n++];
	json_t *v = json_loads(params, 0, NULL);

	assert_non_null(v);
	if (!s->params)
		s->params = json_array();
	json_array_append_new(s->params, v);
	memset(p, 0, sizeof(*p));
	p->params = v;
	p->ranks = ranks;
	p->loaded = sps > 0;
	p->r.summary = sps > 0;
	p->r.global_samples_per_s = sps;
	p->r.test_accuracy = acc;
	p->r.test_loss = 1 - acc;
}

static void points_release(struct points *s)
{
	json_decref(s->params);
}

static void report_points__scaling_efficiency_is_against_the_fewest_ranks(void **state)
{
	static const double want_x[] = { 1, 2, 4 };
	struct points s = { .n = 0 };
	struct chart tc, ec;
	int64_t ranks = -1;

	(void)state;
	add(&s, "{\"resources.nodes\": 4}", 4, 360, 0.9);
	add(&s, "{\"resources.nodes\": 1}", 1, 100, 0.9);
	add(&s, "{\"resources.nodes\": 2}", 2, 190, 0.9);
	assert_int_equal(report_points_scaling(s.p, s.n, 960, 540, &tc, &ec, &ranks), 0);
	assert_int_equal(ec.nseries, 1);
	assert_string_equal(ec.series[0].label, "measured");
	assert_int_equal(ec.series[0].n, 3);
	/* by ranks: 1, 2, 4; 100, 190, 360 samples/s */
	for (size_t k = 0; k < 3; k++)
		assert_float_equal(ec.series[0].x[k], want_x[k], 1e-12);
	assert_float_equal(ec.series[0].y[0], 1.0, 1e-12);
	assert_float_equal(ec.series[0].y[1], 0.95, 1e-12);
	assert_float_equal(ec.series[0].y[2], 0.9, 1e-12);
	assert_float_equal(tc.series[0].y[2], 360, 1e-12);
	/* one group: and the line of perfect scaling from 100 per rank */
	assert_int_equal(tc.nseries, 2);
	assert_string_equal(tc.series[1].label, "linear from the fewest ranks");
	assert_true(tc.series[1].dashed);
	assert_float_equal(tc.series[1].y[2], 400, 1e-12);
	assert_true(tc.x_whole && tc.y_from_zero && ec.x_whole && ec.y_from_zero);
	chart_release(&tc);
	chart_release(&ec);
	points_release(&s);
}

static void report_points__an_unfinished_point_is_a_gap_and_not_the_base(void **state)
{
	struct points s = { .n = 0 };
	struct chart tc, ec;
	int64_t ranks;

	(void)state;
	add(&s, "{\"resources.nodes\": 1}", 1, 0, 0); /* not finished */
	add(&s, "{\"resources.nodes\": 2}", 2, 190, 0.9);
	add(&s, "{\"resources.nodes\": 4}", 4, 360, 0.9);
	assert_int_equal(report_points_scaling(s.p, s.n, 960, 540, &tc, &ec, &ranks), 0);
	assert_true(isnan(ec.series[0].y[0]));
	assert_float_equal(ec.series[0].y[1], 1.0, 1e-12);
	assert_float_equal(ec.series[0].y[2], 360.0 / (95 * 4), 1e-12);
	/* the perfect line starts from the base, 95 per rank */
	assert_float_equal(tc.series[1].y[0], 95, 1e-12);
	chart_release(&tc);
	chart_release(&ec);
	points_release(&s);
}

static void report_points__scaling_has_a_series_per_combination_of_other_keys(void **state)
{
	struct points s = { .n = 0 };
	struct chart tc, ec;
	int64_t ranks = 0;

	(void)state;
	add(&s, "{\"train.lr\": 0.1, \"resources.nodes\": 1}", 1, 100, 0.9);
	add(&s, "{\"train.lr\": 0.2, \"resources.nodes\": 1}", 1, 100, 0.9);
	add(&s, "{\"train.lr\": 0.1, \"resources.nodes\": 2}", 2, 180, 0.9);
	add(&s, "{\"train.lr\": 0.2, \"resources.nodes\": 2}", 2, 200, 0.9);
	add(&s, "{\"train.lr\": 0.3, \"resources.nodes\": 2}", 0, 200, 0.9); /* ranks unknown */
	assert_int_equal(report_points_scaling(s.p, s.n, 960, 540, &tc, &ec, &ranks), 0);
	/* no perfect line with several groups; a point of unknown ranks is left out */
	assert_int_equal(tc.nseries, 3);
	assert_string_equal(tc.series[0].label, "lr=0.1");
	assert_string_equal(tc.series[1].label, "lr=0.2");
	assert_string_equal(tc.series[2].label, "lr=0.3");
	assert_int_equal(tc.series[2].n, 0);
	assert_float_equal(ec.series[0].y[1], 0.9, 1e-12);
	assert_float_equal(ec.series[1].y[1], 1.0, 1e-12);
	chart_release(&tc);
	chart_release(&ec);
	points_release(&s);
	/* every point at the same ranks: nothing to chart */
	memset(&s, 0, sizeof(s));
	add(&s, "{\"train.lr\": 0.1}", 2, 100, 0.9);
	add(&s, "{\"train.lr\": 0.2}", 2, 100, 0.9);
	assert_int_equal(report_points_scaling(s.p, s.n, 960, 540, &tc, &ec, &ranks), -1);
	assert_int_equal(ranks, 2);
	points_release(&s);
}

static void report_points__final_metric_has_a_series_per_other_axes_values(void **state)
{
	json_t *axis = json_loads("{\"key\": \"train.lr\", \"values\": [0.1, 0.2]}", 0, NULL);
	struct report_points_axis a;
	struct points s = { .n = 0 };

	(void)state;
	add(&s, "{\"train.lr\": 0.1, \"train.seed\": 1}", 1, 100, 0.8);
	add(&s, "{\"train.lr\": 0.2, \"train.seed\": 1}", 1, 100, 0.7);
	add(&s, "{\"train.lr\": 0.1, \"train.seed\": 2}", 1, 100, 0.6);
	add(&s, "{\"train.lr\": 0.2, \"train.seed\": 2}", 1, 0, 0); /* not finished */
	report_points_final(&a, s.p, s.n, axis, 0, 960, 540);
	assert_string_equal(a.chart.title, "final test accuracy against train.lr");
	assert_string_equal(a.chart.xlabel, "train.lr");
	assert_string_equal(a.chart.ylabel, "test accuracy");
	assert_string_equal(a.file, "final_accuracy_train_lr");
	assert_null(a.chart.xnames); /* numeric: x is the value */
	assert_false(a.chart.x_whole);
	assert_int_equal(a.chart.nseries, 2);
	assert_string_equal(a.chart.series[0].label, "seed=1");
	assert_string_equal(a.chart.series[1].label, "seed=2 (1 not finished)");
	assert_true(a.chart.series[1].points);
	assert_float_equal(a.chart.series[0].x[1], 0.2, 1e-12);
	assert_float_equal(a.chart.series[0].y[1], 0.7, 1e-12);
	assert_float_equal(a.chart.series[1].y[0], 0.6, 1e-12);
	assert_true(isnan(a.chart.series[1].y[1]));
	report_points_axis_release(&a);
	/* the loss, with no other axis: an unnamed series */
	json_decref(axis);
	axis = json_loads("{\"key\": \"train.seed\", \"values\": [1, 2]}", 0, NULL);
	points_release(&s);
	memset(&s, 0, sizeof(s));
	add(&s, "{\"train.seed\": 1}", 1, 100, 0.75);
	add(&s, "{\"train.seed\": 2}", 1, 0, 0);
	report_points_final(&a, s.p, s.n, axis, 1, 960, 540);
	assert_string_equal(a.file, "final_loss_train_seed");
	assert_true(a.chart.x_whole);
	assert_string_equal(a.chart.series[0].label, "(1 not finished)");
	assert_float_equal(a.chart.series[0].y[0], 0.25, 1e-12);
	report_points_axis_release(&a);
	points_release(&s);
	json_decref(axis);
}

static void report_points__a_categorical_axis_names_its_ticks(void **state)
{
	json_t *axis = json_loads("{\"key\": \"train.model\", \"values\": [\"mlp\", \"cnn\"]}", 0,
				  NULL);
	struct report_points_axis a;
	struct points s = { .n = 0 };

	(void)state;
	add(&s, "{\"train.model\": \"cnn\"}", 1, 100, 0.9);
	add(&s, "{\"train.model\": \"mlp\"}", 1, 100, 0.8);
	report_points_final(&a, s.p, s.n, axis, 0, 960, 540);
	assert_int_equal(a.chart.nxnames, 2);
	assert_string_equal(a.chart.xnames[0], "mlp");
	assert_string_equal(a.chart.xnames[1], "cnn");
	/* x is the value's index among the axis's */
	assert_float_equal(a.chart.series[0].x[0], 1, 1e-12);
	assert_float_equal(a.chart.series[0].x[1], 0, 1e-12);
	assert_false(a.chart.x_whole);
	report_points_axis_release(&a);
	points_release(&s);
	json_decref(axis);
}

static void report_points__labels_leave_out_the_axis_and_rank_keys(void **state)
{
	json_t *params = json_loads("{\"train.lr\": 0.05, \"resources.nodes\": 2, "
				    "\"params.width\": \"wide\", \"seed\": 3}", 0, NULL);
	char *l;

	(void)state;
	l = report_points_label(params, NULL, false);
	assert_string_equal(l, "lr=0.05 nodes=2 width=wide seed=3");
	free(l);
	l = report_points_label(params, "train.lr", true);
	assert_string_equal(l, "width=wide seed=3");
	free(l);
	assert_true(report_points_is_rank_key("resources.ranks_per_node"));
	assert_false(report_points_is_rank_key("train.lr"));
	json_decref(params);
}

static void report_points__checks_what_the_charts_need_of_a_record(void **state)
{
	static const struct { const char *doc, *why; } cases[] = {
		{ "{\"axes\": [{\"key\": \"a\", \"values\": [1, \"x\"]}], "
		  "\"points\": [{\"params\": {\"a\": 1}}]}", NULL },
		{ "{\"axes\": {\"key\": \"a\"}, \"points\": []}",
		  "its axes are not a list of keys with their values" },
		{ "{\"axes\": [{\"key\": \"a\", \"values\": []}], \"points\": []}",
		  "its axes are not a list of keys with their values" },
		{ "{\"axes\": [{\"key\": \"a\", \"values\": [{\"b\": 1}]}], \"points\": []}",
		  "its axes are not a list of keys with their values" },
		{ "{\"axes\": [{\"key\": \"a\", \"values\": [1]}], \"points\": [{\"a\": 1}]}",
		  "a point without its params" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *doc = json_loads(cases[i].doc, 0, NULL);
		const char *why = report_points_check_record(doc);

		assert_non_null(doc);
		if (cases[i].why)
			assert_string_equal(why, cases[i].why);
		else
			assert_null(why);
		json_decref(doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_points__scaling_efficiency_is_against_the_fewest_ranks),
		cmocka_unit_test(report_points__an_unfinished_point_is_a_gap_and_not_the_base),
		cmocka_unit_test(report_points__scaling_has_a_series_per_combination_of_other_keys),
		cmocka_unit_test(report_points__final_metric_has_a_series_per_other_axes_values),
		cmocka_unit_test(report_points__a_categorical_axis_names_its_ticks),
		cmocka_unit_test(report_points__labels_leave_out_the_axis_and_rank_keys),
		cmocka_unit_test(report_points__checks_what_the_charts_need_of_a_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
