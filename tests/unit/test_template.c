/* test_template.c - template params, ${param} substitution and --set. */
#include "tests/unit/testlib.h"

#define TEMPLATE \
	"version: 1\n" \
	"params:\n" \
	"  ranks: {type: int, default: 2, min: 1, max: 64}\n" \
	"  precision: {type: enum, values: [fp32, bf16, fp16], default: bf16}\n" \
	"  partition: {type: string, default: null}\n" \
	"  lr: 0.1\n" \
	"name: demo-${precision}-${ranks}\n" \
	"resources: {ranks_per_node: \"${ranks}\", partition: \"${partition}\"}\n" \
	"train:\n" \
	"  precision: ${precision}\n" \
	"  optimizer: {lr: \"${lr}\"}\n"

static void load_with(struct loaded *l, const char *text, const char *s1, const char *s2)
{
	const char *const sets[] = { s1, s2, NULL };

	load_sets(l, text, strlen(text), sets);
}

static void template__substitutes_defaults_keeping_their_types(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, TEMPLATE);
	assert_int_equal(l.rc, 0);
	assert_string_equal(l.job.name, "demo-bf16-2");
	assert_int_equal(l.job.resources.ranks_per_node, 2);
	assert_null(l.job.resources.partition);
	assert_int_equal(l.job.train.precision, PRECISION_BF16);
	assert_true(l.job.train.optimizer.lr == 0.1);
	loaded_release(&l);
}

static void template__sets_params_from_the_command_line(void **state)
{
	struct loaded l;

	(void)state;
	load_with(&l, TEMPLATE, "params.ranks=8", "params.partition=gpu");
	assert_int_equal(l.rc, 0);
	assert_string_equal(l.job.name, "demo-bf16-8");
	assert_int_equal(l.job.resources.ranks_per_node, 8);
	assert_string_equal(l.job.resources.partition, "gpu");
	loaded_release(&l);
}

static void template__type_checks_param_overrides(void **state)
{
	struct loaded l;

	(void)state;
	load_with(&l, TEMPLATE, "params.ranks=99", "params.precision=fp8");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "params.ranks=99: parameter ranks: out of range 1..64, got \"99\"");
	assert_diag(&l, "params.precision=fp8: parameter precision: expected one of fp32, bf16, fp16, got \"fp8\"");
	loaded_release(&l);
	load_with(&l, TEMPLATE, "params.rank=4", NULL);
	assert_diag(&l, "params.rank=4: unknown parameter \"rank\"; did you mean \"ranks\"?");
	loaded_release(&l);
}

static void template__overrides_any_key_with_type_checking(void **state)
{
	struct loaded l;

	(void)state;
	load_with(&l, TEMPLATE, "resources.nodes=4", "train.optimizer.momentum=0.8");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.job.resources.nodes, 4);
	assert_true(l.job.train.optimizer.momentum == 0.8);
	loaded_release(&l);
	load_with(&l, TEMPLATE, "resources.nodes=four", "resources.gpus=1");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "resources.nodes=four: resources.nodes: expected an integer 1..65536 "
			"or a range MIN-MAX of them, got \"four\"");
	assert_diag(&l, "resources.gpus=1: resources: unknown key \"gpus\"; did you mean \"gpus_per_node\"?");
	loaded_release(&l);
}

static void template__override_beats_a_substituted_value(void **state)
{
	struct loaded l;

	(void)state;
	load_with(&l, TEMPLATE, "resources.ranks_per_node=3", "command=[a, b c]");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.job.resources.ranks_per_node, 3);
	assert_int_equal(l.job.command.n, 2);
	assert_string_equal(l.job.command.v[1], "b c");
	loaded_release(&l);
}

static void template__refuses_malformed_overrides(void **state)
{
	struct loaded l;

	(void)state;
	load_with(&l, TEMPLATE, "resources..nodes=1", "=1");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "resources..nodes=1: expected KEY.PATH=VALUE, KEY.PATH being names of [A-Za-z0-9_-] joined by '.'");
	assert_diag(&l, "=1: expected KEY.PATH=VALUE, KEY.PATH being names of [A-Za-z0-9_-] joined by '.'");
	loaded_release(&l);
	load_with(&l, TEMPLATE, "name.x=1", NULL);
	assert_diag(&l, "name.x=1: cannot set a key inside \"name\", which is a scalar in the spec");
	loaded_release(&l);
}

static void template__reports_unknown_references_with_a_suggestion(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "version: 1\nparams: {ranks: 2}\nname: x-${rank}\n");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "job.yaml:3:7: unknown parameter \"rank\" in ${rank}; did you mean \"ranks\"? "
			"(write $${ for a literal ${)");
	loaded_release(&l);
	load(&l, "version: 1\nname: t\nenv: {A: \"${oops\"}\n");
	assert_diag(&l, "job.yaml:3:10: unterminated ${ in \"${oops\" (write $${ for a literal ${)");
	loaded_release(&l);
}

static void template__keeps_escaped_references_literal(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "version: 1\nname: t\nenv: {A: \"$${SLURM_JOB_ID}/x\", B: \"$$HOME\"}\n");
	assert_int_equal(l.rc, 0);
	assert_string_equal(l.job.env.v[0].value, "${SLURM_JOB_ID}/x");
	assert_string_equal(l.job.env.v[1].value, "$$HOME");
	loaded_release(&l);
}

static void template__requires_params_without_default_to_be_set(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "version: 1\nparams: {acct: {type: string}}\nname: t\nresources: {account: \"x${acct}\"}\n");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "job.yaml:4:22: parameter \"acct\" has no default; set it with --set params.acct=VALUE");
	assert_int_equal(l.dl.n, 1);
	loaded_release(&l);
}

static void template__checks_declarations(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "version: 1\nname: t\nparams:\n  a: {type: integer}\n  b: {type: enum}\n"
		 "  c: {type: int, default: x}\n  d: {tpye: int}\n");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "job.yaml:4:13: params.a: type must be int, number, bool, string or enum");
	assert_diag(&l, "job.yaml:5:6: params.b: an enum parameter needs a non-empty list of values");
	assert_diag(&l, "job.yaml:6:27: parameter c: expected an integer, got \"x\"");
	assert_diag(&l, "job.yaml:7:7: params.d: unknown key \"tpye\"; did you mean \"type\"?");
	loaded_release(&l);
}

static void template__builds_a_spec_from_overrides_alone(void **state)
{
	struct loaded l;

	(void)state;
	load_with(&l, "", "version=1", "name=from-flags");
	assert_int_equal(l.rc, 0);
	assert_string_equal(l.job.name, "from-flags");
	loaded_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(template__substitutes_defaults_keeping_their_types),
		cmocka_unit_test(template__sets_params_from_the_command_line),
		cmocka_unit_test(template__type_checks_param_overrides),
		cmocka_unit_test(template__overrides_any_key_with_type_checking),
		cmocka_unit_test(template__override_beats_a_substituted_value),
		cmocka_unit_test(template__refuses_malformed_overrides),
		cmocka_unit_test(template__reports_unknown_references_with_a_suggestion),
		cmocka_unit_test(template__keeps_escaped_references_literal),
		cmocka_unit_test(template__requires_params_without_default_to_be_set),
		cmocka_unit_test(template__checks_declarations),
		cmocka_unit_test(template__builds_a_spec_from_overrides_alone),
	};

	return cmocka_run_group_tests_name("test_template", tests, NULL, NULL);
}
