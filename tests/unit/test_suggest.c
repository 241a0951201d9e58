/* test_suggest.c - "did you mean" distances and thresholds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/suggest.h"

static const char *const keys[] = { "nodes", "ranks_per_node", "gpus_per_node", "cpus_per_rank",
				    "time", "memory", "partition" };

static void suggest__counts_edits_and_transpositions(void **state)
{
	(void)state;
	assert_int_equal(suggest_distance("validate", "validate"), 0);
	assert_int_equal(suggest_distance("valdate", "validate"), 1);
	assert_int_equal(suggest_distance("vaildate", "validate"), 1);
	assert_int_equal(suggest_distance("VALIDATE", "validate"), 0);
	assert_int_equal(suggest_distance("", "abc"), 3);
}

static void suggest__finds_a_mistyped_key(void **state)
{
	(void)state;
	assert_string_equal(suggest_best("gpus_per_nod", keys, 7), "gpus_per_node");
	assert_string_equal(suggest_best("partiton", keys, 7), "partition");
	assert_string_equal(suggest_best("ranks", keys, 7), "ranks_per_node");
}

static void suggest__stays_silent_for_unrelated_words(void **state)
{
	(void)state;
	assert_null(suggest_best("banana", keys, 7));
	assert_null(suggest_best("", keys, 7));
	assert_null(suggest_best("x", keys, 7));
}

static void suggest__clips_very_long_words(void **state)
{
	char word[5000];

	(void)state;
	memset(word, 'a', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	assert_null(suggest_best(word, keys, 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suggest__counts_edits_and_transpositions),
		cmocka_unit_test(suggest__finds_a_mistyped_key),
		cmocka_unit_test(suggest__stays_silent_for_unrelated_words),
		cmocka_unit_test(suggest__clips_very_long_words),
	};

	return cmocka_run_group_tests_name("test_suggest", tests, NULL, NULL);
}
