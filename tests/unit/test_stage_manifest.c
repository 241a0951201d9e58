/* test_stage_manifest.c - launcher/stage/stage_manifest: the hash that
 * names a cache entry (over paths, sizes and file hashes, not mtimes, in
 * a pinned canonical listing; a code tree's executable bits and link
 * targets too), the JSON round trip, and the manifests it refuses
 * (unsafe paths, duplicates, a hash that does not match, hostile links). */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"                   // defines: struct sbuf
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*

#include <openssl/evp.h>

static const unsigned char H1[32] = { 1, 2, 3 }, H2[32] = { 9, 8, 7 };

static void two_files(struct stage_manifest *m, int64_t mtime)
{
	memset(m, 0, sizeof(*m));
	stage_manifest_add(m, "b/x", 5, mtime, H2);
	stage_manifest_add(m, "a", 3, mtime + 1, H1);
}

static void stage_manifest__hash_is_of_the_canonical_listing(void **state)
{
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT, listing = SBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char hex[65], want[80];

	(void)state;
	two_files(&m, 100);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	assert_string_equal(m.v[0].path, "a");
	assert_int_equal(m.bytes, 8);
	sbuf_addstr(&listing, "hpctrain-stage-manifest 1\n");
	stage_manifest_hex_of(H1, hex);
	sbuf_addf(&listing, "3 %s a", hex);
	sbuf_addch(&listing, '\0');
	stage_manifest_hex_of(H2, hex);
	sbuf_addf(&listing, "5 %s b/x", hex);
	sbuf_addch(&listing, '\0');
	EVP_Digest(listing.buf, listing.len, md, &n, EVP_sha256(), NULL);
	stage_manifest_hex_of(md, hex);
	snprintf(want, sizeof(want), "sha256:%s", hex);
	assert_string_equal(m.hash, want);
	assert_non_null(stage_manifest_hex(m.hash));
	stage_manifest_release(&m);
	sbuf_release(&listing);
	sbuf_release(&err);
}

static void stage_manifest__hash_ignores_mtimes_but_not_sizes_hashes_or_paths(void **state)
{
	struct stage_manifest a, b, c = { 0 }, d = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	two_files(&a, 100);
	two_files(&b, 999);
	assert_int_equal(stage_manifest_seal(&a, &err), 0);
	assert_int_equal(stage_manifest_seal(&b, &err), 0);
	assert_string_equal(a.hash, b.hash);
	stage_manifest_add(&c, "a", 4, 0, H1);
	stage_manifest_add(&c, "b/x", 5, 0, H2);
	assert_int_equal(stage_manifest_seal(&c, &err), 0);
	assert_string_not_equal(a.hash, c.hash);
	stage_manifest_add(&d, "a", 3, 0, H1);
	stage_manifest_add(&d, "b/y", 5, 0, H2);
	assert_int_equal(stage_manifest_seal(&d, &err), 0);
	assert_string_not_equal(a.hash, d.hash);
	stage_manifest_release(&a);
	stage_manifest_release(&b);
	stage_manifest_release(&c);
	stage_manifest_release(&d);
	sbuf_release(&err);
}

static void stage_manifest__json_round_trip_keeps_every_field(void **state)
{
	struct stage_manifest m, back = { 0 };
	struct sbuf err = SBUF_INIT;
	json_t *j;

	(void)state;
	two_files(&m, 1234567890123);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	j = stage_manifest_to_json(&m);
	assert_int_equal(stage_manifest_from_json(j, &back, &err), 0);
	assert_string_equal(back.hash, m.hash);
	assert_int_equal(back.n, 2);
	assert_int_equal(back.bytes, 8);
	assert_false(back.is_file);
	assert_string_equal(back.v[1].path, "b/x");
	assert_int_equal(back.v[1].mtime_ns, 1234567890123);
	assert_memory_equal(back.v[1].sha256, H2, 32);
	json_decref(j);
	stage_manifest_release(&m);
	stage_manifest_release(&back);
	sbuf_release(&err);
}

static void stage_manifest__from_json_refuses_a_hash_that_does_not_match(void **state)
{
	struct stage_manifest m, back = { 0 };
	struct sbuf err = SBUF_INIT;
	json_t *j;

	(void)state;
	two_files(&m, 1);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	j = stage_manifest_to_json(&m);
	json_object_set_new(json_array_get(json_object_get(j, "files"), 0), "size", json_integer(4));
	assert_int_equal(stage_manifest_from_json(j, &back, &err), -1);
	assert_non_null(strstr(err.buf, "does not match its files"));
	assert_int_equal(back.n, 0);
	json_decref(j);
	stage_manifest_release(&m);
	sbuf_release(&err);
}

