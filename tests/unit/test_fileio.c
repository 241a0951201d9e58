/* test_fileio.c - common/fileio (and common/jsonfile, its JSON reader):
 * bounded reads, atomic writes, mkdir -p,
 * and the hostile cases: a FIFO, a device or a link where a file is
 * read, a link where one is written, a directory or file that another
 * user owns or may write; common/fileremove, which removes only the
 * caller's own (even as root).  A test that would hang is ended by alarm(2).
 * Works in a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/fileio.h" // defines: fileio_*
#include "common/fileremove.h" // defines: fileremove_tree, fileremove_one
#include "common/jsonfile.h" // defines: jsonfile_load
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_fileio");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static void fileio__mkdirs_makes_every_missing_parent_once(void **state)
{
	char *deep = xasprintf("%s/a/b//c/", testlib_tmp);
	struct stat st;

	(void)state;
	assert_int_equal(fileio_mkdirs(deep, 0750, NULL), 0);
	assert_int_equal(stat(deep, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Again: everything exists, which is not an error. */
	assert_int_equal(fileio_mkdirs(deep, 0750, NULL), 0);
	free(deep);
}

static void fileio__mkdirs_names_the_part_it_could_not_make(void **state)
{
	char *file = xasprintf("%s/plain", testlib_tmp), *below = xasprintf("%s/plain/x/y", testlib_tmp);
	struct sbuf err = SBUF_INIT;

	(void)state;
	assert_int_equal(fileio_write_atomic(file, "x", 1, 0600, 0, &err), 0);
	assert_int_equal(fileio_mkdirs(below, 0700, &err), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_non_null(strstr(err.buf, "cannot create "));
	assert_non_null(strstr(err.buf, "/plain/x: Not a directory"));
	sbuf_reset(&err);
	assert_int_equal(fileio_mkdirs("", 0700, &err), -1);
	assert_non_null(strstr(err.buf, "empty name"));
	sbuf_release(&err);
	free(file);
	free(below);
}

static void fileio__read_stops_one_byte_past_the_bound(void **state)
{
	char *path = xasprintf("%s/big", testlib_tmp);
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	assert_int_equal(fileio_write_atomic(path, "0123456789", 10, 0600, 0, &err), 0);
	assert_int_equal(fileio_read(path, 4, &out, &err), 0);
	assert_int_equal(out.len, 5);
	/* Exclusive writes refuse an existing file. */
	assert_int_equal(fileio_write_atomic(path, "x", 1, 0600, 1, &err), -1);
	assert_true(fileio_exists(path));
	sbuf_release(&out);
	sbuf_release(&err);
	free(path);
}

/* Each hostile test gets this long before SIGALRM ends the program: a
 * read that blocks on a FIFO fails the run instead of hanging it. */
#define HANG_S 10

static void expect_err(struct sbuf *err, const char *want)
{
	if (!strstr(err->buf, want))
		fail_msg("no '%s' in '%s'", want, err->buf);
	sbuf_reset(err);
}

static void fileio__read_refuses_a_fifo_without_hanging(void **state)
{
	char *path = testlib_tmp_at("fifo");
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(HANG_S);
	assert_int_equal(fileio_read(path, 1 << 20, &out, &err), -1);
	expect_err(&err, "it is a FIFO, not a regular file");
	assert_int_equal(fileio_open_regular(path, 0, &err), -1);
	expect_err(&err, "/fifo: it is a FIFO");
	/* Appending blocks on a FIFO without a reader unless O_NONBLOCK. */
	assert_int_equal(fileio_open_append(path, &err), -1);
	expect_err(&err, "/fifo: it is not a regular file");
	alarm(0);
	sbuf_release(&out);
	sbuf_release(&err);
	free(path);
}

static void fileio__read_refuses_a_device_and_a_directory(void **state)
{
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	assert_int_equal(fileio_read("/dev/null", 16, &out, &err), -1);
	expect_err(&err, "cannot read /dev/null: it is a character device, not a regular file");
	assert_int_equal(fileio_read(testlib_tmp, 16, &out, &err), -1);
	expect_err(&err, ": it is a directory");
	sbuf_release(&out);
	sbuf_release(&err);
}

static void fileio__read_takes_a_pipe_on_stdin_as_dash(void **state)
{
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;
	int p[2], saved = dup(STDIN_FILENO);

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "piped", 5), 5);
	close(p[1]);
	assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
	close(p[0]);
	assert_int_equal(fileio_read("-", 1 << 10, &out, &err), 0);
	assert_string_equal(out.buf, "piped");
	dup2(saved, STDIN_FILENO);
	close(saved);
	sbuf_release(&out);
	sbuf_release(&err);
}

