/* test_rundir.c - launcher/runs/rundir and runref: run directories, attempts,
 * permissions, and what a user may name (a run, a sweep, a job, a name).
 * Works in a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/fileio.h"      // defines: fileio_exists, fileio_mkdirs, fileio_write_atomic
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/exitcode.h"    // defines: HPT_EXIT_USAGE
#include "launcher/runs/rundir.h" // defines: rundir_create, rundir_open
#include "launcher/runs/rundir_publish.h" // defines: rundir_publish_lock_shared, _tmp
#include "launcher/runs/runref.h" // defines: runref_resolve

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HASH "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
#define RESOLVED "version: 1\nname: t\n"

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_rundir");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void create(struct rundir *rd)
{
	struct sbuf err = SBUF_INIT;
	char *out = testlib_tmp_at("runs");

	if (rundir_create(out, "job", HASH, RESOLVED, strlen(RESOLVED), rd, &err))
		fail_msg("rundir_create: %s", err.buf);
	free(out);
	sbuf_release(&err);
}

static void rundir__puts_a_run_under_name_and_twelve_hash_digits_private(void **state)
{
	struct rundir rd = RUNDIR_INIT;
	char *want = testlib_tmp_at("runs/job/abcdef012345"), *p;
	mode_t old = umask(0);

	(void)state;
	create(&rd);
	umask(old);
	assert_string_equal(rd.run, want);
	assert_string_equal(rd.dir, want);
	assert_int_equal(rd.attempt, 1);
	assert_int_equal(mode_of(rd.dir), 0700);
	p = testlib_tmp_at("runs/job");
	assert_int_equal(mode_of(p), 0700);
	free(p);
	p = testlib_tmp_at("runs/job/abcdef012345/resolved.yaml");
	assert_int_equal(mode_of(p), 0600);
	free(p);
	p = testlib_tmp_at("runs/job/abcdef012345/logs");
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
	want = testlib_tmp_at("runs/job/abcdef012345/attempts/2");
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
	char *out = testlib_tmp_at("runs");

	(void)state;
	create(&a);
	assert_int_equal(rundir_create(out, "job", HASH, "other\n", 6, &b, &err), -1);
	assert_non_null(strstr(err.buf, "holds a different job"));
	free(out);
	rundir_release(&a);
	rundir_release(&b);
	sbuf_release(&err);
}

/* A run others may write (an old standalone train under umask 000, or a
 * shared output.dir) gets no new attempt, from submit or from rerun; nor
 * does a submit.json that is a FIFO hang the reader of the job id. */
static void rundir__refuses_a_run_others_may_write_and_a_fifo_submit_json(void **state)
{
	struct rundir a = RUNDIR_INIT, b = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT;
	char *out = testlib_tmp_at("runs"), *sub;
	unsigned long id = 0;

	(void)state;
	create(&a);
	assert_int_equal(chmod(a.run, 0777), 0);
	assert_int_equal(rundir_create(out, "job", HASH, RESOLVED, strlen(RESOLVED), &b, &err), -1);
	assert_non_null(strstr(err.buf, "abcdef012345: group or others may write it (mode 0777)"));
	sbuf_reset(&err);
	assert_int_equal(rundir_new_attempt(a.run, &b, &err), -1);
	assert_non_null(strstr(err.buf, "refusing "));
	sbuf_reset(&err);
	assert_int_equal(chmod(a.run, 0700), 0);
	sub = xasprintf("%s/submit.json", a.dir);
	assert_int_equal(mkfifo(sub, 0600), 0);
	alarm(10);
	assert_int_equal(rundir_job_id(&a, &id, NULL, &err), -1);
	alarm(0);
	assert_non_null(strstr(err.buf, "/submit.json: it is a FIFO, not a regular file"));
	free(sub);
	free(out);
	rundir_release(&a);
	rundir_release(&b);
	sbuf_release(&err);
}

/* Twenty submits of one spec at once: all succeed, one R, twenty distinct
 * attempts.  Before runs were published whole, a submit that found R
 * between another's mkdir and its resolved.yaml took it for a hash
 * collision (8 of 20 failed). */
