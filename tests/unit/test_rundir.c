/* test_rundir.c - launcher/rundir: run directories, attempts, permissions.
 * Works in a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/fileio.h"      // defines: fileio_exists
#include "common/sbuf.h"        // defines: struct sbuf
#include "launcher/rundir.h" // defines: rundir_create, rundir_open

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASH "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
#define RESOLVED "version: 1\nname: t\n"

static char tmp[4096];

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/test_rundir.XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char *cmd;
	int rc;

	(void)state;
	if (asprintf(&cmd, "rm -rf '%s'", tmp) < 0)
		return -1;
	rc = system(cmd);
	free(cmd);
	return rc;
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* tmp + "/" + rel */
static char *at(const char *rel)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", tmp, rel) > 0);
	return p;
}

static void create(struct rundir *rd)
{
	struct sbuf err = SBUF_INIT;
	char *out = at("runs");

	if (rundir_create(out, "job", HASH, RESOLVED, strlen(RESOLVED), rd, &err))
		fail_msg("rundir_create: %s", err.buf);
	free(out);
	sbuf_release(&err);
}

static void rundir__puts_a_run_under_name_and_twelve_hash_digits_private(void **state)
{
	struct rundir rd = RUNDIR_INIT;
	char *want = at("runs/job/abcdef012345"), *p;
	mode_t old = umask(0);

	(void)state;
	create(&rd);
	umask(old);
	assert_string_equal(rd.run, want);
	assert_string_equal(rd.dir, want);
	assert_int_equal(rd.attempt, 1);
	assert_int_equal(mode_of(rd.dir), 0700);
	p = at("runs/job");
	assert_int_equal(mode_of(p), 0700);
	free(p);
	p = at("runs/job/abcdef012345/resolved.yaml");
	assert_int_equal(mode_of(p), 0600);
	free(p);
	p = at("runs/job/abcdef012345/logs");
	assert_int_equal(mode_of(p), 0700);
	free(p);
	free(want);
	rundir_release(&rd);
}

static void rundir__makes_a_new_attempt_and_never_overwrites(void **state)
{
	struct rundir a = RUNDIR_INIT, b = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT;
	char *want;

	(void)state;
	create(&a);
	assert_int_equal(rundir_write(&a, "job.sbatch", "one", 3, &err), 0);
	assert_int_equal(rundir_write(&a, "job.sbatch", "two", 3, &err), -1);
	create(&b);
	want = at("runs/job/abcdef012345/attempts/2");
	assert_string_equal(b.dir, want);
	assert_string_equal(b.run, a.run);
	assert_int_equal(b.attempt, 2);
	free(want);
	rundir_release(&a);
	rundir_release(&b);
	sbuf_release(&err);
}

static void rundir__refuses_a_run_that_holds_another_spec(void **state)
{
	struct rundir a = RUNDIR_INIT, b = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT;
	char *out = at("runs");

	(void)state;
	create(&a);
	assert_int_equal(rundir_create(out, "job", HASH, "other\n", 6, &b, &err), -1);
	assert_non_null(strstr(err.buf, "holds a different job"));
	free(out);
	rundir_release(&a);
	rundir_release(&b);
	sbuf_release(&err);
}

static void rundir__abandon_removes_only_an_unsubmitted_attempt(void **state)
{
	struct rundir a = RUNDIR_INIT;

	(void)state;
	create(&a);
	assert_int_equal(rundir_write(&a, "job.sbatch", "x", 1, &(struct sbuf)SBUF_INIT), 0);
	rundir_abandon(&a);
	assert_false(fileio_exists(a.dir));
	rundir_release(&a);
}

static void rundir__open_finds_the_latest_submitted_attempt(void **state)
{
	struct rundir a = RUNDIR_INIT, b = RUNDIR_INIT, c = RUNDIR_INIT, o = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT;
	unsigned long id = 0;

	(void)state;
	create(&a);
	create(&b);
	create(&c);
	rundir_write(&a, "submit.json", "{\"job_id\": 7}\n", 14, &err);
	rundir_write(&b, "submit.json", "{\"job_id\": 8}\n", 14, &err);
	/* c was never submitted */
	assert_int_equal(rundir_open(a.run, &o, &err), 0);
	assert_int_equal(o.attempt, 2);
	assert_string_equal(o.dir, b.dir);
	assert_int_equal(rundir_job_id(&o, &id, &err), 0);
	assert_int_equal(id, 8);
	rundir_release(&o);
	assert_int_equal(rundir_open(a.dir, &o, &err), 0); /* R itself names the run */
	assert_int_equal(o.attempt, 2);
	rundir_release(&o);
	assert_int_equal(rundir_open(c.dir, &o, &err), 0); /* an attempt names itself */
	assert_int_equal(o.attempt, 3);
	assert_string_equal(o.run, a.run);
	assert_int_equal(rundir_job_id(&o, &id, &err), -1);
	assert_non_null(strstr(err.buf, "was never submitted"));
	rundir_release(&o);
	rundir_release(&a);
	rundir_release(&b);
	rundir_release(&c);
	sbuf_release(&err);
}

static void rundir__resolve_takes_a_job_id_or_a_run(void **state)
{
	struct rundir rd = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT;
	unsigned long id = 0;

	(void)state;
	assert_int_equal(rundir_resolve("1234", &rd, &id, &err), 0);
	assert_int_equal(id, 1234);
	assert_null(rd.dir);
	assert_int_equal(rundir_resolve("0", &rd, &id, &err), -1);
	sbuf_reset(&err);
	assert_int_equal(rundir_resolve("/nonexistent/run", &rd, &id, &err), -1);
	assert_string_equal(err.buf, "no run at /nonexistent/run (a run directory holds resolved.yaml)");
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			rundir__puts_a_run_under_name_and_twelve_hash_digits_private, setup, teardown),
		cmocka_unit_test_setup_teardown(rundir__makes_a_new_attempt_and_never_overwrites,
						setup, teardown),
		cmocka_unit_test_setup_teardown(rundir__refuses_a_run_that_holds_another_spec, setup,
						teardown),
		cmocka_unit_test_setup_teardown(rundir__abandon_removes_only_an_unsubmitted_attempt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(rundir__open_finds_the_latest_submitted_attempt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(rundir__resolve_takes_a_job_id_or_a_run, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("test_rundir", tests, NULL, NULL);
}