static void fileio__nofollow_refuses_a_link_that_a_plain_read_follows(void **state)
{
	char *target = testlib_tmp_at("target"), *link = testlib_tmp_at("link");
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	assert_int_equal(fileio_write_atomic(target, "t", 1, 0600, 0, &err), 0);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(fileio_read(link, 16, &out, &err), 0);
	assert_string_equal(out.buf, "t");
	assert_int_equal(fileio_read_flags(link, 16, FILEIO_NOFOLLOW, &out, &err), -1);
	expect_err(&err, "/link: it is a symbolic link");
	assert_int_equal(fileio_open_append(link, &err), -1);
	expect_err(&err, "/link: it is a symbolic link");
	sbuf_release(&out);
	sbuf_release(&err);
	free(target);
	free(link);
}

static void fileio__write_replaces_a_planted_link_instead_of_writing_through_it(void **state)
{
	char *victim = testlib_tmp_at("victim"), *out = testlib_tmp_at("out.png");
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	struct stat st;

	(void)state;
	assert_int_equal(fileio_write_atomic(victim, "precious", 8, 0600, 0, &err), 0);
	assert_int_equal(symlink(victim, out), 0);
	assert_int_equal(fileio_write_atomic(out, "chart", 5, 0600, 0, &err), 0);
	assert_int_equal(lstat(out, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(fileio_read(victim, 16, &text, &err), 0);
	assert_string_equal(text.buf, "precious");
	/* the unsynced variant (liveness records) likewise */
	assert_int_equal(unlink(out), 0);
	assert_int_equal(symlink(victim, out), 0);
	assert_int_equal(fileio_write_unsynced(out, "live", 4, 0600, &err), 0);
	assert_int_equal(lstat(out, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	sbuf_reset(&text);
	assert_int_equal(fileio_read(victim, 16, &text, &err), 0);
	assert_string_equal(text.buf, "precious");
	sbuf_release(&text);
	sbuf_release(&err);
	free(victim);
	free(out);
}

static void fileio__open_append_creates_0600_under_umask_000_and_appends(void **state)
{
	char *path = testlib_tmp_at("metrics.jsonl");
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	mode_t old = umask(0);
	struct stat st;
	int fd = fileio_open_append(path, &err);

	(void)state;
	umask(old);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a\n", 2), 2);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = fileio_open_append(path, &err);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "b\n", 2), 2);
	close(fd);
	assert_int_equal(fileio_read(path, 16, &text, &err), 0);
	assert_string_equal(text.buf, "a\nb\n");
	/* Others may write it: refused. */
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(fileio_open_append(path, &err), -1);
	expect_err(&err, "group or others may write it (mode 0666)");
	sbuf_release(&text);
	sbuf_release(&err);
	free(path);
}

static void fileio__private_dir_is_0700_under_umask_000_and_refuses_a_shared_one(void **state)
{
	char *dir = testlib_tmp_at("run/a"), *shared = testlib_tmp_at("shared");
	struct sbuf err = SBUF_INIT;
	mode_t old = umask(0);
	struct stat st;
	int rc = fileio_private_dir(dir, &err);

	(void)state;
	umask(old);
	assert_int_equal(rc, 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(fileio_private_dir(dir, &err), 0); /* again: it exists, fine */
	assert_int_equal(mkdir(shared, 0700), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	assert_int_equal(fileio_private_dir(shared, &err), -1);
	expect_err(&err, "/shared: group or others may write it (mode 1777)");
	assert_int_equal(fileio_check_owned(shared, &err), -1);
	expect_err(&err, "refusing ");
	assert_int_equal(chmod(shared, 0755), 0); /* readable by others is fine */
	assert_int_equal(fileio_private_dir(shared, &err), 0);
	sbuf_release(&err);
	free(dir);
	free(shared);
}

static void fileio__private_dir_refuses_a_plain_file(void **state)
{
	char *path = testlib_tmp_at("plainfile");
	struct sbuf err = SBUF_INIT;

	(void)state;
	assert_int_equal(fileio_write_atomic(path, "x", 1, 0600, 0, &err), 0);
	assert_int_equal(fileio_private_dir(path, &err), -1);
	expect_err(&err, "/plainfile: it is not a directory");
	sbuf_release(&err);
	free(path);
}

static void jsonfile__loads_a_document_and_refuses_a_fifo_and_bad_json(void **state)
{
	char *ok = testlib_tmp_at("ok.json"), *bad = testlib_tmp_at("bad.json");
	char *fifo = testlib_tmp_at("fifo.json");
	struct sbuf err = SBUF_INIT;
	json_t *doc;

	(void)state;
	assert_int_equal(fileio_write_atomic(ok, "{\"job_id\": 7}", 13, 0600, 0, &err), 0);
	assert_int_equal(fileio_write_atomic(bad, "{\"job_id\":", 10, 0600, 0, &err), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	doc = jsonfile_load(ok, 1 << 10, 0, &err);
	assert_int_equal(json_integer_value(json_object_get(doc, "job_id")), 7);
	json_decref(doc);
	assert_null(jsonfile_load(ok, 4, 0, &err));
	expect_err(&err, "/ok.json is larger than 4 bytes");
	assert_null(jsonfile_load(bad, 1 << 10, 0, &err));
	expect_err(&err, "/bad.json: line 1 column ");
	alarm(HANG_S);
	assert_null(jsonfile_load(fifo, 1 << 10, 0, &err));
	alarm(0);
	expect_err(&err, "/fifo.json: it is a FIFO, not a regular file");
	sbuf_release(&err);
	free(ok);
	free(bad);
	free(fifo);
}

/* Only root can give a file away; elsewhere the test is skipped. */
static void fileio__owned_refuses_a_dir_and_a_file_of_another_uid(void **state)
{
	char *dir = testlib_tmp_at("theirs"), *file = testlib_tmp_at("theirs.bin");
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	if (geteuid())
		skip();
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(fileio_private_dir(dir, &err), -1);
	expect_err(&err, "/theirs: it belongs to uid 65534, not to uid 0");
	assert_int_equal(fileio_write_atomic(file, "ckpt", 4, 0600, 0, &err), 0);
	assert_int_equal(fileio_read_flags(file, 16, FILEIO_OWNED, &out, &err), 0);
	assert_int_equal(chown(file, 65534, 65534), 0);
	assert_int_equal(fileio_read_flags(file, 16, FILEIO_OWNED, &out, &err), -1);
	expect_err(&err, "/theirs.bin: it belongs to uid 65534, not to uid 0");
	assert_int_equal(fileio_open_append(file, &err), -1);
	expect_err(&err, "it belongs to uid 65534");
	sbuf_release(&out);
	sbuf_release(&err);
	free(dir);
	free(file);
}

/* As root, who could remove anything: a tree with one file of another
 * user's stays whole; one of its own goes, a link in it removed, never
 * followed. */
static void fileremove__takes_only_the_callers_own_even_as_root(void **state)
{
	char *tree = testlib_tmp_at("entry"), *sub = testlib_tmp_at("entry/sub");
	char *theirs = testlib_tmp_at("entry/sub/theirs"), *mine = testlib_tmp_at("entry/mine");
	char *target = testlib_tmp_at("target"), *link = testlib_tmp_at("entry/link");
	struct sbuf err = SBUF_INIT;
	struct stat st;

	(void)state;
	if (geteuid())
		skip();
	assert_int_equal(mkdir(tree, 0700), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(fileio_write_atomic(theirs, "x", 1, 0600, 0, &err), 0);
	assert_int_equal(fileio_write_atomic(mine, "x", 1, 0600, 0, &err), 0);
	assert_int_equal(fileio_write_atomic(target, "x", 1, 0600, 0, &err), 0);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(chown(theirs, 65534, 65534), 0);
	assert_int_equal(fileremove_tree(tree, &err), -1);
	assert_non_null(strstr(err.buf, "refusing to remove "));
	expect_err(&err, "/entry/sub/theirs: it belongs to uid 65534, not to uid 0");
	assert_int_equal(lstat(mine, &st), 0); /* nothing went */
	assert_int_equal(fileremove_one(theirs, &err), -1);
	expect_err(&err, "it belongs to uid 65534");
	assert_int_equal(chown(theirs, 0, 0), 0);
	sbuf_reset(&err);
	assert_int_equal(fileremove_tree(tree, &err), 0);
	assert_int_equal(lstat(tree, &st), -1);
	assert_int_equal(lstat(target, &st), 0); /* the link's target stays */
	assert_int_equal(fileremove_tree(tree, &err), 0); /* absent: done */
	assert_int_equal(fileremove_one(target, &err), 0);
	assert_int_equal(lstat(target, &st), -1);
	sbuf_release(&err);
	free(tree);
	free(sub);
	free(theirs);
	free(mine);
	free(target);
	free(link);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fileio__mkdirs_makes_every_missing_parent_once),
		cmocka_unit_test(fileio__mkdirs_names_the_part_it_could_not_make),
		cmocka_unit_test(fileio__read_stops_one_byte_past_the_bound),
		cmocka_unit_test(fileio__read_refuses_a_fifo_without_hanging),
		cmocka_unit_test(fileio__read_refuses_a_device_and_a_directory),
		cmocka_unit_test(fileio__read_takes_a_pipe_on_stdin_as_dash),
		cmocka_unit_test(fileio__nofollow_refuses_a_link_that_a_plain_read_follows),
		cmocka_unit_test(fileio__write_replaces_a_planted_link_instead_of_writing_through_it),
		cmocka_unit_test(fileio__open_append_creates_0600_under_umask_000_and_appends),
		cmocka_unit_test(fileio__private_dir_is_0700_under_umask_000_and_refuses_a_shared_one),
		cmocka_unit_test(fileio__private_dir_refuses_a_plain_file),
		cmocka_unit_test(fileio__owned_refuses_a_dir_and_a_file_of_another_uid),
		cmocka_unit_test(jsonfile__loads_a_document_and_refuses_a_fifo_and_bad_json),
		cmocka_unit_test(fileremove__takes_only_the_callers_own_even_as_root),
	};

	return cmocka_run_group_tests_name("test_fileio", tests, setup, teardown);
}
