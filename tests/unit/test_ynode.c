/* test_ynode.c - hostile and malformed YAML is refused cleanly.
 * Each case must end in a positioned error, never a crash, a hang or
 * memory growing with anything but the input size. */
#include "tests/unit/testlib.h"

#include "common/spec/ynode.h" // defines: ynode_parse

#include <stdlib.h>

static void check_refused_n(const char *text, size_t len, const char *want)
{
	struct loaded l;

	load_sets(&l, text, len, NULL);
	assert_int_equal(l.rc, -1);
	assert_diag(&l, want);
	loaded_release(&l);
}

static void check_refused(const char *text, const char *want)
{
	check_refused_n(text, strlen(text), want);
}

static void ynode__refuses_a_billion_laughs_alias_bomb(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	sbuf_addstr(&s, "version: 1\nname: t\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
	for (int i = 1; i < 40; i++) {
		sbuf_addf(&s, "a%d: &a%d [", i, i);
		for (int k = 0; k < 9; k++)
			sbuf_addf(&s, "%s*a%d", k ? "," : "", i - 1);
		sbuf_addstr(&s, "]\n");
	}
	check_refused_n(s.buf, s.len,
		      "job.yaml:3:5: anchors and aliases are not allowed in a job spec (found &a0)");
	sbuf_release(&s);
	/* libyaml reports an undefined alias as an alias event too. */
	check_refused("version: 1\nname: t\nenv: {A: *x}\n",
		      "job.yaml:3:10: anchors and aliases are not allowed in a job spec (found *x)");
}

static void ynode__refuses_nesting_deeper_than_the_limit(void **state)
{
	size_t n = 100000;
	char *deep = malloc(n + 1);

	(void)state;
	memset(deep, '[', n);
	deep[n] = '\0';
	check_refused_n(deep, n, "job.yaml:1:33: nesting deeper than 32 levels");
	free(deep);
}

static void ynode__refuses_input_over_one_mebibyte(void **state)
{
	size_t n = 2u << 20;
	char *big = malloc(n);

	(void)state;
	for (size_t i = 0; i < n; i++)
		big[i] = i % 64 == 63 ? '\n' : '#';
	check_refused_n(big, n, "job.yaml:16385:1: input is larger than 1048576 bytes, the limit for a job spec");
	free(big);
}

static void ynode__refuses_nul_bytes_with_their_position(void **state)
{
	(void)state;
	check_refused_n("version: 1\nname: a\0b\n", 21, "job.yaml:2:8: NUL byte in input; a job spec is UTF-8 text");
	/* UTF-16 with a BOM is "not UTF-8" too: its ASCII carries NULs. */
	check_refused_n("\xff\xfev\0e\0", 6, "job.yaml:1:1: invalid UTF-8 byte 0xff; a job spec is UTF-8 text");
	check_refused(MINIMAL "env: {A: \"x\\0y\"}\n",
		      "job.yaml:3:10: NUL character in a string");
}

static void ynode__refuses_invalid_utf8_with_its_position(void **state)
{
	(void)state;
	check_refused("version: 1\nname: \xc3\xa9\xff\n",
		      "job.yaml:2:8: invalid UTF-8 byte 0xff; a job spec is UTF-8 text");
	check_refused("name: \xc0\x80\n", "job.yaml:1:7: invalid UTF-8 byte 0xc0; a job spec is UTF-8 text");
	check_refused("name: \xed\xa0\x80\n", "job.yaml:1:7: invalid UTF-8 byte 0xed; a job spec is UTF-8 text");
	check_refused("name: \xe2\x82", "job.yaml:1:7: invalid UTF-8 byte 0xe2; a job spec is UTF-8 text");
}

static void ynode__counts_columns_in_characters(void **state)
{
	(void)state;
	check_refused("version: 1\nname: t\nenv: {\xc3\xa9: x}\n",
		      "job.yaml:3:7: env: \xc3\xa9 is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
}

static void ynode__refuses_a_second_document(void **state)
{
	(void)state;
	check_refused("version: 1\nname: t\n---\nversion: 1\n",
		      "job.yaml:3:1: a second YAML document; a job spec is one document");
}

static void ynode__refuses_tags_but_takes_str(void **state)
{
	struct loaded l;

	(void)state;
	check_refused(MINIMAL "train: !!python/object:os.system {}\n",
		      "job.yaml:3:8: tag 'tag:yaml.org,2002:python/object:os.system' is not supported in a job spec");
	check_refused(MINIMAL "resources: {nodes: !!int 4}\n",
		      "job.yaml:3:20: tag 'tag:yaml.org,2002:int' is not supported in a job spec");
	load(&l, MINIMAL "env: {A: !!str 5}\n");
	assert_int_equal(l.rc, 0);
	assert_string_equal(l.job.env.v[0].value, "5");
	loaded_release(&l);
}

static void ynode__refuses_keys_that_are_not_strings(void **state)
{
	(void)state;
	check_refused(MINIMAL "? [a, b]\n: 1\n",
		      "job.yaml:3:3: a mapping key must be a plain string, not a list");
}

static void ynode__reports_syntax_errors_with_context(void **state)
{
	(void)state;
	check_refused("version: 1\nname: t\nresources: {nodes: [1, 2\n",
		      "job.yaml:4:1: invalid YAML: did not find expected ',' or ']' "
		      "(while parsing a flow sequence that starts at 3:20)");
	check_refused("version: 1\n  name: t\n",
		      "job.yaml:2:7: invalid YAML: mapping values are not allowed in this context");
}

static void ynode__refuses_more_nodes_than_the_limit(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	sbuf_addstr(&s, "command: [");
	for (int i = 0; i < YNODE_MAX_NODES + 10; i++)
		sbuf_addstr(&s, "a,");
	sbuf_addstr(&s, "a]\n");
	check_refused_n(s.buf, s.len, "job.yaml:1:200005: more than 100000 YAML nodes; a job spec is far smaller");
	sbuf_release(&s);
}

static void ynode__caps_the_errors_a_hostile_file_can_make(void **state)
{
	struct sbuf s = SBUF_INIT;
	struct loaded l;

	(void)state;
	sbuf_addstr(&s, "version: 1\nname: t\n");
	for (int i = 0; i < 20000; i++)
		sbuf_addstr(&s, "x: 1\n");
	load_sets(&l, s.buf, s.len, NULL);
	assert_int_equal(l.rc, -1);
	assert_int_equal(l.dl.n, 100);
	assert_true(diag_count(&l.dl, DIAG_ERROR) >= 20000);
	loaded_release(&l);
	sbuf_release(&s);
}

static void ynode__keeps_scalar_style_and_positions(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct ynode *root = NULL;

	(void)state;
	assert_int_equal(ynode_parse("f", "a: 1\nb: '1'\nc:\n", 15, &root, &dl), 0);
	assert_int_equal(root->kind, YNODE_MAP);
	assert_int_equal(root->nkids, 6);
	assert_false(ynode_get(root, "a")->quoted);
	assert_true(ynode_get(root, "b")->quoted);
	assert_int_equal(ynode_get(root, "b")->line, 2);
	assert_int_equal(ynode_get(root, "b")->col, 4);
	assert_true(ynode_is_null(ynode_get(root, "c")));
	ynode_free(root);
	diag_list_release(&dl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ynode__refuses_a_billion_laughs_alias_bomb),
		cmocka_unit_test(ynode__refuses_nesting_deeper_than_the_limit),
		cmocka_unit_test(ynode__refuses_input_over_one_mebibyte),
		cmocka_unit_test(ynode__refuses_nul_bytes_with_their_position),
		cmocka_unit_test(ynode__refuses_invalid_utf8_with_its_position),
		cmocka_unit_test(ynode__counts_columns_in_characters),
		cmocka_unit_test(ynode__refuses_a_second_document),
		cmocka_unit_test(ynode__refuses_tags_but_takes_str),
		cmocka_unit_test(ynode__refuses_keys_that_are_not_strings),
		cmocka_unit_test(ynode__reports_syntax_errors_with_context),
		cmocka_unit_test(ynode__refuses_more_nodes_than_the_limit),
		cmocka_unit_test(ynode__caps_the_errors_a_hostile_file_can_make),
		cmocka_unit_test(ynode__keeps_scalar_style_and_positions),
	};

	return cmocka_run_group_tests_name("test_ynode", tests, NULL, NULL);
}
