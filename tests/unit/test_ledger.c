/* test_ledger.c - launcher/doctor/ledger: cooldowns, cooling lists, forgetting,
 * checking, the table, and the file under concurrent writers.
 * Works in a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/exitcode.h" // defines: HPT_EXIT_IO
#include "common/fileio.h"   // defines: fileio_write_atomic, fileio_read
#include "common/sbuf.h"     // defines: struct sbuf, xasprintf
#include "launcher/doctor/ledger.h" // defines: ledger_*

#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOUR 3600
/* 2026-11-24 12:50:00 UTC */
#define T0 ((time_t)1795524600)

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_ledger");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static json_int_t field(const json_t *doc, const char *cluster, const char *node, const char *key)
{
	const json_t *e = ledger_entry(doc, cluster, node);

	assert_non_null(e);
	return json_integer_value(json_object_get(e, key));
}

static void fail_at(json_t *doc, const char *cluster, const char *node, const char *reason,
		    time_t now)
{
	struct ledger_event ev = { .node = node, .failed = true, .reason = reason, .score = -1 };

	ledger_record(doc, cluster, &ev, 1, now);
}

static void pass_at(json_t *doc, const char *cluster, const char *node, double score, time_t now)
{
	struct ledger_event ev = { .node = node, .failed = false, .score = score };

	ledger_record(doc, cluster, &ev, 1, now);
}

static void ledger__cooldown_doubles_from_an_hour_and_stops_at_a_week(void **state)
{
	static const long want[] = { 1 * HOUR,  2 * HOUR,  4 * HOUR,   8 * HOUR,   16 * HOUR,
				     32 * HOUR, 64 * HOUR, 128 * HOUR, 168 * HOUR, 168 * HOUR };
	json_t *doc = ledger_new();

	(void)state;
	assert_int_equal(ledger_cooldown(0), 0);
	/* an hour apart: each failure counts (see ledger__failures_at_once_count_once) */
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		time_t now = T0 + (time_t)i * HOUR;

		fail_at(doc, "c", "n1", "nics: mlx5_0 port 1 is DOWN", now);
		assert_int_equal(field(doc, "c", "n1", "failures"), i + 1);
		assert_int_equal(field(doc, "c", "n1", "cooldown_s"), want[i]);
		assert_int_equal(field(doc, "c", "n1", "until"), now + want[i]);
		assert_int_equal(field(doc, "c", "n1", "last_failure"), now);
	}
	assert_int_equal(ledger_cooldown(1000000), LEDGER_COOLDOWN_MAX_S);
	json_decref(doc);
}

static void ledger__a_pass_keeps_the_cooldown_and_notes_the_streak(void **state)
{
	json_t *doc = ledger_new();
	const json_t *e;

	(void)state;
	fail_at(doc, "c", "n1", "gpus: 7 of 8 visible", T0);
	pass_at(doc, "c", "n1", 0.9, T0 + 60);
	e = ledger_entry(doc, "c", "n1");
	assert_int_equal(field(doc, "c", "n1", "checks"), 2);
	assert_int_equal(field(doc, "c", "n1", "failures"), 1);
	assert_int_equal(field(doc, "c", "n1", "cooldown_s"), HOUR);
	assert_int_equal(field(doc, "c", "n1", "until"), T0 + HOUR);
	assert_int_equal(field(doc, "c", "n1", "last_ok"), T0 + 60);
	assert_int_equal(field(doc, "c", "n1", "last_checked"), T0 + 60);
	assert_int_equal(field(doc, "c", "n1", "last_failure"), T0);
	assert_true(json_real_value(json_object_get(e, "last_score")) == 0.9);
	assert_string_equal(json_string_value(json_object_get(e, "reason")), "gpus: 7 of 8 visible");
	/* A passing node that never failed has no failure fields at all. */
	pass_at(doc, "c", "n2", -1, T0);
	e = ledger_entry(doc, "c", "n2");
	assert_null(json_object_get(e, "failures"));
	assert_null(json_object_get(e, "until"));
	assert_null(json_object_get(e, "last_score"));
	assert_int_equal(json_object_size(e), 3); /* checks, last_checked, last_ok */
	json_decref(doc);
}

