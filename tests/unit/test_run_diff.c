/* test_run_diff.c - hpctrain diff's library: two code records and
 * their snapshots compared (launcher/job/code_diff), two run
 * directories compared section by section (launcher/job/run_diff) and
 * the document as text (launcher/job/run_diff_text). */
#include "testlib.h"

#include "common/exitcode.h"            // defines: HPT_EXIT_*
#include "common/fileio.h"              // defines: fileio_write_atomic, fileio_mkdirs
#include "launcher/job/code_diff.h"     // defines: code_diff
#include "launcher/job/run_diff.h"      // defines: run_diff
#include "launcher/job/run_diff_text.h" // defines: run_diff_text

#include <jansson.h>

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_run_diff");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static void put_bytes(const char *rel, const char *text, size_t len)
{
	char *path = testlib_tmp_at(rel), *dir = xstrdup(path);
	struct sbuf err = SBUF_INIT;

	*strrchr(dir, '/') = '\0';
	assert_int_equal(fileio_mkdirs(dir, 0700, NULL), 0);
	assert_int_equal(fileio_write_atomic(path, text, len, 0600, 0, &err), 0);
	free(dir);
	free(path);
	sbuf_release(&err);
}

static void put(const char *rel, const char *text)
{
	put_bytes(rel, text, strlen(text));
}

/* A code record whose snapshot is testlib_tmp/snap; files as JSON. */
static json_t *code(const char *snap, const char *files)
{
	char *dir = testlib_tmp_at(snap);
	json_t *f = json_loads(files, 0, NULL);
	json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:n}", "digest", "sha256:x", "dir", "/src",
			      "snapshot", dir, "files", f, "git");

	free(dir);
	assert_non_null(o);
	return o;
}

#define F(path, hash) "{\"path\":\"" path "\",\"mode\":420,\"size\":1,\"sha256\":\"" hash "\"}"

static void code_diff__names_added_removed_and_changed_files_with_a_unified_diff(void **state)
{
	json_t *a, *b, *s, *changed;
	const char *diff;

	(void)state;
	put("sa/train.py", "import x\nlr = 0.05\nrun()\n");
	put("sb/train.py", "import x\nlr = 0.1\nrun()\n");
	put_bytes("sa/blob.bin", "a\0b", 3);
	put_bytes("sb/blob.bin", "a\0c", 3);
	a = code("sa", "[" F("blob.bin", "1") "," F("old.py", "2") "," F("same.py", "3") ","
		       F("train.py", "4") "]");
	b = code("sb", "[" F("blob.bin", "5") "," F("new.py", "6") "," F("same.py", "3") ","
		       F("train.py", "7") "]");
	json_object_set_new(b, "digest", json_string("sha256:y"));
	s = code_diff(a, b);
	assert_true(json_is_object(s));
	assert_string_equal(json_string_value(json_array_get(json_object_get(s, "added"), 0)), "new.py");
	assert_string_equal(json_string_value(json_array_get(json_object_get(s, "removed"), 0)),
			    "old.py");
	changed = json_object_get(s, "changed");
	assert_int_equal(json_array_size(changed), 2);
	/* blob.bin holds a NUL byte: binary (fileio reads it whole) */
	assert_string_equal(json_string_value(json_object_get(json_array_get(changed, 0), "note")),
			    "binary files differ");
	diff = json_string_value(json_object_get(json_array_get(changed, 1), "diff"));
	assert_non_null(diff);
	assert_string_equal(diff, "--- a/train.py\n+++ b/train.py\n@@ -1,3 +1,3 @@\n import x\n"
				  "-lr = 0.05\n+lr = 0.1\n run()\n");
	json_decref(s);
	/* the same record twice: no section */
	s = code_diff(a, a);
	assert_true(json_is_null(s));
	json_decref(s);
	json_decref(a);
	json_decref(b);
}

static void code_diff__a_missing_snapshot_is_said_and_the_file_still_listed(void **state)
{
	json_t *a = code("gone", "[" F("t.py", "1") "]"), *b = code("sb", "[" F("t.py", "2") "]");
	json_t *s = code_diff(a, b), *e;
	char *want = testlib_tmp_at("gone");
	char *note;

	(void)state;
	e = json_array_get(json_object_get(s, "changed"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "path")), "t.py");
	note = xasprintf("snapshot missing: %s", want);
	assert_string_equal(json_string_value(json_object_get(e, "note")), note);
	free(note);
	free(want);
	json_decref(s);
	json_decref(a);
	json_decref(b);
}