static void stage_manifest__refuses_paths_that_leave_the_entry(void **state)
{
	static const char *const bad[] = { "../x", "/etc/passwd", "a//b", "a/./b", "a/", "", "a/.." };
	struct sbuf err = SBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct stage_manifest m = { 0 };

		stage_manifest_add(&m, bad[i], 1, 0, H1);
		sbuf_reset(&err);
		assert_int_equal(stage_manifest_seal(&m, &err), -1);
		assert_non_null(strstr(err.buf, "unsafe path"));
		stage_manifest_release(&m);
	}
	sbuf_release(&err);
}

static void stage_manifest__refuses_a_path_listed_twice(void **state)
{
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	stage_manifest_add(&m, "a", 1, 0, H1);
	stage_manifest_add(&m, "a", 1, 0, H1);
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	assert_string_equal(err.buf, "the path 'a' is listed twice");
	stage_manifest_release(&m);
	sbuf_release(&err);
}

static void stage_manifest__a_file_source_has_one_empty_path(void **state)
{
	struct stage_manifest m = { 0 }, d = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	m.is_file = true;
	stage_manifest_add(&m, "", 3, 0, H1);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	assert_int_equal(stage_manifest_find(&m, ""), 0);
	stage_manifest_add(&d, "", 3, 0, H1); /* a directory cannot hold "" */
	assert_int_equal(stage_manifest_seal(&d, &err), -1);
	stage_manifest_release(&m);
	stage_manifest_release(&d);
	sbuf_release(&err);
}

static void stage_manifest__hex_helpers_accept_only_64_lower_hex_digits(void **state)
{
	unsigned char b[32];
	char hex[65];

	(void)state;
	stage_manifest_hex_of(H2, hex);
	assert_int_equal(stage_manifest_parse_hex(hex, b), 0);
	assert_memory_equal(b, H2, 32);
	assert_int_equal(stage_manifest_parse_hex("abc", b), -1);
	hex[3] = 'G';
	assert_int_equal(stage_manifest_parse_hex(hex, b), -1);
	assert_null(stage_manifest_hex("md5:00"));
	assert_null(stage_manifest_hex(NULL));
}

static void stage_manifest__diff_names_changed_new_and_gone_files_in_order(void **state)
{
	struct stage_manifest was = { 0 }, now = { 0 };
	struct sbuf err = SBUF_INIT, out = SBUF_INIT;

	(void)state;
	two_files(&was, 100);
	stage_manifest_add(&was, "c", 1, 100, H1);
	stage_manifest_add(&now, "a", 3, 500, H1);   /* touched only: the same */
	stage_manifest_add(&now, "b/x", 5, 100, H1); /* another sha256 */
	stage_manifest_add(&now, "d", 2, 100, H2);
	assert_int_equal(stage_manifest_seal(&was, &err), 0);
	assert_int_equal(stage_manifest_seal(&now, &err), 0);
	assert_int_equal(stage_manifest_diff(&was, &now, "/src", 10, &out), 3);
	assert_string_equal(out.buf, "/src/b/x (changed), /src/c (gone), /src/d (new)");
	sbuf_reset(&out);
	assert_int_equal(stage_manifest_diff(&was, &now, "/src", 1, &out), 3);
	assert_string_equal(out.buf, "/src/b/x (changed), and 2 more");
	sbuf_reset(&out);
	assert_int_equal(stage_manifest_diff(&was, &was, "/src", 10, &out), 0);
	assert_string_equal(out.buf, "");
	stage_manifest_release(&was);
	stage_manifest_release(&now);
	sbuf_release(&err);
	sbuf_release(&out);
}

static void stage_manifest__diff_of_a_file_source_names_the_source(void **state)
{
	struct stage_manifest was = { 0 }, now = { 0 };
	struct sbuf err = SBUF_INIT, out = SBUF_INIT;

	(void)state;
	stage_manifest_add(&was, "", 3, 1, H1);
	stage_manifest_add(&now, "", 4, 1, H1);
	was.is_file = now.is_file = true;
	assert_int_equal(stage_manifest_seal(&was, &err), 0);
	assert_int_equal(stage_manifest_seal(&now, &err), 0);
	assert_int_equal(stage_manifest_diff(&was, &now, "/img.sqfs", 5, &out), 1);
	assert_string_equal(out.buf, "/img.sqfs (changed)");
	stage_manifest_release(&was);
	stage_manifest_release(&now);
	sbuf_release(&err);
	sbuf_release(&out);
}

/* jansson packs UTF-8 only: a name that is not would drop out of the
 * JSON (bytes and listing then disagree with the files, and no copy ever
 * checks), so sealing refuses it, naming it with the bad byte escaped. */
