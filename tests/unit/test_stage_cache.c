/* test_stage_cache.c - launcher/stage's shells on one node, without MPI:
 * the cached scan (hashes reused, links refused, a racy hash taken on
 * trust only by the stage step), a code tree's executables and links
 * copied and checked as such, the one read that
 * notices a source changing, a copy verified and published, the reuse
 * checks that catch a flipped byte and a truncated file, the fetch lock
 * another process holds, and eviction that keeps a held entry.  Works in
 * a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"                   // defines: struct sbuf
#include "launcher/stage/stage_cache.h"    // defines: struct stage_claim, stage_cache_*
#include "launcher/stage/stage_evict.h"    // defines: stage_evict_lru, stage_evict_list
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest
#include "launcher/stage/stage_scan.h"     // defines: stage_scan_counted, stage_scan_since
#include "launcher/stage/stage_sink.h"     // defines: struct stage_sink
#include "launcher/stage/stage_source.h"   // defines: struct stage_source

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static int setup(void **state)
{
	(void)state;
	if (testlib_tmp_setup("test_stage_cache"))
		return -1;
	setenv("XDG_CACHE_HOME", testlib_tmp, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

/* Writes rel (under the test directory) with n bytes of seed, dated 60 s ago. */
static void put(const char *rel, size_t n, int seed)
{
	char *path = testlib_tmp_at(rel), *slash = strrchr(path, '/');
	struct timeval tv[2];
	FILE *f;

	*slash = '\0';
	mkdir(path, 0755);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc((int)((i * 7 + (size_t)seed) & 0xff), f);
	assert_int_equal(fclose(f), 0);
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= 60;
	tv[1] = tv[0];
	assert_int_equal(utimes(path, tv), 0);
	free(path);
}

/* Copies src (scanned as m) into cache through a sink and publishes it. */
static void fetch(const char *cache, const char *src, const struct stage_manifest *m,
		  struct stage_claim *c)
{
	struct stage_source in;
	struct stage_sink out;
	struct sbuf err = SBUF_INIT;
	char buf[1000];
	uint64_t left = m->bytes;

	assert_int_equal(c->state, STAGE_CLAIM_MISS);
	assert_int_equal(stage_sink_open(&out, cache, m, NULL, &err), 0);
	stage_source_open(&in, src, m);
	while (left) {
		size_t n = left < sizeof(buf) ? (size_t)left : sizeof(buf);

		assert_int_equal(stage_source_read(&in, buf, n, &err), 0);
		assert_int_equal(stage_sink_write(&out, buf, n), 0);
		left -= n;
	}
	assert_int_equal(stage_source_read(&in, buf, 0, &err), 0);
	assert_int_equal(stage_sink_finish(&out), 0);
	if (stage_cache_publish(cache, m, NULL, out.tmp, out.keys, "d", src, c, &err))
		fail_msg("%s", err.buf);
	stage_sink_take(&out);
	assert_int_equal(c->state, STAGE_CLAIM_HIT);
	stage_sink_release(&out);
	stage_source_release(&in);
	sbuf_release(&err);
}