static void ledger__cooling_lists_nodes_before_their_until_sorted(void **state)
{
	json_t *doc = ledger_new();
	const char **nodes;

	(void)state;
	fail_at(doc, "c", "n-b", NULL, T0);
	fail_at(doc, "c", "n-c", NULL, T0);
	fail_at(doc, "c", "n-a", NULL, T0 - HOUR);
	fail_at(doc, "c", "n-a", NULL, T0); /* second failure: two hours */
	pass_at(doc, "c", "n-ok", 1, T0);
	fail_at(doc, "other", "n-z", NULL, T0);

	assert_int_equal(ledger_cooling(doc, "c", T0 + HOUR - 1, &nodes), 3);
	assert_string_equal(nodes[0], "n-a");
	assert_string_equal(nodes[1], "n-b");
	assert_string_equal(nodes[2], "n-c");
	free(nodes);
	/* At until the cooldown is over. */
	assert_int_equal(ledger_cooling(doc, "c", T0 + HOUR, &nodes), 1);
	assert_string_equal(nodes[0], "n-a");
	free(nodes);
	assert_int_equal(ledger_cooling(doc, "c", T0 + 2 * HOUR, &nodes), 0);
	assert_null(nodes);
	assert_int_equal(ledger_cooling(doc, "nowhere", T0, &nodes), 0);
	assert_null(nodes);
	json_decref(doc);
}

/* What submit says of a node it leaves out: why, and for how long,
 * rounded up to whole minutes. */
static void ledger__cooling_note_says_why_and_for_how_long(void **state)
{
	json_t *doc = ledger_new();
	struct sbuf out = SBUF_INIT;

	(void)state;
	fail_at(doc, "c", "n1", "nics: mlx5_0 port 1 is DOWN", T0);
	fail_at(doc, "c", "n1", "gpus: /dev/nvidia1 is missing", T0 + 1200);
	ledger_cooling_note(ledger_entry(doc, "c", "n1"), "n1", T0 + 1200 + 30, &out);
	assert_string_equal(out.buf, "excluding n1: it failed doctor 2 time(s), last: gpus: "
			    "/dev/nvidia1 is missing; cooling down for 120 min more ('hpctrain "
			    "doctor --forget n1' clears it)");
	sbuf_release(&out);
	json_decref(doc);
}

static void ledger__forget_one_cluster_or_every_one(void **state)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc = ledger_new();

	(void)state;
	fail_at(doc, "c1", "n1", NULL, T0);
	fail_at(doc, "c1", "n2", NULL, T0);
	fail_at(doc, "c2", "n1", NULL, T0);
	assert_int_equal(ledger_forget(doc, "c1", "n1"), 1);
	assert_null(ledger_entry(doc, "c1", "n1"));
	assert_non_null(ledger_entry(doc, "c1", "n2"));
	assert_non_null(ledger_entry(doc, "c2", "n1"));
	assert_int_equal(ledger_forget(doc, "c1", "n1"), 0);

	fail_at(doc, "c1", "n1", NULL, T0);
	assert_int_equal(ledger_forget(doc, NULL, "n1"), 2);
	assert_null(ledger_entry(doc, "c1", "n1"));
	assert_null(ledger_entry(doc, "c2", "n1"));
	/* c2 is left empty, and goes with its last node; c1 still has n2. */
	assert_null(json_object_get(json_object_get(doc, "clusters"), "c2"));
	assert_non_null(ledger_entry(doc, "c1", "n2"));
	assert_int_equal(ledger_forget(doc, NULL, "nobody"), 0);
	assert_int_equal(ledger_check(doc, &err), 0);
	sbuf_release(&err);
	json_decref(doc);
}

