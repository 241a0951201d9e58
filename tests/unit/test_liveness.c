/* test_liveness.c - launcher/supervise/liveness: what status --ranks says
 * a supervised rank is doing, from its rank-N.json record, how often
 * a record is rewritten, and the progress mark every rank shares. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "launcher/supervise/liveness.h" // defines: liveness_activity, liveness_period, liveness_mark_*
#include "common/sbuf.h"                 // defines: struct sbuf

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static void liveness__the_mark_is_looked_at_only_a_period_after_it_was_last_seen(void **state)
{
	(void)state;
	assert_true(liveness_mark_due(0, NOW, 5));
	assert_true(liveness_mark_due(NOW - 5, NOW, 5));
	assert_false(liveness_mark_due(NOW - 4.9, NOW, 5));
	assert_false(liveness_mark_due(NOW + 1, NOW, 5)); /* seen later than this progress */
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_mtime(const char *path, double t)
{
	struct timespec ts[2] = { { (time_t)t, 0 }, { (time_t)t, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* A mark over a period old is touched by the rank that progressed; one
 * that is younger is left alone (another rank keeps it fresh); reading
 * gives its mtime, and 0 for none or a link planted in its place. */
static void liveness__the_mark_stays_within_a_period_of_the_latest_progress(void **state)
{
	char dir[] = "/tmp/test_liveness.XXXXXX", path[64], link[80];
	struct sbuf err = SBUF_INIT;
	double t = wall(), seen;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(liveness_mark_read(dir) == 0);
	fd = liveness_mark_open(dir, &err);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "%s/progress", dir);

	set_mtime(path, t - 60);
	seen = liveness_mark_note(fd, 0, t, 5);
	assert_true(seen == t);
	assert_true(liveness_mark_read(dir) >= t - 1);

	set_mtime(path, t - 3);
	seen = liveness_mark_note(fd, 0, t, 5);
	assert_true(seen == (double)(time_t)(t - 3));
	assert_true(liveness_mark_read(dir) == seen); /* not touched */
	assert_true(liveness_mark_note(fd, seen, t + 1, 5) == seen); /* not even looked at */
	close(fd);

	assert_int_equal(unlink(path), 0);
	snprintf(link, sizeof(link), "%s/elsewhere", dir);
	assert_int_equal(close(open(link, O_CREAT | O_WRONLY, 0600)), 0);
	assert_int_equal(symlink(link, path), 0);
	assert_true(liveness_mark_read(dir) == 0);
	assert_true(liveness_mark_open(dir, &err) < 0);
	unlink(path);
	unlink(link);
	rmdir(dir);
	sbuf_release(&err);
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
		cmocka_unit_test(liveness__the_mark_is_looked_at_only_a_period_after_it_was_last_seen),
		cmocka_unit_test(liveness__the_mark_stays_within_a_period_of_the_latest_progress),
		cmocka_unit_test(liveness__names_the_ranks_never_launched_and_those_starting_by_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
