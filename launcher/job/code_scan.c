/* code_scan.c - a code tree listed, held to its limits and hashed, with
 * a cache of earlier hashes (see code_scan.h).
 * Shell: lstat, readdir, readlink, open/read, getenv, the cache file. */
#include "launcher/job/code_scan.h"        // defines: code_scan
#include "launcher/job/code_git.h"         // defines: code_git_toplevel, code_git_ls_files
#include "launcher/job/code_ignore.h"      // defines: struct code_ignore, code_ignore_*
#include "launcher/job/code_limit.h"       // defines: code_limit_check
#include "launcher/job/code_list.h"        // defines: struct code_list, code_list_*
#include "launcher/stage/stage_manifest.h" // defines: stage_manifest_hex_of, stage_manifest_parse_hex
#include "launcher/stage/stage_scan.h"     // defines: stage_scan_hash_fd, stage_scan_cache_file
#include "common/exitcode.h"               // defines: HPT_EXIT_*
#include "common/fileio.h"                 // defines: fileio_read_flags, fileio_write_atomic
#include "common/sbuf.h"                   // defines: struct sbuf
#include "common/spec/spec.h"              // defines: struct job_code
#include "common/statkey.h"                // defines: struct statkey, statkey_*

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define IGNORE_MAX (1u << 20)   /* an ignore file's bytes */
#define CACHE_MAX (512u << 20)
#define RACY_NS INT64_C(2000000000)

struct scan {
	const char *dir;
	const struct job_code *c;
	char **skip_rel;           /* the skip paths inside dir, relative to it */
	size_t nskip;
	struct code_ignore spec;   /* code.exclude */
	struct code_ignore files;  /* .gitignore (walk only) and .hpctrainignore lines */
	struct code_list *l;
	struct sbuf *warn, *err;
};

static char *abs_of(const struct scan *s, const char *rel)
{
	return *rel ? xasprintf("%s/%s", s->dir, rel) : xstrdup(s->dir);
}

static const char *kind_of(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a regular file, link or directory";
}

static bool is_left_out(const struct scan *s, const char *rel, bool is_dir)
{
	const char *last = strrchr(rel, '/');

	last = last ? last + 1 : rel;
	if (!strcmp(last, ".git"))
		return true;
	for (size_t i = 0; i < s->nskip; i++) {
		size_t n = strlen(s->skip_rel[i]);

		if (!strncmp(rel, s->skip_rel[i], n) && (!rel[n] || rel[n] == '/'))
			return true;
	}
	return code_ignore_is_ignored(&s->spec, rel, is_dir) ||
	       code_ignore_is_ignored(&s->files, rel, is_dir);
}

/* base/NAME into s->files, when it exists. */
static int load_ignore(struct scan *s, const char *base, const char *name)
{
	struct sbuf text = SBUF_INIT;
	char *rel = *base ? xasprintf("%s/%s", base, name) : xstrdup(name);
	char *path = abs_of(s, rel);
	struct stat st;
	int status = 0;

	if (!lstat(path, &st)) {
		if (fileio_read_flags(path, IGNORE_MAX, FILEIO_NOFOLLOW, &text, s->err)) {
			status = HPT_EXIT_NO_INPUT;
		} else if (text.len > IGNORE_MAX) {
			sbuf_addf(s->err, "%s is larger than %u bytes", path, IGNORE_MAX);
			status = HPT_EXIT_NO_INPUT;
		} else {
			code_ignore_add_text(&s->files, text.buf, text.len, base);
		}
	}
	sbuf_release(&text);
	free(rel);
	free(path);
	return status;
}

static int refuse_name(struct scan *s, const char *rel)
{
	sbuf_addf(s->err, "cannot snapshot %s/", s->dir);
	sbuf_add_printable(s->err, rel);
	sbuf_addstr(s->err, ": its name is not UTF-8 (bytes shown as \\xHH); rename it, or leave "
		    "it out (code.exclude, .hpctrainignore)");
	return HPT_EXIT_NO_INPUT;
}

static int walk(struct scan *s, const char *rel);

