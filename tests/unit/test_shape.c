/* test_shape.c - hpctrain plan's pure parts: the step-time model fitted
 * with and without recorded communication, borrowing a term no run
 * measured, a global batch split among the ranks and which batch a
 * program holds, its
 * uncertainty when it extrapolates, the steps a job's work takes at a
 * shape, the pick by earliest finish or by node-hours under a deadline,
 * a planned run's prediction against what happened, and the parsing of
 * --shapes and --deadline; figures out of all measure (a step of 1e308 or
 * 1e-300 s) neither fitted, nor cast, nor picked. */
#include "tests/unit/testlib.h"

#include "common/duration.h"            // defines: duration_add_hms
#include "common/numcheck.h"            // defines: numcheck_int64, numcheck_time_add
#include "common/sbuf.h"                // defines: struct sbuf, SBUF_INIT
#include "launcher/shape/shape_batch.h" // defines: shape_batch_infer, shape_batch_describe
#include "launcher/shape/shape_check.h" // defines: shape_check_from_json, shape_check_summarize
#include "launcher/shape/shape_model.h" // defines: shape_model_fit, shape_model_step_s
#include "launcher/shape/shape_pick.h"  // defines: shape_pick, shape_steps, shape_parse_list

#include <math.h>

/* nodes x ranks a node, step, comm: within a node 0.1 ms at g = 1,
 * between nodes 20 ms */
static void shape_model__splits_compute_and_both_allreduces_from_recorded_communication(void **state)
{
	const struct shape_point p[] = { { 1, 1, 0.0100, 0.0000, 0, 0 },
					 { 1, 2, 0.0101, 0.0001, 0, 0 },
					 { 2, 1, 0.0300, 0.0200, 0, 0 },
					 { 4, 1, 0.0400, 0.0300, 0, 0 } };
	struct shape_fit f;
	double err;

	(void)state;
	assert_int_equal(shape_model_fit(p, 4, &f), 0);
	assert_true(fabs(f.compute_s - 0.0100) < 1e-6);
	assert_true(fabs(f.node_s - 0.0001) < 1e-6);
	assert_true(fabs(f.net_s - 0.0200) < 1e-4);
	assert_true(f.node_known && f.net_known);
	assert_int_equal(f.runs, 4);
	assert_int_equal(f.shapes, 4);
	assert_int_equal(f.max_ranks, 4);
	/* 2 nodes of 4 ranks: both terms, and one doubling past 4 ranks */
	assert_true(fabs(shape_model_step_s(&f, 2, 4, &err) - (0.0100 + 0.0001 * 1.5 + 0.0200)) < 1e-4);
	assert_true(fabs(err - (f.rel_err + 0.10)) < 1e-9);
	/* scale-up is far cheaper than scale-out here */
	assert_true(shape_model_step_s(&f, 1, 4, NULL) < shape_model_step_s(&f, 4, 1, NULL) / 2);
}

static void shape_model__fits_both_terms_from_step_times_alone(void **state)
{
	const struct shape_point p[] = { { 1, 1, 0.100, -1, 0, 0 }, { 1, 2, 0.110, -1, 0, 0 },
					 { 2, 1, 0.130, -1, 0, 0 }, { 2, 2, 0.140, -1, 0, 0 } };
	struct shape_fit f;

	(void)state;
	assert_int_equal(shape_model_fit(p, 4, &f), 0);
	assert_true(fabs(f.compute_s - 0.100) < 1e-6);
	assert_true(fabs(f.node_s - 0.010) < 1e-6);
	assert_true(fabs(f.net_s - 0.030) < 1e-6);
	assert_true(f.rel_err >= 0.05 && f.rel_err < 0.0501);
}

