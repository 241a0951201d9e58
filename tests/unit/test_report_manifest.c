/* test_report_manifest.c - launcher/report/report_manifest: report removes
 * only the charts it wrote, unchanged, and never on the word of a
 * manifest another user could have written.
 * Works in a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "launcher/report/report_manifest.h" // defines: struct report_manifest, report_manifest_*
#include "common/fileio.h" // defines: fileio_write_atomic, fileio_exists, fileio_read
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf

#include <unistd.h>

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_report_manifest");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

/* A fresh directory under the test's for each test, with DIR/name. */
static char *dir_with(const char *sub, const char *name, const char *text)
{
	char *dir = testlib_tmp_at(sub), *path = xasprintf("%s/%s", dir, name);
	struct sbuf err = SBUF_INIT;

	assert_int_equal(fileio_mkdirs(dir, 0700, &err), 0);
	assert_int_equal(fileio_write_atomic(path, text, strlen(text), 0600, 0, &err), 0);
	sbuf_release(&err);
	free(path);
	return dir;
}

static bool exists_in(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	bool yes = fileio_exists(path);

	free(path);
	return yes;
}

static void manifest__removes_a_chart_it_wrote_but_never_a_users_own(void **state)
{
	char *dir = dir_with("own", "comm.png", "mine, not report's");
	struct report_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	report_manifest_load(&m, dir);
	assert_false(report_manifest_remove(&m, "comm.png"));
	assert_true(exists_in(dir, "comm.png"));
	/* report writes lr.png, saves; a later report drops it */
	free(dir_with("own", "lr.png", "chart"));
	assert_int_equal(report_manifest_add(&m, "lr.png"), 0);
	assert_int_equal(report_manifest_save(&m, &err), 0);
	report_manifest_release(&m);
	report_manifest_load(&m, dir);
	assert_true(report_manifest_remove(&m, "lr.png"));
	assert_false(exists_in(dir, "lr.png"));
	assert_false(report_manifest_remove(&m, "comm.png"));
	assert_true(exists_in(dir, "comm.png"));
	report_manifest_release(&m);
	sbuf_release(&err);
	free(dir);
}

static void manifest__leaves_a_chart_the_user_replaced_since(void **state)
{
	char *dir = dir_with("replaced", "loss.png", "report's chart");
	struct report_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	report_manifest_load(&m, dir);
	assert_int_equal(report_manifest_add(&m, "loss.png"), 0);
	assert_int_equal(report_manifest_save(&m, &err), 0);
	report_manifest_release(&m);
	free(dir_with("replaced", "loss.png", "the user's own, copied over it"));
	report_manifest_load(&m, dir);
	assert_false(report_manifest_remove(&m, "loss.png"));
	assert_true(exists_in(dir, "loss.png"));
	report_manifest_release(&m);
	sbuf_release(&err);
	free(dir);
}

static void manifest__drops_entries_that_name_another_directory(void **state)
{
	static const char planted[] =
		"{\"files\": [{\"name\": \"../victim\", \"ino\": 1, \"size\": 1, \"mtime_ns\": 1},"
		" {\"name\": \".hidden\", \"ino\": 1, \"size\": 1, \"mtime_ns\": 1}]}";
	char *dir = dir_with("planted", REPORT_MANIFEST_NAME, planted);
	struct report_manifest m = { 0 };

	(void)state;
	report_manifest_load(&m, dir);
	assert_int_equal(json_array_size(m.files), 0);
	report_manifest_release(&m);
	free(dir);
}

/* A manifest another user wrote is no manifest: root gives one away. */
static void manifest__ignores_a_manifest_of_another_user_or_a_link(void **state)
{
	char *dir = dir_with("foreign", "comm.png", "chart"), *man, *link;
	struct report_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	report_manifest_load(&m, dir);
	assert_int_equal(report_manifest_add(&m, "comm.png"), 0);
	assert_int_equal(report_manifest_save(&m, &err), 0);
	report_manifest_release(&m);
	man = xasprintf("%s/" REPORT_MANIFEST_NAME, dir);
	link = xasprintf("%s/elsewhere.json", dir);
	assert_int_equal(rename(man, link), 0);
	assert_int_equal(symlink(link, man), 0);
	report_manifest_load(&m, dir);
	assert_false(report_manifest_remove(&m, "comm.png"));
	report_manifest_release(&m);
	if (!geteuid()) {
		assert_int_equal(unlink(man), 0);
		assert_int_equal(rename(link, man), 0);
		assert_int_equal(chown(man, 65534, 65534), 0);
		report_manifest_load(&m, dir);
		assert_false(report_manifest_remove(&m, "comm.png"));
		report_manifest_release(&m);
	}
	assert_true(exists_in(dir, "comm.png"));
	sbuf_release(&err);
	free(man);
	free(link);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(manifest__removes_a_chart_it_wrote_but_never_a_users_own),
		cmocka_unit_test(manifest__leaves_a_chart_the_user_replaced_since),
		cmocka_unit_test(manifest__drops_entries_that_name_another_directory),
		cmocka_unit_test(manifest__ignores_a_manifest_of_another_user_or_a_link),
	};

	return cmocka_run_group_tests_name("test_report_manifest", tests, setup, teardown);
}