static void rundir__twenty_concurrent_creates_of_one_spec_all_get_distinct_attempts(void **state)
{
	enum { N = 20 };
	pid_t pid[N];
	int seen[N + 1] = { 0 };
	char *attempts = testlib_tmp_at("runs/job/abcdef012345/attempts");

	(void)state;
	for (int i = 0; i < N; i++) {
		assert_true((pid[i] = fork()) >= 0);
		if (!pid[i]) { /* the attempt number is the exit status */
			struct rundir rd = RUNDIR_INIT;
			struct sbuf err = SBUF_INIT;
			char *out = testlib_tmp_at("runs");
			int rc = rundir_create(out, "job", HASH, RESOLVED, strlen(RESOLVED), &rd, &err);

			if (rc)
				fprintf(stderr, "child %d: %s\n", i, err.buf);
			_exit(rc ? 0 : rd.attempt);
		}
	}
	for (int i = 0; i < N; i++) {
		int st;

		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st));
		assert_in_range(WEXITSTATUS(st), 1, N);
		assert_int_equal(seen[WEXITSTATUS(st)]++, 0);
	}
	for (int n = 1; n <= N; n++) {
		char *spec = n == 1 ? testlib_tmp_at("runs/job/abcdef012345/resolved.yaml")
				    : xasprintf("%s/%d/resolved.yaml", attempts, n);

		assert_true(fileio_exists(spec));
		free(spec);
	}
	free(attempts);
}

/* A submit killed between mkdir R and its resolved.yaml (as an older
 * hpctrain could be) left an empty R that failed every later submit of
 * the spec; one killed in its temporary left an orphan.  The next create
 * completes R as attempt 1 and removes the orphan. */
static void rundir__recovers_an_empty_run_and_an_orphaned_temporary(void **state)
{
	struct rundir rd = RUNDIR_INIT;
	char *run = testlib_tmp_at("runs/job/abcdef012345");
	char *logs = testlib_tmp_at("runs/job/abcdef012345/logs");
	char *orphan = testlib_tmp_at("runs/job/.abcdef012345.tmp-AbC123");
	char *orphan_spec = xasprintf("%s/resolved.yaml", orphan);
	char *spec = xasprintf("%s/resolved.yaml", run);
	struct timeval old[2] = { { time(NULL) - 60, 0 }, { time(NULL) - 60, 0 } };

	(void)state;
	assert_int_equal(fileio_mkdirs(logs, 0700, NULL), 0);
	assert_int_equal(mkdir(orphan, 0700), 0);
	assert_int_equal(fileio_write_atomic(orphan_spec, "x", 1, 0600, 1, &(struct sbuf)SBUF_INIT), 0);
	assert_int_equal(utimes(run, old), 0);
	create(&rd);
	assert_string_equal(rd.dir, run);
	assert_int_equal(rd.attempt, 1);
	assert_true(fileio_exists(spec));
	assert_false(fileio_exists(orphan));
	rundir_release(&rd);
	create(&rd); /* and the next is attempt 2 of the same spec, as ever */
	assert_int_equal(rd.attempt, 2);
	rundir_release(&rd);
	free(run);
	free(logs);
	free(orphan);
	free(orphan_spec);
	free(spec);
}

/* A code snapshot's writers hold .code/.lock shared while they copy: one
 * killed mid-copy left its temporary; the next writer that finds no copy
 * under way removes it, and never a live writer's. */
static void rundir_publish__a_shared_locker_sweeps_orphans_only_when_no_writer_holds_the_lock(
	void **state)
{
	struct sbuf err = SBUF_INIT;
	char *codes = testlib_tmp_at("runs/.code");
	char *orphan, *inside, *live;
	int a, b;

	(void)state;
	assert_int_equal(fileio_mkdirs(codes, 0700, NULL), 0);
	orphan = rundir_publish_tmp(codes, "0123abcd", &err);
	assert_non_null(orphan);
	inside = xasprintf("%s/train.py", orphan);
	assert_int_equal(fileio_write_atomic(inside, "x", 1, 0600, 1, &err), 0);
	a = rundir_publish_lock_shared(codes, &err); /* no writer: the orphan goes */
	assert_true(a >= 0);
	assert_false(fileio_exists(orphan));
	live = rundir_publish_tmp(codes, "4567ef01", &err);
	assert_non_null(live);
	b = rundir_publish_lock_shared(codes, &err); /* a holds it: a's temporary stays */
	assert_true(b >= 0);
	assert_true(fileio_exists(live));
	rundir_publish_unlock(a);
	rundir_publish_unlock(b);
	a = rundir_publish_lock_shared(codes, &err); /* a and b gone: b's is an orphan now */
	assert_true(a >= 0);
	assert_false(fileio_exists(live));
	rundir_publish_unlock(a);
	free(codes);
	free(orphan);
	free(inside);
	free(live);
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
	assert_int_equal(rundir_job_id(&o, &id, NULL, &err), 0);
	assert_int_equal(id, 8);
	rundir_release(&o);
	assert_int_equal(rundir_open(a.dir, &o, &err), 0); /* R itself names the run */
	assert_int_equal(o.attempt, 2);
	rundir_release(&o);
	assert_int_equal(rundir_open(c.dir, &o, &err), 0); /* an attempt names itself */
	assert_int_equal(o.attempt, 3);
	assert_string_equal(o.run, a.run);
	assert_int_equal(rundir_job_id(&o, &id, NULL, &err), -1);
	assert_non_null(strstr(err.buf, "was never submitted"));
	rundir_release(&o);
	rundir_release(&a);
	rundir_release(&b);
	rundir_release(&c);
	sbuf_release(&err);
}