static void stage_manifest__refuses_a_name_that_is_not_utf8_naming_it_escaped(void **state)
{
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	stage_manifest_add(&m, "ok", 1, 0, H1);
	stage_manifest_add(&m, "dir/caf\xe9.bin", 2, 0, H2); /* Latin-1 e-acute */
	assert_null(stage_manifest_to_json(&m)); /* refused, not dropped */
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	assert_string_equal(err.buf, "the file name 'dir/caf\\xe9.bin' is not UTF-8 (its bytes "
				     "shown as \\xHH); rename it, a data set's names must be UTF-8");
	stage_manifest_release(&m);
	/* the same name in UTF-8 is a name like any other */
	stage_manifest_add(&m, "dir/caf\xc3\xa9.bin", 2, 0, H2);
	sbuf_reset(&err);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	stage_manifest_release(&m);
	sbuf_release(&err);
}

/* run.sh (executable), lib.py, model.py -> models/v2.py: a code tree. */
static void tree(struct stage_manifest *m, const char *target, bool exec)
{
	memset(m, 0, sizeof(*m));
	stage_manifest_add(m, "run.sh", 7, 5, H1);
	m->v[m->n - 1].exec = exec;
	stage_manifest_add_link(m, "model.py", target);
	stage_manifest_add(m, "lib.py", 2, 5, H2);
}

static void stage_manifest__a_tree_lists_modes_and_link_targets_and_round_trips(void **state)
{
	struct stage_manifest m, back = { 0 };
	struct sbuf err = SBUF_INIT, listing = SBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char hex[65], want[80];
	json_t *j, *files;

	(void)state;
	tree(&m, "models/v2.py", true);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	assert_int_equal(m.bytes, 9);
	sbuf_addstr(&listing, "hpctrain-stage-manifest 2\n");
	stage_manifest_hex_of(H2, hex);
	sbuf_addf(&listing, "f 2 %s lib.py", hex);
	sbuf_addch(&listing, '\0');
	sbuf_addstr(&listing, "l models/v2.py");
	sbuf_addch(&listing, '\0');
	sbuf_addstr(&listing, "model.py");
	sbuf_addch(&listing, '\0');
	stage_manifest_hex_of(H1, hex);
	sbuf_addf(&listing, "x 7 %s run.sh", hex);
	sbuf_addch(&listing, '\0');
	EVP_Digest(listing.buf, listing.len, md, &n, EVP_sha256(), NULL);
	stage_manifest_hex_of(md, hex);
	snprintf(want, sizeof(want), "sha256:%s", hex);
	assert_string_equal(m.hash, want);
	/* JSON: a link is its path and target; "exec" only where true */
	j = stage_manifest_to_json(&m);
	files = json_object_get(j, "files");
	assert_null(json_object_get(json_array_get(files, 0), "exec"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(files, 1), "link")),
			    "models/v2.py");
	assert_int_equal(json_object_size(json_array_get(files, 1)), 2);
	assert_true(json_is_true(json_object_get(json_array_get(files, 2), "exec")));
	assert_int_equal(stage_manifest_from_json(j, &back, &err), 0);
	assert_string_equal(back.hash, m.hash);
	assert_int_equal(back.n, 3);
	assert_false(back.v[0].exec);
	assert_null(back.v[0].link);
	assert_string_equal(back.v[1].link, "models/v2.py");
	assert_true(back.v[2].exec);
	json_decref(j);
	stage_manifest_release(&m);
	stage_manifest_release(&back);
	sbuf_release(&listing);
	sbuf_release(&err);
}

static void stage_manifest__hash_and_diff_follow_a_mode_or_a_link_target(void **state)
{
	struct stage_manifest a, b, c, d = { 0 };
	struct sbuf err = SBUF_INIT, out = SBUF_INIT;

	(void)state;
	tree(&a, "models/v2.py", true);
	tree(&b, "models/v2.py", false);
	tree(&c, "models/v3.py", true);
	assert_int_equal(stage_manifest_seal(&a, &err), 0);
	assert_int_equal(stage_manifest_seal(&b, &err), 0);
	assert_int_equal(stage_manifest_seal(&c, &err), 0);
	assert_string_not_equal(a.hash, b.hash);
	assert_string_not_equal(a.hash, c.hash);
	assert_int_equal(stage_manifest_diff(&a, &b, "p", 5, &out), 1);
	assert_string_equal(out.buf, "p/run.sh (changed)");
	sbuf_reset(&out);
	assert_int_equal(stage_manifest_diff(&a, &c, "p", 5, &out), 1);
	assert_string_equal(out.buf, "p/model.py (changed)");
	/* a file in place of the link, of no bytes: another tree */
	stage_manifest_add(&d, "run.sh", 7, 5, H1);
	d.v[0].exec = true;
	stage_manifest_add(&d, "model.py", 0, 5, (const unsigned char[32]){ 0 });
	stage_manifest_add(&d, "lib.py", 2, 5, H2);
	assert_int_equal(stage_manifest_seal(&d, &err), 0);
	assert_string_not_equal(a.hash, d.hash);
	sbuf_reset(&out);
	assert_int_equal(stage_manifest_diff(&a, &d, "p", 5, &out), 1);
	assert_string_equal(out.buf, "p/model.py (changed)");
	stage_manifest_release(&a);
	stage_manifest_release(&b);
	stage_manifest_release(&c);
	stage_manifest_release(&d);
	sbuf_release(&out);
	sbuf_release(&err);
}

