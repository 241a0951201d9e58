/* test_resume.c - holding a global batch on any number of ranks
 * (resume.c): the plan (accumulation below, smaller per-rank batch above,
 * refusal naming the rank counts that work), the slices that tile a
 * global batch exactly once at any world size, and the batch hash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainer/model/resume.h"
#include "common/sbuf.h"

#include <string.h>

static struct resume_plan plan(int64_t global, int world, int batch)
{
	struct resume_plan p = { 0 };
	struct sbuf err = SBUF_INIT;

	assert_int_equal(resume_plan_make(global, world, batch, &p, &err), 0);
	assert_int_equal(err.len, 0);
	assert_int_equal(p.global, (int64_t)world * p.batch * p.accum);
	sbuf_release(&err);
	return p;
}

static void resume__the_same_shape_needs_no_accumulation(void **state)
{
	struct resume_plan p = plan(128, 2, 64);

	(void)state;
	assert_int_equal(p.batch, 64);
	assert_int_equal(p.accum, 1);
}

static void resume__fewer_ranks_accumulate_at_the_spec_batch(void **state)
{
	struct resume_plan p = plan(128, 1, 64);

	(void)state;
	assert_int_equal(p.batch, 64);
	assert_int_equal(p.accum, 2);
	p = plan(256, 2, 32);
	assert_int_equal(p.batch, 32);
	assert_int_equal(p.accum, 4);
}

static void resume__a_batch_that_does_not_divide_shrinks_to_one_that_does(void **state)
{
	/* 96 per rank, spec batch 64: 2 x 48, not 1 x 64 + a ragged rest */
	struct resume_plan p = plan(192, 2, 64);

	(void)state;
	assert_int_equal(p.batch, 48);
	assert_int_equal(p.accum, 2);
}

static void resume__more_ranks_shrink_the_per_rank_batch(void **state)
{
	struct resume_plan p = plan(128, 4, 64);

	(void)state;
	assert_int_equal(p.batch, 32);
	assert_int_equal(p.accum, 1);
}

static void resume__a_world_that_does_not_divide_is_refused_naming_the_rank_counts(void **state)
{
	struct resume_plan p = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	assert_int_equal(resume_plan_make(128, 3, 64, &p, &err), -1);
	assert_string_equal(err.buf, "global batch 128 does not split over 3 ranks; rank counts "
				     "that hold it: 1, 2, 4, 8, 16, 32, 64, 128");
	sbuf_release(&err);
}

/* Marks every sample of a global batch that rank/micro slices take. */
static void tile(int64_t global, int world, int batch, int *seen)
{
	struct resume_plan p = plan(global, world, batch);

	for (int r = 0; r < world; r++)
		for (int a = 0; a < p.accum; a++) {
			int64_t off = resume_slice_offset(&p, world, r, a);

			for (int j = 0; j < p.batch; j++)
				seen[off + j]++;
		}
}

static void resume__slices_tile_the_global_batch_once_at_any_world_size(void **state)
{
	static const int worlds[] = { 1, 2, 3, 4, 6, 8, 12, 24 };

	(void)state;
	for (size_t w = 0; w < sizeof(worlds) / sizeof(worlds[0]); w++) {
		int seen[96] = { 0 };

		tile(96, worlds[w], 16, seen);
		for (int i = 0; i < 96; i++)
			assert_int_equal(seen[i], 1);
	}
}

static void resume__at_a_fixed_batch_micro_steps_take_the_slices_more_ranks_would(void **state)
{
	struct resume_plan four = plan(128, 4, 32), two = plan(128, 2, 32);

	(void)state;
	/* rank 1 at micro-step 1 of 2 ranks is rank 3 of 4 */
	assert_int_equal(resume_slice_offset(&two, 2, 1, 1), resume_slice_offset(&four, 4, 3, 0));
	assert_int_equal(resume_slice_offset(&two, 2, 0, 1), 64);
}

static void resume__the_batch_hash_ignores_order_and_sees_membership(void **state)
{
	int64_t a[6] = { 5, 17, 3, 99, 0, 42 }, b[6] = { 42, 0, 99, 3, 17, 5 };
	int64_t c[6] = { 5, 17, 3, 99, 0, 43 };

	(void)state;
	assert_true(resume_batch_hash(a, 6) == resume_batch_hash(b, 6));
	assert_true(resume_batch_hash(a, 6) != resume_batch_hash(c, 6));
	assert_true(resume_batch_hash(a, 5) != resume_batch_hash(a, 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resume__the_same_shape_needs_no_accumulation),
		cmocka_unit_test(resume__fewer_ranks_accumulate_at_the_spec_batch),
		cmocka_unit_test(resume__a_batch_that_does_not_divide_shrinks_to_one_that_does),
		cmocka_unit_test(resume__more_ranks_shrink_the_per_rank_batch),
		cmocka_unit_test(resume__a_world_that_does_not_divide_is_refused_naming_the_rank_counts),
		cmocka_unit_test(resume__slices_tile_the_global_batch_once_at_any_world_size),
		cmocka_unit_test(resume__at_a_fixed_batch_micro_steps_take_the_slices_more_ranks_would),
		cmocka_unit_test(resume__the_batch_hash_ignores_order_and_sees_membership),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
