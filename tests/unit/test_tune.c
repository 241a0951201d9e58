/* test_tune.c - the pure part of choosing kernels by measurement
 * (trainer/cpu/tune.h): the fastest timed candidate, the time budget, a
 * candidate's median time and its repetitions, what a layer's tuning
 * found, the cache key and the HPCTRAIN_KERNELS mode.  No clock: times
 * are given. */
#include "trainer/cpu/tune.h" // defines: tune_*

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static void tune__picks_the_fastest_timed_candidate(void **state)
{
	struct tune_cand c[] = { { "native", 2.6 }, { "emulated nhwc", 2.1 },
				 { "emulated blocked", 2.3 } };
	struct tune_cand failed[] = { { "native", -1 }, { "emulated", -1 } };
	struct tune_cand tie[] = { { "a", -1 }, { "b", 1.5 }, { "c", 1.5 } };

	(void)state;
	assert_int_equal(tune_pick(c, 3), 1);
	assert_int_equal(tune_pick(c, 1), 0);
	assert_int_equal(tune_pick(failed, 2), -1);
	assert_int_equal(tune_pick(c, 0), -1);
	/* untimed candidates never win; a tie keeps the earlier (the fixed order) */
	assert_int_equal(tune_pick(tie, 3), 1);
}

static void tune__stays_within_two_seconds_a_process(void **state)
{
	(void)state;
	assert_true(tune_may_go_on(1.5, 0.4));
	assert_false(tune_may_go_on(1.5, 0.6));
	assert_false(tune_may_go_on(2.1, 0));
	/* a fast layer's next candidate is not refused for its planning
	 * costing more than 2% of 1,000 of its passes (on AMX,
	 * native bf16 went uncompared): a 0.5 ms layer may spend 50 ms */
	assert_true(tune_may_go_on(0.05, 0.05));
}

static void tune__times_a_candidate_as_the_median_of_its_passes(void **state)
{
	double odd[] = { 1.2, 9.5, 1.1, 1.3, 8.0 }, even[] = { 4.0, 1.0, 3.0, 2.0 },
	       one[] = { 0.7 };

	(void)state;
	/* two passes slowed by a neighbour out of five do not move it */
	assert_true(tune_median(odd, 5) == 1.3);
	assert_true(tune_median(even, 4) == 2.5);
	assert_true(tune_median(one, 1) == 0.7);
	assert_true(tune_median(one, 0) == 0);
}

static void tune__repeats_three_to_five_times_while_the_passes_disagree(void **state)
{
	const double agree[] = { 1.00, 1.05, 0.98, 1.02, 1.01 },
		     noisy[] = { 1.00, 1.30, 0.98, 1.02, 1.01 };
	int n;

	(void)state;
	/* the minimum is taken even past the budget: one pass is a guess */
	for (n = 0; n < TUNE_MIN_REPS; n++)
		assert_true(tune_may_repeat(noisy, n, 2.5, 0.1));
	assert_false(tune_may_repeat(noisy, TUNE_MIN_REPS, 2.5, 0.1));
	/* three passes within TUNE_SPREAD of their median settle it */
	assert_false(tune_may_repeat(agree, TUNE_MIN_REPS, 0, 0.001));
	/* beyond them while they disagree and the next pass fits in the 2 s */
	assert_true(tune_may_repeat(noisy, TUNE_MIN_REPS, 1.0, 0.001));
	assert_false(tune_may_repeat(noisy, TUNE_MIN_REPS, 1.95, 0.1));
	/* never more than TUNE_REPS, however cheap */
	assert_false(tune_may_repeat(noisy, TUNE_REPS, 0, 0));
	for (n = 0; tune_may_repeat(noisy, n, 0, 0.001); n++)
		;
	assert_int_equal(n, TUNE_REPS);
	for (n = 0; tune_may_repeat(agree, n, 0, 0.001); n++)
		;
	assert_int_equal(n, TUNE_MIN_REPS);
	assert_int_equal(TUNE_MIN_REPS, 3);
	assert_int_equal(TUNE_REPS, 5);
}