/* One path of the tree, lstat'ed: listed, walked into, or refused. */
static int consider(struct scan *s, const char *rel, bool walking)
{
	char *path = abs_of(s, rel), target[4096];
	struct statkey key;
	struct stat st;
	ssize_t n;
	int status = 0;

	if (!sbuf_is_utf8(rel)) {
		status = refuse_name(s, rel);
		goto out;
	}
	if (lstat(path, &st)) {
		if (errno == ENOENT && !walking)
			goto out; /* tracked, deleted since: git status names it */
		sbuf_addf(s->err, "cannot snapshot %s: %s", path, strerror(errno));
		status = HPT_EXIT_NO_INPUT;
		goto out;
	}
	if (is_left_out(s, rel, S_ISDIR(st.st_mode)))
		goto out;
	if (S_ISDIR(st.st_mode)) {
		if (walking)
			status = walk(s, rel);
		goto out; /* under git: a submodule, which is its own tree */
	}
	if (!code_ignore_is_included(s->c->include.v, s->c->include.n, rel))
		goto out;
	if (S_ISREG(st.st_mode)) {
		static const unsigned char none[32];

		statkey_of(&st, &key);
		code_list_add_file(s->l, rel, st.st_mode, (uint64_t)st.st_size, none, &key);
	} else if (S_ISLNK(st.st_mode)) {
		if ((n = readlink(path, target, sizeof(target) - 1)) < 0) {
			sbuf_addf(s->err, "cannot read the link %s: %s", path, strerror(errno));
			status = HPT_EXIT_NO_INPUT;
			goto out;
		}
		target[n] = '\0';
		code_list_add_link(s->l, rel, target);
		/* a relative one is resolved where the job meets it: from
		 * the snapshot under output.dir, or a node's staged copy,
		 * not from the tree it was written in */
		if (code_list_link_escapes(rel, target) && sbuf_is_utf8(target))
			sbuf_addf(s->warn, "warning: %s points outside %s (to %s); the snapshot keeps "
				  "it as a link, so the job reads what it names when it runs%s\n",
				  path, s->dir, target, *target == '/' ? "" :
				  ", from the snapshot's place (or a node's copy of it), not from "
				  "this tree's: make it absolute to name the same thing");
	} else {
		sbuf_addf(s->err, "cannot snapshot %s: it is %s; leave it out (code.exclude, "
			  ".hpctrainignore)", path, kind_of(st.st_mode));
		status = HPT_EXIT_NO_INPUT;
	}
out:
	free(path);
	return status;
}

/* Without git: every entry of rel, its ignore files first. */
static int walk(struct scan *s, const char *rel)
{
	char *path = abs_of(s, rel);
	DIR *d = opendir(path);
	struct dirent *de;
	int status;

	if (!d) {
		sbuf_addf(s->err, "cannot read the directory %s: %s", path, strerror(errno));
		free(path);
		return HPT_EXIT_NO_INPUT;
	}
	status = load_ignore(s, rel, ".gitignore");
	if (!status)
		status = load_ignore(s, rel, ".hpctrainignore");
	while (!status && (errno = 0, de = readdir(d))) {
		char *child;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		status = consider(s, child, true);
		free(child);
	}
	if (!status && errno) {
		sbuf_addf(s->err, "cannot read the directory %s: %s", path, strerror(errno));
		status = HPT_EXIT_NO_INPUT;
	}
	closedir(d);
	free(path);
	return status;
}

/* With git: its list of files (.gitignore applied), the .hpctrainignore
 * files among them read first. */
static int list_git(struct scan *s)
{
	struct sbuf names = SBUF_INIT;
	int status = 0;

	if (code_git_ls_files(s->dir, &names, s->err)) {
		sbuf_release(&names);
		return HPT_EXIT_NO_INPUT;
	}
	status = load_ignore(s, "", ".hpctrainignore");
	for (size_t i = 0; !status && i < names.len; i += strlen(names.buf + i) + 1) {
		const char *p = names.buf + i, *slash = strrchr(p, '/');
		char *base;

		if (!slash || strcmp(slash + 1, ".hpctrainignore"))
			continue;
		base = xstrndup(p, (size_t)(slash - p));
		status = load_ignore(s, base, ".hpctrainignore");
		free(base);
	}
	for (size_t i = 0; !status && i < names.len; i += strlen(names.buf + i) + 1)
		status = consider(s, names.buf + i, false);
	sbuf_release(&names);
	return status;
}

/* The cache file for dir, in a private directory made on the way; NULL
 * when there is no place for one (every file is hashed) or, with err,
 * when the directory cannot be made. */
static char *cache_path(const char *dir, struct sbuf *err)
{
	return stage_scan_cache_file("code", dir, err);
}

