/* test_slurm_state.c - launcher/slurm/slurm_state: every base state
 * crossed with every flag (and none), against a table written from
 * slurm.h's comments, not from the code; then the mixes of flags whose
 * order matters, and the job that started it: COMPLETED, still
 * COMPLETING on a node whose slurmd had stopped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "launcher/slurm/slurm_state.h" // defines: hpt_slurm_state_of

#include <slurm/slurm.h>

static const struct {
	uint32_t base;
	const char *name;
	bool final;
} bases[] = {
	{ JOB_PENDING, "PENDING", false },     { JOB_RUNNING, "RUNNING", false },
	{ JOB_SUSPENDED, "SUSPENDED", false }, { JOB_COMPLETE, "COMPLETED", true },
	{ JOB_CANCELLED, "CANCELLED", true },  { JOB_FAILED, "FAILED", true },
	{ JOB_TIMEOUT, "TIMEOUT", true },      { JOB_NODE_FAIL, "NODE_FAIL", true },
	{ JOB_PREEMPTED, "PREEMPTED", true },  { JOB_BOOT_FAIL, "BOOT_FAIL", true },
	{ JOB_DEADLINE, "DEADLINE", true },    { JOB_OOM, "OUT_OF_MEMORY", true },
	{ JOB_END, "UNKNOWN", false },         { 0x7f, "UNKNOWN", false },
};

/* name NULL: the base state's; held: the job is not done with yet */
static const struct {
	uint32_t flag;
	const char *name;
	bool held;
} flags[] = {
	{ 0, NULL, false },
	{ JOB_LAUNCH_FAILED, NULL, false },
	{ JOB_UPDATE_DB, NULL, false },
	{ JOB_REQUEUE, "REQUEUED", true },
	{ JOB_REQUEUE_HOLD, "REQUEUE_HOLD", true },
	{ JOB_SPECIAL_EXIT, "SPECIAL_EXIT", true },
	{ JOB_RESIZING, "RESIZING", true },
	{ JOB_CONFIGURING, "CONFIGURING", true },
	{ JOB_COMPLETING, "COMPLETING", true },
	{ JOB_STOPPED, "STOPPED", false },
	{ JOB_RECONFIG_FAIL, NULL, false },
	{ JOB_POWER_UP_NODE, NULL, true },
	{ JOB_REVOKED, "REVOKED", false },
	{ JOB_REQUEUE_FED, "REQUEUE_FED", true },
	{ JOB_RESV_DEL_HOLD, "RESV_DEL_HOLD", false },
	{ JOB_SIGNALING, "SIGNALING", true },
	{ JOB_STAGE_OUT, "STAGE_OUT", true },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void slurm_state__maps_every_base_state_with_every_flag(void **state)
{
	(void)state;
	for (size_t b = 0; b < N(bases); b++)
		for (size_t f = 0; f < N(flags); f++) {
			uint32_t word = bases[b].base | flags[f].flag;
			const char *name = flags[f].name ? flags[f].name : bases[b].name;
			bool finished = bases[b].final && !flags[f].held;
			struct hpt_slurm_state st;

			hpt_slurm_state_of(word, &st);
			if (strcmp(st.name, name) || st.finished != finished ||
			    st.completed != (finished && bases[b].base == JOB_COMPLETE) ||
			    st.pending != (bases[b].base == JOB_PENDING))
				fail_msg("0x%x: got %s finished=%d completed=%d pending=%d, want %s "
					 "finished=%d", (unsigned)word, st.name, st.finished,
					 st.completed, st.pending, name, finished);
		}
}

static void slurm_state__a_completed_job_still_completing_has_not_finished(void **state)
{
	struct hpt_slurm_state st;

	(void)state;
	hpt_slurm_state_of(JOB_COMPLETE | JOB_COMPLETING, &st);
	assert_string_equal(st.name, "COMPLETING");
	assert_false(st.finished);
	assert_false(st.completed);
	hpt_slurm_state_of(JOB_COMPLETE, &st);
	assert_string_equal(st.name, "COMPLETED");
	assert_true(st.finished);
	assert_true(st.completed);
}

static void slurm_state__names_the_first_flag_in_slurms_order(void **state)
{
	struct hpt_slurm_state st;

	(void)state;
	hpt_slurm_state_of(JOB_CANCELLED | JOB_REQUEUE | JOB_COMPLETING, &st);
	assert_string_equal(st.name, "COMPLETING");
	hpt_slurm_state_of(JOB_FAILED | JOB_SIGNALING | JOB_STAGE_OUT, &st);
	assert_string_equal(st.name, "STAGE_OUT");
	assert_false(st.finished);
	hpt_slurm_state_of(JOB_PENDING | JOB_SPECIAL_EXIT | JOB_REQUEUE_HOLD, &st);
	assert_string_equal(st.name, "REQUEUE_HOLD");
	assert_true(st.pending);
	/* a flag that names it but holds nothing back: the end stands */
	hpt_slurm_state_of(JOB_CANCELLED | JOB_REVOKED, &st);
	assert_string_equal(st.name, "REVOKED");
	assert_true(st.finished);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slurm_state__maps_every_base_state_with_every_flag),
		cmocka_unit_test(slurm_state__a_completed_job_still_completing_has_not_finished),
		cmocka_unit_test(slurm_state__names_the_first_flag_in_slurms_order),
	};

	return cmocka_run_group_tests_name("test_slurm_state", tests, NULL, NULL);
}
