/* test_flatdoc.c - documents as flat dotted keys (common/flatdoc, and a
 * YAML tree flattened by common/spec/ynode_flat) and two compared key by
 * key, as hpctrain diff compares two runs' resolved specs. */
#include "testlib.h"

#include "common/flatdoc.h"         // defines: struct flatdoc, flatdoc_*
#include "common/spec/ynode.h"      // defines: ynode_parse
#include "common/spec/ynode_flat.h" // defines: ynode_flat_add

static void flatten(const char *yaml, struct flatdoc *out)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct ynode *root = NULL;

	assert_int_equal(ynode_parse("t.yaml", yaml, strlen(yaml), &root, &dl), 0);
	ynode_flat_add(root, out);
	ynode_free(root);
	diag_list_release(&dl);
}

static void flatdoc__a_yaml_tree_becomes_dotted_keys_in_document_order(void **state)
{
	struct flatdoc d = FLATDOC_INIT;

	(void)state;
	flatten("name: \"fm\"\ntrain:\n  optimizer: {lr: 0.05, name: sgd}\n  seed: 42\n"
		"data:\n  stage:\n  - {name: \"ds\", src: \"/d\"}\nenv: {}\nmounts: []\n"
		"command: null\n",
		&d);
	assert_int_equal(d.n, 9);
	assert_string_equal(d.v[0].key, "name");
	assert_string_equal(d.v[0].value, "\"fm\"");
	assert_string_equal(d.v[1].key, "train.optimizer.lr");
	assert_string_equal(d.v[1].value, "0.05");
	assert_string_equal(d.v[2].key, "train.optimizer.name");
	assert_string_equal(d.v[3].key, "train.seed");
	assert_string_equal(d.v[4].key, "data.stage[0].name");
	assert_string_equal(d.v[4].value, "\"ds\"");
	assert_string_equal(d.v[5].key, "data.stage[0].src");
	assert_string_equal(flatdoc_get(&d, "env"), "{}");
	assert_string_equal(flatdoc_get(&d, "mounts"), "[]");
	assert_string_equal(flatdoc_get(&d, "command"), "null");
	assert_null(flatdoc_get(&d, "train"));
	flatdoc_release(&d);
}

static void flatdoc__a_quoted_scalar_keeps_its_quotes_and_escapes_so_null_and_the_string_differ(void **state)
{
	struct flatdoc a = FLATDOC_INIT, b = FLATDOC_INIT;
	struct flatdoc_change *v;
	size_t n;

	(void)state;
	flatten("x: null\ny: \"a\\\"b\\tc\"\n", &a);
	flatten("x: \"null\"\ny: \"a\\\"b\\tc\"\n", &b);
	assert_string_equal(flatdoc_get(&b, "y"), "\"a\\\"b\\tc\"");
	flatdoc_compare(&a, &b, NULL, &v, &n);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].key, "x");
	assert_string_equal(v[0].old_value, "null");
	assert_string_equal(v[0].new_value, "\"null\"");
	free(v);
	flatdoc_release(&a);
	flatdoc_release(&b);
}

static int skip_digest(const char *key)
{
	return !strcmp(key, "container.digest");
}

static void flatdoc__compare_gives_changed_then_removed_in_a_order_then_added_in_b_order(void **state)
{
	struct flatdoc a = FLATDOC_INIT, b = FLATDOC_INIT;
	struct flatdoc_change *v;
	size_t n;

	(void)state;
	flatten("k1: 1\nk2: 2\nk3: 3\ncontainer: {digest: \"sha256:a\"}\n", &a);
	flatten("k3: 4\nk0: 0\nk2: 2\nk5: [x]\ncontainer: {digest: \"sha256:b\"}\n", &b);
	flatdoc_compare(&a, &b, skip_digest, &v, &n);
	assert_int_equal(n, 4);
	assert_string_equal(v[0].key, "k1");
	assert_string_equal(v[0].old_value, "1");
	assert_null(v[0].new_value);
	assert_string_equal(v[1].key, "k3");
	assert_string_equal(v[1].old_value, "3");
	assert_string_equal(v[1].new_value, "4");
	assert_string_equal(v[2].key, "k0");
	assert_null(v[2].old_value);
	assert_string_equal(v[3].key, "k5[0]");
	assert_string_equal(v[3].new_value, "x");
	free(v);
	/* the same document twice: nothing, and no allocation */
	flatdoc_compare(&a, &a, NULL, &v, &n);
	assert_int_equal(n, 0);
	assert_null(v);
	flatdoc_release(&a);
	flatdoc_release(&b);
}

static void flatdoc__json_objects_and_arrays_flatten_and_scalars_read_as_json(void **state)
{
	json_t *o = json_loads("{\"event\":\"summary\",\"test_accuracy\":0.8458,\"steps\":240,"
			       "\"rates\":[1.5,2],\"ok\":true,\"none\":null,\"e\":{},\"q\":\"s\"}",
			       0, NULL);
	struct flatdoc d = FLATDOC_INIT;

	(void)state;
	assert_non_null(o);
	flatdoc_add_json(&d, "m", o);
	assert_string_equal(flatdoc_get(&d, "m.test_accuracy"), "0.8458");
	assert_string_equal(flatdoc_get(&d, "m.steps"), "240");
	assert_string_equal(flatdoc_get(&d, "m.rates[0]"), "1.5");
	assert_string_equal(flatdoc_get(&d, "m.rates[1]"), "2");
	assert_string_equal(flatdoc_get(&d, "m.ok"), "true");
	assert_string_equal(flatdoc_get(&d, "m.none"), "null");
	assert_string_equal(flatdoc_get(&d, "m.e"), "{}");
	assert_string_equal(flatdoc_get(&d, "m.q"), "\"s\"");
	assert_string_equal(d.v[0].key, "m.event");
	/* a second set of a key replaces its value, in place */
	flatdoc_set(&d, "m.event", "x");
	assert_string_equal(d.v[0].value, "x");
	assert_int_equal(d.n, 9);
	flatdoc_release(&d);
	flatdoc_release(&d); /* a released document releases again */
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flatdoc__a_yaml_tree_becomes_dotted_keys_in_document_order),
		cmocka_unit_test(flatdoc__a_quoted_scalar_keeps_its_quotes_and_escapes_so_null_and_the_string_differ),
		cmocka_unit_test(flatdoc__compare_gives_changed_then_removed_in_a_order_then_added_in_b_order),
		cmocka_unit_test(flatdoc__json_objects_and_arrays_flatten_and_scalars_read_as_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