static void ledger__check_refuses_malformed_documents(void **state)
{
	static const struct {
		const char *json, *want;
	} bad[] = {
		{ "[]", "the node ledger is not a JSON object" },
		{ "{\"clusters\": {}}", "version is not 1" },
		{ "{\"version\": 2, \"clusters\": {}}", "version is not 1" },
		{ "{\"version\": \"1\", \"clusters\": {}}", "version is not 1" },
		{ "{\"version\": 1}", "no \"clusters\" object" },
		{ "{\"version\": 1, \"clusters\": []}", "no \"clusters\" object" },
		{ "{\"version\": 1, \"clusters\": {\"c\": []}}", "cluster \"c\" is not an object" },
		{ "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": 3}}}",
		  "node \"n1\" of cluster \"c\" is not an object" },
		{ "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": {\"until\": -1}}}}",
		  "node \"n1\" of cluster \"c\": \"until\" is not a non-negative integer" },
		{ "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": {\"checks\": 1.5}}}}",
		  "\"checks\" is not a non-negative integer" },
		{ "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": {\"reason\": 3}}}}",
		  "\"reason\" is not a string" },
		{ "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": {\"last_score\": \"x\"}}}}",
		  "\"last_score\" is not a number" },
	};
	struct sbuf err = SBUF_INIT;
	json_t *doc = ledger_new();

	(void)state;
	assert_int_equal(ledger_check(doc, &err), 0);
	fail_at(doc, "c", "n1", "r", T0);
	pass_at(doc, "c", "n1", 1, T0);
	/* A later version's extra field is kept, not refused. */
	json_object_set_new((json_t *)ledger_entry(doc, "c", "n1"), "drained", json_true());
	assert_int_equal(ledger_check(doc, &err), 0);
	assert_string_equal(err.buf, "");
	json_decref(doc);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		doc = json_loads(bad[i].json, JSON_DECODE_ANY, NULL);
		assert_non_null(doc);
		sbuf_reset(&err);
		assert_int_equal(ledger_check(doc, &err), -1);
		if (!strstr(err.buf, bad[i].want))
			fail_msg("%s: got \"%s\", want \"%s\"", bad[i].json, err.buf, bad[i].want);
		json_decref(doc);
	}
	sbuf_release(&err);
}

static void ledger__format_says_empty_or_shows_a_line_per_node(void **state)
{
	static const char want[] =
		"CLUSTER  NODE   FAILURES  CHECKS  SCORE  STATE                                         REASON\n"
		"alpha    gpu-a  0         1       1.00   ok                                            -\n"
		"alpha    gpu-b  2         2       0.97   cooling until 2026-11-24 14:30 (1h 40m left)  nics: mlx5_0 port 1 is DOWN\n"
		"beta     n1     1         1       -      cooling until 2026-11-24 13:49 (59m left)     gemm: 0.42 of the fastest\n"
		"beta     n2     9         9       -      cooling until 2026-11-30 12:50 (6d 0h left)   -\n";
	struct sbuf out = SBUF_INIT;
	struct ledger_event ev = { "gpu-b", true, "nics: mlx5_0 port 1 is DOWN", 0.97 };
	json_t *doc = ledger_new();

	(void)state;
	ledger_format(doc, T0, &out);
	assert_string_equal(out.buf, "the ledger is empty\n");

	pass_at(doc, "alpha", "gpu-a", 1, T0 - 2 * HOUR);
	fail_at(doc, "alpha", "gpu-b", "nics: mlx5_0 port 1 is DOWN", T0 - 2 * HOUR);
	ledger_record(doc, "alpha", &ev, 1, T0 - 1200);
	fail_at(doc, "beta", "n1", "gemm: 0.42 of the fastest", T0 - 60);
	for (int i = 0; i < 9; i++) /* hours apart; the ninth: a week, from a day ago */
		fail_at(doc, "beta", "n2", NULL, T0 - (32 - i) * HOUR);
	sbuf_reset(&out);
	ledger_format(doc, T0, &out);
	assert_string_equal(out.buf, want);
	sbuf_release(&out);
	json_decref(doc);
}

/* Four doctors failing one node at once double its cooldown once: a
 * failure within LEDGER_SAME_FAILURE_S of the cooldown's start is that
 * failure again; the window does not slide with each failure. */
static void ledger__failures_at_once_count_once(void **state)
{
	static const time_t at[] = { 0, 10, 30, LEDGER_SAME_FAILURE_S - 1 };
	json_t *doc = ledger_new();
	const json_t *e;

	(void)state;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		fail_at(doc, "c", "n1", i < 3 ? "nics: mlx5_0 port 1 is DOWN" : "gpus: 7 of 8",
			T0 + at[i]);
	e = ledger_entry(doc, "c", "n1");
	assert_int_equal(field(doc, "c", "n1", "failures"), 1);
	assert_int_equal(field(doc, "c", "n1", "checks"), 4);
	assert_int_equal(field(doc, "c", "n1", "cooldown_s"), HOUR);
	assert_int_equal(field(doc, "c", "n1", "until"), T0 + HOUR);
	assert_int_equal(field(doc, "c", "n1", "last_failure"), T0 + LEDGER_SAME_FAILURE_S - 1);
	assert_string_equal(json_string_value(json_object_get(e, "reason")), "gpus: 7 of 8");
	/* the window is the cooldown's first ten minutes, then a failure counts */
	fail_at(doc, "c", "n1", NULL, T0 + LEDGER_SAME_FAILURE_S);
	assert_int_equal(field(doc, "c", "n1", "failures"), 2);
	assert_int_equal(field(doc, "c", "n1", "cooldown_s"), 2 * HOUR);
	assert_int_equal(field(doc, "c", "n1", "until"), T0 + LEDGER_SAME_FAILURE_S + 2 * HOUR);
	/* ... and starts a window of its own */
	fail_at(doc, "c", "n1", NULL, T0 + LEDGER_SAME_FAILURE_S + 60);
	assert_int_equal(field(doc, "c", "n1", "failures"), 2);
	/* another node is another failure */
	fail_at(doc, "c", "n2", NULL, T0 + 10);
	assert_int_equal(field(doc, "c", "n2", "failures"), 1);
	json_decref(doc);
}

#define Y5138 "99999999999" /* epoch seconds in the year 5138 */

/* A cooldown is never longer than the policy's week, whoever wrote it. */
static void ledger__until_beyond_a_week_is_clamped(void **state)
{
	static const char text[] = "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": {\"failures\": 3, "
				   "\"until\": " Y5138 ", \"cooldown_s\": 99999999}, \"n2\": {\"until\": 5}}}}\n";
	char *path = testlib_tmp_at("far.json");
	struct sbuf err = SBUF_INIT, out = SBUF_INIT;
	json_t *doc = json_loads(text, 0, NULL);
	time_t now;

	(void)state;
	assert_int_equal(ledger_clamp(doc, T0), 1);
	assert_int_equal(field(doc, "c", "n1", "until"), T0 + LEDGER_COOLDOWN_MAX_S);
	assert_int_equal(field(doc, "c", "n1", "cooldown_s"), LEDGER_COOLDOWN_MAX_S);
	assert_int_equal(field(doc, "c", "n2", "until"), 5);
	assert_int_equal(ledger_clamp(doc, T0), 0);
	ledger_format(doc, T0, &out);
	assert_non_null(strstr(out.buf, "cooling until 2026-12-01 12:50 (7d 0h left)"));
	json_decref(doc);
	/* recording clamps every entry, not only the nodes recorded */
	doc = json_loads(text, 0, NULL);
	pass_at(doc, "c", "n3", 1, T0);
	assert_int_equal(field(doc, "c", "n1", "until"), T0 + LEDGER_COOLDOWN_MAX_S);
	json_decref(doc);
	/* and so does reading the file */
	assert_int_equal(fileio_write_atomic(path, text, strlen(text), 0600, 0, &err), 0);
	now = time(NULL);
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	assert_true(field(doc, "c", "n1", "until") >= now + LEDGER_COOLDOWN_MAX_S);
	assert_true(field(doc, "c", "n1", "until") <= time(NULL) + LEDGER_COOLDOWN_MAX_S);
	json_decref(doc);
	sbuf_release(&out);
	sbuf_release(&err);
	free(path);
}

/* The table and submit's note show what a terminal would act on
 * escaped: a ledger is a file anyone may have written. */
static void ledger__table_and_note_escape_control_characters(void **state)
{
	static const char reason[] = "nics: \x1b[2J\x1b]0;owned\x07 \xc2\x9b" "1m down\\ \r\n";
	static const char want[] = "nics: \\x1b[2J\\x1b]0;owned\\x07 \\xc2\\x9b1m down\\ \\r\\n";
	struct sbuf out = SBUF_INIT;
	json_t *doc = ledger_new();

	(void)state;
	fail_at(doc, "c\x1b", "n\t1", reason, T0);
	ledger_format(doc, T0, &out);
	assert_null(strpbrk(out.buf, "\x1b\x07\r\t"));
	assert_null(strstr(out.buf, "\xc2\x9b"));
	assert_non_null(strstr(out.buf, "c\\x1b"));
	assert_non_null(strstr(out.buf, "n\\t1"));
	assert_non_null(strstr(out.buf, want));
	sbuf_reset(&out);
	ledger_cooling_note(ledger_entry(doc, "c\x1b", "n\t1"), "n\t1", T0, &out);
	assert_null(strpbrk(out.buf, "\x1b\x07\r\t\n"));
	assert_non_null(strstr(out.buf, "excluding n\\t1: it failed doctor 1 time(s), last: "));
	assert_non_null(strstr(out.buf, want));
	assert_non_null(strstr(out.buf, "'hpctrain doctor --forget n\\t1' clears it)"));
	sbuf_release(&out);
	json_decref(doc);
}

static void ledger__load_of_a_missing_file_is_an_empty_ledger(void **state)
{
	char *paths[] = { testlib_tmp_at("missing.json"), testlib_tmp_at("no/such/dir/nodes.json") };
	struct sbuf err = SBUF_INIT;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		json_t *doc = NULL, *empty = ledger_new();

		assert_int_equal(ledger_load(paths[i], &doc, &err), 0);
		assert_true(json_equal(doc, empty));
		assert_false(fileio_exists(paths[i]));
		json_decref(doc);
		json_decref(empty);
		free(paths[i]);
	}
	assert_string_equal(err.buf, "");
	sbuf_release(&err);
}

static void ledger__load_of_a_corrupt_file_names_path_line_and_column(void **state)
{
	static const char broken[] = "{\n \"version\": 1,\n \"clusters\": {\n  \"c\": {,\n";
	static const char wrong[] = "{\"version\": 1, \"clusters\": {\"c\": {\"n1\": []}}}\n";
	char *path = testlib_tmp_at("corrupt.json"), *want;
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL;

	(void)state;
	assert_int_equal(fileio_write_atomic(path, broken, strlen(broken), 0600, 0, &err), 0);
	assert_int_equal(ledger_load(path, &doc, &err), HPT_EXIT_IO);
	assert_null(doc);
	want = xasprintf("%s:4:", path);
	if (strncmp(err.buf, want, strlen(want)))
		fail_msg("got \"%s\", want it to start \"%s\"", err.buf, want);
	assert_non_null(strstr(err.buf, "not a node ledger"));
	free(want);

	sbuf_reset(&err);
	assert_int_equal(fileio_write_atomic(path, wrong, strlen(wrong), 0600, 0, &err), 0);
	assert_int_equal(ledger_load(path, &doc, &err), HPT_EXIT_IO);
	want = xasprintf("%s: node \"n1\" of cluster \"c\" is not an object", path);
	assert_string_equal(err.buf, want);
	free(want);
	sbuf_release(&err);
	free(path);
}

struct record_arg {
	const char *cluster;
	struct ledger_event ev;
	time_t now;
	int status; /* what the update returns */
};

static int record(json_t *doc, void *p)
{
	struct record_arg *a = p;

	ledger_record(doc, a->cluster, &a->ev, 1, a->now);
	return a->status;
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void ledger__update_writes_pretty_private_json_or_nothing(void **state)
{
	char *dir = testlib_tmp_at("state/hpctrain"), *path = testlib_tmp_at("state/hpctrain/nodes.json");
	char *lock = xasprintf("%s.lock", path);
	struct record_arg a = { "c", { "n1", true, "disks: /tmp is full", 0.5 }, T0, 0 };
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	json_t *doc = NULL;
	mode_t old = umask(022);

	(void)state;
	assert_int_equal(ledger_update(path, record, &a, &err), 0);
	umask(old);
	assert_int_equal(mode_of(dir), 0700);
	assert_int_equal(mode_of(path), 0600);
	assert_int_equal(mode_of(lock), 0600);
	assert_int_equal(fileio_read(path, 1 << 20, &text, &err), 0);
	assert_string_equal(text.buf, "{\n"
				      " \"clusters\": {\n"
				      "  \"c\": {\n"
				      "   \"n1\": {\n"
				      "    \"checks\": 1,\n"
				      "    \"cooldown_s\": 3600,\n"
				      "    \"failures\": 1,\n"
				      "    \"last_checked\": 1795524600,\n"
				      "    \"last_failure\": 1795524600,\n"
				      "    \"last_score\": 0.5,\n"
				      "    \"reason\": \"disks: /tmp is full\",\n"
				      "    \"until\": 1795528200\n"
				      "   }\n"
				      "  }\n"
				      " },\n"
				      " \"version\": 1\n"
				      "}\n");

	/* fn's failure is returned, and the file stays as it was. */
	a.status = 42;
	a.ev.node = "n2";
	assert_int_equal(ledger_update(path, record, &a, &err), 42);
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	assert_non_null(ledger_entry(doc, "c", "n1"));
	assert_null(ledger_entry(doc, "c", "n2"));
	json_decref(doc);
	sbuf_release(&text);
	sbuf_release(&err);
	free(lock);
	free(path);
	free(dir);
}

static void ledger__path_follows_the_environment(void **state)
{
	static const char *const names[] = { "HPCTRAIN_LEDGER", "XDG_STATE_HOME", "HOME" };
	char *saved[3];
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	for (int i = 0; i < 3; i++) {
		saved[i] = getenv(names[i]) ? xstrdup(getenv(names[i])) : NULL;
		unsetenv(names[i]);
	}
	assert_int_equal(ledger_path(&out, &err), -1);
	assert_non_null(strstr(err.buf, "HOME"));
	setenv("HOME", "/home/u", 1);
	assert_int_equal(ledger_path(&out, &err), 0);
	assert_string_equal(out.buf, "/home/u/.local/state/hpctrain/nodes.json");
	/* A relative XDG_STATE_HOME is ignored, as the XDG rules say. */
	setenv("XDG_STATE_HOME", "rel", 1);
	sbuf_reset(&out);
	assert_int_equal(ledger_path(&out, &err), 0);
	assert_string_equal(out.buf, "/home/u/.local/state/hpctrain/nodes.json");
	setenv("XDG_STATE_HOME", "/st", 1);
	sbuf_reset(&out);
	assert_int_equal(ledger_path(&out, &err), 0);
	assert_string_equal(out.buf, "/st/hpctrain/nodes.json");
	setenv("HPCTRAIN_LEDGER", "/x/l.json", 1);
	sbuf_reset(&out);
	assert_int_equal(ledger_path(&out, &err), 0);
	assert_string_equal(out.buf, "/x/l.json");
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(names[i], saved[i], 1);
		else
			unsetenv(names[i]);
		free(saved[i]);
	}
	sbuf_release(&out);
	sbuf_release(&err);
}

#define WRITERS 8
#define UPDATES 25

/* One writer: UPDATES doctor runs that each record its own node. */
static void writer(const char *path, int id)
{
	char node[16];
	struct record_arg a = { "c", { node, id % 2, "r", 0.5 }, T0, 0 };
	struct sbuf err = SBUF_INIT;

	snprintf(node, sizeof(node), "n%d", id);
	for (int i = 0; i < UPDATES; i++) {
		a.now = T0 + (time_t)i * HOUR; /* each failure counts */
		if (ledger_update(path, record, &a, &err)) {
			fprintf(stderr, "writer %d: %s\n", id, err.buf);
			_exit(1);
		}
	}
	_exit(0);
}

static void ledger__concurrent_writers_lose_no_record(void **state)
{
	char *path = testlib_tmp_at("shared/nodes.json"), *pat = testlib_tmp_at("shared/*.tmp.*");
	pid_t pids[WRITERS];
	int live = WRITERS, loads = 0;
	struct sbuf err = SBUF_INIT;
	json_int_t checks = 0;
	json_t *doc;
	glob_t g;

	(void)state;
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (!pids[i])
			writer(path, i);
	}
	/* While they write, every read sees a whole ledger. */
	while (live) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid > 0) {
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			live--;
		}
		if (ledger_load(path, &doc, &err))
			fail_msg("load %d: %s", loads, err.buf);
		json_decref(doc);
		loads++;
	}
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	for (int i = 0; i < WRITERS; i++) {
		char node[16];

		snprintf(node, sizeof(node), "n%d", i);
		assert_int_equal(field(doc, "c", node, "checks"), UPDATES);
		assert_int_equal(field(doc, "c", node, "failures"), i % 2 ? UPDATES : 0);
		checks += field(doc, "c", node, "checks");
	}
	assert_int_equal(checks, WRITERS * UPDATES);
	assert_int_equal(json_object_size(json_object_get(json_object_get(doc, "clusters"), "c")),
			 WRITERS);
	/* No writer left a temporary file behind. */
	assert_int_equal(glob(pat, 0, NULL, &g), GLOB_NOMATCH);
	print_message("%d loads while %d writers made %d updates\n", loads, WRITERS,
		      WRITERS * UPDATES);
	json_decref(doc);
	sbuf_release(&err);
	free(pat);
	free(path);
}

