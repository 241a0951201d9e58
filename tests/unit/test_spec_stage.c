/* test_spec_stage.c - data.stage, data.to, data.cache and container.stage
 * in the job spec core: each entry's checks with file:line:col, the
 * image entry container.stage adds, train.dataset's stage:NAME, and the
 * pinned fields in the resolved form. */
#include "tests/unit/testlib.h"

#include "common/spec/spec.h" // defines: spec_stage_find, spec_stage_dataset

#define HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void check_error(const char *spec, const char *want)
{
	struct loaded l;

	load(&l, spec);
	assert_int_equal(l.rc, -1);
	assert_diag(&l, want);
	loaded_release(&l);
}

static void check_ok(const char *spec, struct loaded *l)
{
	load(l, spec);
	if (l->rc)
		fail_msg("unexpected errors:\n%s", l->text.buf);
}

static void resolved(const char *spec, struct sbuf *out)
{
	struct loaded l;

	check_ok(spec, &l);
	assert_int_equal(spec_emit_resolved(&l.job, out), 0);
	loaded_release(&l);
}

static void spec_stage__reads_entries_in_order_with_defaults(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "data:\n  stage:\n  - {name: fmnist, src: /shared/fmnist}\n"
		 "  - name: w_2-b\n    src: /shared/w.bin\n", &l);
	assert_int_equal(l.job.data.nstage, 2);
	assert_string_equal(l.job.data.stage[0].name, "fmnist");
	assert_string_equal(l.job.data.stage[1].src, "/shared/w.bin");
	assert_null(l.job.data.stage[0].manifest);
	assert_string_equal(l.job.data.to, "auto");
	assert_null(l.job.data.cache_dir);
	assert_true(l.job.data.cache_max_gb == 0);
	assert_ptr_equal(spec_stage_find(&l.job.data, "w_2-b"), &l.job.data.stage[1]);
	assert_null(spec_stage_find(&l.job.data, "w"));
	loaded_release(&l);
	check_ok(MINIMAL "data: {to: /local, cache: {dir: /local/c, max_gb: 50}}\n", &l);
	assert_int_equal(l.job.data.nstage, 0);
	assert_string_equal(l.job.data.to, "/local");
	assert_string_equal(l.job.data.cache_dir, "/local/c");
	assert_true(l.job.data.cache_max_gb == 50);
	loaded_release(&l);
}

static void spec_stage__refuses_bad_names_relative_paths_and_duplicates_with_positions(void **state)
{
	(void)state;
	check_error(MINIMAL "data: {stage: [{name: FM, src: /a}]}\n",
		    "job.yaml:3:23: data.stage: item 1, name: \"FM\" may hold only lowercase "
		    "letters, digits, '_' and '-'");
	check_error(MINIMAL "data:\n  stage:\n  - {name: a, src: /a}\n  - {name: b, src: b/c}\n",
		    "job.yaml:6:20: data.stage: item 2, src: \"b/c\" must be an absolute path");
	check_error(MINIMAL "data: {stage: [{name: a, src: \"/a:/b\"}]}\n",
		    "job.yaml:3:31: data.stage: item 1, src: \"/a:/b\" must not hold ':', which "
		    "splits PATH, PYTHONPATH and a container's binds");
	check_error(MINIMAL "data:\n  stage:\n  - {name: a, src: /a}\n  - {name: a, src: /b}\n",
		    "job.yaml:6:12: data.stage: item 2, name: \"a\" is item 1's name too; names "
		    "must differ");
	check_error(MINIMAL "data: {stage: [{name: a, src: /a, nmae: /b}]}\n",
		    "job.yaml:3:35: data.stage: item 1: unknown key \"nmae\"; did you mean \"name\"?");
	check_error(MINIMAL "data: {stage: [{name: a}]}\n",
		    "job.yaml:3:16: data.stage: item 1: missing src");
	check_error(MINIMAL "data: {stage: [{src: /a}]}\n",
		    "job.yaml:3:16: data.stage: item 1: missing name");
	check_error(MINIMAL "data: {stage: [/a]}\n",
		    "job.yaml:3:16: data.stage: item 1: expected a mapping {name: NAME, src: PATH}, "
		    "got \"/a\"");
	check_error(MINIMAL "data: {stage: /a}\n",
		    "job.yaml:3:15: data.stage: expected a list of {name: NAME, src: PATH}, got \"/a\"");
	check_error(MINIMAL "data: {stage: [{name: a, src: /a, bytes: 4}]}\n",
		    "job.yaml:3:35: data.stage: item 1, bytes: pinned only with manifest");
	check_error(MINIMAL "data: {stage: [{name: a, src: /a, manifest: sha256:12}]}\n",
		    "job.yaml:3:45: data.stage: item 1, manifest: \"sha256:12\" must be sha256: and "
		    "64 lowercase hex digits");
}

