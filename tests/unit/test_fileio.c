/* test_fileio.c - common/fileio: bounded reads, atomic writes, mkdir -p.
 * Works in a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/fileio.h" // defines: fileio_*
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf

#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fileio__mkdirs_makes_every_missing_parent_once),
		cmocka_unit_test(fileio__mkdirs_names_the_part_it_could_not_make),
		cmocka_unit_test(fileio__read_stops_one_byte_past_the_bound),
	};

	return cmocka_run_group_tests_name("test_fileio", tests, setup, teardown);
}