/* Writers that fail one node at once, as doctors of jobs started
 * together do: one failure, one hour, every check counted. */
static void ledger__concurrent_failures_of_one_node_count_once(void **state)
{
	char *path = testlib_tmp_at("once/nodes.json");
	pid_t pids[WRITERS];
	struct sbuf err = SBUF_INIT;
	json_t *doc;

	(void)state;
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (!pids[i]) {
			struct record_arg a = { "c", { "bad", true, "nics: down", 0.5 }, T0 + i, 0 };

			_exit(ledger_update(path, record, &a, &err) ? 1 : 0);
		}
	}
	for (int i = 0; i < WRITERS; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	assert_int_equal(field(doc, "c", "bad", "checks"), WRITERS);
	assert_int_equal(field(doc, "c", "bad", "failures"), 1);
	assert_int_equal(field(doc, "c", "bad", "cooldown_s"), HOUR);
	json_decref(doc);
	sbuf_release(&err);
	free(path);
}

static int forget_n1(json_t *doc, void *arg)
{
	(void)arg;
	return ledger_forget(doc, NULL, "n1") ? 0 : 1;
}

static int clear_all(json_t *doc, void *arg)
{
	(void)arg;
	json_object_set_new(doc, "clusters", json_object());
	return 0;
}

/* The one backup in dir matching pattern, its name malloc'd. */
static char *one_backup(const char *pattern)
{
	char *pat = testlib_tmp_at(pattern), *name;
	glob_t g;

	assert_int_equal(glob(pat, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	name = xstrdup(g.gl_pathv[0]);
	globfree(&g);
	free(pat);
	return name;
}

/* A corrupt ledger fails every update (exit 8), but a repair keeps it
 * aside, whole and private, and starts an empty one. */
static void ledger__repair_keeps_a_corrupt_file_aside_and_starts_empty(void **state)
{
	static const char broken[] = "{\n \"version\": 1,\n \"clusters\": {\n  \"c\": {,\n";
	char *path = testlib_tmp_at("fix/nodes.json"), *dir = testlib_tmp_at("fix"), *kept;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT, text = SBUF_INIT;
	struct record_arg a = { "c", { "n2", true, "r", 0.5 }, T0, 0 };
	json_t *doc, *empty = ledger_new();

	(void)state;
	assert_int_equal(fileio_mkdirs(dir, 0700, &err), 0);
	assert_int_equal(fileio_write_atomic(path, broken, strlen(broken), 0644, 0, &err), 0);
	assert_int_equal(ledger_update(path, record, &a, &err), HPT_EXIT_IO);
	/* n1 went with the corrupt file: fn's "not there" is returned */
	assert_int_equal(ledger_repair(path, 0, forget_n1, NULL, &note, &err), 1);
	kept = one_backup("fix/nodes.json.corrupt-*");
	assert_non_null(strstr(note.buf, ":4:"));
	assert_non_null(strstr(note.buf, "not a node ledger"));
	assert_non_null(strstr(note.buf, kept));
	assert_int_equal(mode_of(kept), 0600);
	assert_int_equal(fileio_read(kept, 1 << 20, &text, &err), 0);
	assert_string_equal(text.buf, broken);
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	assert_true(json_equal(doc, empty));
	json_decref(doc);
	/* a whole ledger is left as it is, and fn's "not there" returned */
	sbuf_reset(&note);
	assert_int_equal(ledger_update(path, record, &a, &err), 0);
	assert_int_equal(ledger_repair(path, 0, forget_n1, NULL, &note, &err), 1);
	assert_string_equal(note.buf, "");
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	assert_non_null(ledger_entry(doc, "c", "n2"));
	json_decref(doc);
	json_decref(empty);
	sbuf_release(&err);
	sbuf_release(&note);
	sbuf_release(&text);
	free(kept);
	free(dir);
	free(path);
}

static void ledger__reset_keeps_a_whole_ledger_aside(void **state)
{
	char *path = testlib_tmp_at("reset/nodes.json"), *kept;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;
	struct record_arg a = { "c", { "n1", true, "r", 0.5 }, T0, 0 };
	json_t *doc;

	(void)state;
	assert_int_equal(ledger_update(path, record, &a, &err), 0);
	assert_int_equal(ledger_repair(path, LEDGER_REPAIR_RESET, clear_all, NULL, &note, &err), 0);
	kept = one_backup("reset/nodes.json.reset-*");
	assert_non_null(strstr(note.buf, kept));
	assert_int_equal(ledger_load(path, &doc, &err), 0);
	assert_null(ledger_entry(doc, "c", "n1"));
	json_decref(doc);
	assert_int_equal(ledger_load(kept, &doc, &err), 0);
	assert_non_null(ledger_entry(doc, "c", "n1"));
	json_decref(doc);
	sbuf_release(&err);
	sbuf_release(&note);
	free(kept);
	free(path);
}

/* A user's own link to a ledger elsewhere stays a link: the file it
 * names is rewritten, and locked beside it. */
static void ledger__a_symlinked_ledger_is_rewritten_where_it_points(void **state)
{
	char *target = testlib_tmp_at("real/nodes.json"), *link = testlib_tmp_at("link/nodes.json");
	char *lock = xasprintf("%s.lock", target), *dir = testlib_tmp_at("link");
	struct record_arg a = { "c", { "n1", true, "r", 0.5 }, T0, 0 };
	struct sbuf err = SBUF_INIT;
	struct stat st;
	json_t *doc;

	(void)state;
	assert_int_equal(ledger_update(target, record, &a, &err), 0);
	assert_int_equal(fileio_mkdirs(dir, 0700, &err), 0);
	assert_int_equal(symlink(target, link), 0);
	a.ev.node = "n2";
	assert_int_equal(ledger_update(link, record, &a, &err), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(ledger_load(target, &doc, &err), 0);
	assert_non_null(ledger_entry(doc, "c", "n1"));
	assert_non_null(ledger_entry(doc, "c", "n2"));
	json_decref(doc);
	assert_true(fileio_exists(lock));
	sbuf_release(&err);
	free(dir);
	free(lock);
	free(link);
	free(target);
}

/* In a directory others can write, nothing planted there is followed,
 * created through, or believed. */
static void ledger__refuses_a_planted_lock_link_a_dangling_link_and_another_users_file(void **state)
{
	char *path = testlib_tmp_at("shared-dir/nodes.json"), *lock = xasprintf("%s.lock", path);
	char *victim = testlib_tmp_at("victim"), *dangling = testlib_tmp_at("shared-dir/other.json");
	char *dir = testlib_tmp_at("shared-dir");
	struct record_arg a = { "c", { "n1", true, "r", 0.5 }, T0, 0 };
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL;

	(void)state;
	assert_int_equal(fileio_mkdirs(dir, 0777, &err), 0);
	assert_int_equal(symlink(victim, lock), 0);
	assert_int_equal(ledger_update(path, record, &a, &err), HPT_EXIT_IO);
	assert_non_null(strstr(err.buf, ".lock is a symbolic link: refusing to follow it"));
	sbuf_reset(&err);
	assert_int_equal(ledger_load(path, &doc, &err), HPT_EXIT_IO);
	assert_false(fileio_exists(victim));
	assert_int_equal(unlink(lock), 0);
	/* a link to nothing would create its target */
	assert_int_equal(symlink(victim, dangling), 0);
	sbuf_reset(&err);
	assert_int_equal(ledger_update(dangling, record, &a, &err), HPT_EXIT_IO);
	assert_non_null(strstr(err.buf, "is a symbolic link to nothing"));
	assert_false(fileio_exists(victim));
	/* another user's ledger or lock */
	if (geteuid() != 0) {
		print_message("not root: another user's file is not tried\n");
		goto out;
	}
	assert_int_equal(ledger_update(path, record, &a, &err), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	sbuf_reset(&err);
	assert_int_equal(ledger_load(path, &doc, &err), HPT_EXIT_IO);
	assert_non_null(strstr(err.buf, "nodes.json: it belongs to uid 65534, not to uid 0"));
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chown(lock, 65534, 65534), 0);
	sbuf_reset(&err);
	assert_int_equal(ledger_update(path, record, &a, &err), HPT_EXIT_IO);
	assert_non_null(strstr(err.buf, ".lock: it belongs to uid 65534"));
out:
	sbuf_release(&err);
	free(dir);
	free(dangling);
	free(victim);
	free(lock);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ledger__cooldown_doubles_from_an_hour_and_stops_at_a_week),
		cmocka_unit_test(ledger__a_pass_keeps_the_cooldown_and_notes_the_streak),
		cmocka_unit_test(ledger__cooling_lists_nodes_before_their_until_sorted),
		cmocka_unit_test(ledger__cooling_note_says_why_and_for_how_long),
		cmocka_unit_test(ledger__forget_one_cluster_or_every_one),
		cmocka_unit_test(ledger__check_refuses_malformed_documents),
		cmocka_unit_test(ledger__format_says_empty_or_shows_a_line_per_node),
		cmocka_unit_test(ledger__load_of_a_missing_file_is_an_empty_ledger),
		cmocka_unit_test(ledger__load_of_a_corrupt_file_names_path_line_and_column),
		cmocka_unit_test(ledger__update_writes_pretty_private_json_or_nothing),
		cmocka_unit_test(ledger__path_follows_the_environment),
		cmocka_unit_test(ledger__concurrent_writers_lose_no_record),
		cmocka_unit_test(ledger__failures_at_once_count_once),
		cmocka_unit_test(ledger__until_beyond_a_week_is_clamped),
		cmocka_unit_test(ledger__table_and_note_escape_control_characters),
		cmocka_unit_test(ledger__concurrent_failures_of_one_node_count_once),
		cmocka_unit_test(ledger__repair_keeps_a_corrupt_file_aside_and_starts_empty),
		cmocka_unit_test(ledger__reset_keeps_a_whole_ledger_aside),
		cmocka_unit_test(ledger__a_symlinked_ledger_is_rewritten_where_it_points),
		cmocka_unit_test(
			ledger__refuses_a_planted_lock_link_a_dangling_link_and_another_users_file),
	};

	return cmocka_run_group_tests_name("test_ledger", tests, setup, teardown);
}
