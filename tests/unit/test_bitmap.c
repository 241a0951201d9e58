/* test_bitmap.c - CPU and NUMA sets: the cpus_allowed_list form and set
 * operations. */
#include "tests/unit/topolib.h"
#include "topology/bitmap.h" // defines: struct bitmap, bitmap_*

#include <string.h>

static void bitmap__formats_and_parses_like_cpus_allowed_list(void **state)
{
	static const char *const ok[] = { "", "0", "0-3", "0-3,8-11", "5,7,9", "1-2,64-65,1000" };
	struct bitmap b = BITMAP_INIT;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(bitmap_parse_list(&b, ok[i]), 0);
		sbuf_reset(&sb);
		bitmap_format_list(&b, &sb);
		assert_string_equal(sb.buf, ok[i]);
	}
	assert_int_equal(bitmap_parse_list(&b, " 0,1,2,3\n"), 0);
	sbuf_reset(&sb);
	bitmap_format_list(&b, &sb);
	assert_string_equal(sb.buf, "0-3");
	assert_int_equal(bitmap_count(&b), 4);
	assert_int_equal(bitmap_last(&b), 3);
	assert_int_equal(bitmap_next(&b, 3), -1);
	bitmap_release(&b);
	sbuf_release(&sb);
}

static void bitmap__rejects_malformed_lists_and_huge_ids(void **state)
{
	static const char *const bad[] = { "3-1", "1,", ",1", "a", "1-", "1--2", "0x3", "1 2",
					   "99999999999", "2000000" };
	struct bitmap b = BITMAP_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bitmap_parse_list(&b, bad[i]) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_true(bitmap_is_empty(&b));
	}
	bitmap_release(&b);
}

static void bitmap__set_operations_agree_with_their_definitions(void **state)
{
	struct bitmap a = BITMAP_INIT, b = BITMAP_INIT, c = BITMAP_INIT;

	(void)state;
	bitmap_parse_list(&a, "0-7,200");
	bitmap_parse_list(&b, "4-11");
	bitmap_and(&c, &a, &b);
	assert_int_equal(bitmap_count(&c), 4);
	bitmap_or(&c, &a, &b);
	assert_int_equal(bitmap_count(&c), 13);
	bitmap_andnot(&c, &a, &b);
	assert_int_equal(bitmap_count(&c), 5);
	assert_true(bitmap_is_subset(&c, &a));
	assert_false(bitmap_is_subset(&a, &c));
	assert_true(bitmap_intersects(&a, &b));
	bitmap_and(&a, &a, &b); /* aliasing */
	assert_int_equal(bitmap_first(&a), 4);
	assert_int_equal(bitmap_compare(&a, &b) < 0 || bitmap_compare(&a, &b) > 0, 1);
	bitmap_release(&a);
	bitmap_release(&b);
	bitmap_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bitmap__formats_and_parses_like_cpus_allowed_list),
		cmocka_unit_test(bitmap__rejects_malformed_lists_and_huge_ids),
		cmocka_unit_test(bitmap__set_operations_agree_with_their_definitions),
	};

	return cmocka_run_group_tests_name("test_bitmap", tests, NULL, NULL);
}
