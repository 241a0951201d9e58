/* test_sweep_plan.c - launcher/runs/sweep_plan: a sweep's points as
 * array jobs.  Points are loaded as `hpctrain submit` loads them (the
 * sweep core, spec_load, one render each); what is checked is the
 * grouping by shape, the split at MaxArraySize (a shape of exactly
 * MaxArraySize points stays one array), the arrays' options, the
 * sweep's name and its record.  Submitting them is tests/cli/sweep.bats. */
#include "tests/unit/testlib.h"

#include "common/exitcode.h"           // defines: HPT_EXIT_BAD_SPEC
#include "common/spec/sweep.h"         // defines: sweep_parse, sweep_point
#include "launcher/runs/sweep_plan.h"  // defines: struct sweep_plan, sweep_plan_*

#include <jansson.h>
#include <stdlib.h>

#define HPCTRAIN "/opt/hpctrain/bin/hpctrain"

/* A sweep of n points, ranks_per_node from the axis, the rest from seed. */
#define SPEC(axes) \
	"version: 1\n" \
	"name: sp\n" \
	"resources: {nodes: 1, ranks_per_node: 1, time: \"00:05:00\"}\n" \
	"command: [true]\n" \
	"sweep:\n" axes

struct fixture {
	struct sweep sw;
	struct sweep_plan pl;
	struct diag_list dl;
	const char *text;
};

/* Loads every point of text's sweep, as submit does, and renders it. */
static void plan_load(struct fixture *f, const char *text, bool render)
{
	memset(f, 0, sizeof(*f));
	f->text = text;
	assert_int_equal(sweep_parse("job.yaml", text, strlen(text), NULL, 0, 0, -1, &f->sw,
				     &f->dl), 0);
	f->pl.sweep = &f->sw;
	f->pl.max_parallel = f->sw.max_parallel;
	f->pl.n = sweep_count(&f->sw);
	f->pl.p = xcalloc(f->pl.n, sizeof(*f->pl.p));
	for (size_t i = 0; i < f->pl.n; i++) {
		struct sweep_plan_point *pt = &f->pl.p[i];
		struct sweep_point sp;

		sweep_point(&f->sw, i, &sp);
		attempt_init(&pt->at);
		pt->index = i;
		assert_int_equal(spec_load("job.yaml", text, strlen(text), sp.v, sp.n, &pt->at.job,
					   &f->dl), 0);
		assert_int_equal(attempt_resolve(&pt->at), 0);
		if (render)
			assert_int_equal(attempt_render(&pt->at, HPCTRAIN, &f->dl), 0);
		sweep_point_release(&sp);
	}
	sweep_plan_identity(&f->pl);
}

static void plan_free(struct fixture *f)
{
	sweep_plan_release(&f->pl);
	sweep_release(&f->sw);
	diag_list_release(&f->dl);
}

static const char *array_spec(const struct fixture *f, size_t k)
{
	return render_opts_find(&f->pl.a[k].opts, RENDER_OPT_ARRAY)->text;
}

/* Five points of one shape under MaxArraySize 2: arrays of 2, 2 and 1,
 * in point order, each under the sweep's own cap. */
static void plan__splits_a_shape_at_max_array_size(void **state)
{
	struct fixture f;

	(void)state;
	plan_load(&f, SPEC("  max_parallel: 1\n  env.SEED: [1, 2, 3, 4, 5]\n"), true);
	f.pl.max_tasks = 2;
	assert_int_equal(sweep_plan_arrays(&f.pl), 0);
	assert_true(f.pl.split);
	assert_int_equal(f.pl.na, 3);
	assert_int_equal(f.pl.a[0].n, 2);
	assert_int_equal(f.pl.a[1].n, 2);
	assert_int_equal(f.pl.a[2].n, 1);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(f.pl.p[i].array, i / 2);
		assert_int_equal(f.pl.p[i].task, i % 2);
		assert_int_equal(f.pl.a[i / 2].points[i % 2], i);
	}
	assert_string_equal(array_spec(&f, 0), "0-1%1");
	assert_string_equal(array_spec(&f, 2), "0-0"); /* one task: no cap to set */
	plan_free(&f);
}

/* A shape of exactly MaxArraySize points is one array: nothing split. */
static void plan__keeps_a_shape_of_exactly_max_array_size_whole(void **state)
{
	struct fixture f;

	(void)state;
	plan_load(&f, SPEC("  env.SEED: [1, 2, 3]\n"), true);
	f.pl.max_tasks = 3;
	assert_int_equal(sweep_plan_arrays(&f.pl), 0);
	assert_false(f.pl.split);
	assert_int_equal(f.pl.na, 1);
	assert_int_equal(f.pl.a[0].n, 3);
	assert_string_equal(array_spec(&f, 0), "0-2");
	/* and one more point than that is two arrays */
	plan_free(&f);
	plan_load(&f, SPEC("  env.SEED: [1, 2, 3, 4]\n"), true);
	f.pl.max_tasks = 3;
	assert_int_equal(sweep_plan_arrays(&f.pl), 0);
	assert_true(f.pl.split);
	assert_int_equal(f.pl.na, 2);
	assert_int_equal(f.pl.a[1].n, 1);
	plan_free(&f);
}