static void shape_model__borrows_an_unmeasured_term_and_says_so(void **state)
{
	const struct shape_point one_node[] = { { 1, 1, 0.100, 0, 0, 0 },
						{ 1, 2, 0.112, 0.012, 0, 0 } };
	const struct shape_point alone[] = { { 1, 1, 0.100, -1, 0, 0 }, { 1, 1, 0.104, -1, 0, 0 } };
	struct shape_fit f;
	double err;

	(void)state;
	assert_int_equal(shape_model_fit(one_node, 2, &f), 0);
	assert_true(f.node_known);
	assert_false(f.net_known);
	/* between nodes taken as within one, and 10% for not knowing */
	assert_true(fabs(shape_model_step_s(&f, 2, 1, &err) - 0.112) < 1e-6);
	assert_true(fabs(err - (0.05 + 0.10)) < 1e-9);
	assert_int_equal(shape_model_fit(alone, 2, &f), 0);
	assert_false(f.node_known || f.net_known);
	assert_true(fabs(shape_model_step_s(&f, 2, 2, &err) - 0.102) < 1e-9);
	/* 5% floor, two doublings past 1 rank, two terms unmeasured */
	assert_true(fabs(err - (0.05 + 0.20 + 0.20)) < 1e-9);
}

static void shape_model__has_nothing_to_fit_without_step_times(void **state)
{
	const struct shape_point p[] = { { 0, 1, 0.1, -1, 0, 0 }, { 2, 1, NAN, -1, 0, 0 },
					 { 2, 1, 0, -1, 0, 0 } };
	struct shape_fit f;

	(void)state;
	assert_int_equal(shape_model_fit(p, 0, &f), -1);
	assert_int_equal(shape_model_fit(p, 3, &f), -1);
}

/* A program holding a global batch of 64 at 1x1 and 2x2: 400 ms of
 * compute alone, a quarter of it a rank at 4 ranks, plus 10 ms of
 * allreduce; the per-rank model would call both shapes equal. */
static void shape_model__splits_a_held_global_batch_among_the_ranks(void **state)
{
	const struct shape_point p[] = { { 1, 1, 0.400, -1, 64, 0 }, { 2, 2, 0.110, -1, 64, 0 } };
	const struct shape_point comm[] = { { 1, 1, 0.400, 0, 64, 0 },
					    { 1, 4, 0.115, 0.015, 64, 0 } };
	struct shape_fit f;
	double err;

	(void)state;
	assert_int_equal(shape_model_fit_global(p, 2, 64, &f), 0);
	assert_true(f.global_batch == 64);
	assert_true(fabs(f.compute_s - 0.400) < 1e-9);
	assert_true(fabs(shape_model_step_s(&f, 1, 1, NULL) - 0.400) < 1e-9);
	assert_true(fabs(shape_model_step_s(&f, 2, 2, NULL) - 0.110) < 1e-9);
	/* 2x2 measured only the sum of the two allreduces: half each */
	assert_true(f.together && !f.node_known && !f.net_known);
	assert_true(fabs(f.node_s - 0.005) < 1e-9 && fabs(f.net_s - 0.005) < 1e-9);
	/* 1x2: half the compute, half the allreduce, and a guess's 10% */
	assert_true(fabs(shape_model_step_s(&f, 1, 2, &err) - (0.200 + 0.005)) < 1e-9);
	assert_true(fabs(err - (f.rel_err + 0.10)) < 1e-9);
	shape_model_step_s(&f, 2, 2, &err);
	assert_true(fabs(err - f.rel_err) < 1e-9);
	assert_true(shape_model_step_s(&f, 4, 2, NULL) < shape_model_step_s(&f, 2, 2, NULL));
	assert_true(f.rel_err < 0.0501);
	/* with communication logged: compute is (step - comm) x W */
	assert_int_equal(shape_model_fit_global(comm, 2, 64, &f), 0);
	assert_true(fabs(f.compute_s - 0.400) < 1e-9);
	assert_true(fabs(f.node_s - 0.010) < 1e-9 && f.node_known && !f.together);
	/* the same points read per rank: every shape about as slow */
	assert_int_equal(shape_model_fit(p, 2, &f), 0);
	assert_true(f.global_batch == 0);
	assert_true(shape_model_step_s(&f, 2, 2, NULL) >= 0.110);
}