static void stage_scan__reuses_hashes_of_unchanged_files_and_refuses_links(void **state)
{
	struct stage_manifest m = { 0 }, again = { 0 };
	struct sbuf err = SBUF_INIT;
	char *src = testlib_tmp_at("scan"), *link = testlib_tmp_at("scan/l");
	uint64_t read1 = 0, read2 = 0;

	(void)state;
	put("scan/a", 1000, 1);
	put("scan/sub/b", 3000, 2);
	assert_int_equal(stage_scan_counted(src, &m, &read1, &err), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(read1, 4000);
	assert_int_equal(stage_scan_counted(src, &again, &read2, &err), 0);
	assert_int_equal(read2, 0); /* every hash from the cache */
	assert_string_equal(again.hash, m.hash);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	assert_int_not_equal(stage_scan(src, &again, &err), 0);
	assert_non_null(strstr(err.buf, "scan/l: it is a symbolic link"));
	unlink(link);
	stage_manifest_release(&m);
	stage_manifest_release(&again);
	sbuf_release(&err);
	free(src);
	free(link);
}

/* Sets path's mtime to *was (atime now): a rewrite that keeps size and
 * mtime, as touch -d, cp -p or rsync -t make one. */
static void restamp(const char *path, const struct timespec *was)
{
	struct timespec ts[2] = { { 0, UTIME_NOW }, *was };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void stage_scan__hashes_again_a_same_size_file_rewritten_with_its_old_mtime(void **state)
{
	struct stage_manifest m = { 0 }, again = { 0 };
	struct sbuf err = SBUF_INIT;
	char *src = testlib_tmp_at("stamp"), *path = testlib_tmp_at("stamp/a");
	uint64_t read1 = 0, read2 = 0, read3 = 0;
	struct stat st;

	(void)state;
	put("stamp/a", 1000, 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(stage_scan_counted(src, &m, &read1, &err), 0);
	put("stamp/a", 1000, 2); /* other bytes, same size */
	restamp(path, &st.st_mtim);
	assert_int_equal(stage_scan_counted(src, &again, &read2, &err), 0);
	assert_int_equal(read2, 1000); /* its ctime moved: not the cached hash */
	assert_string_not_equal(again.hash, m.hash);
	/* a source read that finds a file not matching drops the cache */
	assert_int_equal(stage_scan_forget(src, &err), 0);
	assert_int_equal(stage_scan_counted(src, &again, &read3, &err), 0);
	assert_int_equal(read3, 1000);
	stage_manifest_release(&m);
	stage_manifest_release(&again);
	sbuf_release(&err);
	free(src);
	free(path);
}

static void stage_scan__refuses_a_file_name_that_is_not_utf8_naming_it_escaped(void **state)
{
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;
	char *src = testlib_tmp_at("latin1");

	(void)state;
	put("latin1/caf\xe9", 10, 1);
	assert_int_equal(stage_scan(src, &m, &err), 4); /* HPT_EXIT_NO_INPUT */
	assert_non_null(strstr(err.buf, "/latin1/caf\\xe9: its name is not UTF-8"));
	assert_int_equal(m.n, 0);
	stage_manifest_release(&m);
	sbuf_release(&err);
	free(src);
}

/* A file written just before the scan (submit's) is "racily clean": a
 * plain scan hashes it again, the stage step's (STAGE_SCAN_STREAMED,
 * which hashes every byte as it sends it) takes the cached hash and
 * caches nothing new, so the next plain scan still hashes it. */
static void stage_scan__streamed_takes_a_racy_hash_once_and_caches_nothing(void **state)
{
	struct stage_manifest m = { 0 }, again = { 0 };
	struct sbuf err = SBUF_INIT;
	char *src = testlib_tmp_at("racy"), *path = testlib_tmp_at("racy/a");
	uint64_t read1 = 0, read2 = 0, read3 = 0, read4 = 0;
	FILE *f;

	(void)state;
	mkdir(src, 0755);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("written a moment ago", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(stage_scan_counted(src, &m, &read1, &err), 0);
	assert_int_equal(read1, 20);
	assert_int_equal(stage_scan_counted(src, &again, &read2, &err), 0);
	assert_int_equal(read2, 20); /* racy: not trusted */
	assert_int_equal(stage_scan_since(src, &again, NULL, &read3, STAGE_SCAN_STREAMED, &err), 0);
	assert_int_equal(read3, 0);
	assert_string_equal(again.hash, m.hash);
	assert_int_equal(stage_scan_counted(src, &again, &read4, &err), 0);
	assert_int_equal(read4, 20);
	stage_manifest_release(&m);
	stage_manifest_release(&again);
	sbuf_release(&err);
	free(src);
	free(path);
}

static void stage_source__names_a_file_that_changed_since_the_scan(void **state)
{
	struct stage_manifest m = { 0 };
	struct stage_source in;
	struct sbuf err = SBUF_INIT;
	char *src = testlib_tmp_at("moving"), buf[4096];

	(void)state;
	put("moving/a", 4096, 3);
	assert_int_equal(stage_scan(src, &m, &err), 0);
	put("moving/a", 4096, 4); /* same size, other bytes */
	stage_source_open(&in, src, &m);
	assert_int_equal(stage_source_read(&in, buf, 4096, &err), 1);
	assert_non_null(strstr(err.buf, "moving/a changed while it was staged"));
	stage_source_release(&in);
	stage_manifest_release(&m);
	sbuf_release(&err);
	free(src);
}

static void stage_cache__publishes_a_verified_copy_and_reuses_it(void **state)
{
	struct stage_manifest m = { 0 };
	struct stage_claim c;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;
	char *src = testlib_tmp_at("ds"), *cache = testlib_tmp_at("cache1");

	(void)state;
	put("ds/x", 5000, 5);
	put("ds/y/z", 0, 0);
	assert_int_equal(stage_scan(src, &m, &err), 0);
	assert_int_equal(stage_cache_open(cache, &err), 0);
	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &c, &note, &err), 0);
	fetch(cache, src, &m, &c);
	stage_claim_release(&c);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, STAGE_CACHE_VERIFY, &c, &note, &err), 0);
	assert_int_equal(c.state, STAGE_CLAIM_HIT);
	stage_claim_release(&c);
	stage_manifest_release(&m);
	sbuf_release(&err);
	sbuf_release(&note);
	free(src);
	free(cache);
}

