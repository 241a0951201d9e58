/* test_preflight.c - launcher/doctor/doctor_preflight: failed preflights
 * counted over a run's attempts, the exclude an attempt was submitted
 * with, and the decision to resubmit.  Works in a fresh directory under
 * $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/fileio.h"                    // defines: fileio_write_atomic, fileio_mkdirs, fileio_read
#include "common/sbuf.h"                      // defines: struct sbuf, xasprintf
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_*
#include "launcher/slurm/slurm.h"             // defines: hpt_slurm_node_names_free

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_preflight");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

/* Writes text to tmp/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char *path = testlib_tmp_at(rel), *dir = testlib_tmp_at(rel);
	struct sbuf err = SBUF_INIT;

	*strrchr(dir, '/') = '\0';
	assert_int_equal(fileio_mkdirs(dir, 0700, &err), 0);
	assert_int_equal(fileio_write_atomic(path, text, strlen(text), 0600, 0, &err), 0);
	sbuf_release(&err);
	free(dir);
	free(path);
}

/* Attempt 1 failed, 2 has no preflight.json (its step never ran), 3
 * failed, 4 was torn mid-write, 5 passed; 7 is past the gap at 6. */
static void preflight__counts_the_attempts_whose_preflight_failed(void **state)
{
	char *run = testlib_tmp_at("count");

	(void)state;
	put("count/preflight.json", "{\"ok\": false, \"exclude\": \"node2\"}");
	put("count/attempts/2/resolved.yaml", "version: 1\n");
	put("count/attempts/3/preflight.json", "{\"ok\": false}");
	put("count/attempts/4/preflight.json", "{\"ok\": fal");
	put("count/attempts/5/preflight.json", "{\"ok\": true}");
	put("count/attempts/7/preflight.json", "{\"ok\": false}");
	assert_int_equal(doctor_preflight_failures(run), 2);
	free(run);
}

static void preflight__counts_nothing_in_a_run_that_is_not_there(void **state)
{
	char *run = testlib_tmp_at("none");

	(void)state;
	assert_int_equal(doctor_preflight_failures(run), 0);
	free(run);
}

static void preflight__reads_the_exclude_an_attempt_was_submitted_with(void **state)
{
	struct sbuf out = SBUF_INIT;
	char *with = testlib_tmp_at("excl/with"), *without = testlib_tmp_at("excl/without");
	char *nokey = testlib_tmp_at("excl/nokey"), *torn = testlib_tmp_at("excl/torn");

	(void)state;
	put("excl/with/submit.json", "{\"job_id\": 12, \"exclude\": \"node[1-2]\", \"attempt\": 2}");
	put("excl/without/resolved.yaml", "version: 1\n");
	put("excl/nokey/submit.json", "{\"job_id\": 12, \"attempt\": 1}");
	put("excl/torn/submit.json", "{\"exclude\": \"node");
	doctor_preflight_exclude(with, &out);
	assert_string_equal(out.buf, "node[1-2]");
	sbuf_reset(&out);
	sbuf_addstr(&out, "x");
	doctor_preflight_exclude(without, &out);
	assert_string_equal(out.buf, "x");
	doctor_preflight_exclude(nokey, &out);
	assert_string_equal(out.buf, "x");
	doctor_preflight_exclude(torn, &out);
	assert_string_equal(out.buf, "x");
	sbuf_release(&out);
	free(with);
	free(without);
	free(nokey);
	free(torn);
}

/* A run R whose attempt 2 (submitted without node4) failed its
 * preflight on node2 and node3, as attempt 1 did. */
static char *make_run(void)
{
	put("plan/resolved.yaml", "version: 1\n");
	put("plan/preflight.json", "{\"ok\": false}");
	put("plan/attempts/2/resolved.yaml", "version: 1\n");
	put("plan/attempts/2/submit.json", "{\"exclude\": \"node4\"}");
	put("plan/attempts/2/preflight.json", "{\"ok\": false}");
	return testlib_tmp_at("plan/attempts/2");
}

static void preflight__resubmits_without_the_failed_nodes_and_the_old_exclude(void **state)
{
	const char *failed[] = { "node3", "node2" };
	struct sbuf run = SBUF_INIT, excl = SBUF_INIT, msg = SBUF_INIT;
	char *dir = make_run(), *r = testlib_tmp_at("plan"), *want;

	(void)state;
	assert_int_equal(doctor_preflight_plan(dir, 2, failed, 2, &run, &excl, &msg), 0);
	assert_string_equal(run.buf, r);
	assert_string_equal(excl.buf, "node[2-4]");
	want = xasprintf("resubmitting %s without node[2-4] (resubmission 2 of at most 2)", r);
	assert_string_equal(msg.buf, want);
	free(want);
	free(r);
	free(dir);
	sbuf_release(&run);
	sbuf_release(&excl);
	sbuf_release(&msg);
}