static void shape_batch__holds_a_global_batch_logged_the_same_at_every_world_size(void **state)
{
	const struct shape_point p[] = { { 1, 1, 0.4, -1, 64, 64 }, { 2, 2, 0.11, -1, 64, 16 },
					 { 2, 2, 0.12, -1, 64, 16 } };
	struct sbuf says = SBUF_INIT;
	struct shape_batch b;

	(void)state;
	shape_batch_infer(p, 3, &b);
	assert_true(b.global);
	assert_int_equal(b.source, SHAPE_BATCH_FIELD);
	assert_true(b.global_batch == 64);
	assert_int_equal(b.world_sizes, 2);
	shape_batch_describe(&b, &says);
	assert_string_equal(says.buf, "holds a global batch of 64 (global_batch in metrics.jsonl, "
				      "the same at world sizes 1 and 4)");
	/* logged at one world size only: taken as held, and said */
	shape_batch_infer(p + 1, 2, &b);
	assert_true(b.global && b.global_batch == 64 && b.world_sizes == 1);
	sbuf_reset(&says);
	shape_batch_describe(&b, &says);
	assert_string_equal(says.buf, "holds a global batch of 64 (global_batch in metrics.jsonl; "
				      "assumed held: every run had world size 4)");
	sbuf_release(&says);
}

static void shape_batch__takes_a_batch_per_rank_when_the_global_batch_differs(void **state)
{
	const struct shape_point p[] = { { 1, 1, 0.1, -1, 64, 0 }, { 1, 4, 0.1, -1, 256, 0 } };
	struct sbuf says = SBUF_INIT;
	struct shape_batch b;

	(void)state;
	shape_batch_infer(p, 2, &b);
	assert_false(b.global);
	assert_int_equal(b.source, SHAPE_BATCH_FIELD);
	shape_batch_describe(&b, &says);
	assert_string_equal(says.buf, "takes its batch per rank (global_batch in metrics.jsonl "
				      "differs between world sizes: 64 at 1, 256 at 4)");
	sbuf_release(&says);
}

/* Without global_batch: one rank's samples a step (samples_per_s x
 * step time) times the world size, noisy, so within 10%. */
static void shape_batch__reads_the_samples_of_a_step_when_no_global_batch_is_logged(void **state)
{
	const struct shape_point held[] = { { 1, 1, 0.4, -1, 0, 64 }, { 1, 4, 0.11, -1, 0, 16.5 } };
	const struct shape_point per_rank[] = { { 1, 1, 0.1, -1, 0, 32 }, { 2, 1, 0.1, -1, 0, 32 } };
	const struct shape_point one_size[] = { { 1, 2, 0.1, -1, 0, 32 }, { 1, 2, 0.1, -1, 0, 32 } };
	struct sbuf says = SBUF_INIT;
	struct shape_batch b;

	(void)state;
	shape_batch_infer(held, 2, &b);
	assert_true(b.global && b.source == SHAPE_BATCH_RATE);
	assert_true(fabs(b.global_batch - 66) < 1e-9); /* the largest world size's */
	shape_batch_infer(per_rank, 2, &b);
	assert_false(b.global);
	assert_int_equal(b.source, SHAPE_BATCH_RATE);
	/* one world size cannot tell the two apart: per rank, as before */
	shape_batch_infer(one_size, 2, &b);
	assert_false(b.global);
	assert_int_equal(b.source, SHAPE_BATCH_NONE);
	shape_batch_describe(&b, &says);
	assert_string_equal(says.buf, "takes its batch per rank (assumed: no run logged global_batch)");
	sbuf_release(&says);
}

static void shape_steps__takes_max_steps_or_epochs_over_the_global_batch(void **state)
{
	struct shape_work w = { .epochs = 2, .samples_per_epoch = 60000, .batch_per_rank = 64 };

	(void)state;
	assert_int_equal(shape_steps(&w, 1), 2 * 938);
	assert_int_equal(shape_steps(&w, 2), 2 * 469);
	w.samples_per_epoch = 0;
	assert_int_equal(shape_steps(&w, 2), 0);
	/* 400 steps of the spec's 2 ranks: the same samples at any shape */
	w.max_steps = 400;
	w.spec_ranks = 2;
	assert_int_equal(shape_steps(&w, 2), 400);
	assert_int_equal(shape_steps(&w, 8), 100);
	assert_int_equal(shape_steps(&w, 3), 267);
}

