/* test_container_digest.c - launcher/container/container_digest: what a
 * directory image's tree hash covers and leaves out, file and reference
 * digests, and a cache that is checked before it is believed.  Works in
 * a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/fileio.h"                       // defines: fileio_write_atomic, fileio_mkdirs, fileio_read
#include "common/sbuf.h"                         // defines: struct sbuf
#include "launcher/container/container_digest.h" // defines: container_digest
#include "launcher/container/container_verify.h" // defines: container_verify, container_verify_is_needed
#include "common/spec/spec.h"                    // defines: enum container_runtime

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_container_digest");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static void put(const char *rel, const char *text)
{
	char *path = testlib_tmp_at(rel), *slash = strrchr(path, '/');
	struct sbuf err = SBUF_INIT;

	*slash = '\0';
	assert_int_equal(fileio_mkdirs(path, 0755, NULL), 0);
	*slash = '/';
	if (fileio_write_atomic(path, text, strlen(text), 0644, 0, &err))
		fail_msg("%s", err.buf);
	free(path);
	sbuf_release(&err);
}

/* The digest of image rel (a directory unless it ends in .sqfs). */
static void digest_of(const char *rel, const char *cache, char out[CONTAINER_DIGEST_SIZE],
		      struct sbuf *note)
{
	char *path = testlib_tmp_at(rel), *cpath = cache ? testlib_tmp_at(cache) : NULL;
	struct sbuf err = SBUF_INIT;
	size_t n = strlen(rel);
	enum container_image_kind kind = n > 5 && !strcmp(rel + n - 5, ".sqfs")
						 ? CONTAINER_IMAGE_SQUASHFS : CONTAINER_IMAGE_DIR;

	if (container_digest(path, kind, cpath, out, note, &err))
		fail_msg("%s", err.buf);
	free(path);
	free(cpath);
	sbuf_release(&err);
}

static void make_image(const char *root)
{
	char rel[256], *link;

	snprintf(rel, sizeof(rel), "%s/bin/prog", root);
	put(rel, "#!/bin/sh\n");
	snprintf(rel, sizeof(rel), "%s/etc/conf", root);
	put(rel, "a=1\n");
	snprintf(rel, sizeof(rel), "%s/bin/sh", root);
	link = testlib_tmp_at(rel);
	assert_int_equal(symlink("prog", link), 0);
	free(link);
}

static void container_digest__a_copy_with_other_times_has_the_same_tree_hash(void **state)
{
	char a[CONTAINER_DIGEST_SIZE], b[CONTAINER_DIGEST_SIZE];
	struct sbuf note = SBUF_INIT;
	char *conf = testlib_tmp_at("b/etc/conf");
	struct timeval old[2] = { { 1000000, 0 }, { 1000000, 0 } };

	(void)state;
	make_image("a");
	make_image("b");
	assert_int_equal(utimes(conf, old), 0);
	digest_of("a", NULL, a, &note);
	digest_of("b", NULL, b, &note);
	assert_string_equal(a, b);
	assert_int_equal(strncmp(a, "sha256:", 7), 0);
	assert_int_equal(strlen(a), 71);
	assert_int_equal(note.len, 0);
	free(conf);
	sbuf_release(&note);
}

static void container_digest__content_modes_and_link_targets_change_the_tree_hash(void **state)
{
	char base[CONTAINER_DIGEST_SIZE], d[CONTAINER_DIGEST_SIZE];
	struct sbuf note = SBUF_INIT;
	char *prog = testlib_tmp_at("c/bin/prog"), *sh = testlib_tmp_at("c/bin/sh");

	(void)state;
	make_image("c");
	digest_of("c", NULL, base, &note);
	put("c/etc/conf", "a=2\n");
	digest_of("c", NULL, d, &note);
	assert_string_not_equal(d, base);
	put("c/etc/conf", "a=1\n");
	digest_of("c", NULL, d, &note);
	assert_string_equal(d, base);
	assert_int_equal(chmod(prog, 0755), 0);
	digest_of("c", NULL, d, &note);
	assert_string_not_equal(d, base);
	assert_int_equal(chmod(prog, 0644), 0);
	assert_int_equal(unlink(sh), 0);
	assert_int_equal(symlink("/bin/prog", sh), 0);
	digest_of("c", NULL, d, &note);
	assert_string_not_equal(d, base);
	free(prog);
	free(sh);
	sbuf_release(&note);
}