/* Points that differ in their Slurm options go to an array per shape,
 * each in point order; no MaxArraySize known (0): no limit. */
static void plan__groups_points_by_shape(void **state)
{
	struct fixture f;

	(void)state;
	plan_load(&f, SPEC("  mode: zip\n  resources.ranks_per_node: [1, 2, 1, 2, 1]\n"
			   "  env.SEED: [1, 2, 3, 4, 5]\n"), true);
	assert_int_equal(sweep_plan_arrays(&f.pl), 0);
	assert_false(f.pl.split);
	assert_int_equal(f.pl.na, 2);
	assert_int_equal(f.pl.a[0].n, 3);
	assert_int_equal(f.pl.a[1].n, 2);
	assert_int_equal(f.pl.a[0].points[2], 4);
	assert_int_equal(f.pl.a[1].points[1], 3);
	assert_int_equal(f.pl.p[3].array, 1);
	assert_int_equal(f.pl.p[3].task, 1);
	assert_string_equal(render_opts_find(&f.pl.a[1].opts, RENDER_OPT_NTASKS_PER_NODE)->text, "2");
	/* planned again: the same arrays, not twice as many */
	assert_int_equal(sweep_plan_arrays(&f.pl), 0);
	assert_int_equal(f.pl.na, 2);
	plan_free(&f);
}

/* A point that was never rendered is a bug, not a plan. */
static void plan__refuses_points_not_rendered(void **state)
{
	struct fixture f;

	(void)state;
	plan_load(&f, SPEC("  env.SEED: [1, 2]\n"), false);
	assert_int_equal(sweep_plan_arrays(&f.pl), HPT_EXIT_INTERNAL);
	plan_free(&f);
}

/* Two points that resolve to one job would share a run. */
static void plan__refuses_points_that_resolve_alike(void **state)
{
	struct fixture f;
	struct sbuf t = SBUF_INIT;

	(void)state;
	plan_load(&f, SPEC("  env.SEED: [1, 2, \"1\"]\n"), false);
	assert_int_equal(sweep_plan_check_distinct(&f.pl, "job.yaml", &f.dl), HPT_EXIT_BAD_SPEC);
	assert_int_equal(f.dl.n, 1);
	diag_format(&f.dl.v[0], &t);
	assert_non_null(strstr(t.buf, "points 0 (SEED=1) and 2 (SEED=1) resolve to the same "
				      "job"));
	sbuf_release(&t);
	plan_free(&f);
}

/* The sweep's name is the hash of its points' hashes, in order. */
static void plan__names_the_sweep_by_its_points(void **state)
{
	struct fixture f;
	struct sbuf all = SBUF_INIT;
	char want[65];

	(void)state;
	plan_load(&f, SPEC("  env.SEED: [1, 2]\n"), false);
	sbuf_addf(&all, "hpctrain sweep\n%s\n%s\n", f.pl.p[0].at.sha256, f.pl.p[1].at.sha256);
	spec_hash(all.buf, all.len, want);
	assert_string_equal(f.pl.sha256, want);
	assert_int_equal(strncmp(f.pl.name, "sweep-", 6), 0);
	assert_int_equal(strncmp(f.pl.name + 6, want, 12), 0);
	assert_int_equal(strlen(f.pl.name), 18);
	sbuf_release(&all);
	plan_free(&f);
}

/* The record: typed values, each point's run, array and task. */
static void plan__records_axes_and_points(void **state)
{
	struct fixture f;
	json_t *doc, *p1;

	(void)state;
	plan_load(&f, SPEC("  mode: zip\n  env.A: [1, 0.5]\n  env.B: [true, \"x\"]\n"), true);
	assert_int_equal(sweep_plan_arrays(&f.pl), 0);
	doc = sweep_plan_record(&f.pl, "/runs/sp");
	assert_string_equal(json_string_value(json_object_get(doc, "sweep")), f.pl.name);
	assert_string_equal(json_string_value(json_object_get(doc, "mode")), "zip");
	assert_true(json_is_integer(json_array_get(json_object_get(json_array_get(
		json_object_get(doc, "axes"), 0), "values"), 0)));
	p1 = json_array_get(json_object_get(doc, "points"), 1);
	assert_true(json_is_real(json_object_get(json_object_get(p1, "params"), "env.A")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(p1, "params"),
							      "env.B")), "x");
	assert_int_equal(strlen(json_string_value(json_object_get(p1, "run"))), 12);
	assert_int_equal(json_integer_value(json_object_get(p1, "task")), 1);
	assert_int_equal(json_array_size(json_object_get(doc, "arrays")), 0);
	json_decref(doc);
	plan_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan__splits_a_shape_at_max_array_size),
		cmocka_unit_test(plan__keeps_a_shape_of_exactly_max_array_size_whole),
		cmocka_unit_test(plan__groups_points_by_shape),
		cmocka_unit_test(plan__refuses_points_not_rendered),
		cmocka_unit_test(plan__refuses_points_that_resolve_alike),
		cmocka_unit_test(plan__names_the_sweep_by_its_points),
		cmocka_unit_test(plan__records_axes_and_points),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