/* Claims m in cache, which must find its copy damaged as want says. */
static void claim_finds(const char *cache, const struct stage_manifest *m, const char *want)
{
	struct stage_claim c;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;

	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, m, NULL, 0, &c, &note, &err), 0);
	assert_int_equal(c.state, STAGE_CLAIM_MISS);
	assert_true(c.repaired);
	if (!strstr(note.buf, want))
		fail_msg("note '%s' lacks '%s'", note.buf, want);
	stage_claim_release(&c);
	sbuf_release(&err);
	sbuf_release(&note);
}

static void stage_cache__copies_a_code_tree_with_executables_and_links_and_checks_them(void **state)
{
	struct stage_manifest m = { 0 };
	struct stage_claim c;
	struct stage_source in;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;
	char *src = testlib_tmp_at("code"), *cache = testlib_tmp_at("cache-code"), *run, *at, *dir;
	char target[64], buf[64];
	struct stat st;
	ssize_t n;

	(void)state;
	put("code/run.sh", 20, 1);
	put("code/models/v2.py", 30, 2);
	run = testlib_tmp_at("code/run.sh");
	assert_int_equal(chmod(run, 0700), 0);
	at = testlib_tmp_at("code/model.py");
	assert_int_equal(symlink("models/v2.py", at), 0);
	free(at);
	at = testlib_tmp_at("code/data");
	assert_int_equal(symlink("../../data", at), 0); /* leaves the tree, dangling */
	free(at);
	/* a data set refuses the link */
	assert_int_equal(stage_scan(src, &m, &err), 4); /* HPT_EXIT_NO_INPUT */
	assert_non_null(strstr(err.buf, ": it is a symbolic link; a data set is regular files"));
	sbuf_reset(&err);
	assert_int_equal(stage_scan_since(src, &m, NULL, NULL, STAGE_SCAN_TREE, &err), 0);
	assert_int_equal(m.n, 4);
	assert_string_equal(m.v[stage_manifest_find(&m, "data")].link, "../../data");
	assert_string_equal(m.v[stage_manifest_find(&m, "model.py")].link, "models/v2.py");
	assert_true(m.v[stage_manifest_find(&m, "run.sh")].exec);
	assert_false(m.v[stage_manifest_find(&m, "models/v2.py")].exec);
	assert_int_equal(stage_cache_open(cache, &err), 0);
	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &c, &note, &err), 0);
	fetch(cache, src, &m, &c);
	stage_claim_release(&c);
	/* the copy: 0555 and 0444, links as links with their text */
	dir = xasprintf("%s/%s", cache, stage_manifest_hex(m.hash));
	at = xasprintf("%s/run.sh", dir);
	assert_int_equal(lstat(at, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0555);
	free(at);
	at = xasprintf("%s/models/v2.py", dir);
	assert_int_equal(lstat(at, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	free(at);
	at = xasprintf("%s/model.py", dir);
	n = readlink(at, target, sizeof(target) - 1);
	assert_int_equal(n, 12);
	target[n] = '\0';
	assert_string_equal(target, "models/v2.py");
	free(at);
	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, STAGE_CACHE_VERIFY, &c, &note, &err), 0);
	assert_int_equal(c.state, STAGE_CLAIM_HIT);
	stage_claim_release(&c);
	/* a link retargeted in the copy: damaged, removed */
	at = xasprintf("%s/data", dir);
	assert_int_equal(unlink(at), 0);
	assert_int_equal(symlink("/etc", at), 0);
	claim_finds(cache, &m, "data is not a link to ../../data");
	/* fetched again; then an executable's mode lost */
	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &c, &note, &err), 0);
	fetch(cache, src, &m, &c);
	stage_claim_release(&c);
	free(at);
	at = xasprintf("%s/run.sh", dir);
	assert_int_equal(chmod(at, 0444), 0);
	claim_finds(cache, &m, "run.sh has the mode 0444, not 0555");
	/* a link of the source retargeted since the scan: the read says so */
	free(at);
	at = testlib_tmp_at("code/model.py");
	assert_int_equal(unlink(at), 0);
	assert_int_equal(symlink("models/v3.py", at), 0);
	stage_source_open(&in, src, &m);
	assert_int_equal(stage_source_read(&in, buf, (size_t)m.bytes, &err), 1);
	assert_non_null(strstr(err.buf, "/code/model.py changed since it was scanned (it is no "
					"longer a link to models/v2.py)"));
	stage_source_release(&in);
	free(at);
	free(dir);
	free(run);
	stage_manifest_release(&m);
	sbuf_release(&err);
	sbuf_release(&note);
	free(src);
	free(cache);
}

