/* test_gpu_plan.c - the CUDA path's decisions (gpu_plan.c), which run
 * without a GPU: the device of each rank and the refusal of two ranks on
 * one GPU, the operand alignment cuBLASLt is told, the cuDNN algorithm
 * filter (no Winograd or FFT at fp32), and the precision of convolutions
 * with few input channels. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainer/cuda/gpu_plan.h"
#include "common/sbuf.h"

#include <string.h>

static void gpu_plan__ranks_take_their_local_rank_modulo_the_visible_gpus(void **state)
{
	(void)state;
	assert_int_equal(gpu_device_for(0, 4), 0);
	assert_int_equal(gpu_device_for(3, 4), 3);
	assert_int_equal(gpu_device_for(5, 4), 1);
	/* hpctrain launch: every rank sees its own GPU as device 0 */
	assert_int_equal(gpu_device_for(3, 1), 0);
}

static void gpu_plan__two_ranks_on_one_gpu_are_refused_unless_sharing_is_asked_for(void **state)
{
	/* four ranks, one GPU each, as hpctrain launch sets them up: the
	 * device numbers are all 0, the bus ids differ */
	const char own[4][GPU_BUS_ID_LEN] = { "0000:3B:00.0", "0000:5e:00.0", "0000:86:00.0",
					      "0000:af:00.0" };
	/* four ranks on two GPUs: ranks 0 and 2 share, as do 1 and 3 */
	const char two[4][GPU_BUS_ID_LEN] = { "0000:3b:00.0", "0000:5e:00.0", "0000:3B:00.0",
					      "0000:5e:00.0" };
	struct sbuf err = SBUF_INIT;

	(void)state;
	assert_int_equal(gpu_check_sharing(own, 4, false, &err), 0);
	assert_int_equal(gpu_check_sharing(own, 1, false, &err), 0);
	assert_int_equal(err.len, 0);
	assert_int_equal(gpu_check_sharing(two, 4, true, &err), 1);
	assert_int_equal(err.len, 0);
	assert_int_equal(gpu_check_sharing(two, 4, false, &err), -1);
	assert_non_null(strstr(err.buf, "ranks 0 and 2 of this node would both run on GPU "
					"0000:3b:00.0"));
	assert_non_null(strstr(err.buf, GPU_SHARE_ENV "=1"));
	sbuf_release(&err);
}

static void gpu_plan__cublaslt_is_told_the_alignment_a_pointer_has(void **state)
{
	(void)state;
	assert_int_equal(gpu_alignment(0x7f0000000000), 256);
	assert_int_equal(gpu_alignment(0x7f0000000100 + 1290 * 4), 8);  /* the cnn's fc1, packed */
	assert_int_equal(gpu_alignment(0x7f0000000100 + 129 * 4), 4);   /* hepcnn's fc1, packed */
	assert_int_equal(gpu_alignment(0x7f0000000100 + 1344 * 4), 256); /* aligned arena */
	assert_int_equal(gpu_alignment(0x7f0000000002), 2);
	assert_int_equal(gpu_alignment(0x7f0000000030), 16);
	assert_int_equal(gpu_alignment(0), 256);
}

static void gpu_plan__fp32_never_takes_winograd_or_fft(void **state)
{
	/* the order cuDNN's heuristic might rate them in */
	const struct gpu_algo v[] = {
		{ true, true, true, GPU_ALGO_WINOGRAD },
		{ true, true, true, GPU_ALGO_FFT },
		{ true, false, true, GPU_ALGO_GEMM },
		{ true, true, false, GPU_ALGO_GEMM },
		{ true, true, true, GPU_ALGO_GEMM },
	};

	(void)state;
	assert_int_equal(gpu_pick_algo(v, 5, BE_FP32), 4);
	assert_int_equal(gpu_pick_algo(v, 5, BE_BF16), 0);
	assert_int_equal(gpu_pick_algo(v, 5, BE_FP16), 0);
	/* no deterministic one in the math mode: a deterministic one, then any */
	assert_int_equal(gpu_pick_algo(v, 4, BE_FP32), 3);
	assert_int_equal(gpu_pick_algo(v, 3, BE_FP32), 2);
	/* only transforms at fp32: none may run */
	assert_int_equal(gpu_pick_algo(v, 2, BE_FP32), -1);
	assert_int_equal(gpu_pick_algo(v, 2, BE_FP16), 0);
	/* unusable ones never */
	{
		const struct gpu_algo w[] = { { false, true, true, GPU_ALGO_GEMM },
					      { true, false, false, GPU_ALGO_GEMM } };

		assert_int_equal(gpu_pick_algo(w, 2, BE_FP32), 1);
		assert_int_equal(gpu_pick_algo(w, 1, BE_BF16), -1);
	}
}

static void gpu_plan__few_input_channels_keep_a_convolution_fp32(void **state)
{
	(void)state;
	assert_int_equal(gpu_conv_precision(1, BE_BF16), BE_FP32);
	assert_int_equal(gpu_conv_precision(1, BE_FP16), BE_FP32);
	assert_int_equal(gpu_conv_precision(8, BE_BF16), BE_FP32);
	assert_int_equal(gpu_conv_precision(24, BE_FP16), BE_FP16);
	assert_int_equal(gpu_conv_precision(20, BE_BF16), BE_FP32); /* not a multiple of 8 */
	assert_int_equal(gpu_conv_precision(16, BE_BF16), BE_BF16);
	assert_int_equal(gpu_conv_precision(64, BE_FP32), BE_FP32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpu_plan__ranks_take_their_local_rank_modulo_the_visible_gpus),
		cmocka_unit_test(gpu_plan__two_ranks_on_one_gpu_are_refused_unless_sharing_is_asked_for),
		cmocka_unit_test(gpu_plan__cublaslt_is_told_the_alignment_a_pointer_has),
		cmocka_unit_test(gpu_plan__fp32_never_takes_winograd_or_fft),
		cmocka_unit_test(gpu_plan__few_input_channels_keep_a_convolution_fp32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
