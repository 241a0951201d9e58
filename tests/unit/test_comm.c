/* test_comm.c - the 16-bit gradient compression of comm_pack.c: exact
 * conversions at known values, and the stated error bound of a
 * compressed average over 2, 4 and 8 simulated ranks (the reduction an
 * MPI_Iallreduce with the user-defined op performs, done here as a tree,
 * the order Open MPI's recursive doubling uses). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainer/comm/comm_pack.h"

#include <math.h>
#include <stdlib.h>

static float round_trip(enum comm_pack_kind k, float x)
{
	uint16_t h;
	float y;

	comm_pack(k, &x, &h, 1);
	comm_unpack(k, &h, &y, 1);
	return y;
}

static void comm_pack__converts_known_values_exactly(void **state)
{
	uint16_t h;
	float one = 1.0f, big = 70000.0f, tiny = 5.9604644775390625e-8f, half_tiny = 2.98e-8f;

	(void)state;
	comm_pack(COMM_PACK_FP16, &one, &h, 1);
	assert_int_equal(h, 0x3c00);
	comm_pack(COMM_PACK_BF16, &one, &h, 1);
	assert_int_equal(h, 0x3f80);
	comm_pack(COMM_PACK_FP16, &big, &h, 1);
	assert_int_equal(h, 0x7c00); /* beyond 65504: infinity */
	comm_pack(COMM_PACK_FP16, &tiny, &h, 1);
	assert_int_equal(h, 0x0001); /* smallest subnormal */
	comm_pack(COMM_PACK_FP16, &half_tiny, &h, 1);
	assert_int_equal(h, 0x0000);
	assert_true(round_trip(COMM_PACK_FP16, 65504.0f) == 65504.0f);
	assert_true(round_trip(COMM_PACK_FP16, -0.333251953125f) == -0.333251953125f);
	assert_true(round_trip(COMM_PACK_BF16, 3.0e38f) > 2.9e38f);
	/* ties go to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 */
	assert_true(round_trip(COMM_PACK_FP16, 1.0f + 1.0f / 2048) == 1.0f);
	assert_true(round_trip(COMM_PACK_FP16, 1.0f + 3.0f / 2048) == 1.0f + 4.0f / 2048);
	assert_true(isnan(round_trip(COMM_PACK_FP16, NAN)));
	assert_true(isnan(round_trip(COMM_PACK_BF16, NAN)));
}

static void comm_pack__one_value_is_within_half_an_ulp(void **state)
{
	(void)state;
	srand(7);
	for (int i = 0; i < 100000; i++) {
		float x = ((float)rand() / RAND_MAX - 0.5f) * 8.0f;

		assert_true(fabsf(round_trip(COMM_PACK_FP16, x) - x) <=
			    fabsf(x) * comm_pack_unit(COMM_PACK_FP16) + 3e-8f);
		assert_true(fabsf(round_trip(COMM_PACK_BF16, x) - x) <=
			    fabsf(x) * comm_pack_unit(COMM_PACK_BF16));
	}
}

/* Averages world vectors of gradients as a data-parallel run does (each
 * rank's gradients come out of backward divided by world; pack, pairwise
 * sums in a tree) and checks every element against the
 * bound of comm_pack.h: |avg16 - avg| <= world * u * sum|g_r| / world. */
static void check_average(enum comm_pack_kind k, int world)
{
	enum { N = 4096 };
	float *g = malloc(sizeof(float) * N * world), out[N];
	uint16_t *h = malloc(sizeof(uint16_t) * N * world);
	double worst = 0;

	for (int i = 0; i < N * world; i++)
		g[i] = (float)(((double)rand() / RAND_MAX - 0.5) * pow(10, rand() % 7 - 5));
	for (int r = 0; r < world; r++) {
		float *scaled = malloc(sizeof(float) * N);

		for (int i = 0; i < N; i++)
			scaled[i] = g[r * N + i] * (1.0f / world);
		comm_pack(k, scaled, h + r * N, N);
		free(scaled);
	}
	for (int s = 1; s < world; s *= 2)
		for (int r = 0; r + s < world; r += 2 * s)
			comm_pack_sum(k, h + (r + s) * N, h + r * N, N);
	comm_unpack(k, h, out, N);
	for (int i = 0; i < N; i++) {
		double avg = 0, mag = 0, bound;

		for (int r = 0; r < world; r++) {
			avg += g[r * N + i] / (double)world;
			mag += fabs(g[r * N + i]) / world;
		}
		bound = world * comm_pack_unit(k) * mag + (k == COMM_PACK_FP16 ? world * 3e-8 : 0);
		assert_true(fabs(out[i] - avg) <= bound);
		if (mag > 1e-3 && fabs(out[i] - avg) / mag > worst)
			worst = fabs(out[i] - avg) / mag;
	}
	print_message("%s over %d ranks: worst relative error %.3g (bound %.3g)\n",
		      k == COMM_PACK_FP16 ? "fp16" : "bf16", world, worst, world * comm_pack_unit(k));
	free(g);
	free(h);
}

static void comm_pack__an_average_over_ranks_stays_within_the_stated_bound(void **state)
{
	(void)state;
	srand(11);
	for (int w = 2; w <= 8; w *= 2) {
		check_average(COMM_PACK_FP16, w);
		check_average(COMM_PACK_BF16, w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(comm_pack__converts_known_values_exactly),
		cmocka_unit_test(comm_pack__one_value_is_within_half_an_ulp),
		cmocka_unit_test(comm_pack__an_average_over_ranks_stays_within_the_stated_bound),
	};

	return cmocka_run_group_tests_name("test_comm", tests, NULL, NULL);
}