/* Two shapes: 1 node now for 100 s, 3 nodes in 50 s for 41 s. */
#define NO_DEADLINE ((struct shape_deadline){ .set = false })
#define BY(t) ((struct shape_deadline){ .set = true, .at = (t) })

static void shape_pick__takes_the_earliest_finish_or_the_cheapest_by_the_deadline(void **state)
{
	struct shape_candidate v[3] = {
		{ .nodes = 1, .ranks_per_node = 1, .runnable = true, .start = 1000 },
		{ .nodes = 3, .ranks_per_node = 1, .runnable = true, .start = 1050 },
		{ .nodes = 9, .ranks_per_node = 1, .runnable = false },
	};
	struct shape_work w = { .max_steps = 100, .spec_ranks = 1, .batch_per_rank = 1 };
	struct shape_fit f = { .compute_s = 1.0, .rel_err = 0.05, .runs = 2, .max_ranks = 9,
			       .node_known = true, .net_known = true };

	(void)state;
	shape_predict(&v[0], &f, &w, 0);
	f.compute_s = 1.2; /* 3 ranks take 1.2 s a step: 34 steps of 3 */
	shape_predict(&v[1], &f, &w, 0);
	assert_int_equal(v[0].finish, 1100);
	assert_int_equal(v[1].steps, 34);
	assert_int_equal(v[1].finish, 1050 + 41);
	assert_true(fabs(v[1].node_hours - 3 * 40.8 / 3600.0) < 1e-9);
	assert_int_equal(shape_pick(v, 3, NO_DEADLINE), 1);
	/* both finish by 1100: the fewer node-hours win */
	assert_int_equal(shape_pick(v, 3, BY(1100)), 0);
	/* only the 3-node shape finishes by 1095 */
	assert_int_equal(shape_pick(v, 3, BY(1095)), 1);
	assert_int_equal(shape_pick(v, 3, BY(1090)), -1);
	assert_int_equal(shape_pick(&v[2], 1, NO_DEADLINE), -1);
	/* a deadline at the epoch is a deadline, not none: nothing meets it */
	assert_int_equal(shape_pick(v, 3, BY(0)), -1);
}

/* One run of 1e308 s a step: no run time cast past time_t (it printed
 * -2562047788015215:-30:-8 and finished "now"), not runnable, not picked;
 * a point of 1e-303 s is no point (its fit said +-inf%). */
static void shape_pick__offers_no_shape_whose_run_is_out_of_all_measure(void **state)
{
	struct shape_candidate v[2] = {
		{ .nodes = 1, .ranks_per_node = 1, .runnable = true, .start = 1000 },
		{ .nodes = 2, .ranks_per_node = 1, .runnable = true, .start = 1000 },
	};
	struct shape_work w = { .max_steps = 1000, .spec_ranks = 1, .batch_per_rank = 1 };
	struct shape_fit f = { .compute_s = 1e308, .rel_err = 0.05, .runs = 1, .max_ranks = 1 };
	struct shape_point p[2] = { { .nodes = 1, .ranks_per_node = 1, .step_s = 0.4, .comm_s = -1 },
				    { .nodes = 2, .ranks_per_node = 1, .step_s = 1e-303, .comm_s = -1 } };

	(void)state;
	shape_predict(&v[0], &f, &w, 0);
	assert_false(v[0].runnable);
	assert_non_null(strstr(v[0].why, "out of all measure"));
	assert_int_equal(shape_pick(v, 1, NO_DEADLINE), -1);
	assert_int_equal(shape_model_fit_global(p, 2, 0, &f), 0);
	assert_int_equal(f.runs, 1);
	assert_true(isfinite(f.rel_err) && fabs(f.compute_s - 0.4) < 1e-9);
	shape_predict(&v[1], &f, &w, 0);
	assert_true(v[1].runnable);
	assert_int_equal(shape_pick(v, 2, NO_DEADLINE), 1);
	free(v[0].why);
	/* an epoch's samples from a record, huge: no step count past int64 */
	w = (struct shape_work){ .epochs = 1000, .samples_per_epoch = 1e300, .batch_per_rank = 1 };
	assert_int_equal(shape_steps(&w, 1), 0);
	w.samples_per_epoch = 1e16; /* 10^16 steps an epoch, 1000 epochs */
	assert_int_equal(shape_steps(&w, 1), 0);
}

