/* test_code.c - the code snapshot's pure parts (launcher/job/code_list,
 * code_ignore, code_limit) and the code: section of the spec: the
 * listing and its digest, the ignore rules, the refusal over a limit,
 * code.json's shape, and the resolved form with and without code; the
 * snapshot as the data.stage entry "code" (code_stage) and the spec's
 * rules for that name; and
 * the software around the code: a venv's packages (venv_list) and their
 * digest in the resolved form, the modules loaded (software_modules). */
#include "testlib.h"

#include "launcher/job/code_ignore.h" // defines: struct code_ignore, code_ignore_*
#include "launcher/job/code_limit.h"  // defines: code_limit_check
#include "launcher/job/code_list.h"   // defines: struct code_list, code_list_*
#include "launcher/job/code_stage.h"  // defines: code_stage_pin
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*
#include "launcher/stage/stage_job.h"      // defines: struct stage_job, stage_job_from_spec
#include "launcher/job/venv_list.h"   // defines: struct venv_list, venv_list_*
#include "common/software_modules.h"  // defines: software_modules_json

#include <jansson.h>
#include <openssl/evp.h>

static const unsigned char SHA_A[32] = { 0xaa };
static const unsigned char SHA_B[32] = { 0xbb };

static void hex_of(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void sample(struct code_list *l)
{
	struct statkey k = { .dev = 1, .ino = 2, .size = 3, .mtime_ns = 4, .ctime_ns = 5 };

	memset(l, 0, sizeof(*l));
	code_list_add_file(l, "train.py", 0100644, 3, SHA_A, &k);
	code_list_add_link(l, "data", "/scratch/data");
	code_list_add_file(l, "bin/run", 0100755, 10, SHA_B, NULL);
}

static void code_list__digest_is_of_the_canonical_listing(void **state)
{
	struct code_list l;
	struct sbuf err = SBUF_INIT, want = SBUF_INIT;
	unsigned char md[32];
	unsigned int n = 0;
	char a[65], b[65], hex[65];

	(void)state;
	sample(&l);
	assert_int_equal(code_list_seal(&l, &err), 0);
	assert_string_equal(l.v[0].path, "bin/run");
	assert_string_equal(l.v[1].path, "data");
	assert_string_equal(l.v[2].path, "train.py");
	assert_int_equal(l.bytes, 13);
	hex_of(SHA_A, 32, a);
	hex_of(SHA_B, 32, b);
	sbuf_addstr(&want, "hpctrain-code 1\n");
	sbuf_addf(&want, "755 10 %s bin/run", b);
	sbuf_addch(&want, '\0');
	sbuf_addstr(&want, "777 link /scratch/data data");
	sbuf_addch(&want, '\0');
	sbuf_addf(&want, "644 3 %s train.py", a);
	sbuf_addch(&want, '\0');
	EVP_Digest(want.buf, want.len, md, &n, EVP_sha256(), NULL);
	hex_of(md, 32, hex);
	assert_string_equal(l.digest + 7, hex);
	assert_memory_equal(l.digest, "sha256:", 7);
	code_list_release(&l);
	sbuf_release(&err);
	sbuf_release(&want);
}

static void code_list__digest_ignores_stat_keys_but_not_the_exec_bit_or_a_target(void **state)
{
	struct code_list l, m;
	struct sbuf err = SBUF_INIT;
	char first[CODE_DIGEST_SIZE];

	(void)state;
	sample(&l);
	assert_int_equal(code_list_seal(&l, &err), 0);
	strcpy(first, l.digest);
	memset(&m, 0, sizeof(m));
	code_list_add_file(&m, "bin/run", 0100700, 10, SHA_B, NULL); /* other bits: same */
	code_list_add_link(&m, "data", "/scratch/data");
	code_list_add_file(&m, "train.py", 0100600, 3, SHA_A, NULL);
	assert_int_equal(code_list_seal(&m, &err), 0);
	assert_string_equal(m.digest, first);
	code_list_release(&m);

	code_list_add_file(&m, "bin/run", 0100644, 10, SHA_B, NULL); /* not executable now */
	code_list_add_link(&m, "data", "/scratch/data");
	code_list_add_file(&m, "train.py", 0100644, 3, SHA_A, NULL);
	assert_int_equal(code_list_seal(&m, &err), 0);
	assert_string_not_equal(m.digest, first);
	code_list_release(&m);

	code_list_add_file(&m, "bin/run", 0100755, 10, SHA_B, NULL);
	code_list_add_link(&m, "data", "/scratch/other");
	code_list_add_file(&m, "train.py", 0100644, 3, SHA_A, NULL);
	assert_int_equal(code_list_seal(&m, &err), 0);
	assert_string_not_equal(m.digest, first);
	code_list_release(&m);
	code_list_release(&l);
	sbuf_release(&err);
}

static void code_list__refuses_paths_outside_the_tree_twice_or_not_utf8(void **state)
{
	static const char *const bad[] = { "../x", "/abs", "a//b", "a/./b", "a/" };
	struct sbuf err = SBUF_INIT;
	struct code_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&l, 0, sizeof(l));
		code_list_add_file(&l, bad[i], 0644, 0, SHA_A, NULL);
		assert_int_equal(code_list_seal(&l, &err), -1);
		code_list_release(&l);
	}
	sbuf_reset(&err);
	code_list_add_file(&l, "x.py", 0644, 0, SHA_A, NULL);
	code_list_add_file(&l, "x.py", 0644, 0, SHA_B, NULL);
	assert_int_equal(code_list_seal(&l, &err), -1);
	assert_string_equal(err.buf, "the code's file name 'x.py' is listed twice");
	code_list_release(&l);
	sbuf_reset(&err);
	code_list_add_file(&l, "caf\xe9.py", 0644, 0, SHA_A, NULL);
	assert_int_equal(code_list_seal(&l, &err), -1);
	assert_string_equal(err.buf, "the code's file name 'caf\\xe9.py' is not UTF-8 (its bytes "
				     "shown as \\xHH); rename it");
	code_list_release(&l);
	sbuf_release(&err);
}

