/* test_tune.c - the pure part of choosing kernels by measurement
 * (trainer/tune.h): the fastest timed candidate, the time budget, the
 * cache key and the HPCTRAIN_KERNELS mode.  No clock: times are given. */
#include "trainer/tune.h" // defines: tune_*

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

static void tune__stays_within_two_percent_and_two_seconds(void **state)
{
	(void)state;
	/* step unknown: the hard limit alone */
	assert_true(tune_may_go_on(1.5, 0.4, 0));
	assert_false(tune_may_go_on(1.5, 0.6, 0));
	/* 30 ms steps: 2% of 1,000 steps is 0.6 s */
	assert_true(tune_may_go_on(0.5, 0.1, 0.030));
	assert_false(tune_may_go_on(0.55, 0.1, 0.030));
	/* 1 s steps: 20 s would be 2%, but never over 2 s */
	assert_false(tune_may_go_on(1.9, 0.2, 1.0));
}

static void tune__keys_name_cpu_library_isa_threads_and_shape(void **state)
{
	int shape[] = { 128, 14, 14, 32, 64, 3, 3, 1, 1, 3 };
	struct tune_key k = { "GenuineIntel 6/207 Intel(R) Xeon(R) Processor", "2.6.3",
			      "avx512_core_bf16", 2, "conv", "bf16", shape, 10 };
	char buf[256], small[8];
	int n;

	(void)state;
	n = tune_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "GenuineIntel_6/207_Intel(R)_Xeon(R)_Processor|2.6.3|"
				 "avx512_core_bf16|t2|conv|bf16|128x14x14x32x64x3x3x1x1x3");
	assert_int_equal(n, (int)strlen(buf));
	/* a "|" in a field cannot forge another field */
	k.cpu = "x|y";
	tune_key_format(&k, buf, sizeof(buf));
	assert_true(!strncmp(buf, "x_y|2.6.3|", 10));
	/* any change of threads or shape is another key */
	k.threads = 1;
	tune_key_format(&k, small, sizeof(small));
	assert_string_equal(small, "x_y|2.6");
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
		cmocka_unit_test(tune__stays_within_two_percent_and_two_seconds),
		cmocka_unit_test(tune__keys_name_cpu_library_isa_threads_and_shape),
		cmocka_unit_test(tune__reads_the_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
