/* test_ckpt_pick.c - which checkpoint a resume takes and which ones
 * saving prunes or retires (trainer/model/ckpt_pick.c), from candidates
 * with the fields their headers record and a table of verify results:
 * no files, no model. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainer/model/ckpt_pick.h" // defines: struct ckpt_cand, ckpt_pick_*
#include "common/exitcode.h"         // defines: HPT_EXIT_NO_INPUT
#include "common/sbuf.h"             // defines: struct sbuf

#include <stdlib.h>
#include <string.h>

/* A version 3 candidate: path, step, samples, global batch. */
static struct ckpt_cand v3(const char *path, int64_t step, int64_t samples, int64_t global)
{
	return (struct ckpt_cand){ .path = xstrdup(path), .head = true, .version = 3,
				   .step = step, .samples = samples, .global_batch = global };
}

/* The verifier's answers by path (0 where a path is not listed), and
 * how many files it was asked about. */
struct table {
	const char *path[8];
	int result[8];
	int asked;
};

static int verify_table(void *ctx, const struct ckpt_cand *c, struct sbuf *why)
{
	struct table *t = ctx;

	t->asked++;
	for (int i = 0; i < 8 && t->path[i]; i++)
		if (!strcmp(t->path[i], c->path)) {
			if (t->result[i])
				sbuf_addf(why, "%s: corrupt checkpoint (CRC-32 mismatch)", c->path);
			return t->result[i];
		}
	return 0;
}

static void ckpt_pick__takes_only_the_names_the_trainer_writes(void **state)
{
	int64_t step = 0;

	(void)state;
	assert_true(ckpt_pick_is_name("ckpt-000000000042.bin", &step));
	assert_int_equal(step, 42);
	assert_true(ckpt_pick_is_name("ckpt-1000000000000.bin", &step));
	assert_int_equal(step, INT64_C(1000000000000));
	assert_false(ckpt_pick_is_name("ckpt-best.bin", NULL));
	assert_false(ckpt_pick_is_name("ckpt-42.bin", NULL));
	assert_false(ckpt_pick_is_name("ckpt-000000000042.bin.tmp.AbCdEf", NULL));
	assert_false(ckpt_pick_is_name("ckpt-000000000042.bin~", NULL));
	assert_false(ckpt_pick_is_name("ckpt-00000000004x.bin", NULL));
	assert_false(ckpt_pick_is_name("old-ckpt-000000000042.bin", NULL));
}

/* --new-global-batch 64 -> 128 at 640 samples: step 10 became step 5;
 * steps 5..7 at 128 are newer than step 10 at 64 although they sort
 * before it by name. */
static void ckpt_pick__orders_by_samples_not_by_the_renumbered_step(void **state)
{
	struct ckpt_cand c[3] = { v3("d/ckpt-000000000010.bin", 10, 640, 64),
				  v3("d/ckpt-000000000007.bin", 7, 1024, 128),
				  v3("d/ckpt-000000000006.bin", 6, 896, 128) };
	struct table t = { { NULL }, { 0 }, 0 };
	struct sbuf warn = SBUF_INIT, err = SBUF_INIT;
	size_t chosen = 99;

	(void)state;
	ckpt_pick_sort(c, 3);
	assert_string_equal(c[0].path, "d/ckpt-000000000007.bin");
	assert_string_equal(c[2].path, "d/ckpt-000000000010.bin");
	assert_int_equal(ckpt_pick(c, 3, verify_table, &t, &chosen, &warn, &err), 0);
	assert_int_equal(chosen, 0);
	assert_int_equal(t.asked, 1);
	assert_int_equal(warn.len, 0);
	ckpt_cands_release(NULL, 0); /* accepts nothing */
	for (int i = 0; i < 3; i++)
		free(c[i].path);
	sbuf_release(&warn);
	sbuf_release(&err);
}

/* A file from before version 3 records no samples: older than any that
 * does; among themselves, by step. */
static void ckpt_pick__puts_files_without_samples_below_those_with(void **state)
{
	struct ckpt_cand c[3] = {
		{ .path = xstrdup("d/ckpt-000000000900.bin"), .head = true, .version = 2, .step = 900 },
		v3("d/ckpt-000000000901.bin", 901, 7208, 8),
		{ .path = xstrdup("d/ckpt-000000000950.bin"), .head = false, .step = 950 },
	};

	(void)state;
	ckpt_pick_sort(c, 3);
	assert_string_equal(c[0].path, "d/ckpt-000000000901.bin");
	assert_string_equal(c[1].path, "d/ckpt-000000000950.bin");
	assert_string_equal(c[2].path, "d/ckpt-000000000900.bin");
	for (int i = 0; i < 3; i++)
		free(c[i].path);
}