static void code_list__a_link_escapes_by_an_absolute_target_or_too_many_dotdots(void **state)
{
	(void)state;
	assert_true(code_list_link_escapes("etc", "/etc"));
	assert_true(code_list_link_escapes("l", "../x"));
	assert_false(code_list_link_escapes("a/l", "../x"));
	assert_false(code_list_link_escapes("a/b/l", "../../x"));
	assert_true(code_list_link_escapes("a/b/l", "../../../x"));
	assert_true(code_list_link_escapes("a/l", "b/../../../x"));
	assert_false(code_list_link_escapes("l", "./x/./y"));
}

static void code_list__json_has_the_shape_diff_reads(void **state)
{
	struct sbuf err = SBUF_INIT;
	struct code_list l;
	json_t *doc, *git = json_pack("{s:s, s:s, s:b, s:[s]}", "commit", "abc", "branch", "main",
				      "dirty", 1, "changed", "train.py");
	char a[65];

	(void)state;
	sample(&l);
	assert_int_equal(code_list_seal(&l, &err), 0);
	doc = code_list_json(&l, "/home/me/proj", "/home/me/proj/runs/.code/x", git);
	assert_non_null(doc);
	hex_of(SHA_A, 32, a);
	{
		json_t *f = json_array_get(json_object_get(doc, "files"), 1);

		assert_string_equal(json_string_value(json_object_get(f, "path")), "data");
		assert_int_equal(json_integer_value(json_object_get(f, "mode")), 511);
		assert_string_equal(json_string_value(json_object_get(f, "link")), "/scratch/data");
		assert_null(json_object_get(f, "sha256"));
	}
	assert_int_equal(json_integer_value(json_object_get(doc, "file_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(doc, "bytes")), 13);
	assert_string_equal(json_string_value(json_object_get(doc, "digest")), l.digest);
	assert_string_equal(json_string_value(json_object_get(doc, "dir")), "/home/me/proj");
	assert_string_equal(json_string_value(json_object_get(doc, "snapshot")),
			    "/home/me/proj/runs/.code/x");
	{
		json_t *f = json_array_get(json_object_get(doc, "files"), 2);

		assert_string_equal(json_string_value(json_object_get(f, "path")), "train.py");
		assert_int_equal(json_integer_value(json_object_get(f, "mode")), 420);
		assert_int_equal(json_integer_value(json_object_get(f, "size")), 3);
		assert_string_equal(json_string_value(json_object_get(f, "sha256")), a);
		assert_null(json_object_get(f, "link"));
	}
	assert_true(json_is_true(json_object_get(json_object_get(doc, "git"), "dirty")));
	json_decref(doc);
	doc = code_list_json(&l, "/d", "/s", NULL);
	assert_true(json_is_null(json_object_get(doc, "git")));
	json_decref(doc);
	code_list_release(&l);
	sbuf_release(&err);
}

static void code_ignore__follows_gitignore_lines_last_match_winning(void **state)
{
	static const char text[] = "# build output\n"
				   "*.pyc\n"
				   "!keep.pyc\n"
				   "/build\n"
				   "data/\n"
				   "docs/*.html\n"
				   "**/tmp-*\n"
				   "\n";
	struct code_ignore ig = { 0 };

	(void)state;
	code_ignore_add_text(&ig, text, strlen(text), "");
	code_ignore_add(&ig, "*.log", "sub");
	assert_true(code_ignore_is_ignored(&ig, "a.pyc", false));
	assert_true(code_ignore_is_ignored(&ig, "x/y/a.pyc", false));
	assert_false(code_ignore_is_ignored(&ig, "x/keep.pyc", false));
	assert_true(code_ignore_is_ignored(&ig, "build", true));
	assert_false(code_ignore_is_ignored(&ig, "src/build", true));
	assert_true(code_ignore_is_ignored(&ig, "data", true));
	assert_false(code_ignore_is_ignored(&ig, "data", false)); /* a file named data */
	assert_true(code_ignore_is_ignored(&ig, "x/data/file.py", false)); /* below it */
	assert_true(code_ignore_is_ignored(&ig, "docs/a.html", false));
	assert_false(code_ignore_is_ignored(&ig, "docs/api/a.html", false));
	assert_true(code_ignore_is_ignored(&ig, "a/b/tmp-1", false));
	assert_true(code_ignore_is_ignored(&ig, "sub/x.log", false));
	assert_false(code_ignore_is_ignored(&ig, "x.log", false)); /* another directory's rule */
	assert_false(code_ignore_is_ignored(&ig, "train.py", false));
	code_ignore_release(&ig);
}

static void code_ignore__include_globs_keep_only_what_matches(void **state)
{
	char *globs[] = { "*.py", "conf/*.yaml" };

	(void)state;
	assert_true(code_ignore_is_included(NULL, 0, "anything"));
	assert_true(code_ignore_is_included(globs, 2, "train.py"));
	assert_true(code_ignore_is_included(globs, 2, "pkg/model.py"));
	assert_true(code_ignore_is_included(globs, 2, "conf/a.yaml"));
	assert_false(code_ignore_is_included(globs, 2, "conf/x/a.yaml"));
	assert_false(code_ignore_is_included(globs, 2, "data.bin"));
}

static void code_limit__refusal_names_the_largest_subdirectories_and_the_key(void **state)
{
	struct sbuf err = SBUF_INIT;
	struct code_list l = { 0 };

	(void)state;
	code_list_add_file(&l, "a/1", 0644, 5, SHA_A, NULL);
	code_list_add_file(&l, "b/1", 0644, 1, SHA_A, NULL);
	code_list_add_file(&l, "b/2", 0644, 1, SHA_A, NULL);
	code_list_add_file(&l, "b/c/3", 0644, 1, SHA_A, NULL);
	code_list_add_file(&l, "top", 0644, 2, SHA_A, NULL);
	code_list_add_file(&l, "d/1", 0644, 1, SHA_A, NULL);
	/* ties go by name: "./" sorts before "a/" */
	assert_int_equal(code_limit_check(&l, "/p", 100, 6, &err), 0);
	assert_int_equal(code_limit_check(&l, "/p", 100, 5, &err), -1);
	assert_string_equal(err.buf,
			    "the code in /p is 6 files and 11 bytes, more than code.max_files (5) "
			    "allows; the largest subdirectories: b/ (3 files, 3 bytes), ./ (1 files, "
			    "2 bytes), a/ (1 files, 5 bytes); leave files out (code.exclude, "
			    ".hpctrainignore, .gitignore), point code.dir at a smaller directory, or "
			    "raise code.max_files");
	sbuf_reset(&err);
	assert_int_equal(code_limit_check(&l, "/p", 10, 100, &err), -1);
	assert_string_equal(err.buf,
			    "the code in /p is 6 files and 11 bytes, more than code.max_bytes (10) "
			    "allows; the largest subdirectories: a/ (1 files, 5 bytes), b/ (3 files, "
			    "3 bytes), ./ (1 files, 2 bytes); leave files out (code.exclude, "
			    ".hpctrainignore, .gitignore), point code.dir at a smaller directory, or "
			    "raise code.max_bytes");
	code_list_release(&l);
	sbuf_release(&err);
}

static void spec__code_is_left_out_of_the_resolved_form_until_set(void **state)
{
	struct loaded l;
	struct sbuf out = SBUF_INIT;

	(void)state;
	load(&l, MINIMAL "command: [python3, train.py]\n");
	assert_int_equal(l.rc, 0);
	assert_true(spec_code_is_on(&l.job));
	assert_int_equal(spec_emit_resolved(&l.job, &out), 0);
	assert_null(strstr(out.buf, "\ncode:"));
	l.job.code.digest = xstrdup("sha256:" "0123456789abcdef0123456789abcdef"
				    "0123456789abcdef0123456789abcdef");
	l.job.code.dir = xstrdup("/home/me/proj");
	sbuf_reset(&out);
	assert_int_equal(spec_emit_resolved(&l.job, &out), 0);
	assert_non_null(strstr(out.buf, "\ncode:\n  enabled: auto\n  dir: \"/home/me/proj\"\n"
					"  include: []\n  exclude: []\n  max_bytes: 1073741824\n"
					"  max_files: 100000\n  digest: \"sha256:0123"));
	loaded_release(&l);
	sbuf_release(&out);

	load(&l, MINIMAL "train: {epochs: 1}\n");
	assert_false(spec_code_is_on(&l.job));
	loaded_release(&l);
}

static void spec__code_false_turns_it_off_and_a_bad_digest_is_refused(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, MINIMAL "command: [python3, train.py]\ncode: false\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.job.code.enabled, CODE_OFF);
	assert_false(spec_code_is_on(&l.job));
	loaded_release(&l);
	load(&l, MINIMAL "command: [x]\ncode: {digest: unpinned, max_files: 0}\n");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "job.yaml:4:16: code.digest: \"unpinned\" must be sha256: and 64 "
			"lowercase hex digits");
	assert_diag(&l, "job.yaml:4:37: code.max_files: expected an integer 1..100000000, got \"0\"");
	loaded_release(&l);
}

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SNAP "/out/.code/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void code_stage__adds_the_snapshot_with_the_manifest_of_its_files(void **state)
{
	struct loaded j;
	struct code_list l = { 0 };
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;
	size_t files = 0;

	(void)state;
	load(&j, MINIMAL "command: [python3, train.py]\n"
		 "data: {stage: [{name: ds, src: /shared/ds}]}\n");
	assert_int_equal(j.rc, 0);
	code_list_add_file(&l, "train.py", 0100644, 3, SHA_A, NULL);
	code_list_add_file(&l, "lib/util.py", 0100644, 10, SHA_B, NULL);
	assert_int_equal(code_list_seal(&l, &err), 0);
	/* the stage engine's manifest of the same files: what the stage
	 * step's scan of the snapshot gives */
	stage_manifest_add(&m, "train.py", 3, 99, SHA_A);
	stage_manifest_add(&m, "lib/util.py", 10, 99, SHA_B);
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	assert_int_equal(code_stage_pin(&j.job, &l, SNAP, &files, &err), 0);
	assert_int_equal(j.job.data.nstage, 2);
	assert_string_equal(j.job.data.stage[1].name, SPEC_STAGE_CODE);
	assert_string_equal(j.job.data.stage[1].src, SNAP);
	assert_string_equal(j.job.data.stage[1].manifest, m.hash);
	assert_int_equal(j.job.data.stage[1].bytes, 13);
	assert_false(j.job.data.stage[1].is_file);
	assert_int_equal(files, 2);
	/* pinned again (a resolved form submitted anew): replaced, not doubled */
	assert_int_equal(code_stage_pin(&j.job, &l, SNAP, &files, &err), 0);
	assert_int_equal(j.job.data.nstage, 2);
	stage_manifest_release(&m);
	code_list_release(&l);
	loaded_release(&j);
	sbuf_release(&err);
}

static void code_stage__stages_executables_as_such_and_links_as_links(void **state)
{
	struct loaded j;
	struct code_list l;
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;
	size_t files = 0;

	(void)state;
	load(&j, MINIMAL "command: [python3, train.py]\n");
	sample(&l);
	assert_int_equal(code_list_seal(&l, &err), 0);
	/* nothing staged: no entry, and nothing to say */
	assert_int_equal(code_stage_pin(&j.job, &l, SNAP, &files, &err), 0);
	assert_int_equal(j.job.data.nstage, 0);
	loaded_release(&j);
	load(&j, MINIMAL "command: [python3, train.py]\n"
		 "data: {stage: [{name: ds, src: /shared/ds}]}\n");
	assert_int_equal(code_stage_pin(&j.job, &l, SNAP, &files, &err), 0);
	/* the manifest the stage step's scan of the snapshot gives: bin/run
	 * executable (0700 there), data a link (STAGE_SCAN_TREE) */
	stage_manifest_add(&m, "train.py", 3, 99, SHA_A);
	stage_manifest_add_link(&m, "data", "/scratch/data");
	stage_manifest_add(&m, "bin/run", 10, 99, SHA_B);
	m.v[2].exec = true;
	assert_int_equal(stage_manifest_seal(&m, &err), 0);
	assert_int_equal(j.job.data.nstage, 2);
	assert_string_equal(j.job.data.stage[1].manifest, m.hash);
	assert_int_equal(files, 3);
	stage_manifest_release(&m);
	code_list_release(&l);
	loaded_release(&j);
	/* a full data.stage: one more would be a resolved form none loads */
	load(&j, MINIMAL "command: [python3, train.py]\n");
	free(j.job.data.stage); /* the default's empty list */
	j.job.data.stage = xcalloc(SPEC_MAX_STAGE, sizeof(*j.job.data.stage));
	for (size_t i = 0; i < SPEC_MAX_STAGE; i++) {
		j.job.data.stage[i].name = xasprintf("d%zu", i);
		j.job.data.stage[i].src = xasprintf("/shared/d%zu", i);
	}
	j.job.data.nstage = SPEC_MAX_STAGE;
	memset(&l, 0, sizeof(l));
	code_list_add_file(&l, "train.py", 0100644, 3, SHA_A, NULL);
	assert_int_equal(code_list_seal(&l, &err), 0);
	sbuf_reset(&err);
	assert_int_equal(code_stage_pin(&j.job, &l, SNAP, &files, &err), -1);
	assert_string_equal(err.buf, "data.stage holds 64 entries, the most");
	assert_int_equal(j.job.data.nstage, SPEC_MAX_STAGE);
	code_list_release(&l);
	loaded_release(&j);
	sbuf_release(&err);
}

static void spec__the_entry_code_is_the_snapshot_s_when_the_code_is_on(void **state)
{
	struct loaded l;
	struct stage_job sj = { 0 };
	struct sbuf err = SBUF_INIT;

	(void)state;
	/* one's own entry "code" would pass for the snapshot: refused */
	load(&l, MINIMAL "command: [python3, train.py]\n"
		 "data: {stage: [{name: code, src: /shared/code}]}\n");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "job.yaml:1:1: data.stage: the name \"code\" is the code snapshot's when "
			"the code is on; name this entry otherwise");
	loaded_release(&l);
	load(&l, MINIMAL "command: [python3, train.py]\ncode: false\n"
		 "data: {stage: [{name: code, src: /shared/code}]}\n");
	assert_int_equal(l.rc, 0);
	loaded_release(&l);
	/* a resolved form's: the snapshot of its own digest */
	load(&l, MINIMAL "command: [python3, train.py]\n"
		 "code: {dir: /p, digest: \"" DIGEST "\"}\n"
		 "data: {stage: [{name: ds, src: /shared/ds}, {name: code, src: " SNAP "}]}\n");
	assert_int_equal(l.rc, 0);
	assert_true(spec_code_is_stage_entry(&l.job, &l.job.data.stage[1]));
	assert_false(spec_code_is_stage_entry(&l.job, &l.job.data.stage[0]));
	/* the stage step scans that entry alone as a tree (executables and
	 * links kept); a data entry refuses links */
	for (size_t i = 0; i < 2; i++) {
		free(l.job.data.stage[i].manifest);
		l.job.data.stage[i].manifest = xstrdup(DIGEST);
	}
	assert_int_equal(stage_job_from_spec(&l.job, "/tmp", 1000, &sj, &err), 0);
	assert_int_equal(sj.n, 2);
	assert_false(sj.v[0].tree);
	assert_true(sj.v[1].tree);
	stage_job_release(&sj);
	sbuf_release(&err);
	loaded_release(&l);
	load(&l, MINIMAL "command: [python3, train.py]\n"
		 "code: {dir: /p, digest: \"" DIGEST "\"}\n"
		 "data: {stage: [{name: code, src: /out/.code/0123}]}\n");
	assert_int_equal(l.rc, -1);
	loaded_release(&l);
}

static void venv_list__reads_name_and_version_from_the_headers_only(void **state)
{
	static const char meta[] = "Metadata-Version: 2.1\r\nname:  numpy \r\nVersion: 1.24.2\r\n"
				   "Summary: x\r\n\r\nName: not-this\nVersion: 9\n";
	static const char body_only[] = "Name: torch\n\nVersion: 2.1\n";
	struct venv_list l = { 0 };

	(void)state;
	assert_int_equal(venv_list_add_metadata(&l, meta, sizeof(meta) - 1), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].name, "numpy");
	assert_string_equal(l.v[0].version, "1.24.2");
	assert_int_equal(venv_list_add_metadata(&l, body_only, sizeof(body_only) - 1), -1);
	assert_int_equal(venv_list_add_metadata(&l, "Name: x\nVersion:\n", 17), -1);
	assert_int_equal(venv_list_add_metadata(&l, "", 0), -1);
	assert_int_equal(l.n, 1);
	venv_list_release(&l);
}