static void code_diff__a_path_that_climbs_out_is_never_read_and_one_side_alone_is_noted(void **state)
{
	json_t *a = code("sa", "[" F("../../etc/passwd", "1") "]");
	json_t *b = code("sb", "[" F("../../etc/passwd", "2") "]");
	json_t *s = code_diff(a, b);

	(void)state;
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(s, "changed"), 0), "note")),
			    "unsafe path, not read");
	json_decref(s);
	s = code_diff(NULL, b);
	assert_string_equal(json_string_value(json_object_get(s, "note")),
			    "no code recorded for the first run");
	assert_true(json_is_null(json_object_get(s, "a")));
	json_decref(s);
	s = code_diff(NULL, NULL);
	assert_true(json_is_null(s));
	json_decref(s);
	json_decref(a);
	json_decref(b);
}

#define SPEC_A "version: 1\nname: \"r\"\nresources:\n  nodes: 1\n  ranks_per_node: 2\n" \
	       "train:\n  batch_per_rank: 16\n  optimizer:\n    lr: 0.05\n"                \
	       "container:\n  digest: null\n"
#define SUMMARY "{\"event\":\"step\",\"step\":1}\n" \
		"{\"event\":\"summary\",\"steps\":40,\"test_accuracy\":0.5}\n"

static void run_diff__two_runs_differing_in_lr_differ_in_spec_alone_and_print_so(void **state)
{
	char *ra = testlib_tmp_at("ra"), *rb = testlib_tmp_at("rb");
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	json_t *doc = NULL;

	(void)state;
	put("ra/resolved.yaml", SPEC_A);
	put("ra/metrics.jsonl", SUMMARY);
	put("rb/resolved.yaml", "version: 1\nname: \"r\"\nresources:\n  nodes: 1\n"
				"  ranks_per_node: 2\ntrain:\n  batch_per_rank: 16\n  optimizer:\n"
				"    lr: 0.1\ncontainer:\n  digest: null\n");
	put("rb/metrics.jsonl", "{\"event\":\"summary\",\"steps\":40,\"test_accuracy\":0.75}\n");
	assert_int_equal(run_diff(ra, rb, &doc, &err), 0);
	assert_true(json_is_false(json_object_get(doc, "same")));
	assert_int_equal(json_array_size(json_object_get(doc, "spec")), 1);
	assert_true(json_is_null(json_object_get(doc, "code")));
	assert_true(json_is_null(json_object_get(doc, "image")));
	assert_int_equal(json_array_size(json_object_get(doc, "shape")), 0);
	run_diff_text(doc, 0, &text);
	assert_non_null(strstr(text.buf, "== spec ==\n- train.optimizer.lr: 0.05\n"
					 "+ train.optimizer.lr: 0.1\n== metrics ==\n"));
	assert_non_null(strstr(text.buf, "  test_accuracy  0.5  0.75\n"));
	json_decref(doc);
	/* a run against itself: the same, and no text */
	sbuf_reset(&text);
	assert_int_equal(run_diff(ra, ra, &doc, &err), 0);
	assert_true(json_is_true(json_object_get(doc, "same")));
	run_diff_text(doc, 0, &text);
	assert_int_equal(text.len, 0);
	json_decref(doc);
	free(ra);
	free(rb);
	sbuf_release(&err);
	sbuf_release(&text);
}

