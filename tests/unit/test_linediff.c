/* test_linediff.c - the unified diff hpctrain diff shows of a changed
 * file (common/linediff): hunks and their ranges as diff -u writes them,
 * context joined or split, a missing final newline, the fallback past
 * the edit limit, and the text test. */
#include "testlib.h"

#include "common/linediff.h" // defines: linediff_unified, linediff_is_text

static size_t udiff(const char *a, const char *b, struct sbuf *out, struct linediff_stat *st)
{
	sbuf_reset(out);
	return linediff_unified(a, strlen(a), b, strlen(b), "a/f", "b/f", out, st);
}

static void linediff__equal_texts_give_nothing(void **state)
{
	struct sbuf out = SBUF_INIT;

	(void)state;
	assert_int_equal(udiff("x\ny\n", "x\ny\n", &out, NULL), 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(udiff("", "", &out, NULL), 0);
	assert_int_equal(out.len, 0);
	sbuf_release(&out);
}

static void linediff__one_changed_line_is_one_hunk_with_three_lines_of_context(void **state)
{
	struct sbuf out = SBUF_INIT;
	struct linediff_stat st;

	(void)state;
	assert_int_equal(udiff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", &out,
			       &st), 2);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n"
				     " 6\n 7\n 8\n");
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.added, 1);
	sbuf_release(&out);
}

static void linediff__changes_far_apart_are_two_hunks_and_near_ones_one(void **state)
{
	struct sbuf out = SBUF_INIT;
	const char *a = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";

	(void)state;
	/* 10 unchanged lines between: two hunks */
	udiff(a, "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\n", &out, NULL);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n"
				     "@@ -9,4 +9,4 @@\n i\n j\n k\n-l\n+L\n");
	/* 6 unchanged lines between (2 x context): one hunk */
	udiff(a, "a\nB\nc\nd\ne\nf\ng\nh\nI\nj\nk\nl\n", &out, NULL);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -1,12 +1,12 @@\n a\n-b\n+B\n c\n d\n"
				     " e\n f\n g\n h\n-i\n+I\n j\n k\n l\n");
	sbuf_release(&out);
}

static void linediff__added_and_removed_lines_give_diff_u_ranges(void **state)
{
	struct sbuf out = SBUF_INIT;
	struct linediff_stat st;

	(void)state;
	/* from nothing: -0,0 */
	udiff("", "x\ny\n", &out, &st);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n");
	assert_int_equal(st.added, 2);
	assert_int_equal(st.removed, 0);
	/* a line inserted after line 1 of 1: "-1 +1,2" */
	udiff("x\n", "x\ny\n", &out, NULL);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n x\n+y\n");
	/* everything removed: +0,0 */
	udiff("x\ny\n", "", &out, NULL);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n");
	sbuf_release(&out);
}

static void linediff__a_last_line_without_newline_is_marked_and_differs_from_one_with(void **state)
{
	struct sbuf out = SBUF_INIT;

	(void)state;
	udiff("x\ny", "x\ny\n", &out, NULL);
	assert_string_equal(out.buf, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n"
				     "\\ No newline at end of file\n+y\n");
	sbuf_release(&out);
}

static void linediff__finds_a_shortest_script_between_moved_lines(void **state)
{
	struct sbuf out = SBUF_INIT;
	struct linediff_stat st;

	(void)state;
	/* Myers' example: abcabba -> cbabac takes 5 edits */
	assert_int_equal(udiff("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", &out, &st), 5);
	assert_int_equal(st.removed, 3);
	assert_int_equal(st.added, 2);
	sbuf_release(&out);
}

static void linediff__past_the_edit_limit_the_middle_is_removed_then_added(void **state)
{
	struct sbuf a = SBUF_INIT, b = SBUF_INIT, out = SBUF_INIT;
	struct linediff_stat st;
	size_t n = LINEDIFF_MAX_EDITS + 10;

	(void)state;
	sbuf_addstr(&a, "head\n");
	sbuf_addstr(&b, "head\n");
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(&a, "a%zu\n", i);
		sbuf_addf(&b, "b%zu\n", i);
	}
	sbuf_addstr(&a, "tail\n");
	sbuf_addstr(&b, "tail\n");
	assert_int_equal(linediff_unified(a.buf, a.len, b.buf, b.len, "a/f", "b/f", &out, &st), 2 * n);
	assert_int_equal(st.removed, n);
	assert_int_equal(st.added, n);
	assert_non_null(strstr(out.buf, "@@ -1,2060 +1,2060 @@\n head\n-a0\n"));
	assert_non_null(strstr(out.buf, "-a2057\n+b0\n"));
	assert_non_null(strstr(out.buf, "+b2057\n tail\n"));
	sbuf_release(&a);
	sbuf_release(&b);
	sbuf_release(&out);
}

static void linediff__text_has_no_nul_and_is_at_most_a_mebibyte(void **state)
{
	char *big = calloc(LINEDIFF_MAX_BYTES + 1, 1);

	(void)state;
	assert_true(linediff_is_text("a\nb", 3));
	assert_false(linediff_is_text("a\0b", 3));
	memset(big, 'x', LINEDIFF_MAX_BYTES + 1);
	assert_true(linediff_is_text(big, LINEDIFF_MAX_BYTES));
	assert_false(linediff_is_text(big, LINEDIFF_MAX_BYTES + 1));
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(linediff__equal_texts_give_nothing),
		cmocka_unit_test(linediff__one_changed_line_is_one_hunk_with_three_lines_of_context),
		cmocka_unit_test(linediff__changes_far_apart_are_two_hunks_and_near_ones_one),
		cmocka_unit_test(linediff__added_and_removed_lines_give_diff_u_ranges),
		cmocka_unit_test(linediff__a_last_line_without_newline_is_marked_and_differs_from_one_with),
		cmocka_unit_test(linediff__finds_a_shortest_script_between_moved_lines),
		cmocka_unit_test(linediff__past_the_edit_limit_the_middle_is_removed_then_added),
		cmocka_unit_test(linediff__text_has_no_nul_and_is_at_most_a_mebibyte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
