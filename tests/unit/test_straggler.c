/* test_straggler.c - common/straggler: the median, the threshold, the
 * persistence a rank needs before it is named, and noise below the
 * threshold never naming anyone. */
#include "tests/unit/testlib.h"

#include "common/straggler.h" // defines: struct straggler, straggler_*
#include "common/sbuf.h"      // defines: struct sbuf

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void straggler__median_is_the_lower_middle_and_skips_bad_values(void **state)
{
	double v[] = { 5, NAN, 1, 3, -1, INFINITY, 4 }, scratch[7];
	double two[] = { 10, 12 };

	(void)state;
	assert_true(straggler_median(v, 7, scratch) == 3); /* of 1 3 4 5 */
	assert_true(straggler_median(two, 2, scratch) == 10);
	assert_true(isnan(straggler_median(v + 1, 1, scratch)));
	assert_true(v[0] == 5 && v[2] == 1); /* not changed */
}

/* Windows of 10 steps; rank 2 of 4 at ratio, the others at 10 ms. */
static size_t feed(struct straggler *s, int windows, double ratio, struct straggler_hit *hits,
		   int64_t *named_at)
{
	size_t total = 0;

	*named_at = -1;
	for (int w = 0; w < windows; w++) {
		double c[4] = { 10, 10.5, 10 * ratio, 9.8 }, m[4] = { 1, 1, 1, 1 };
		size_t n = straggler_observe(s, w * 10 + 1, w * 10 + 10, c, m, hits + total, 4);

		if (n && *named_at < 0)
			*named_at = w * 10 + 10;
		total += n;
	}
	return total;
}

static void straggler__names_a_rank_slow_for_the_steps_once_with_its_cause(void **state)
{
	struct straggler s;
	struct straggler_hit hits[16];
	struct sbuf out = SBUF_INIT;
	int64_t at;

	(void)state;
	assert_int_equal(straggler_init(&s, 1.2, 50, 4), 0);
	assert_int_equal(feed(&s, 8, 1.5, hits, &at), 1);
	assert_int_equal(at, 50); /* not before 50 steps in a row */
	assert_int_equal(hits[0].rank, 2);
	assert_int_equal(hits[0].from, 1);
	assert_int_equal(hits[0].to, 50);
	assert_int_equal(hits[0].cause, STRAGGLER_COMPUTE);
	assert_true(fabs(hits[0].slower - 16.0 / 11.0) < 1e-9); /* 16 ms against 11 */
	straggler_describe(&hits[0], "node2", &out);
	assert_string_equal(out.buf, "rank 2 on node2 is 1.45x slower than the median over "
				     "steps 1-50: its compute (15 ms a step against 10 ms)");
	sbuf_release(&out);
	straggler_release(&s);
}

static void straggler__a_streak_broken_before_the_steps_names_nobody(void **state)
{
	struct straggler s;
	struct straggler_hit hits[4];
	double fast[4] = { 10, 10, 10, 10 }, slow[4] = { 10, 10, 20, 10 };
	size_t n = 0;

	(void)state;
	assert_int_equal(straggler_init(&s, 1.2, 50, 4), 0);
	/* slow 40 steps, one normal window, slow 40 again: never 50 in a row */
	for (int w = 0; w < 9; w++)
		n += straggler_observe(&s, w * 10 + 1, w * 10 + 10, w == 4 ? fast : slow, NULL, hits, 4);
	assert_int_equal(n, 0);
	/* one more slow window makes 50 */
	n = straggler_observe(&s, 91, 100, slow, NULL, hits, 4);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].from, 51);
	assert_int_equal(hits[0].cause, STRAGGLER_RATE);
	straggler_release(&s);
}

static void straggler__noise_below_the_threshold_never_names_anyone(void **state)
{
	struct straggler s;
	struct straggler_hit hits[64];
	uint64_t x = 88172645463325252ull;
	size_t n = 0;

	(void)state;
	assert_int_equal(straggler_init(&s, 1.2, 50, 64), 0);
	/* 10,000 windows of 64 ranks, each within +-9% of 10 ms: the ratio
	 * to the median stays under 1.09/0.91 = 1.198 */
	for (int w = 0; w < 10000; w++) {
		double c[64];

		for (int r = 0; r < 64; r++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			c[r] = 10 * (0.91 + 0.18 * (double)(x >> 11) / 9007199254740992.0);
		}
		n += straggler_observe(&s, w * 10 + 1, w * 10 + 10, c, NULL, hits, 64);
	}
	assert_int_equal(n, 0);
	straggler_release(&s);
}

static void straggler__own_communication_is_told_from_compute(void **state)
{
	struct straggler s;
	struct straggler_hit hits[2];
	double c[3] = { 10, 10, 10.5 }, m[3] = { 1, 1, 6 };
	size_t n;

	(void)state;
	assert_int_equal(straggler_init(&s, 1.2, 10, 3), 0);
	n = straggler_observe(&s, 1, 10, c, m, hits, 2);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].rank, 2);
	assert_int_equal(hits[0].cause, STRAGGLER_COMM);
	/* named once while the streak lasts; again after it ends and returns */
	assert_int_equal(straggler_observe(&s, 11, 20, c, m, hits, 2), 0);
	m[2] = 1;
	assert_int_equal(straggler_observe(&s, 21, 30, c, m, hits, 2), 0);
	m[2] = 6;
	assert_int_equal(straggler_observe(&s, 31, 40, c, m, hits, 2), 1);
	straggler_release(&s);
}

static void straggler__past_max_hits_the_rest_are_named_later(void **state)
{
	struct straggler s;
	struct straggler_hit hits[1];
	double c[4] = { 10, 20, 20, 10 };

	(void)state;
	assert_int_equal(straggler_init(&s, 1.2, 1, 4), 0);
	assert_int_equal(straggler_observe(&s, 1, 1, c, NULL, hits, 1), 1);
	assert_int_equal(hits[0].rank, 1);
	assert_int_equal(straggler_observe(&s, 2, 2, c, NULL, hits, 1), 1);
	assert_int_equal(hits[0].rank, 2);
	assert_int_equal(hits[0].from, 1);
	/* one rank with figures: nothing judged */
	c[0] = c[1] = c[2] = NAN;
	assert_int_equal(straggler_observe(&s, 3, 3, c, NULL, hits, 1), 0);
	straggler_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(straggler__median_is_the_lower_middle_and_skips_bad_values),
		cmocka_unit_test(straggler__names_a_rank_slow_for_the_steps_once_with_its_cause),
		cmocka_unit_test(straggler__a_streak_broken_before_the_steps_names_nobody),
		cmocka_unit_test(straggler__noise_below_the_threshold_never_names_anyone),
		cmocka_unit_test(straggler__own_communication_is_told_from_compute),
		cmocka_unit_test(straggler__past_max_hits_the_rest_are_named_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