static void run_diff__image_data_and_shape_sections_take_their_keys_out_of_spec(void **state)
{
	char *ra = testlib_tmp_at("ia"), *rb = testlib_tmp_at("ib");
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	json_t *doc = NULL, *data;

	(void)state;
	put("ia/resolved.yaml", "resources: {nodes: 1, ranks_per_node: 2}\n"
				"train: {batch_per_rank: 16}\ncontainer: {digest: \"sha256:aa\"}\n"
				"data:\n  stage:\n  - {name: \"ds\", src: \"/d\", manifest: \"sha256:m1\", "
				"bytes: 10, is_file: false}\n  - {name: \"gone\", src: \"/g\"}\n");
	put("ib/resolved.yaml", "resources: {nodes: 2, ranks_per_node: 2}\n"
				"train: {batch_per_rank: 16}\ncontainer: {digest: \"sha256:bb\"}\n"
				"data:\n  stage:\n  - {name: \"ds\", src: \"/d\", manifest: \"sha256:m2\", "
				"bytes: 12, is_file: false}\n");
	put("ib/nodes.json", "{\"nodes\": 2, \"world_size\": 4}\n");
	assert_int_equal(run_diff(ra, rb, &doc, &err), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "image"), "b")),
			    "sha256:bb");
	data = json_object_get(doc, "data");
	assert_int_equal(json_array_size(data), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(data, 0), "a")), "sha256:m1");
	assert_string_equal(json_string_value(json_object_get(json_array_get(data, 1), "entry")), "gone");
	assert_true(json_is_null(json_object_get(json_array_get(data, 1), "b")));
	run_diff_text(doc, 0, &text);
	/* spec names nodes and the entry that went, not the pinned fields */
	assert_non_null(strstr(text.buf, "== spec ==\n- resources.nodes: 1\n+ resources.nodes: 2\n"
					 "- data.stage[1].name: \"gone\"\n- data.stage[1].src: \"/g\"\n"
					 "== image ==\n- container.digest: sha256:aa\n"
					 "+ container.digest: sha256:bb\n== data ==\n- ds: sha256:m1\n"
					 "+ ds: sha256:m2\n- gone: (not pinned)\n"));
	assert_non_null(strstr(text.buf, "== shape ==\n- nodes: 1\n+ nodes: 2\n- world_size: 2\n"
					 "+ world_size: 4\n- global_batch: 32\n+ global_batch: 64\n"));
	json_decref(doc);
	free(ra);
	free(rb);
	sbuf_release(&err);
	sbuf_release(&text);
}

/* The code snapshot's data.stage entry, added with the data staged: its
 * source and manifest follow the code's digest, which the code section
 * shows; spec and data say nothing of it. */
static void run_diff__the_code_entry_of_data_stage_is_left_to_the_code_section(void **state)
{
	char *ra = testlib_tmp_at("ca"), *rb = testlib_tmp_at("cb");
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL;

	(void)state;
	put("ca/resolved.yaml", "code: {digest: \"sha256:aa\"}\n"
				"data:\n  stage:\n  - {name: \"ds\", src: \"/d\", manifest: \"sha256:m1\"}\n"
				"  - {name: \"code\", src: \"/o/.code/aa\", manifest: \"sha256:c1\"}\n");
	put("cb/resolved.yaml", "code: {digest: \"sha256:bb\"}\n"
				"data:\n  stage:\n  - {name: \"ds\", src: \"/d\", manifest: \"sha256:m1\"}\n"
				"  - {name: \"code\", src: \"/o/.code/bb\", manifest: \"sha256:c2\"}\n");
	assert_int_equal(run_diff(ra, rb, &doc, &err), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "spec")), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "data")), 0);
	json_decref(doc);
	/* without code, an entry of that name is data like any */
	put("cb/resolved.yaml", "data:\n  stage:\n  - {name: \"ds\", src: \"/d\", manifest: \"sha256:m1\"}\n"
				"  - {name: \"code\", src: \"/o/.code/bb\", manifest: \"sha256:c2\"}\n");
	assert_int_equal(run_diff(ra, rb, &doc, &err), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "data")), 1);
	json_decref(doc);
	free(ra);
	free(rb);
	sbuf_release(&err);
}

static void run_diff__a_run_without_resolved_yaml_is_no_input(void **state)
{
	char *ra = testlib_tmp_at("ra"), *none = testlib_tmp_at("none");
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL;

	(void)state;
	assert_int_equal(run_diff(ra, none, &doc, &err), HPT_EXIT_NO_INPUT);
	assert_null(doc);
	assert_non_null(strstr(err.buf, "none/resolved.yaml"));
	free(ra);
	free(none);
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(code_diff__names_added_removed_and_changed_files_with_a_unified_diff),
		cmocka_unit_test(code_diff__a_missing_snapshot_is_said_and_the_file_still_listed),
		cmocka_unit_test(code_diff__a_path_that_climbs_out_is_never_read_and_one_side_alone_is_noted),
		cmocka_unit_test(run_diff__two_runs_differing_in_lr_differ_in_spec_alone_and_print_so),
		cmocka_unit_test(run_diff__image_data_and_shape_sections_take_their_keys_out_of_spec),
		cmocka_unit_test(run_diff__the_code_entry_of_data_stage_is_left_to_the_code_section),
		cmocka_unit_test(run_diff__a_run_without_resolved_yaml_is_no_input),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