static void tune__describes_the_winner_first_then_the_untimed(void **state)
{
	struct tune_cand all[] = { { "native", 2.6 }, { "emulated nhwc", 2.1 },
				   { "emulated blocked", 2.345 } };
	struct tune_cand cut[] = { { "native", 0.61 }, { "emulated nhwc", TUNE_NOT_REACHED },
				   { "emulated blocked", TUNE_NOT_REACHED } };
	struct tune_cand none[] = { { "native", TUNE_NOT_REACHED }, { "emulated", TUNE_NOT_REACHED } };
	struct tune_cand fp16[] = { { "native", TUNE_NOT_PLANNED }, { "emulated nhwc", 1.5 },
				    { "emulated blocked", 1.25 } };
	struct tune_cand alone[] = { { "native", TUNE_NOT_PLANNED }, { "emulated nhwc", 1.5 } };
	char buf[128], small[12];
	int n;

	(void)state;
	n = tune_describe(all, 3, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "emulated nhwc 2.10 ms, native 2.60 ms, emulated blocked 2.35 ms");
	assert_true(tune_is_complete(all, 3));
	tune_describe(cut, 3, buf, sizeof(buf));
	assert_string_equal(buf, "native 0.61 ms; 2 s budget spent before emulated nhwc, "
				 "emulated blocked");
	assert_false(tune_is_complete(cut, 3));
	tune_describe(none, 2, buf, sizeof(buf));
	assert_string_equal(buf, "2 s budget spent before native, emulated");
	assert_false(tune_is_complete(none, 2));
	/* one that did not plan is no candidate: neither named nor missed */
	tune_describe(fp16, 3, buf, sizeof(buf));
	assert_string_equal(buf, "emulated blocked 1.25 ms, emulated nhwc 1.50 ms");
	assert_true(tune_is_complete(fp16, 3));
	/* one timed alone was no choice: nothing to say, nothing to cache */
	assert_int_equal(tune_describe(alone, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_false(tune_is_complete(alone, 2));
	/* truncated as snprintf truncates */
	assert_int_equal(tune_describe(all, 3, small, sizeof(small)), 63);
	assert_string_equal(small, "emulated nh");
}

static void tune__keys_name_version_cpu_library_isa_threads_and_shape(void **state)
{
	int shape[] = { 128, 14, 14, 32, 64, 3, 3, 1, 1, 3 };
	struct tune_key k = { "GenuineIntel 6/207 Intel(R) Xeon(R) Processor", "2.6.3",
			      "avx512_core_bf16", 2, "conv", "bf16", shape, 10 };
	char buf[256], small[8];
	int n;

	(void)state;
	n = tune_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "v2|GenuineIntel_6/207_Intel(R)_Xeon(R)_Processor|2.6.3|"
				 "avx512_core_bf16|t2|conv|bf16|128x14x14x32x64x3x3x1x1x3");
	assert_int_equal(n, (int)strlen(buf));
	/* a "|" in a field cannot forge another field */
	k.cpu = "x|y";
	tune_key_format(&k, buf, sizeof(buf));
	assert_true(!strncmp(buf, "v2|x_y|2.6.3|", 13));
	/* any change of threads or shape is another key */
	k.threads = 1;
	tune_key_format(&k, small, sizeof(small));
	assert_string_equal(small, "v2|x_y|");
	assert_true(tune_key_format(&k, small, sizeof(small)) >= (int)sizeof(small));
}

static void tune__reads_the_mode(void **state)
{
	bool on = false;

	(void)state;
	assert_int_equal(tune_parse_mode(NULL, &on), 0);
	assert_true(on);
	assert_int_equal(tune_parse_mode("fixed", &on), 0);
	assert_false(on);
	assert_int_equal(tune_parse_mode("", &on), 0);
	assert_true(on);
	assert_int_equal(tune_parse_mode("tune", &on), 0);
	assert_true(on);
	assert_int_equal(tune_parse_mode("fast", &on), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tune__picks_the_fastest_timed_candidate),
		cmocka_unit_test(tune__stays_within_two_seconds_a_process),
		cmocka_unit_test(tune__times_a_candidate_as_the_median_of_its_passes),
		cmocka_unit_test(tune__repeats_three_to_five_times_while_the_passes_disagree),
		cmocka_unit_test(tune__describes_the_winner_first_then_the_untimed),
		cmocka_unit_test(tune__keys_name_version_cpu_library_isa_threads_and_shape),
		cmocka_unit_test(tune__reads_the_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