/* The cache's text: a header line, then one record a file, each
 *
 *   "hpctrain-code-cache 2\n" SCANNED_NS "\n" DIR "\0"
 *   HEX64 " " DEV " " INO " " SIZE " " MTIME_NS " " CTIME_NS " " PATH "\0"
 *
 * PATH and DIR end at a NUL, since a name may hold any other byte.  Not
 * JSON: parsing 10,000 entries into jansson's objects was two fifths of
 * a cached scan's CPU (perf record, tests/bench/code_snapshot.sh); this
 * is one pass of strtoull.  A cache in any other form (an older
 * hpctrain's JSON) is no cache: every file is hashed once more.  The
 * file keeps the .json name stage_scan_cache_file gives every cache. */
#define CACHE_MAGIC "hpctrain-code-cache 2\n"

/* One number of a record ending at a space, advancing *p; -1 when none. */
static int cache_number(const char **p, const char *end, uint64_t *v)
{
	char *stop;

	if (*p >= end || **p < '0' || **p > '9')
		return -1;
	errno = 0;
	*v = strtoull(*p, &stop, 10);
	if (errno || stop >= end || *stop != ' ')
		return -1;
	*p = stop + 1;
	return 0;
}

/* The cached hashes of dir into old (sealed), and when they were taken.
 * A missing, unreadable or malformed cache, or one of another dir, is
 * no error: old is left empty. */
static void cache_load(const char *cpath, const char *dir, struct code_list *old,
		       int64_t *scanned_ns)
{
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	const char *p, *end, *nul;
	char *stop;
	uint64_t t = 0;
	bool ok = cpath && !fileio_read_flags(cpath, CACHE_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED,
					      &text, &err) &&
		  text.len > strlen(CACHE_MAGIC) &&
		  !memcmp(text.buf, CACHE_MAGIC, strlen(CACHE_MAGIC));

	p = ok ? text.buf + strlen(CACHE_MAGIC) : NULL;
	end = ok ? text.buf + text.len : NULL;
	if (ok) {
		t = strtoull(p, &stop, 10);
		ok = stop < end && *stop == '\n';
		p = stop + 1;
	}
	if (ok) {
		nul = memchr(p, '\0', (size_t)(end - p));
		ok = nul && !strcmp(p, dir);
		p = nul ? nul + 1 : end;
	}
	while (ok && p < end) {
		unsigned char sha[32];
		char hex[65];
		struct statkey k;
		uint64_t v[5];

		ok = end - p > 65 && p[64] == ' ';
		if (ok) {
			memcpy(hex, p, 64);
			hex[64] = '\0';
			ok = !stage_manifest_parse_hex(hex, sha);
			p += 65;
		}
		for (int i = 0; ok && i < 5; i++)
			ok = !cache_number(&p, end, &v[i]);
		nul = ok ? memchr(p, '\0', (size_t)(end - p)) : NULL;
		ok = nul && nul > p;
		if (ok) {
			k = (struct statkey){ v[0], v[1], v[2], (int64_t)v[3], (int64_t)v[4] };
			code_list_add_file(old, p, 0, k.size, sha, &k);
			p = nul + 1;
		}
	}
	if (ok)
		ok = !code_list_seal(old, &err);
	if (ok)
		*scanned_ns = (int64_t)t;
	else
		code_list_release(old);
	sbuf_release(&text);
	sbuf_release(&err);
}

static void cache_store(const char *cpath, const char *dir, const struct code_list *l,
			int64_t scanned_ns)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char hex[65];

	sbuf_addf(&text, CACHE_MAGIC "%lld\n", (long long)scanned_ns);
	sbuf_add(&text, dir, strlen(dir) + 1);
	for (size_t i = 0; i < l->n; i++) {
		const struct code_entry *e = &l->v[i];

		if (e->link)
			continue;
		stage_manifest_hex_of(e->sha256, hex);
		/* times as unsigned: one before 1970 reads back the same */
		sbuf_addf(&text, "%s %llu %llu %llu %llu %llu ", hex, (unsigned long long)e->key.dev,
			  (unsigned long long)e->key.ino, (unsigned long long)e->key.size,
			  (unsigned long long)e->key.mtime_ns, (unsigned long long)e->key.ctime_ns);
		sbuf_add(&text, e->path, strlen(e->path) + 1);
	}
	/* a cache that cannot be written costs the next scan time, not this one its result */
	fileio_write_atomic(cpath, text.buf, text.len, 0600, 0, &err);
	sbuf_release(&text);
	sbuf_release(&err);
}