static void numcheck__converts_only_what_fits(void **state)
{
	int64_t v = 7;
	time_t t = 0;
	struct sbuf s = SBUF_INIT;

	(void)state;
	assert_int_equal(numcheck_int64(-2.9, &v), 0);
	assert_int_equal(v, -2);
	assert_int_equal(numcheck_int64(-9223372036854775808.0, &v), 0);
	assert_int_equal(numcheck_int64(9223372036854775808.0, &v), -1);
	assert_int_equal(numcheck_int64(NAN, &v), -1);
	assert_int_equal(numcheck_int64(-INFINITY, &v), -1);
	assert_int_equal(numcheck_int64(1e308, &v), -1);
	assert_int_equal(numcheck_time_add(1000, 0.2, &t), 0);
	assert_int_equal(t, 1001);
	assert_int_equal(numcheck_time_add(1000, 1e308, &t), -1);
	assert_int_equal(numcheck_time_add(1000, -1, &t), -1);
	assert_int_equal(numcheck_time_add(2000, 9223372036854774784.0, &t), -1);
	duration_add_hms(&s, 7507.4);
	sbuf_addch(&s, ' ');
	duration_add_hms(&s, 1e308);
	sbuf_addch(&s, ' ');
	duration_add_hms(&s, NAN);
	sbuf_addch(&s, ' ');
	duration_add_hms(&s, -1);
	sbuf_addch(&s, ' ');
	duration_add_hms(&s, INFINITY);
	assert_string_equal(s.buf, "2:05:07 2.78e+304h - - -");
	sbuf_release(&s);
}

