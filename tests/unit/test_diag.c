/* test_diag.c - diagnostics render as FILE:LINE:COL: path: message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/diag.h"
#include "common/sbuf.h"

static void render(const struct diag *d, const char *want)
{
	struct sbuf out = SBUF_INIT;

	diag_format(d, &out);
	assert_string_equal(out.buf, want);
	sbuf_release(&out);
}

static void diag__formats_position_path_and_message(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	diag_add(&dl, DIAG_ERROR, "job.yaml", 7, 18, "resources.gpus_per_node", "expected %s", "x");
	diag_add(&dl, DIAG_WARNING, "job.yaml", 1, 1, "binding.gpu", "w");
	diag_add(&dl, DIAG_ERROR, "--set a=b", 0, 0, "", "bad");
	render(&dl.v[0], "job.yaml:7:18: resources.gpus_per_node: expected x");
	render(&dl.v[1], "job.yaml:1:1: warning: binding.gpu: w");
	render(&dl.v[2], "--set a=b: bad");
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 2);
	assert_true(diag_has_errors(&dl));
	diag_list_release(&dl);
}

static void diag__sorts_by_position_stably(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	diag_add(&dl, DIAG_ERROR, "b", 1, 1, "", "4");
	diag_add(&dl, DIAG_ERROR, "a", 9, 1, "", "3");
	diag_add(&dl, DIAG_ERROR, "a", 2, 5, "", "1");
	diag_add(&dl, DIAG_ERROR, "a", 2, 5, "", "2");
	diag_sort(&dl);
	for (int i = 0; i < 4; i++)
		assert_int_equal(dl.v[i].msg[0], '1' + i);
	diag_list_release(&dl);
}

static void diag__keeps_the_first_hundred_and_counts_the_rest(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	for (int i = 0; i < 250; i++)
		diag_add(&dl, DIAG_ERROR, "f", i + 1, 1, "", "e");
	assert_int_equal(dl.n, 100);
	assert_int_equal(dl.dropped, 150);
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 250);
	diag_list_release(&dl);
}

static void diag__dropping_warnings_keeps_the_errors_in_order(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	diag_add(&dl, DIAG_WARNING, "r.yaml", 1, 1, "train", "ignored because command is set");
	diag_add(&dl, DIAG_ERROR, "r.yaml", 2, 1, "a", "1");
	diag_add(&dl, DIAG_WARNING, "r.yaml", 3, 1, "b", "w");
	diag_add(&dl, DIAG_ERROR, "r.yaml", 4, 1, "c", "2");
	diag_drop_warnings(&dl);
	assert_int_equal(dl.n, 2);
	assert_string_equal(dl.v[0].msg, "1");
	assert_string_equal(dl.v[1].msg, "2");
	assert_int_equal(diag_count(&dl, DIAG_WARNING), 0);
	diag_list_release(&dl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diag__formats_position_path_and_message),
		cmocka_unit_test(diag__sorts_by_position_stably),
		cmocka_unit_test(diag__keeps_the_first_hundred_and_counts_the_rest),
		cmocka_unit_test(diag__dropping_warnings_keeps_the_errors_in_order),
	};

	return cmocka_run_group_tests_name("test_diag", tests, NULL, NULL);
}