static void container_digest__a_file_image_is_its_sha256(void **state)
{
	char d[CONTAINER_DIGEST_SIZE];
	struct sbuf note = SBUF_INIT;

	(void)state;
	put("img.sqfs", "abc");
	digest_of("img.sqfs", NULL, d, &note);
	assert_string_equal(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sbuf_release(&note);
}

static void container_digest__pins_a_reference_only_by_its_sha256(void **state)
{
	char d[CONTAINER_DIGEST_SIZE];
	struct sbuf note = SBUF_INIT, err = SBUF_INIT;
	const char *hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char *ref = xasprintf("nvcr.io/nvidia/pytorch@sha256:%s", hex);

	(void)state;
	assert_int_equal(container_digest(ref, CONTAINER_IMAGE_REF, NULL, d, &note, &err), 0);
	assert_string_equal(d + 7, hex);
	assert_int_equal(note.len, 0);
	assert_int_equal(container_digest("nvcr.io/nvidia/pytorch:24.01-py3", CONTAINER_IMAGE_REF,
					  NULL, d, &note, &err), 0);
	assert_string_equal(d, CONTAINER_DIGEST_UNPINNED);
	assert_non_null(strstr(note.buf, "cannot be pinned"));
	free(ref);
	sbuf_release(&note);
	sbuf_release(&err);
}

/* A cache entry is believed only while the image's stat data match it:
 * a forged entry for an unchanged image is used (that is what makes the
 * cache worth having), one for a changed image is not. */
static void container_digest__uses_the_cache_only_while_the_image_is_unchanged(void **state)
{
	char first[CONTAINER_DIGEST_SIZE], d[CONTAINER_DIGEST_SIZE];
	struct sbuf note = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	char *cache = testlib_tmp_at("cache/hpctrain/image-digests.json");
	const char *forged = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
	char *at;
	struct stat st;

	(void)state;
	make_image("d");
	digest_of("d", "cache/hpctrain/image-digests.json", first, &note);
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(fileio_read(cache, 1 << 20, &text, &err), 0);
	at = strstr(text.buf, first);
	assert_non_null(at);
	memcpy(at, forged, strlen(forged));
	assert_int_equal(fileio_write_atomic(cache, text.buf, text.len, 0600, 0, &err), 0);
	digest_of("d", "cache/hpctrain/image-digests.json", d, &note);
	assert_string_equal(d, forged);
	put("d/etc/conf", "a=3\n");
	digest_of("d", "cache/hpctrain/image-digests.json", d, &note);
	assert_string_not_equal(d, forged);
	assert_string_not_equal(d, first);
	assert_int_equal(note.len, 0);
	put("cache/hpctrain/image-digests.json", "{not json");
	assert_int_equal(chmod(cache, 0600), 0);
	digest_of("d", "cache/hpctrain/image-digests.json", first, &note);
	assert_string_equal(first, d);
	assert_non_null(strstr(note.buf, "ignoring the digest cache"));
	free(cache);
	sbuf_release(&note);
	sbuf_release(&text);
	sbuf_release(&err);
}

/* launch's check of an image a runtime reads itself: the pinned image
 * passes; a cache entry that lies about it is hashed again and replaced,
 * never believed over the image; an image changed after validate is
 * refused naming both digests; nothing pinned, nothing checked. */
static void container_verify__refuses_a_changed_image_and_drops_a_lying_cache_entry(void **state)
{
	char pin[CONTAINER_DIGEST_SIZE];
	struct sbuf note = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	char *cache = testlib_tmp_at("cache/hpctrain/image-digests.json");
	char *xdg = testlib_tmp_at("cache"), *image = testlib_tmp_at("v"), *at;
	const char *forged = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

	(void)state;
	make_image("v");
	digest_of("v", "cache/hpctrain/image-digests.json", pin, &note);
	assert_int_equal(setenv("XDG_CACHE_HOME", xdg, 1), 0);
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_DIR, pin, &err), 0);
	/* a cache entry claiming another digest for the unchanged tree */
	assert_int_equal(fileio_read(cache, 1 << 20, &text, &err), 0);
	at = strstr(text.buf, pin);
	assert_non_null(at);
	memcpy(at, forged, strlen(forged));
	assert_int_equal(fileio_write_atomic(cache, text.buf, text.len, 0600, 0, &err), 0);
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_DIR, pin, &err), 0);
	sbuf_reset(&text);
	assert_int_equal(fileio_read(cache, 1 << 20, &text, &err), 0);
	assert_null(strstr(text.buf, forged));
	assert_non_null(strstr(text.buf, pin));
	/* the image changed after validate */
	put("v/etc/conf", "a=9\n");
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_DIR, pin, &err), 1);
	assert_non_null(strstr(err.buf, "is not the one pinned (pinned sha256:"));
	assert_non_null(strstr(err.buf, "validate or submit it again"));
	sbuf_reset(&err);
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_DIR, "unpinned", &err), 0);
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_DIR, NULL, &err), 0);
	assert_int_equal(err.len, 0);
	/* a SIF or SquashFS file apptainer or enroot reads: its bytes, the same way */
	put("img.sqfs", "hsqs and the rest of an image\n");
	digest_of("img.sqfs", "cache/hpctrain/image-digests.json", pin, &note);
	free(image);
	image = testlib_tmp_at("img.sqfs");
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_SIF, pin, &err), 0);
	put("img.sqfs", "hsqs and another image!\n");
	assert_int_equal(container_verify(image, CONTAINER_IMAGE_SIF, pin, &err), 1);
	assert_non_null(strstr(err.buf, "img.sqfs is not the one pinned"));
	unsetenv("XDG_CACHE_HOME");
	free(cache);
	free(xdg);
	free(image);
	sbuf_release(&note);
	sbuf_release(&text);
	sbuf_release(&err);
}

