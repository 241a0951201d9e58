/* test_envvar.c - numbers and choices from environment variables
 * (common/envvar.c): digits only, bounds, overflow as "above", and the
 * refusal's words naming the variable with its value clipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/envvar.h" // defines: envvar_int, envvar_choice
#include "common/sbuf.h"   // defines: struct sbuf

static void envvar__takes_a_plain_integer_within_its_bounds(void **state)
{
	struct sbuf err = SBUF_INIT;
	int64_t v = -1;

	(void)state;
	assert_int_equal(envvar_int("OMP_NUM_THREADS", "8", 1, 4096, &v, &err), ENVVAR_OK);
	assert_int_equal(v, 8);
	assert_int_equal(envvar_int("X", "-3", -5, 5, &v, &err), ENVVAR_OK);
	assert_int_equal(v, -3);
	assert_int_equal(envvar_int("X", "0", 0, 5, &v, &err), ENVVAR_OK);
	assert_int_equal(v, 0);
	assert_int_equal(err.len, 0);
	sbuf_release(&err);
}

static void envvar__refuses_what_atoi_would_guess(void **state)
{
	static const char *const bad[] = { "", "abc", " 8", "8 ", "+8", "-1", "0x10", "12abc",
					   "1e3", "0", "--1" };
	struct sbuf err = SBUF_INIT;
	int64_t v = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sbuf_reset(&err);
		assert_int_equal(envvar_int("OMP_NUM_THREADS", bad[i], 1, 4096, &v, &err),
				 ENVVAR_BAD);
		assert_int_equal(v, 7);
	}
	assert_string_equal(err.buf, "OMP_NUM_THREADS: expected an integer 1..4096, got \"--1\"");
	sbuf_reset(&err);
	assert_int_equal(envvar_int("X", NULL, 1, 2, &v, &err), ENVVAR_BAD);
	assert_int_equal(envvar_int("X", "-99999999999999999999", -5, 5, &v, &err), ENVVAR_BAD);
	sbuf_release(&err);
}

static void envvar__says_above_with_the_bound_for_huge_values(void **state)
{
	struct sbuf err = SBUF_INIT;
	int64_t v = 0;

	(void)state;
	assert_int_equal(envvar_int("OMP_NUM_THREADS", "100000", 1, 4096, &v, &err),
			 ENVVAR_ABOVE);
	assert_int_equal(v, 4096);
	assert_string_equal(err.buf, "OMP_NUM_THREADS: expected an integer 1..4096, got \"100000\"");
	v = 0;
	assert_int_equal(envvar_int("OMP_NUM_THREADS", "99999999999999999999999", 1, 4096, &v, &err),
			 ENVVAR_ABOVE);
	assert_int_equal(v, 4096);
	sbuf_release(&err);
}

static void envvar__clips_a_huge_value_in_the_refusal(void **state)
{
	struct sbuf err = SBUF_INIT;
	char *big = xmalloc(100001);
	int64_t v;
	int idx;

	(void)state;
	memset(big, 'a', 100000);
	big[100000] = '\0';
	assert_int_equal(envvar_int("SLURM_NTASKS", big, 1, 10, &v, &err), ENVVAR_BAD);
	assert_true(err.len < 200);
	assert_non_null(strstr(err.buf, "... (100000 bytes)\""));
	sbuf_reset(&err);
	assert_int_equal(envvar_choice("X", big, (const char *const[]){ "0", "1", NULL }, &idx,
				       &err), -1);
	assert_true(err.len < 200);
	free(big);
	sbuf_release(&err);
}

static void envvar__takes_one_of_its_choices_exactly(void **state)
{
	static const char *const names[] = { "0", "1", NULL };
	struct sbuf err = SBUF_INIT;
	int idx = -1;

	(void)state;
	assert_int_equal(envvar_choice("HPCTRAIN_GPU_SHARE", "1", names, &idx, &err), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(envvar_choice("HPCTRAIN_GPU_SHARE", "yes", names, &idx, &err), -1);
	assert_string_equal(err.buf, "HPCTRAIN_GPU_SHARE: expected one of 0, 1, got \"yes\"");
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(envvar__takes_a_plain_integer_within_its_bounds),
		cmocka_unit_test(envvar__refuses_what_atoi_would_guess),
		cmocka_unit_test(envvar__says_above_with_the_bound_for_huge_values),
		cmocka_unit_test(envvar__clips_a_huge_value_in_the_refusal),
		cmocka_unit_test(envvar__takes_one_of_its_choices_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
