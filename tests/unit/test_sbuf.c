/* test_sbuf.c - the growable byte buffer (common/sbuf.c): its invariants
 * (never NULL, always NUL-terminated, len < alloc), growth across many
 * appends and long formatted text, binary contents, detach and reset;
 * and the helpers for text from outside: control characters escaped,
 * numbers a summary can print, huge arguments clipped in messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/sbuf.h"

static void sbuf__a_fresh_buffer_is_an_empty_string(void **state)
{
	struct sbuf sb = SBUF_INIT, z;

	(void)state;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	sbuf_init(&z);
	assert_string_equal(z.buf, "");
	sbuf_release(&sb); /* releasing the shared empty string frees nothing */
	sbuf_release(&z);
	assert_string_equal(sb.buf, "");
}

static void sbuf__appends_grow_and_keep_the_terminator(void **state)
{
	struct sbuf sb = SBUF_INIT;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		sbuf_addch(&sb, 'a' + i % 26);
		assert_int_equal(sb.buf[sb.len], '\0');
		assert_true(sb.len < sb.alloc);
	}
	assert_int_equal(sb.len, 10000);
	assert_int_equal(sb.buf[25], 'z');
	sbuf_addstr(&sb, "end");
	assert_string_equal(sb.buf + 10000, "end");
	sbuf_release(&sb);
}

static void sbuf__formats_text_longer_than_any_first_guess(void **state)
{
	struct sbuf sb = SBUF_INIT;
	char big[5000];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sbuf_addf(&sb, "%d:", 42);
	sbuf_addf(&sb, "%s|%s", big, "tail");
	assert_int_equal(sb.len, 3 + 4999 + 5);
	assert_int_equal(strncmp(sb.buf, "42:xxx", 6), 0);
	assert_string_equal(sb.buf + sb.len - 5, "|tail");
	sbuf_release(&sb);
}

static void sbuf__holds_binary_data_with_nul_bytes(void **state)
{
	struct sbuf sb = SBUF_INIT;
	const char data[5] = { 'a', '\0', 'b', '\0', 'c' };

	(void)state;
	sbuf_add(&sb, data, sizeof(data));
	assert_int_equal(sb.len, 5);
	assert_memory_equal(sb.buf, data, 5);
	assert_int_equal(sb.buf[5], '\0');
	sbuf_release(&sb);
}

static void sbuf__detach_hands_over_and_reset_empties(void **state)
{
	struct sbuf sb = SBUF_INIT;
	size_t len;
	char *s;

	(void)state;
	sbuf_addstr(&sb, "hello");
	s = sbuf_detach(&sb, &len);
	assert_string_equal(s, "hello");
	assert_int_equal(len, 5);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	free(s);
	s = sbuf_detach(&sb, NULL); /* an empty buffer still gives a string to free */
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	sbuf_addstr(&sb, "again");
	sbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	sbuf_addstr(&sb, "more");
	assert_string_equal(sb.buf, "more");
	sbuf_release(&sb);
}

static void sbuf__x_allocators_copy_and_format(void **state)
{
	char *a = xstrndup("abcdef", 3), *b = xasprintf("%s-%d", "n", 7), *c = xstrdup("");

	(void)state;
	assert_string_equal(a, "abc");
	assert_string_equal(b, "n-7");
	assert_string_equal(c, "");
	free(a);
	free(b);
	free(c);
}

static void sbuf__escapes_control_characters_and_keeps_utf8(void **state)
{
	struct sbuf sb = SBUF_INIT;

	(void)state;
	sbuf_add_printable(&sb, "job\x1b[2J\x07\tname\n\x7f");
	assert_string_equal(sb.buf, "job\\x1b[2J\\x07\\tname\\n\\x7f");
	sbuf_reset(&sb);
	/* UTF-8 kept; C1's CSI (U+009B), a lone 0x9b and a cut sequence are not */
	sbuf_add_printable(&sb, "na\xc3\xafve \xe2\x82\xac \xc2\x9b \x9b \xe2\x82");
	assert_string_equal(sb.buf, "na\xc3\xafve \xe2\x82\xac \\xc2\\x9b \\x9b \\xe2\\x82");
	sbuf_release(&sb);
}