/* Which images launch checks itself: a directory under every runtime, a
 * file under the runtimes that read it (apptainer, enroot), never a
 * reference or a writable image. */
static void container_verify__is_needed_where_the_runtime_reads_the_image(void **state)
{
	(void)state;
	for (int r = CONTAINER_CHARLIECLOUD; r < CONTAINER_NRUNTIMES; r++) {
		assert_true(container_verify_is_needed(r, CONTAINER_IMAGE_DIR, false));
		assert_false(container_verify_is_needed(r, CONTAINER_IMAGE_DIR, true));
		assert_false(container_verify_is_needed(r, CONTAINER_IMAGE_REF, false));
	}
	assert_true(container_verify_is_needed(CONTAINER_APPTAINER, CONTAINER_IMAGE_SIF, false));
	assert_true(container_verify_is_needed(CONTAINER_APPTAINER, CONTAINER_IMAGE_SQUASHFS, false));
	assert_true(container_verify_is_needed(CONTAINER_ENROOT, CONTAINER_IMAGE_SQUASHFS, false));
	/* mounted by container_squash, which checks it there */
	assert_false(container_verify_is_needed(CONTAINER_CHARLIECLOUD, CONTAINER_IMAGE_SQUASHFS, false));
	assert_false(container_verify_is_needed(CONTAINER_PODMAN, CONTAINER_IMAGE_SQUASHFS, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(container_digest__a_copy_with_other_times_has_the_same_tree_hash),
		cmocka_unit_test(container_digest__content_modes_and_link_targets_change_the_tree_hash),
		cmocka_unit_test(container_digest__a_file_image_is_its_sha256),
		cmocka_unit_test(container_digest__pins_a_reference_only_by_its_sha256),
		cmocka_unit_test(container_digest__uses_the_cache_only_while_the_image_is_unchanged),
		cmocka_unit_test(container_verify__refuses_a_changed_image_and_drops_a_lying_cache_entry),
		cmocka_unit_test(container_verify__is_needed_where_the_runtime_reads_the_image),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