static void preflight__stops_resubmitting_past_max_resubmits(void **state)
{
	const char *failed[] = { "node2" };
	struct sbuf run = SBUF_INIT, excl = SBUF_INIT, msg = SBUF_INIT;
	char *dir = make_run(), *none = testlib_tmp_at("plan/nothing");

	(void)state;
	assert_int_equal(doctor_preflight_plan(dir, 1, failed, 1, &run, &excl, &msg), -1);
	assert_string_equal(msg.buf, "preflight failed 2 times; not resubmitting "
				     "(preflight.max_resubmits is 1)");
	assert_string_equal(run.buf, "");
	sbuf_reset(&msg);
	assert_int_equal(doctor_preflight_plan(none, 1, failed, 1, &run, &excl, &msg), -1);
	assert_non_null(strstr(msg.buf, "cannot resubmit: no run at "));
	free(none);
	free(dir);
	sbuf_release(&run);
	sbuf_release(&excl);
	sbuf_release(&msg);
}

static void preflight__writes_the_result_beside_the_attempt(void **state)
{
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	char *dir = testlib_tmp_at("write"), *path = testlib_tmp_at("write/preflight.json");
	json_t *doc = json_pack("{s:b, s:s}", "ok", 0, "exclude", "node2");

	(void)state;
	assert_int_equal(fileio_mkdirs(dir, 0700, &err), 0);
	assert_int_equal(doctor_preflight_write(dir, doc, &err), 0);
	assert_int_equal(fileio_read(path, 1 << 20, &text, &err), 0);
	assert_string_equal(text.buf, "{\n  \"exclude\": \"node2\",\n  \"ok\": false\n}");
	assert_int_equal(doctor_preflight_failures(dir), 1);
	json_decref(doc);
	free(dir);
	free(path);
	sbuf_release(&err);
	sbuf_release(&text);
}

/* A failed preflight's nodes are its exclude list's, each with its
 * first failed check; a passed one, one that failed no node (the job's
 * fault) or none at all gives none. */
static void preflight__names_the_nodes_a_failed_preflight_left_out(void **state)
{
	struct sbuf why = SBUF_INIT;
	char **nodes, *dir = testlib_tmp_at("failed");

	(void)state;
	put("failed/preflight.json",
	    "{\"ok\": false, \"exclude\": \"node[2-3]\", \"nodes\": ["
	    "{\"node\": \"node1\", \"checks\": {\"nics\": {\"grade\": \"ok\"}}},"
	    "{\"node\": \"node2\", \"checks\": {\"gpus\": {\"grade\": \"ok\"}, "
	    "\"nics\": {\"grade\": \"FAIL\", \"reason\": \"no ibx0\"}, "
	    "\"files\": {\"grade\": \"FAIL\", \"reason\": \"full\"}}},"
	    "{\"node\": \"node3\", \"checks\": {\"files\": {\"grade\": \"FAIL\"}}}]}");
	assert_int_equal(doctor_preflight_failed(dir, &nodes, &why), 2);
	assert_string_equal(nodes[0], "node2");
	assert_string_equal(nodes[1], "node3");
	assert_string_equal(why.buf, "node2: nics: no ibx0; node3: files: failed");
	hpt_slurm_node_names_free(nodes, 2);
	sbuf_reset(&why);
	put("failed/preflight.json", "{\"ok\": false, \"exclude\": \"\", \"job_fault\": \"x\"}");
	assert_int_equal(doctor_preflight_failed(dir, &nodes, &why), 0);
	put("failed/preflight.json", "{\"ok\": true, \"exclude\": \"\"}");
	assert_int_equal(doctor_preflight_failed(dir, &nodes, &why), 0);
	free(dir);
	dir = testlib_tmp_at("none");
	assert_int_equal(doctor_preflight_failed(dir, &nodes, &why), 0);
	assert_int_equal(why.len, 0);
	free(dir);
	sbuf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(preflight__counts_the_attempts_whose_preflight_failed),
		cmocka_unit_test(preflight__counts_nothing_in_a_run_that_is_not_there),
		cmocka_unit_test(preflight__reads_the_exclude_an_attempt_was_submitted_with),
		cmocka_unit_test(preflight__resubmits_without_the_failed_nodes_and_the_old_exclude),
		cmocka_unit_test(preflight__stops_resubmitting_past_max_resubmits),
		cmocka_unit_test(preflight__writes_the_result_beside_the_attempt),
		cmocka_unit_test(preflight__names_the_nodes_a_failed_preflight_left_out),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
