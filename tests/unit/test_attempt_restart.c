/* test_attempt_restart.c - launcher/runs/attempt_restart: a recovery
 * inside the allocation, its figures from the new attempt's first
 * records (checkpoint load, first step, steps lost) and its line in
 * status. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"                   // defines: struct sbuf
#include "launcher/runs/attempt_restart.h" // defines: attempt_restart_figures, attempt_restart_format

#include <jansson.h>
#include <string.h>

/* in_allocation as doctor --lost wrote it: the new attempt made at 100,
 * the old one's last step 12 */
static json_t *record(void)
{
	return json_pack("{s:s, s:s, s:i, s:I, s:f, s:f, s:f, s:i}", "why", "lost node", "detail",
			 "node2 is down", "from_attempt", 1, "job_id", (json_int_t)12, "failed_at",
			 97.0, "step_ended_at", 99.0, "restarted_at", 100.0, "last_step", 12);
}

static void figures(json_t *in, const char *metrics, const char *rank0)
{
	json_t *r = rank0 ? json_loads(rank0, 0, NULL) : NULL;

	attempt_restart_figures(in, metrics, strlen(metrics), r);
	json_decref(r);
}

/* The bundled trainer: a resume record, then its steps; rank 0's first
 * heartbeat after them. */
static void attempt_restart__finds_the_trainers_load_first_step_and_lost_steps(void **state)
{
	json_t *in = record();
	struct sbuf line = SBUF_INIT;

	(void)state;
	figures(in,
		"{\"event\":\"data\",\"dataset\":\"synthetic\"}\n"
		"{\"event\":\"resume\",\"checkpoint_step\":10,\"load_s\":0.25}\n"
		"{\"event\":\"step\",\"step\":11,\"loss\":0.5}\n"
		"{\"event\":\"step\",\"step\":12,\"loss\":0.4}\n",
		"{\"rank\":0,\"first_heartbeat\":103.5,\"last_heartbeat\":104}");
	assert_true(json_real_value(json_object_get(in, "checkpoint_load_s")) == 0.25);
	assert_int_equal(json_integer_value(json_object_get(in, "first_step")), 11);
	assert_true(json_real_value(json_object_get(in, "first_step_at")) == 103.5);
	assert_true(json_real_value(json_object_get(in, "first_step_s")) == 3.5);
	/* steps 11 and 12 trained again */
	assert_int_equal(json_integer_value(json_object_get(in, "lost_steps")), 2);
	attempt_restart_format(in, 2, &line);
	assert_string_equal(line.buf,
			    "attempt 2, in job 12 after a lost node: node2 is down; the old step "
			    "ended 2.00 s after its first rank, the new attempt was made 1.00 s "
			    "later; attempt 1's last step was 12; the checkpoint loaded in 0.25 s; "
			    "the first step 3.50 s after the new attempt was made; 2 steps lost");
	json_decref(in);
	sbuf_release(&line);
}

/* A program without a resume record: the checkpoint is the step before
 * its first step record; a cut last line and lines that are no record
 * are skipped. */
static void attempt_restart__takes_a_programs_first_step_record_for_its_checkpoint(void **state)
{
	json_t *in = record();

	(void)state;
	figures(in,
		"not json\n"
		"{\"event\":\"epoch\",\"epoch\":1}\n"
		"{\"event\":\"step\",\"step\":9,\"loss\":0.5}\n"
		"{\"event\":\"step\",\"step\":10,",
		NULL);
	assert_null(json_object_get(in, "checkpoint_load_s"));
	assert_null(json_object_get(in, "first_step_s"));
	assert_int_equal(json_integer_value(json_object_get(in, "first_step")), 9);
	assert_int_equal(json_integer_value(json_object_get(in, "lost_steps")), 4);
	json_decref(in);
}

/* Nothing logged yet (or a failed preflight: no old step), a checkpoint
 * past the old attempt's last step: no figure made up, none below 0. */
static void attempt_restart__makes_up_no_figure_and_none_below_zero(void **state)
{
	json_t *in = record(), *none = record();
	struct sbuf line = SBUF_INIT;

	(void)state;
	figures(none, "", "{\"rank\":0,\"first_heartbeat\":null}");
	assert_null(json_object_get(none, "first_step"));
	assert_null(json_object_get(none, "first_step_at"));
	assert_null(json_object_get(none, "lost_steps"));
	attempt_restart_format(none, 2, &line);
	assert_null(strstr(line.buf, "steps lost"));
	figures(in, "{\"event\":\"resume\",\"checkpoint_step\":14,\"load_s\":0.5}\n", NULL);
	assert_int_equal(json_integer_value(json_object_get(in, "lost_steps")), 0);
	json_object_set_new(in, "last_step", json_null());
	json_object_del(in, "lost_steps");
	figures(in, "{\"event\":\"step\",\"step\":1}\n", NULL);
	assert_null(json_object_get(in, "lost_steps"));
	json_decref(in);
	json_decref(none);
	sbuf_release(&line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attempt_restart__finds_the_trainers_load_first_step_and_lost_steps),
		cmocka_unit_test(attempt_restart__takes_a_programs_first_step_record_for_its_checkpoint),
		cmocka_unit_test(attempt_restart__makes_up_no_figure_and_none_below_zero),
	};

	return cmocka_run_group_tests_name("test_attempt_restart", tests, NULL, NULL);
}