static void shape_parse__reads_shapes_and_deadlines_and_names_what_is_wrong(void **state)
{
	struct shape_candidate *v = NULL;
	struct sbuf err = SBUF_INIT;
	size_t n = 0;
	struct shape_deadline t;

	(void)state;
	assert_int_equal(shape_parse_list("1x4,2x4,16x8", &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[2].nodes, 16);
	assert_int_equal(v[2].ranks_per_node, 8);
	shape_candidates_free(v, n);
	assert_int_equal(shape_parse_list("1x4,2y4", &v, &n, &err), -1);
	assert_string_equal(err.buf, "expected NODESxRANKS (e.g. 2x4), got '2y4'");
	sbuf_reset(&err);
	assert_int_equal(shape_parse_list("0x4", &v, &n, &err), -1);
	sbuf_reset(&err);
	assert_int_equal(shape_parse_list("1x4,", &v, &n, &err), -1);
	assert_string_equal(err.buf, "a trailing ','");
	sbuf_release(&err);
	assert_int_equal(shape_parse_deadline("+90m", 1000, &t), 0);
	assert_int_equal(t.at, 1000 + 5400);
	assert_int_equal(shape_parse_deadline("+2h", 0, &t), 0);
	assert_int_equal(t.at, 7200);
	assert_int_equal(shape_parse_deadline("+1d", 0, &t), 0);
	assert_int_equal(t.at, 86400);
	assert_int_equal(shape_parse_deadline("+5x", 0, &t), -1);
	assert_int_equal(shape_parse_deadline("+0", 0, &t), -1);
	assert_int_equal(shape_parse_deadline("2026-11-26T21:30", 0, &t), 0);
	assert_int_equal(shape_parse_deadline("2026-11-26T21:30:15", 0, &t), 0);
	assert_int_equal(shape_parse_deadline("2026-11-26 21:30", 0, &t), -1);
	assert_false(t.set);
	/* the epoch is a time like another, set */
	assert_int_equal(shape_parse_deadline("1970-01-01T00:00", 0, &t), 0);
	assert_true(t.set);
	/* no such day: mktime would move it to March 2, not read it back */
	assert_int_equal(shape_parse_deadline("2026-02-30T10:00", 0, &t), -2);
	assert_false(t.set);
	assert_int_equal(shape_parse_deadline("2026-04-31T10:00", 0, &t), -2);
	assert_int_equal(shape_parse_deadline("2026-02-28T10:00:60", 0, &t), -2);
}

static void shape_steps__holds_a_user_programs_own_step_count(void **state)
{
	struct shape_work w = { .max_steps = 500, .fixed_steps = true };

	(void)state;
	assert_int_equal(shape_steps(&w, 1), 500);
	assert_int_equal(shape_steps(&w, 16), 500);
}

static void shape_check__puts_the_prediction_against_what_happened(void **state)
{
	json_t *plan = json_pack("{s:i, s:i, s:i, s:f, s:f}", "nodes", 3, "ranks_per_node", 1,
				 "start", 1000, "run_s", 100.0, "rel_err", 0.1);
	struct shape_check c[2];
	struct shape_check_summary sum;
	struct sbuf line = SBUF_INIT;

	(void)state;
	assert_int_equal(shape_check_from_json(plan, &c[0]), 0);
	c[1] = c[0];
	assert_false(shape_check_started(&c[0]));
	c[0].start = 1030;
	c[0].end = 1140;
	assert_true(shape_check_ended(&c[0]));
	assert_true(fabs(shape_check_start_err_s(&c[0]) - 30) < 1e-9);
	assert_true(fabs(shape_check_run_err(&c[0]) - 0.10) < 1e-9);
	c[1].start = 990; /* early, still running */
	shape_check_summarize(c, 2, &sum);
	assert_int_equal(sum.started, 2);
	assert_int_equal(sum.ended, 1);
	assert_true(fabs(sum.mean_abs_start_s - 20) < 1e-9);
	assert_true(fabs(sum.mean_run_err - 0.10) < 1e-9);
	shape_check_format(&c[0], 2000, &line);
	assert_non_null(strstr(line.buf, "plan: 3x1, start predicted "));
	assert_non_null(strstr(line.buf, " (+30 s); run predicted 0:01:40 +-10%, took 0:01:50 (+10%)"));
	/* a record's figures out of range are no plan */
	json_object_set_new(plan, "run_s", json_real(-1));
	assert_int_equal(shape_check_from_json(plan, &c[0]), -1);
	json_object_set_new(plan, "run_s", json_real(100));
	json_object_set_new(plan, "nodes", json_integer(1LL << 40));
	assert_int_equal(shape_check_from_json(plan, &c[0]), -1);
	json_object_set_new(plan, "nodes", json_integer(3));
	json_object_del(plan, "run_s");
	assert_int_equal(shape_check_from_json(plan, &c[0]), -1);
	assert_int_equal(shape_check_from_json(NULL, &c[0]), -1);
	json_decref(plan);
	sbuf_release(&line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shape_model__splits_compute_and_both_allreduces_from_recorded_communication),
		cmocka_unit_test(shape_model__fits_both_terms_from_step_times_alone),
		cmocka_unit_test(shape_model__borrows_an_unmeasured_term_and_says_so),
		cmocka_unit_test(shape_model__has_nothing_to_fit_without_step_times),
		cmocka_unit_test(shape_model__splits_a_held_global_batch_among_the_ranks),
		cmocka_unit_test(shape_batch__holds_a_global_batch_logged_the_same_at_every_world_size),
		cmocka_unit_test(shape_batch__takes_a_batch_per_rank_when_the_global_batch_differs),
		cmocka_unit_test(shape_batch__reads_the_samples_of_a_step_when_no_global_batch_is_logged),
		cmocka_unit_test(shape_steps__takes_max_steps_or_epochs_over_the_global_batch),
		cmocka_unit_test(shape_steps__holds_a_user_programs_own_step_count),
		cmocka_unit_test(shape_pick__takes_the_earliest_finish_or_the_cheapest_by_the_deadline),
		cmocka_unit_test(shape_check__puts_the_prediction_against_what_happened),
		cmocka_unit_test(shape_pick__offers_no_shape_whose_run_is_out_of_all_measure),
		cmocka_unit_test(numcheck__converts_only_what_fits),
		cmocka_unit_test(shape_parse__reads_shapes_and_deadlines_and_names_what_is_wrong),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
