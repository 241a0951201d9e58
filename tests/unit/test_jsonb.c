/* test_jsonb.c - common/jsonb and common/strfmt: a document one of whose
 * parts failed to encode is dropped whole, never written without it;
 * bytes that are not UTF-8 are carried escaped; a formatted text that
 * does not fit is an error, not a shorter text. */
#include "tests/unit/testlib.h"

#include "common/jsonb.h"  // defines: jsonb_*
#include "common/sbuf.h"   // defines: struct sbuf
#include "common/strfmt.h" // defines: strfmt, strfmt_label

#include <string.h>

static void jsonb__a_string_that_is_not_utf8_drops_the_whole_document(void **state)
{
	json_t *doc = json_object(), *list = json_array();
	struct sbuf err = SBUF_INIT;

	(void)state;
	assert_int_equal(jsonb_set(&doc, "a", json_integer(1)), 0);
	assert_int_equal(jsonb_append(&list, json_string("ok")), 0);
	/* what json_object_set_new would have left out, silently */
	assert_int_equal(jsonb_append(&list, json_string("bad \xff name")), -1);
	assert_null(list);
	assert_int_equal(jsonb_append(&list, json_string("later")), -1);
	assert_int_equal(jsonb_set(&doc, "files", list), -1);
	assert_null(doc);
	assert_int_equal(jsonb_set(&doc, "after", json_integer(2)), -1);
	assert_null(jsonb_dumps(doc, 0, "the manifest", &err));
	assert_string_equal(err.buf, "cannot write the manifest: a string in it is not UTF-8, or "
				     "out of memory");
	sbuf_release(&err);
}

static void jsonb__a_key_that_is_not_utf8_drops_the_object(void **state)
{
	json_t *doc = json_object();

	(void)state;
	assert_int_equal(jsonb_set(&doc, "k\xc3", json_integer(1)), -1);
	assert_null(doc);
}

static void jsonb__bytes_that_are_not_utf8_are_carried_escaped(void **state)
{
	json_t *doc = json_object(), *v = jsonb_text("arg-\xff\xfe-end");
	struct sbuf err = SBUF_INIT, tmp = SBUF_INIT;
	char *text;

	(void)state;
	assert_non_null(v);
	assert_string_equal(json_string_value(v), "arg-\\xff\\xfe-end");
	assert_int_equal(jsonb_set(&doc, jsonb_utf8("K\x80", &tmp), v), 0);
	assert_int_equal(jsonb_set(&doc, "same", jsonb_text("caf\xc3\xa9 \\x41")), 0);
	assert_int_equal(jsonb_set(&doc, "none", jsonb_text(NULL)), 0);
	text = jsonb_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT, "x", &err);
	assert_non_null(text);
	/* UTF-8 is kept as it is; only a string that is not gets escapes */
	assert_string_equal(text, "{\"K\\\\x80\":\"arg-\\\\xff\\\\xfe-end\",\"none\":null,"
				  "\"same\":\"caf\xc3\xa9 \\\\x41\"}");
	assert_int_equal(err.len, 0);
	free(text);
	json_decref(doc);
	sbuf_release(&tmp);
	sbuf_release(&err);
}

static void strfmt__a_text_that_does_not_fit_is_an_error_and_leaves_nothing(void **state)
{
	char buf[8];

	(void)state;
	assert_int_equal(strfmt(buf, sizeof(buf), "%s/%s", "ab", "cd"), 0);
	assert_string_equal(buf, "ab/cd");
	assert_int_equal(strfmt(buf, sizeof(buf), "%s/%s", "abc", "defg"), -1);
	assert_string_equal(buf, ""); /* never "abc/def", another path */
	assert_int_equal(strfmt(buf, sizeof(buf), "%s", "1234567"), 0);
	strfmt_label(buf, sizeof(buf), "rank %d of %d", 12, 345);
	assert_string_equal(buf, "rank 12");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jsonb__a_string_that_is_not_utf8_drops_the_whole_document),
		cmocka_unit_test(jsonb__a_key_that_is_not_utf8_drops_the_object),
		cmocka_unit_test(jsonb__bytes_that_are_not_utf8_are_carried_escaped),
		cmocka_unit_test(strfmt__a_text_that_does_not_fit_is_an_error_and_leaves_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
