/* test_statkey.c - common/statkey: a hash cache's key of a file changes
 * when anything that could mean other bytes does (inode, device, size,
 * mtime, ctime), and survives JSON. */
#include "tests/unit/testlib.h"

#include "common/statkey.h" // defines: struct statkey, statkey_*

#include <string.h>
#include <sys/stat.h>

static struct stat a_stat(void)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_dev = 2049;
	st.st_ino = 131;
	st.st_size = 4096;
	st.st_mtim.tv_sec = 1700000000;
	st.st_mtim.tv_nsec = 5;
	st.st_ctim.tv_sec = 1700000001;
	st.st_ctim.tv_nsec = 7;
	return st;
}

static void statkey__differs_when_only_ctime_moved(void **state)
{
	struct stat st = a_stat(), moved = a_stat();
	struct statkey a, b;

	(void)state;
	/* touch -d "old mtime" on new bytes of the same size: only ctime tells */
	moved.st_ctim.tv_nsec = 8;
	statkey_of(&st, &a);
	statkey_of(&moved, &b);
	assert_false(statkey_is_equal(&a, &b));
	statkey_of(&st, &b);
	assert_true(statkey_is_equal(&a, &b));
}

static void statkey__differs_when_only_the_inode_or_device_moved(void **state)
{
	struct stat st = a_stat(), other = a_stat();
	struct statkey a, b;

	(void)state;
	statkey_of(&st, &a);
	other.st_ino = 132; /* replaced by rename, same size and times */
	statkey_of(&other, &b);
	assert_false(statkey_is_equal(&a, &b));
	other = a_stat();
	other.st_dev = 2050;
	statkey_of(&other, &b);
	assert_false(statkey_is_equal(&a, &b));
	other = a_stat();
	other.st_mtim.tv_nsec = 6;
	statkey_of(&other, &b);
	assert_false(statkey_is_equal(&a, &b));
}

static void statkey__round_trips_through_json_and_refuses_a_short_array(void **state)
{
	struct stat st = a_stat();
	struct statkey a, b;
	json_t *j, *bad = json_pack("[I, I, I, I]", (json_int_t)1, (json_int_t)2, (json_int_t)3,
				    (json_int_t)4);

	(void)state;
	st.st_dev = (dev_t)-1; /* the top bit set: stored as a negative int64 */
	statkey_of(&st, &a);
	j = statkey_to_json(&a);
	assert_non_null(j);
	assert_int_equal(statkey_from_json(j, &b), 0);
	assert_true(statkey_is_equal(&a, &b));
	assert_int_equal(statkey_from_json(bad, &b), -1);
	assert_false(statkey_is_equal(&a, &b));
	json_decref(j);
	json_decref(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(statkey__differs_when_only_ctime_moved),
		cmocka_unit_test(statkey__differs_when_only_the_inode_or_device_moved),
		cmocka_unit_test(statkey__round_trips_through_json_and_refuses_a_short_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
