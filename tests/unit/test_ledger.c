/* test_ledger.c - launcher/ledger: cooldowns, cooling lists, forgetting,
 * checking, the table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/sbuf.h"     // defines: struct sbuf
#include "launcher/ledger.h" // defines: ledger_*

#include <stdlib.h>
#include <string.h>

#define HOUR 3600
/* 2026-11-24 12:50:00 UTC */
#define T0 ((time_t)1795524600)

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
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		time_t now = T0 + (time_t)i * 60;

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
	fail_at(doc, "c", "n-a", NULL, T0 - 60);
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
	for (int i = 0; i < 9; i++) /* the ninth: a week, from a day ago */
		fail_at(doc, "beta", "n2", NULL, T0 - 24 * HOUR);
	sbuf_reset(&out);
	ledger_format(doc, T0, &out);
	assert_string_equal(out.buf, want);
	sbuf_release(&out);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ledger__cooldown_doubles_from_an_hour_and_stops_at_a_week),
		cmocka_unit_test(ledger__a_pass_keeps_the_cooldown_and_notes_the_streak),
		cmocka_unit_test(ledger__cooling_lists_nodes_before_their_until_sorted),
		cmocka_unit_test(ledger__forget_one_cluster_or_every_one),
		cmocka_unit_test(ledger__check_refuses_malformed_documents),
		cmocka_unit_test(ledger__format_says_empty_or_shows_a_line_per_node),
	};

	return cmocka_run_group_tests_name("test_ledger", tests, NULL, NULL);
}
