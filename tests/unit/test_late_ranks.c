/* test_late_ranks.c - trainer/comm/late_ranks: the watchdog's verdict as
 * ranges, short at any world size (65,536 ranks here). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainer/comm/late_ranks.h" // defines: late_ranks_describe, LATE_*
#include "common/sbuf.h"             // defines: struct sbuf

#include <stdlib.h>
#include <string.h>

static void expect(const unsigned char *state, int world, const char *want)
{
	struct sbuf out = SBUF_INIT;

	late_ranks_describe(state, world, &out);
	assert_string_equal(out.buf, want);
	sbuf_release(&out);
}

static void late_ranks__one_silent_rank_is_named_alone(void **state)
{
	unsigned char s[2] = { LATE_ARRIVED, LATE_SILENT };

	(void)state;
	expect(s, 2, "ranks that have not arrived: 1");
}

static void late_ranks__runs_become_ranges_and_earlier_waits_a_list_of_their_own(void **state)
{
	unsigned char s[10] = { LATE_ARRIVED, LATE_SILENT, LATE_ARRIVED, LATE_SILENT, LATE_SILENT,
				LATE_SILENT, LATE_BEHIND, LATE_BEHIND, LATE_ARRIVED, LATE_SILENT };

	(void)state;
	expect(s, 10, "ranks that have not arrived: 1, 3-5, 9; ranks stuck in an earlier wait: 6-7");
	memset(s, LATE_ARRIVED, sizeof(s));
	s[4] = LATE_BEHIND;
	expect(s, 10, "ranks stuck in an earlier wait: 4");
	memset(s, LATE_ARRIVED, sizeof(s));
	expect(s, 10, "every rank arrived; the collective is stuck");
}

/* 65,536 ranks with every other one silent: 16 ranges named, the rest
 * counted, and the text stays a line. */
static void late_ranks__a_huge_world_names_sixteen_ranges_and_counts_the_rest(void **state)
{
	enum { WORLD = 65536 };
	unsigned char *s = malloc(WORLD);
	struct sbuf out = SBUF_INIT;

	(void)state;
	for (int r = 0; r < WORLD; r++)
		s[r] = r % 2 ? LATE_SILENT : LATE_ARRIVED;
	late_ranks_describe(s, WORLD, &out);
	assert_non_null(strstr(out.buf, "ranks that have not arrived: 1, 3, 5, "));
	assert_non_null(strstr(out.buf, ", 31 and 32752 more ranks"));
	assert_true(out.len < 200);
	sbuf_release(&out);
	/* one range across the whole world */
	memset(s, LATE_SILENT, WORLD);
	s[0] = LATE_ARRIVED;
	expect(s, WORLD, "ranks that have not arrived: 1-65535");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(late_ranks__one_silent_rank_is_named_alone),
		cmocka_unit_test(late_ranks__runs_become_ranges_and_earlier_waits_a_list_of_their_own),
		cmocka_unit_test(late_ranks__a_huge_world_names_sixteen_ranges_and_counts_the_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