static int hash_one(struct scan *s, struct code_entry *e)
{
	char *path = abs_of(s, e->path);
	struct sbuf why = SBUF_INIT;
	struct statkey now = { 0 };
	struct stat st;
	uint64_t n = 0;
	int status, fd;

	/* open-ok: O_NONBLOCK, then fstat: the regular file lstat saw */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		sbuf_addf(s->err, "cannot read %s: %s", path, strerror(errno));
		free(path);
		return HPT_EXIT_NO_INPUT;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		statkey_of(&st, &now);
	if (!statkey_is_equal(&now, &e->key)) {
		sbuf_addf(s->err, "%s changed while the code was snapshotted (its size, mtime or "
			  "ctime moved); submit again when nothing writes it", path);
		status = HPT_EXIT_FAILURE;
	} else {
		/* its message for a file that changed speaks of staging */
		status = stage_scan_hash_fd(fd, path, &st, e->sha256, &n, &why);
		if (status == HPT_EXIT_FAILURE)
			sbuf_addf(s->err, "%s changed while the code was snapshotted (its size, "
				  "mtime or ctime moved); submit again when nothing writes it", path);
		else if (status)
			sbuf_addstr(s->err, why.buf);
	}
	close(fd);
	free(path);
	sbuf_release(&why);
	return status;
}

static int hash_all(struct scan *s, int64_t now_ns)
{
	struct code_list old = { 0 };
	int64_t scanned_ns = 0;
	char *cpath = cache_path(s->dir, s->err);
	size_t files = 0, reused = 0;
	int status = 0;

	sbuf_reset(s->err); /* no cache directory: every file is hashed */
	cache_load(cpath, s->dir, &old, &scanned_ns);
	for (size_t i = 0; i < s->l->n && !status; i++) {
		struct code_entry *e = &s->l->v[i];
		long k = e->link ? -1 : code_list_find(&old, e->path);

		if (e->link)
			continue;
		files++;
		if (k >= 0 && statkey_is_equal(&old.v[k].key, &e->key) &&
		    e->key.mtime_ns < scanned_ns - RACY_NS) {
			memcpy(e->sha256, old.v[k].sha256, 32);
			reused++;
			continue;
		}
		status = hash_one(s, e);
	}
	/* Every file came from the cache and it lists no other: it would be
	 * written again as it is, but for scanned_ns, whose only use is
	 * the racy check that every one of these files passed already.
	 * Not writing it saves the dump and two fsyncs, most of a cached
	 * scan's time. */
	if (!status && cpath && !(reused == files && old.n == files))
		cache_store(cpath, s->dir, s->l, now_ns);
	code_list_release(&old);
	free(cpath);
	return status;
}

int code_scan(const char *dir, const struct job_code *c, const char *const *skip, size_t nskip,
	      struct code_list *l, struct sbuf *warn, struct sbuf *err)
{
	struct scan s = { .dir = dir, .c = c, .l = l, .warn = warn, .err = err };
	char *cache = cache_path(dir, err);
	struct sbuf top = SBUF_INIT;
	size_t n = strlen(dir);
	struct timespec ts;
	int64_t now;
	int status;

	code_list_release(l);
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	sbuf_reset(err); /* no cache directory is no error */
	s.skip_rel = xcalloc(nskip + 1, sizeof(*s.skip_rel));
	for (size_t i = 0; i <= nskip; i++) {
		/* the hash cache too: a tree holding it would change as it is cached */
		const char *p = i < nskip ? skip[i] : cache;

		const char *end;

		if (!p || strncmp(p, dir, n) || p[n] != '/')
			continue;
		/* of the cache, hpctrain's whole cache directory (the manifests
		 * data_pin writes beside it too): CACHE/hpctrain/code/HEX.json */
		end = p + strlen(p);
		for (int up = 0; p == cache && up < 2; up++) {
			const char *slash = end;

			while (slash > p + n && *--slash != '/')
				;
			if (slash <= p + n)
				break;
			end = slash;
		}
		s.skip_rel[s.nskip++] = xstrndup(p + n + 1, (size_t)(end - p - n - 1));
	}
	for (size_t i = 0; i < c->exclude.n; i++)
		code_ignore_add(&s.spec, c->exclude.v[i], "");
	if (!code_git_toplevel(dir, &top))
		status = list_git(&s);
	else
		status = walk(&s, "");
	if (!status && code_limit_check(l, dir, c->max_bytes, c->max_files, err))
		status = HPT_EXIT_NO_INPUT;
	if (!status)
		status = hash_all(&s, now);
	if (!status && code_list_seal(l, err))
		status = HPT_EXIT_NO_INPUT;
	if (status)
		code_list_release(l);
	code_ignore_release(&s.spec);
	code_ignore_release(&s.files);
	for (size_t i = 0; i < s.nskip; i++)
		free(s.skip_rel[i]);
	free(s.skip_rel);
	free(cache);
	sbuf_release(&top);
	return status;
}