static void sbuf__prints_non_finite_numbers_as_a_dash_and_huge_ones_short(void **state)
{
	static const struct { double v; int dec; const char *want; } cases[] = {
		{ 1116.4, 0, "1116" }, { 0.61234, 4, "0.6123" }, { -2.5, 1, "-2.5" },
		{ NAN, 0, "-" }, { INFINITY, 4, "-" }, { -INFINITY, 0, "-" },
		{ 1e308, 0, "1e+308" }, { -1.7e308, 4, "-1.7e+308" }, { 999999999999.0, 0, "999999999999" },
	};
	struct sbuf sb = SBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sbuf_reset(&sb);
		sbuf_add_number(&sb, cases[i].v, cases[i].dec);
		assert_string_equal(sb.buf, cases[i].want);
	}
	sbuf_release(&sb);
}

static void sbuf__prints_byte_counts_in_the_unit_that_suits_them(void **state)
{
	static const struct { double v; const char *want; } cases[] = {
		{ 0, "0 B" }, { 999, "999 B" }, { 1000, "1.0 kB" }, { 10656, "10.7 kB" },
		{ 999949, "999.9 kB" }, { 999950, "1.0 MB" }, { 41.2e6, "41.2 MB" },
		{ 1.2e9, "1.2 GB" }, { 18446744073709551615.0, "18.4 EB" }, { 1e300, "1e+282 EB" },
		{ NAN, "-" }, { -1, "-" }, { INFINITY, "-" },
	};
	struct sbuf sb = SBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sbuf_reset(&sb);
		sbuf_add_bytes(&sb, cases[i].v);
		assert_string_equal(sb.buf, cases[i].want);
	}
	sbuf_release(&sb);
}

static void sbuf__clips_a_huge_argument_to_its_start_and_length(void **state)
{
	char buf[SBUF_CLIP_SIZE], *big = xmalloc(109462);
	const char *c;

	(void)state;
	assert_string_equal(sbuf_clip("lr=0.1,0.2", buf), "lr=0.1,0.2");
	memset(big, 'x', 109461);
	big[109461] = '\0';
	c = sbuf_clip(big, buf);
	assert_ptr_equal(c, buf);
	assert_int_equal(strlen(c), 80 + strlen("... (109461 bytes)"));
	assert_string_equal(c + 80, "... (109461 bytes)");
	/* a character across the cut is left out whole */
	memcpy(big + 79, "\xc3\xa9", 2);
	assert_string_equal(sbuf_clip(big, buf) + 79, "... (109461 bytes)");
	memcpy(big + 78, "\xe2\x82\xac", 3);
	assert_string_equal(sbuf_clip(big, buf) + 78, "... (109461 bytes)");
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sbuf__a_fresh_buffer_is_an_empty_string),
		cmocka_unit_test(sbuf__appends_grow_and_keep_the_terminator),
		cmocka_unit_test(sbuf__formats_text_longer_than_any_first_guess),
		cmocka_unit_test(sbuf__holds_binary_data_with_nul_bytes),
		cmocka_unit_test(sbuf__detach_hands_over_and_reset_empties),
		cmocka_unit_test(sbuf__x_allocators_copy_and_format),
		cmocka_unit_test(sbuf__escapes_control_characters_and_keeps_utf8),
		cmocka_unit_test(sbuf__prints_non_finite_numbers_as_a_dash_and_huge_ones_short),
		cmocka_unit_test(sbuf__prints_byte_counts_in_the_unit_that_suits_them),
		cmocka_unit_test(sbuf__clips_a_huge_argument_to_its_start_and_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