static void runref__takes_a_job_id_an_array_task_or_a_run(void **state)
{
	struct runref r = RUNREF_INIT;
	struct sbuf err = SBUF_INIT;

	(void)state;
	assert_int_equal(runref_resolve("1234", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_JOB);
	assert_int_equal(r.job_id, 1234);
	assert_int_equal(r.task, -1);
	assert_int_equal(runref_resolve("1234_7", &r, &err), 0);
	assert_int_equal(r.job_id, 1234);
	assert_int_equal(r.task, 7);
	assert_int_not_equal(runref_resolve("0", &r, &err), 0);
	sbuf_reset(&err);
	assert_int_equal(runref_resolve("/nonexistent/run", &r, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "no run, sweep or job /nonexistent/run"));
	sbuf_release(&err);
}

#define GRID "{\"sweep\": \"sweep-0123456789ab\", \"points\": [{\"run\": \"aaaaaaaaaaaa\"}, " \
	     "{\"run\": \"bbbbbbbbbbbb\"}]}"
#define MIXED "{\"sweep\": \"sweep-ba9876543210\", \"points\": [{\"run\": \"cccccccccccc\"}]}"

/* OUTPUT/one: one run; OUTPUT/grid: a sweep of two runs; OUTPUT/mixed: a
 * sweep and a run outside it. */
static void make_tree(void)
{
	struct sbuf err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	static const char *const runs[][2] = {
		{ "one", "111111111111" }, { "grid", "aaaaaaaaaaaa" }, { "grid", "bbbbbbbbbbbb" },
		{ "mixed", "cccccccccccc" }, { "mixed", "dddddddddddd" },
	};

	assert_int_equal(chdir(testlib_tmp), 0);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char hash[65];

		snprintf(hash, sizeof(hash), "%s%s", runs[i][1], HASH + 12);
		assert_int_equal(rundir_create("out", runs[i][0], hash, RESOLVED, strlen(RESOLVED),
					       &rd, &err), 0);
		rundir_write(&rd, "submit.json", "{\"job_id\": 9, \"array_task_id\": 1}\n", 34,
			     &err);
		rundir_release(&rd);
	}
	assert_int_equal(fileio_write_atomic("out/grid/sweep-0123456789ab.json", GRID,
					     strlen(GRID), 0600, 0, &err), 0);
	assert_int_equal(fileio_write_atomic("out/mixed/sweep-ba9876543210.json", MIXED,
					     strlen(MIXED), 0600, 0, &err), 0);
	setenv("HPCTRAIN_OUTPUT_DIR", "out", 1);
	sbuf_release(&err);
}