static void add_pkg(struct venv_list *l, const char *name, const char *version)
{
	char *text = xasprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version);

	assert_int_equal(venv_list_add_metadata(l, text, strlen(text)), 0);
	free(text);
}

static void venv_list__digest_is_of_the_sorted_listing_and_a_version_changes_it(void **state)
{
	struct venv_list a = { 0 }, b = { 0 }, c = { 0 };
	static const char listing[] = "numpy==1.24.2\ntorch==2.1.0\n";
	unsigned char md[32];
	unsigned int n = 0;
	char want[72] = "sha256:";
	json_t *doc;

	(void)state;
	add_pkg(&a, "torch", "2.1.0");
	add_pkg(&a, "numpy", "1.24.2");
	add_pkg(&b, "numpy", "1.24.2");
	add_pkg(&b, "torch", "2.1.0");
	add_pkg(&c, "numpy", "1.24.3");
	add_pkg(&c, "torch", "2.1.0");
	venv_list_finish(&a);
	venv_list_finish(&b);
	venv_list_finish(&c);
	EVP_Digest(listing, sizeof(listing) - 1, md, &n, EVP_sha256(), NULL);
	hex_of(md, 32, want + 7);
	assert_string_equal(a.digest, want);
	assert_string_equal(b.digest, want);
	assert_string_not_equal(c.digest, want);
	doc = venv_list_json(&a, "/opt/v");
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "digest")), want);
	assert_string_equal(json_string_value(json_object_get(doc, "path")), "/opt/v");
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "packages"),
							      "torch")), "2.1.0");
	json_decref(doc);
	venv_list_release(&a);
	venv_list_release(&b);
	venv_list_release(&c);
}