static void spec_stage__checks_to_and_cache(void **state)
{
	(void)state;
	check_error(MINIMAL "data: {to: local}\n",
		    "job.yaml:3:12: data.to: \"local\" must be auto or an absolute path");
	check_error(MINIMAL "data: {cache: {dir: c}}\n",
		    "job.yaml:3:21: data.cache.dir: \"c\" must be an absolute path");
	check_error(MINIMAL "data: {cache: {dir: \"/c,d\"}}\n",
		    "job.yaml:3:21: data.cache.dir: \"/c,d\" must not hold ',', which splits a "
		    "container runtime's binds");
	check_error(MINIMAL "data: {to: \"/l:x\"}\n",
		    "job.yaml:3:12: data.to: \"/l:x\" must not hold ':', which splits PATH, "
		    "PYTHONPATH and a container's binds");
	check_error(MINIMAL "data: {cache: {max_gb: 0}}\n",
		    "job.yaml:3:24: data.cache.max_gb: expected a number in (0, 1000000] or null, "
		    "got \"0\"");
	check_error(MINIMAL "data: {cahce: {}}\n",
		    "job.yaml:3:8: data: unknown key \"cahce\"; did you mean \"cache\"?");
}

static void spec_stage__makes_the_staged_image_one_more_entry(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "command: [x]\ncontainer: {image: /img/t.sqfs, stage: true}\n"
		 "data: {stage: [{name: d, src: /d}]}\n", &l);
	assert_true(l.job.container.stage);
	assert_int_equal(l.job.data.nstage, 2);
	assert_string_equal(l.job.data.stage[1].name, "image");
	assert_string_equal(l.job.data.stage[1].src, "/img/t.sqfs");
	loaded_release(&l);
	check_error(MINIMAL "container: {stage: true}\n",
		    "job.yaml:1:1: container.stage: stages container.image, which is null");
	check_error(MINIMAL "command: [x]\ncontainer: {image: docker://x/y, stage: true}\n",
		    "job.yaml:1:1: container.stage: stages an image file or directory; the reference "
		    "\"docker://x/y\" is pulled by the runtime");
	check_error(MINIMAL "command: [x]\ncontainer: {image: /i, stage: true}\n"
		    "data: {stage: [{name: image, src: /other}]}\n",
		    "job.yaml:1:1: data.stage: the name \"image\" is the container image's when "
		    "container.stage is true; name this entry otherwise");
}

static void spec_stage__lets_train_dataset_name_an_entry(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "train: {dataset: \"stage:fm\"}\ndata: {stage: [{name: fm, src: /f}]}\n",
		 &l);
	assert_string_equal(spec_stage_dataset(l.job.train.dataset), "fm");
	assert_null(spec_stage_dataset("/data/fm"));
	loaded_release(&l);
	check_error(MINIMAL "train: {dataset: \"stage:fn\"}\ndata: {stage: [{name: fm, src: /f}]}\n",
		    "job.yaml:1:1: train.dataset: stage:fn names no data.stage entry");
	check_error(MINIMAL "train: {dataset: \"stage:F\"}\n",
		    "job.yaml:3:18: train.dataset: \"stage:F\" must be stage: and a data.stage "
		    "entry's name (lowercase letters, digits, '_', '-')");
}

/* The pinned fields appear once pinned and read back as they were: the
 * resolved form is a fixed point, and its hash changes with the data. */
static void spec_stage__emits_pinned_fields_only_once_pinned(void **state)
{
	static const char spec[] = MINIMAL "data: {stage: [{name: a, src: /a}]}\n";
	static const char pinned[] = MINIMAL "data: {stage: [{name: a, src: /a, manifest: "
		"\"sha256:" HEX "\", bytes: 123, is_file: true}], cache: {max_gb: 1.5}}\n";
	struct sbuf r1 = SBUF_INIT, r2 = SBUF_INIT, r3 = SBUF_INIT;

	(void)state;
	resolved(spec, &r1);
	assert_non_null(strstr(r1.buf, "data:\n  stage:\n  - name: \"a\"\n    src: \"/a\"\n"
				       "  to: \"auto\"\n  cache:\n    dir: null\n    max_gb: null\n"));
	assert_null(strstr(r1.buf, "manifest"));
	assert_non_null(strstr(r1.buf, "  stage: false\n"));
	resolved(pinned, &r2);
	assert_non_null(strstr(r2.buf, "  - name: \"a\"\n    src: \"/a\"\n    manifest: \"sha256:"
				       HEX "\"\n    bytes: 123\n    is_file: true\n"));
	assert_non_null(strstr(r2.buf, "    max_gb: 1.5\n"));
	resolved(r2.buf, &r3);
	assert_string_equal(r2.buf, r3.buf);
	sbuf_reset(&r3);
	resolved(MINIMAL "data: {stage: []}\n", &r3);
	assert_non_null(strstr(r3.buf, "data:\n  stage: []\n"));
	sbuf_release(&r1);
	sbuf_release(&r2);
	sbuf_release(&r3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spec_stage__reads_entries_in_order_with_defaults),
		cmocka_unit_test(spec_stage__refuses_bad_names_relative_paths_and_duplicates_with_positions),
		cmocka_unit_test(spec_stage__checks_to_and_cache),
		cmocka_unit_test(spec_stage__makes_the_staged_image_one_more_entry),
		cmocka_unit_test(spec_stage__lets_train_dataset_name_an_entry),
		cmocka_unit_test(spec_stage__emits_pinned_fields_only_once_pinned),
	};

	return cmocka_run_group_tests_name("test_spec_stage", tests, NULL, NULL);
}