static void runref__finds_a_name_in_the_output_directory(void **state)
{
	struct runref r = RUNREF_INIT;
	struct sbuf err = SBUF_INIT;

	(void)state;
	make_tree();
	assert_int_equal(runref_resolve("one", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_RUN);
	assert_non_null(strstr(r.rd.run, "/out/one/111111111111"));
	assert_int_equal(r.job_id, 9);
	assert_int_equal(r.task, 1);
	runref_release(&r);
	/* every run of grid is a point of its one sweep: the name is the sweep */
	assert_int_equal(runref_resolve("grid", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_SWEEP);
	assert_non_null(strstr(r.sweep, "/out/grid/sweep-0123456789ab.json"));
	runref_release(&r);
	assert_int_equal(runref_resolve("grid/bbb", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_RUN);
	assert_non_null(strstr(r.rd.run, "/out/grid/bbbbbbbbbbbb"));
	runref_release(&r);
	assert_int_equal(runref_resolve("grid/sweep-01", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_SWEEP);
	runref_release(&r);
	assert_int_equal(runref_resolve("out/grid/sweep-0123456789ab.json", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_SWEEP);
	runref_release(&r);
	sbuf_release(&err);
}

static void runref__lists_the_candidates_of_an_ambiguous_name(void **state)
{
	struct runref r = RUNREF_INIT;
	struct sbuf err = SBUF_INIT;

	(void)state;
	make_tree();
	assert_int_equal(runref_resolve("mixed", &r, &err), HPT_EXIT_USAGE);
	assert_non_null(strstr(err.buf, "mixed names 2 runs and 1 sweep; say which:"));
	assert_non_null(strstr(err.buf, "out/mixed/sweep-ba9876543210.json  (sweep of 1 point"));
	assert_non_null(strstr(err.buf, "out/mixed/dddddddddddd  (run, job 9"));
	sbuf_reset(&err);
	assert_int_equal(runref_resolve("grid/", &r, &err), HPT_EXIT_NO_INPUT);
	sbuf_reset(&err);
	assert_int_equal(runref_resolve("grid/0000", &r, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "no run or sweep grid/0000 in out/grid"));
	sbuf_reset(&err);
	assert_int_equal(runref_resolve("../etc", &r, &err), HPT_EXIT_NO_INPUT);
	sbuf_reset(&err);
	assert_int_equal(runref_resolve("nosuchname", &r, &err), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "a job name in out/"));
	sbuf_release(&err);
}

#define BIG 2000

/* A plain write: no fsync, so 2,000 files take milliseconds. */
static void put(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

/* OUTPUT/big: BIG runs, listed in its sweep record in an order of their
 * own (hash i*7919), as a sweep of 2,000 points leaves them. */
static void make_big(void)
{
	struct sbuf err = SBUF_INIT;
	json_t *points = json_array(), *doc;
	char *text;

	assert_int_equal(chdir(testlib_tmp), 0);
	assert_int_equal(fileio_mkdirs("out/big", 0700, &err), 0);
	for (int i = 0; i < BIG; i++) {
		char run[13], *path;

		snprintf(run, sizeof(run), "%012llx", 0xabc000000000ULL + (unsigned long long)i * 7919);
		path = xasprintf("out/big/%s", run);
		assert_int_equal(mkdir(path, 0700), 0);
		free(path);
		path = xasprintf("out/big/%s/resolved.yaml", run);
		put(path, RESOLVED);
		free(path);
		json_array_append_new(points, json_pack("{s:i, s:s}", "index", i, "run", run));
	}
	doc = json_pack("{s:s, s:o}", "sweep", "sweep-b16b16b16b16", "points", points);
	text = json_dumps(doc, JSON_COMPACT);
	assert_int_equal(fileio_write_atomic("out/big/sweep-b16b16b16b16.json", text, strlen(text),
					     0600, 0, &err), 0);
	free(text);
	json_decref(doc);
	setenv("HPCTRAIN_OUTPUT_DIR", "out", 1);
	sbuf_release(&err);
}

static void runref__resolves_a_sweep_of_two_thousand_points_by_its_name(void **state)
{
	struct runref r = RUNREF_INIT, *v = NULL;
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL;
	size_t n = 0;

	(void)state;
	make_big();
	assert_int_equal(runref_resolve("big", &r, &err), 0);
	assert_int_equal(r.kind, RUNREF_SWEEP);
	assert_non_null(strstr(r.sweep, "/out/big/sweep-b16b16b16b16.json"));
	assert_int_equal(runref_sweep_points(r.sweep, &doc, &v, &n, &err), 0);
	assert_int_equal(n, BIG);
	assert_non_null(strstr(v[0].rd.run, "/out/big/abc000000000"));
	assert_non_null(strstr(v[BIG - 1].rd.run, "/out/big/abc000f18c41")); /* 1999 * 7919 */
	runref_release_all(v, n);
	json_decref(doc);
	runref_release(&r);
	/* one run more, outside the sweep: the name is no longer the sweep's alone */
	assert_int_equal(mkdir("out/big/0123456789ab", 0700), 0);
	put("out/big/0123456789ab/resolved.yaml", RESOLVED);
	assert_int_equal(runref_resolve("big", &r, &err), HPT_EXIT_USAGE);
	assert_non_null(strstr(err.buf, "big names 2001 runs and 1 sweep; say which:"));
	runref_release(&r);
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
		cmocka_unit_test_setup_teardown(
			rundir__refuses_a_run_others_may_write_and_a_fifo_submit_json, setup, teardown),
		cmocka_unit_test_setup_teardown(
			rundir__twenty_concurrent_creates_of_one_spec_all_get_distinct_attempts, setup,
			teardown),
		cmocka_unit_test_setup_teardown(rundir__recovers_an_empty_run_and_an_orphaned_temporary,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			rundir_publish__a_shared_locker_sweeps_orphans_only_when_no_writer_holds_the_lock,
			setup, teardown),
		cmocka_unit_test_setup_teardown(rundir__abandon_removes_only_an_unsubmitted_attempt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(rundir__open_finds_the_latest_submitted_attempt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(runref__takes_a_job_id_an_array_task_or_a_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(runref__finds_a_name_in_the_output_directory, setup,
						teardown),
		cmocka_unit_test_setup_teardown(runref__lists_the_candidates_of_an_ambiguous_name,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			runref__resolves_a_sweep_of_two_thousand_points_by_its_name, setup, teardown),
	};

	return cmocka_run_group_tests_name("test_rundir", tests, NULL, NULL);
}