static void stage_manifest__keeps_a_link_leaving_the_tree_but_refuses_hostile_ones(void **state)
{
	static const char *const kept[] = { "/etc", "../../data", "a\\b", ".." };
	char *longest = xcalloc(STAGE_LINK_MAX + 2, 1);
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;
	json_t *j;

	(void)state;
	/* where a link points is not the engine's business: kept as text */
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		stage_manifest_add_link(&m, "l", kept[i]);
		assert_int_equal(stage_manifest_seal(&m, &err), 0);
		stage_manifest_release(&m);
	}
	stage_manifest_add_link(&m, "data", "");
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	assert_string_equal(err.buf, "the link 'data' has an empty target");
	stage_manifest_release(&m);
	sbuf_reset(&err);
	stage_manifest_add_link(&m, "data", "/scratch/caf\xe9");
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	assert_string_equal(err.buf, "the link 'data' has the target '/scratch/caf\\xe9', which is "
				     "not UTF-8 (its bytes shown as \\xHH)");
	stage_manifest_release(&m);
	sbuf_reset(&err);
	memset(longest, 'a', STAGE_LINK_MAX + 1);
	stage_manifest_add_link(&m, "data", longest);
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	assert_string_equal(err.buf, "the link 'data' has a target of 4096 bytes, more than 4095");
	stage_manifest_release(&m);
	sbuf_reset(&err);
	/* a file under a link would be written through it, into /etc */
	stage_manifest_add_link(&m, "d", "/etc");
	stage_manifest_add(&m, "d-x", 1, 0, H1); /* sorts between "d" and "d/" */
	stage_manifest_add(&m, "d/cron.d/job", 1, 0, H1);
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	assert_string_equal(err.buf, "the path 'd/cron.d/job' lies under the link 'd'");
	stage_manifest_release(&m);
	sbuf_reset(&err);
	/* a link is no file source */
	stage_manifest_add_link(&m, "", "/etc/passwd");
	m.is_file = true;
	assert_int_equal(stage_manifest_seal(&m, &err), -1);
	stage_manifest_release(&m);
	/* from a peer: a link with bytes, or with a sha256, is neither form */
	j = json_pack("{s:i, s:s, s:b, s:I, s:[{s:s, s:s, s:I}]}", "version", 1, "hash",
		      "sha256:00", "is_file", 0, "bytes", (json_int_t)0, "files", "path", "l",
		      "link", "/etc", "size", (json_int_t)3);
	sbuf_reset(&err);
	assert_int_equal(stage_manifest_from_json(j, &m, &err), -1);
	assert_non_null(strstr(err.buf, "manifest file 0: expected path and link"));
	json_decref(j);
	free(longest);
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage_manifest__hash_is_of_the_canonical_listing),
		cmocka_unit_test(stage_manifest__hash_ignores_mtimes_but_not_sizes_hashes_or_paths),
		cmocka_unit_test(stage_manifest__json_round_trip_keeps_every_field),
		cmocka_unit_test(stage_manifest__from_json_refuses_a_hash_that_does_not_match),
		cmocka_unit_test(stage_manifest__refuses_paths_that_leave_the_entry),
		cmocka_unit_test(stage_manifest__refuses_a_path_listed_twice),
		cmocka_unit_test(stage_manifest__a_file_source_has_one_empty_path),
		cmocka_unit_test(stage_manifest__hex_helpers_accept_only_64_lower_hex_digits),
		cmocka_unit_test(stage_manifest__diff_names_changed_new_and_gone_files_in_order),
		cmocka_unit_test(stage_manifest__diff_of_a_file_source_names_the_source),
		cmocka_unit_test(stage_manifest__refuses_a_name_that_is_not_utf8_naming_it_escaped),
		cmocka_unit_test(stage_manifest__a_tree_lists_modes_and_link_targets_and_round_trips),
		cmocka_unit_test(stage_manifest__hash_and_diff_follow_a_mode_or_a_link_target),
		cmocka_unit_test(stage_manifest__keeps_a_link_leaving_the_tree_but_refuses_hostile_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