/* Publishes ds2 in cache, damages one file with how, claims again. */
static void damage_then_claim(const char *cache, const char *how)
{
	struct stage_manifest m = { 0 };
	struct stage_claim c;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;
	char *src = testlib_tmp_at("ds2"), *file;
	struct stat st;
	int fd;

	put("ds2/f", 3000, 6);
	assert_int_equal(stage_scan(src, &m, &err), 0);
	assert_int_equal(stage_cache_open(cache, &err), 0);
	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &c, &note, &err), 0);
	fetch(cache, src, &m, &c);
	stage_claim_release(&c);
	file = xasprintf("%s/%s/f", cache, stage_manifest_hex(m.hash));
	chmod(file, 0600);
	fd = open(file, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if (strcmp(how, "truncate"))
		assert_int_equal(pwrite(fd, "\xff", 1, 100), 1);
	else
		assert_int_equal(ftruncate(fd, 10), 0);
	close(fd);
	if (!strcmp(how, "restamp")) /* same size, the old mtime: only ctime tells */
		restamp(file, &st.st_mtim);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &c, &note, &err), 0);
	assert_int_equal(c.state, STAGE_CLAIM_MISS);
	assert_true(c.repaired);
	assert_non_null(strstr(note.buf, strcmp(how, "truncate") ? "does not match its sha256"
								 : "has 10 bytes, not 3000"));
	assert_int_not_equal(access(file, F_OK), 0); /* removed, never used */
	stage_claim_release(&c);
	stage_manifest_release(&m);
	sbuf_release(&err);
	sbuf_release(&note);
	free(src);
	free(file);
}

static void stage_cache__removes_an_entry_with_a_flipped_byte(void **state)
{
	char *cache = testlib_tmp_at("cache2");

	(void)state;
	damage_then_claim(cache, "flip");
	free(cache);
}

static void stage_cache__removes_a_truncated_entry(void **state)
{
	char *cache = testlib_tmp_at("cache3");

	(void)state;
	damage_then_claim(cache, "truncate");
	free(cache);
}

static void stage_cache__removes_an_entry_rewritten_with_its_old_size_and_mtime(void **state)
{
	char *cache = testlib_tmp_at("cache6");

	(void)state;
	damage_then_claim(cache, "restamp");
	free(cache);
}

/* A stage step killed mid-copy leaves .tmp-<hex>-XXXXXX; its fetch lock
 * died with it.  The next step removes it, and leaves one whose fetch
 * lock is held (a copy in progress). */
static void stage_evict__removes_a_copy_whose_writer_is_gone_but_not_a_live_one(void **state)
{
	static const char hex[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	struct sbuf err = SBUF_INIT, log = SBUF_INIT;
	char *cache = testlib_tmp_at("cache7");
	char *tmp = xasprintf("%s/.tmp-%s-Ab12Cd", cache, hex), *file = xasprintf("%s/f", tmp);
	int fd;

	(void)state;
	assert_int_equal(stage_cache_open(cache, &err), 0);
	assert_int_equal(mkdir(tmp, 0700), 0);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	fd = stage_cache_lock(cache, hex, ".fetch", LOCK_EX | LOCK_NB, true); /* a live writer */
	assert_true(fd >= 0);
	stage_evict_abandoned(cache, &log);
	assert_int_equal(access(file, F_OK), 0);
	close(fd); /* the writer is killed: the kernel lets its lock go */
	stage_evict_abandoned(cache, &log);
	assert_int_not_equal(access(tmp, F_OK), 0);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(log.buf, "removed the abandoned copy"));
	sbuf_release(&err);
	sbuf_release(&log);
	free(cache);
	free(tmp);
	free(file);
}