static void ckpt_pick__passes_over_a_damaged_newest_with_a_warning(void **state)
{
	struct ckpt_cand c[3] = { v3("d/ckpt-000000000009.bin", 9, 72, 8),
				  v3("d/ckpt-000000000006.bin", 6, 48, 8),
				  v3("d/ckpt-000000000003.bin", 3, 24, 8) };
	struct table t = { { "d/ckpt-000000000009.bin" }, { 1 }, 0 };
	struct sbuf warn = SBUF_INIT, err = SBUF_INIT;
	size_t chosen = 99;

	(void)state;
	assert_int_equal(ckpt_pick(c, 3, verify_table, &t, &chosen, &warn, &err), 0);
	assert_int_equal(chosen, 1);
	assert_string_equal(warn.buf, "warning: d/ckpt-000000000009.bin: corrupt checkpoint "
				      "(CRC-32 mismatch); passed over for an older checkpoint\n");
	assert_int_equal(err.len, 0);
	for (int i = 0; i < 3; i++)
		free(c[i].path);
	sbuf_release(&warn);
	sbuf_release(&err);
}

/* None verifies: the newest's fault is the error (as when it was the
 * only one looked at), the others' are warnings. */
static void ckpt_pick__fails_with_the_newest_when_none_verifies(void **state)
{
	struct ckpt_cand c[2] = { v3("d/ckpt-000000000006.bin", 6, 48, 8),
				  v3("d/ckpt-000000000003.bin", 3, 24, 8) };
	struct table t = { { "d/ckpt-000000000006.bin", "d/ckpt-000000000003.bin" }, { 1, 1 }, 0 };
	struct sbuf warn = SBUF_INIT, err = SBUF_INIT;
	size_t chosen = 99;

	(void)state;
	assert_int_equal(ckpt_pick(c, 2, verify_table, &t, &chosen, &warn, &err), HPT_EXIT_NO_INPUT);
	assert_string_equal(err.buf, "d/ckpt-000000000006.bin: corrupt checkpoint (CRC-32 mismatch)");
	assert_string_equal(warn.buf,
			    "warning: d/ckpt-000000000003.bin: corrupt checkpoint (CRC-32 mismatch)\n");
	assert_int_equal(chosen, 99);
	assert_int_equal(ckpt_pick(c, 0, verify_table, &t, &chosen, &warn, &err), 1);
	for (int i = 0; i < 2; i++)
		free(c[i].path);
	sbuf_release(&warn);
	sbuf_release(&err);
}

/* Another spec's file, or one not to be trusted, is no case for an older
 * one: the walk stops with its status. */
static void ckpt_pick__stops_on_a_file_it_must_not_pass_over(void **state)
{
	struct ckpt_cand c[2] = { v3("d/ckpt-000000000006.bin", 6, 48, 8),
				  v3("d/ckpt-000000000003.bin", 3, 24, 8) };
	struct table t = { { "d/ckpt-000000000006.bin" }, { HPT_EXIT_NO_INPUT }, 0 };
	struct sbuf warn = SBUF_INIT, err = SBUF_INIT;
	size_t chosen = 99;

	(void)state;
	assert_int_equal(ckpt_pick(c, 2, verify_table, &t, &chosen, &warn, &err), HPT_EXIT_NO_INPUT);
	assert_int_equal(t.asked, 1);
	assert_non_null(strstr(err.buf, "d/ckpt-000000000006.bin"));
	assert_int_equal(warn.len, 0);
	for (int i = 0; i < 2; i++)
		free(c[i].path);
	sbuf_release(&warn);
	sbuf_release(&err);
}

/* Saving at global batch 128 after 64: the 64 lineage retires whatever
 * its steps; of 128's, the newest keep stay. */
static void ckpt_pick__prunes_this_lineage_and_retires_the_other(void **state)
{
	struct ckpt_cand c[5] = { v3("d/ckpt-000000000012.bin", 12, 768, 64),
				  v3("d/ckpt-000000000008.bin", 8, 1280, 128),
				  v3("d/ckpt-000000000007.bin", 7, 1152, 128),
				  v3("d/ckpt-000000000006.bin", 6, 1024, 128),
				  v3("d/ckpt-000000000010.bin", 10, 640, 64) };
	enum ckpt_fate fate[5];

	(void)state;
	ckpt_pick_sort(c, 5);
	ckpt_pick_prune(c, 5, 128, 2, fate);
	assert_string_equal(c[0].path, "d/ckpt-000000000008.bin");
	assert_int_equal(fate[0], CKPT_KEEP);
	assert_int_equal(fate[1], CKPT_KEEP);   /* 7 */
	assert_int_equal(fate[2], CKPT_REMOVE); /* 6 */
	assert_int_equal(fate[3], CKPT_RETIRE); /* 12 of 64 */
	assert_int_equal(fate[4], CKPT_RETIRE); /* 10 of 64 */
	for (int i = 0; i < 5; i++)
		free(c[i].path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ckpt_pick__takes_only_the_names_the_trainer_writes),
		cmocka_unit_test(ckpt_pick__orders_by_samples_not_by_the_renumbered_step),
		cmocka_unit_test(ckpt_pick__puts_files_without_samples_below_those_with),
		cmocka_unit_test(ckpt_pick__passes_over_a_damaged_newest_with_a_warning),
		cmocka_unit_test(ckpt_pick__fails_with_the_newest_when_none_verifies),
		cmocka_unit_test(ckpt_pick__stops_on_a_file_it_must_not_pass_over),
		cmocka_unit_test(ckpt_pick__prunes_this_lineage_and_retires_the_other),
	};

	return cmocka_run_group_tests_name("test_ckpt_pick", tests, NULL, NULL);
}
