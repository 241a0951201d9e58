/* test_liveness.c - launcher/supervise/liveness: what status --ranks says
 * a supervised rank is doing, from its rank-N.json record, and how often
 * a record is rewritten. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "launcher/supervise/liveness.h" // defines: liveness_activity, liveness_period
#include "common/sbuf.h"                  // defines: struct sbuf

#include <jansson.h>

#define NOW 1700000000.0

/* The activity of the record in JSON text at NOW. */
static void activity(const char *text, char *buf, size_t len)
{
	json_t *r = json_loads(text, 0, NULL);

	assert_non_null(r);
	liveness_activity(r, NOW, buf, len);
	json_decref(r);
}

static void liveness__a_running_rank_progresses_until_idle_past_two_periods(void **state)
{
	char buf[64], rec[160];

	(void)state;
	snprintf(rec, sizeof(rec), "{\"state\":\"running\",\"last_progress\":%.0f,"
		 "\"exit_status\":null,\"signal\":null}", NOW - 2 * LIVENESS_PERIOD_S);
	activity(rec, buf, sizeof(buf));
	assert_string_equal(buf, "progressing");
	snprintf(rec, sizeof(rec), "{\"state\":\"running\",\"last_progress\":%.0f}", NOW - 42);
	activity(rec, buf, sizeof(buf));
	assert_string_equal(buf, "idle 42s");
	/* no progress seen yet: not idle */
	activity("{\"state\":\"running\",\"last_progress\":null}", buf, sizeof(buf));
	assert_string_equal(buf, "progressing");
}

static void liveness__an_exited_rank_shows_its_status_and_signal(void **state)
{
	char buf[64];

	(void)state;
	activity("{\"state\":\"exited\",\"exit_status\":139,\"signal\":11}", buf, sizeof(buf));
	assert_string_equal(buf, "exited 139 (SIGSEGV)");
	activity("{\"state\":\"exited\",\"exit_status\":0,\"signal\":null}", buf, sizeof(buf));
	assert_string_equal(buf, "exited 0");
	activity("{\"state\":\"exited\",\"exit_status\":1}", buf, sizeof(buf));
	assert_string_equal(buf, "exited 1");
}

static void liveness__other_states_are_said_as_they_are(void **state)
{
	char buf[64], small[6];

	(void)state;
	activity("{\"state\":\"stalled\",\"last_progress\":1}", buf, sizeof(buf));
	assert_string_equal(buf, "stalled");
	activity("{\"state\":\"starting\"}", buf, sizeof(buf));
	assert_string_equal(buf, "starting");
	activity("{\"rank\":3}", buf, sizeof(buf));
	assert_string_equal(buf, "?");
	/* the buffer bounds the text */
	activity("{\"state\":\"preempting\"}", small, sizeof(small));
	assert_string_equal(small, "preem");
}

/* A record is never staler than half a stall it helps to judge (the
 * supervisor waits that period more before it calls the others idle). */
static void liveness__records_are_rewritten_within_half_a_short_stall(void **state)
{
	(void)state;
	assert_true(liveness_period(0) == LIVENESS_PERIOD_S);
	assert_true(liveness_period(600) == LIVENESS_PERIOD_S);
	assert_true(liveness_period(2 * LIVENESS_PERIOD_S) == LIVENESS_PERIOD_S);
	assert_true(liveness_period(6) == 3);
	assert_true(liveness_period(3) == 1.5);
	assert_true(liveness_period(1) == 1);
	assert_true(liveness_period(-1) == LIVENESS_PERIOD_S);
}

/* Ranks 0 and 4 (node1, node2) with no sign, rank 2 on node1 with a
 * heartbeat, rank 3 on node2 with output only; ranks 1 and 5 never
 * wrote a record. */
static void unstarted(bool output_counts, struct sbuf *out)
{
	static const char *const recs[] = {
		"{\"rank\": 0, \"node\": \"node1\", \"last_heartbeat\": null, \"last_output\": null}",
		"{\"rank\": 2, \"node\": \"node1\", \"last_heartbeat\": 5.5, \"last_output\": null}",
		"{\"rank\": 3, \"node\": \"node2\", \"last_heartbeat\": null, \"last_output\": 7.0}",
		"{\"rank\": 4, \"node\": \"node2\", \"last_heartbeat\": null, \"last_output\": null}",
	};
	json_t *v[4];

	for (size_t i = 0; i < 4; i++)
		assert_non_null(v[i] = json_loads(recs[i], 0, NULL));
	assert_false(liveness_has_started(v[0], true));
	assert_true(liveness_has_started(v[1], false));
	assert_int_equal(liveness_has_started(v[2], output_counts), output_counts);
	liveness_say_unstarted(v, 4, 6, output_counts, out);
	for (size_t i = 0; i < 4; i++)
		json_decref(v[i]);
}

static void liveness__names_the_ranks_never_launched_and_those_starting_by_node(void **state)
{
	struct sbuf out = SBUF_INIT;

	(void)state;
	unstarted(false, &out); /* the bundled trainer: output is no step */
	assert_string_equal(out.buf, "no record from ranks 1,5; starting: 0 on node1, 3,4 on node2");
	sbuf_reset(&out);
	unstarted(true, &out); /* a command: output is */
	assert_string_equal(out.buf, "no record from ranks 1,5; starting: 0 on node1, 4 on node2");
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(liveness__a_running_rank_progresses_until_idle_past_two_periods),
		cmocka_unit_test(liveness__an_exited_rank_shows_its_status_and_signal),
		cmocka_unit_test(liveness__other_states_are_said_as_they_are),
		cmocka_unit_test(liveness__records_are_rewritten_within_half_a_short_stall),
		cmocka_unit_test(liveness__names_the_ranks_never_launched_and_those_starting_by_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