static void stage_cache__is_busy_while_another_process_fetches(void **state)
{
	struct stage_manifest m = { 0 };
	struct stage_claim c, other;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT;
	char *src = testlib_tmp_at("ds"), *cache = testlib_tmp_at("cache4");

	(void)state;
	assert_int_equal(stage_scan(src, &m, &err), 0);
	assert_int_equal(stage_cache_open(cache, &err), 0);
	stage_claim_init(&c);
	stage_claim_init(&other);
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &other, &note, &err), 0);
	assert_int_equal(other.state, STAGE_CLAIM_MISS);
	/* flock(2) locks belong to open files: a second claim conflicts
	 * even from this process, as another job's would */
	assert_int_equal(stage_cache_claim(cache, &m, NULL, 0, &c, &note, &err), 0);
	assert_int_equal(c.state, STAGE_CLAIM_BUSY);
	stage_claim_release(&other);
	stage_claim_release(&c);
	stage_manifest_release(&m);
	sbuf_release(&err);
	sbuf_release(&note);
	free(src);
	free(cache);
}

static void stage_evict__removes_the_least_recently_used_but_keeps_a_held_entry(void **state)
{
	struct stage_manifest a = { 0 }, b = { 0 };
	struct stage_claim c;
	struct stage_evict_list l;
	struct sbuf err = SBUF_INIT, note = SBUF_INIT, log = SBUF_INIT;
	char *sa = testlib_tmp_at("ea"), *sb = testlib_tmp_at("eb"), *cache = testlib_tmp_at("cache5");
	int hold;

	(void)state;
	put("ea/f", 2000, 7);
	put("eb/f", 2000, 8);
	assert_int_equal(stage_scan(sa, &a, &err), 0);
	assert_int_equal(stage_scan(sb, &b, &err), 0);
	assert_int_equal(stage_cache_open(cache, &err), 0);
	stage_claim_init(&c);
	assert_int_equal(stage_cache_claim(cache, &a, NULL, 0, &c, &note, &err), 0);
	fetch(cache, sa, &a, &c);
	stage_claim_release(&c);
	assert_int_equal(stage_cache_claim(cache, &b, NULL, 0, &c, &note, &err), 0);
	fetch(cache, sb, &b, &c);
	stage_claim_release(&c);
	hold = stage_cache_hold(cache, a.hash); /* a is older, and in use */
	assert_true(hold >= 0);
	assert_int_equal(stage_evict_lru(cache, 1000, &log, &err), 0);
	assert_non_null(strstr(log.buf, "in use"));
	assert_int_equal(stage_evict_list(cache, &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].hex, stage_manifest_hex(a.hash));
	assert_true(l.v[0].in_use);
	stage_evict_list_release(&l);
	close(hold);
	assert_int_equal(stage_evict_lru(cache, 1000, &log, &err), 0);
	assert_int_equal(stage_evict_list(cache, &l, &err), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(stage_cache_hold(cache, a.hash), -1);
	stage_evict_list_release(&l);
	stage_manifest_release(&a);
	stage_manifest_release(&b);
	sbuf_release(&err);
	sbuf_release(&note);
	sbuf_release(&log);
	free(sa);
	free(sb);
	free(cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage_scan__reuses_hashes_of_unchanged_files_and_refuses_links),
		cmocka_unit_test(stage_scan__streamed_takes_a_racy_hash_once_and_caches_nothing),
		cmocka_unit_test(stage_scan__hashes_again_a_same_size_file_rewritten_with_its_old_mtime),
		cmocka_unit_test(stage_scan__refuses_a_file_name_that_is_not_utf8_naming_it_escaped),
		cmocka_unit_test(stage_source__names_a_file_that_changed_since_the_scan),
		cmocka_unit_test(stage_cache__publishes_a_verified_copy_and_reuses_it),
		cmocka_unit_test(stage_cache__copies_a_code_tree_with_executables_and_links_and_checks_them),
		cmocka_unit_test(stage_cache__removes_an_entry_with_a_flipped_byte),
		cmocka_unit_test(stage_cache__removes_a_truncated_entry),
		cmocka_unit_test(stage_cache__removes_an_entry_rewritten_with_its_old_size_and_mtime),
		cmocka_unit_test(stage_evict__removes_a_copy_whose_writer_is_gone_but_not_a_live_one),
		cmocka_unit_test(stage_cache__is_busy_while_another_process_fetches),
		cmocka_unit_test(stage_evict__removes_the_least_recently_used_but_keeps_a_held_entry),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