static void spec__venv_digest_is_left_out_of_the_resolved_form_until_pinned(void **state)
{
	struct loaded l;
	struct sbuf out = SBUF_INIT;

	(void)state;
	load(&l, MINIMAL "environment: {venv: /opt/v}\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(spec_emit_resolved(&l.job, &out), 0);
	assert_non_null(strstr(out.buf, "\n  venv: \"/opt/v\"\n"));
	assert_null(strstr(out.buf, "venv_digest"));
	l.job.environment.venv_digest = xstrdup("sha256:" "0123456789abcdef0123456789abcdef"
						"0123456789abcdef0123456789abcdef");
	sbuf_reset(&out);
	assert_int_equal(spec_emit_resolved(&l.job, &out), 0);
	assert_non_null(strstr(out.buf, "\n  venv: \"/opt/v\"\n  venv_digest: \"sha256:0123"));
	loaded_release(&l);
	sbuf_release(&out);
}

/* What Lmod leaves in the environment after module load hptlua/1.0
 * hpttcl (the default version resolved) and a module without one. */
static void software_modules__split_name_and_version_with_each_file(void **state)
{
	json_t *m = software_modules_json("hptlua/1.0:hpttcl/2.0:py-torch/2.1+cuda:local",
					  "/m/hptlua/1.0.lua:/m/hpttcl/2.0:/m/t.lua:/m/local.lua");
	json_t *want = json_loads("[{\"name\": \"hptlua\", \"version\": \"1.0\", \"file\": "
				  "\"/m/hptlua/1.0.lua\"}, {\"name\": \"hpttcl\", \"version\": \"2.0\", "
				  "\"file\": \"/m/hpttcl/2.0\"}, {\"name\": \"py-torch\", \"version\": "
				  "\"2.1+cuda\", \"file\": \"/m/t.lua\"}, {\"name\": \"local\", \"version\": null, "
				  "\"file\": \"/m/local.lua\"}]", 0, NULL);

	(void)state;
	assert_true(json_equal(m, want));
	json_decref(m);
	json_decref(want);
	/* files that do not line up are left out rather than misattributed */
	m = software_modules_json("a/1:b/2", "/m/a/1");
	assert_int_equal(json_array_size(m), 2);
	assert_true(json_is_null(json_object_get(json_array_get(m, 1), "file")));
	json_decref(m);
	m = software_modules_json(NULL, NULL);
	assert_int_equal(json_array_size(m), 0);
	json_decref(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(code_list__digest_is_of_the_canonical_listing),
		cmocka_unit_test(code_list__digest_ignores_stat_keys_but_not_the_exec_bit_or_a_target),
		cmocka_unit_test(code_list__refuses_paths_outside_the_tree_twice_or_not_utf8),
		cmocka_unit_test(code_list__a_link_escapes_by_an_absolute_target_or_too_many_dotdots),
		cmocka_unit_test(code_list__json_has_the_shape_diff_reads),
		cmocka_unit_test(code_ignore__follows_gitignore_lines_last_match_winning),
		cmocka_unit_test(code_ignore__include_globs_keep_only_what_matches),
		cmocka_unit_test(code_limit__refusal_names_the_largest_subdirectories_and_the_key),
		cmocka_unit_test(spec__code_is_left_out_of_the_resolved_form_until_set),
		cmocka_unit_test(spec__code_false_turns_it_off_and_a_bad_digest_is_refused),
		cmocka_unit_test(code_stage__adds_the_snapshot_with_the_manifest_of_its_files),
		cmocka_unit_test(code_stage__stages_executables_as_such_and_links_as_links),
		cmocka_unit_test(spec__the_entry_code_is_the_snapshot_s_when_the_code_is_on),
		cmocka_unit_test(venv_list__reads_name_and_version_from_the_headers_only),
		cmocka_unit_test(venv_list__digest_is_of_the_sorted_listing_and_a_version_changes_it),
		cmocka_unit_test(spec__venv_digest_is_left_out_of_the_resolved_form_until_pinned),
		cmocka_unit_test(software_modules__split_name_and_version_with_each_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
