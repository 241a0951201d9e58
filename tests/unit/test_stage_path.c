/* test_stage_path.c - launcher/stage/stage_path: which cache directory a
 * node uses (the spec's, else under data.to, preflight.scratch, $TMPDIR
 * or /dev/shm), an entry's paths, HPCTRAIN_DATA_<NAME>, and %n. */
#include "tests/unit/testlib.h"

#include "common/spec/spec.h"          // defines: spec_stage_env_name
#include "launcher/stage/stage_path.h" // defines: stage_cache_dir, stage_entry_*

#define HASH "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void check(char *got, const char *want)
{
	if (want)
		assert_string_equal(got, want);
	else
		assert_null(got);
	free(got);
}

static void stage_path__cache_dir_prefers_the_spec_then_to_then_scratch_tmpdir_and_shm(void **state)
{
	(void)state;
	check(stage_cache_dir("/c", "/to", "/s", "/t", 7), "/c");
	check(stage_cache_dir(NULL, "/to/", "/s", "/t", 7), "/to/hpctrain-cache-7");
	check(stage_cache_dir(NULL, "auto", "/s", "/t", 7), "/s/hpctrain-cache-7");
	check(stage_cache_dir(NULL, NULL, NULL, "/t", 7), "/t/hpctrain-cache-7");
	check(stage_cache_dir(NULL, "auto", "", "", 7), "/dev/shm/hpctrain-cache-7");
}

static void stage_path__entry_paths_name_the_hash_and_a_file_by_its_basename(void **state)
{
	(void)state;
	check(stage_entry_dir("/c", HASH), "/c/" HEX);
	check(stage_entry_dir("/c", "sha256:nothex"), NULL);
	check(stage_entry_data_path("/c", HASH, "/lus/d/", false), "/c/" HEX);
	check(stage_entry_data_path("/c", HASH, "/lus/d/train.bin", true), "/c/" HEX "/train.bin");
	check(stage_path_basename("/a/b//"), "b");
	check(stage_path_basename("/"), "data");
}

static void stage_path__env_name_is_upper_case_with_underscores(void **state)
{
	(void)state;
	check(spec_stage_env_name("image-net_1k"), "HPCTRAIN_DATA_IMAGE_NET_1K");
	check(spec_stage_env_name("a.b"), "HPCTRAIN_DATA_A_B");
}

static void stage_path__expand_replaces_percent_n_and_keeps_other_percents(void **state)
{
	(void)state;
	check(stage_path_expand("/tmp/c-%n/x%n", "n1"), "/tmp/c-n1/xn1");
	check(stage_path_expand("/a%%n/%d%", "n1"), "/a%n/%d%");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage_path__cache_dir_prefers_the_spec_then_to_then_scratch_tmpdir_and_shm),
		cmocka_unit_test(stage_path__entry_paths_name_the_hash_and_a_file_by_its_basename),
		cmocka_unit_test(stage_path__env_name_is_upper_case_with_underscores),
		cmocka_unit_test(stage_path__expand_replaces_percent_n_and_keeps_other_percents),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
