/* test_slurm_errno.c - launcher/slurm/slurm_errno: libslurm's errno as
 * an exit status.  A controller that is down (refused), one that is
 * stopped or hung (a socket timeout after MessageTimeout), and one that
 * hangs up mid-message are alike unavailable (5); Slurm's refusals are
 * rejections (6); an unknown job is no input (4). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "launcher/slurm/slurm_errno.h" // defines: hpt_slurm_errno_status
#include "common/exitcode.h"            // defines: HPT_EXIT_*

#include <errno.h>
#include <slurm/slurm_errno.h>

static void slurm_errno__a_stopped_controller_is_unavailable_as_a_down_one(void **state)
{
	(void)state;
	/* down: nothing listens */
	assert_int_equal(hpt_slurm_errno_status(SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR),
			 HPT_EXIT_UNAVAILABLE);
	assert_int_equal(hpt_slurm_errno_status(ECONNREFUSED), HPT_EXIT_UNAVAILABLE);
	/* stopped: it accepts, never answers */
	assert_int_equal(hpt_slurm_errno_status(SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT),
			 HPT_EXIT_UNAVAILABLE);
	assert_int_equal(hpt_slurm_errno_status(ETIMEDOUT), HPT_EXIT_UNAVAILABLE);
	/* gone mid-message */
	assert_int_equal(hpt_slurm_errno_status(SLURM_PROTOCOL_SOCKET_IMPL_ZERO_RECV_LENGTH),
			 HPT_EXIT_UNAVAILABLE);
	assert_int_equal(hpt_slurm_errno_status(ESLURM_PROTOCOL_INCOMPLETE_PACKET),
			 HPT_EXIT_UNAVAILABLE);
	assert_int_equal(hpt_slurm_errno_status(SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR),
			 HPT_EXIT_UNAVAILABLE);
}

static void slurm_errno__a_refusal_is_rejected_and_an_unknown_job_no_input(void **state)
{
	(void)state;
	assert_int_equal(hpt_slurm_errno_status(ESLURM_INVALID_PARTITION_NAME), HPT_EXIT_REJECTED);
	assert_int_equal(hpt_slurm_errno_status(ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE),
			 HPT_EXIT_REJECTED);
	assert_int_equal(hpt_slurm_errno_status(ESLURM_INVALID_JOB_ID), HPT_EXIT_NO_INPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slurm_errno__a_stopped_controller_is_unavailable_as_a_down_one),
		cmocka_unit_test(slurm_errno__a_refusal_is_rejected_and_an_unknown_job_no_input),
	};

	return cmocka_run_group_tests_name("test_slurm_errno", tests, NULL, NULL);
}
