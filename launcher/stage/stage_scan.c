/* stage_scan.c - a data set's manifest from the shared file system, with
 * a cache of earlier manifests so that an unchanged tree costs one stat
 * per file (see stage_scan.h).
 * Shell: nftw(3), open/read, getenv, the manifest cache's files. */
#include "launcher/stage/stage_scan.h"     // defines: stage_scan, stage_scan_hash_fd
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*
#include "common/exitcode.h"               // defines: HPT_EXIT_*
#include "common/fileio.h"                 // defines: fileio_private_dir, fileio_write_atomic
#include "common/fileremove.h"             // defines: fileremove_one
#include "common/jsonfile.h"               // defines: jsonfile_load
#include "common/sbuf.h"                   // defines: struct sbuf, sbuf_add_printable
#include "common/statkey.h"                // defines: struct statkey, statkey_*

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HASH_READ (4u << 20) /* bytes per read(2): large, so a parallel file system streams */
#define RACY_NS INT64_C(2000000000)
#define CACHE_MAX (256u << 20)

static int64_t mtime_ns_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

int stage_scan_hash_fd(int fd, const char *path, const struct stat *st, unsigned char sha256[32],
		       uint64_t *n, struct sbuf *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char *buf = xmalloc(HASH_READ);
	unsigned int len = 0;
	struct stat after;
	struct statkey kb, ka = { 0 };
	int status = HPT_EXIT_OK;
	ssize_t r;

	*n = 0;
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		sbuf_addstr(err, "cannot set up sha256 (libcrypto)");
		status = HPT_EXIT_INTERNAL;
		goto out;
	}
	while ((r = read(fd, buf, HASH_READ)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
			status = HPT_EXIT_NO_INPUT;
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		*n += (uint64_t)r;
	}
	EVP_DigestFinal_ex(ctx, sha256, &len);
	/* the hash counts only if the file is the one stat'ed before: a
	 * write meanwhile moves ctime even when it keeps size and mtime */
	statkey_of(st, &kb);
	if (!fstat(fd, &after))
		statkey_of(&after, &ka);
	if (!statkey_is_equal(&kb, &ka) || *n != (uint64_t)st->st_size) {
		sbuf_addf(err, "%s changed while it was read (its size, mtime or ctime moved); "
			  "stage it when nothing writes it", path);
		status = HPT_EXIT_FAILURE;
	}
out:
	EVP_MD_CTX_free(ctx);
	free(buf);
	return status;
}

bool stage_scan_link_is(int dfd, const char *rel, const char *target)
{
	char buf[STAGE_LINK_MAX + 2];
	ssize_t n = readlinkat(dfd, rel, buf, sizeof(buf));

	return n >= 0 && (size_t)n == strlen(target) && !memcmp(buf, target, (size_t)n);
}

/* nftw(3) passes no argument to its callback: the walk's state is this
 * file's, one walk at a time (the step scans its entries one by one). */
static struct {
	const char *root;
	size_t rootlen;
	const struct stage_manifest *old;
	const struct statkey *old_keys; /* per file of old: its key when it was hashed */
	int64_t old_scanned_ns;
	struct stage_manifest *m;
	uint64_t *bytes_read;
	struct sbuf *err;
	int status;
	bool streamed;    /* STAGE_SCAN_STREAMED */
	bool tree;        /* STAGE_SCAN_TREE */
	bool took_racy;   /* a racily clean hash was taken on trust */
} walk;

static const char *kind_of(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a regular file";
}

static int add_file(const char *fpath, const struct stat *sb, const char *rel)
{
	unsigned char sha[32];
	uint64_t n = 0;
	struct stat st;
	struct statkey key, now;
	long k = walk.old ? stage_manifest_find(walk.old, rel) : -1;
	int fd, status;

	if (!sbuf_is_utf8(rel)) {
		/* refused here, where the file is named, not dropped from
		 * the manifest's JSON later (jansson packs UTF-8 only) */
		sbuf_addstr(walk.err, "cannot stage ");
		sbuf_add_printable(walk.err, fpath);
		sbuf_addstr(walk.err, ": its name is not UTF-8 (bytes shown as \\xHH); rename it");
		return HPT_EXIT_NO_INPUT;
	}
	statkey_of(sb, &key);
	if (k >= 0) {
		const struct stage_file *o = &walk.old->v[k];
		bool racy = o->mtime_ns >= walk.old_scanned_ns - RACY_NS;

		if (!o->link && statkey_is_equal(&walk.old_keys[k], &key) &&
		    (!racy || walk.streamed)) {
			stage_manifest_add(walk.m, rel, o->size, o->mtime_ns, o->sha256);
			walk.m->v[walk.m->n - 1].key = key;
			/* the mode is today's: a cache of a scan without
			 * STAGE_SCAN_TREE recorded none */
			walk.m->v[walk.m->n - 1].exec = walk.tree && (sb->st_mode & S_IXUSR);
			walk.took_racy |= racy;
			return 0;
		}
	}
	/* open-ok: O_NONBLOCK, then fstat: the regular file nftw saw */
	fd = open(fpath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		sbuf_addf(walk.err, "cannot read %s: %s", fpath, strerror(errno));
		return HPT_EXIT_NO_INPUT;
	}
	memset(&now, 0, sizeof(now));
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		statkey_of(&st, &now);
	if (!statkey_is_equal(&now, &key)) { /* not a regular file now, or another one */
		sbuf_addf(walk.err, "%s changed while it was read (its size, mtime or ctime moved)",
			  fpath);
		close(fd);
		return HPT_EXIT_FAILURE;
	}
	status = stage_scan_hash_fd(fd, fpath, &st, sha, &n, walk.err);
	close(fd);
	*walk.bytes_read += n;
	if (!status) {
		stage_manifest_add(walk.m, rel, (uint64_t)st.st_size, mtime_ns_of(&st), sha);
		walk.m->v[walk.m->n - 1].key = now;
		walk.m->v[walk.m->n - 1].exec = walk.tree && (st.st_mode & S_IXUSR);
	}
	return status;
}

/* A link of a tree (STAGE_SCAN_TREE): its target, read every time (one
 * readlink, cheaper than any cache), never followed. */
static int add_link(const char *fpath, const struct stat *sb, const char *rel)
{
	char target[STAGE_LINK_MAX + 2];
	ssize_t n = readlink(fpath, target, sizeof(target));

	if (n < 0) {
		sbuf_addf(walk.err, "cannot read the link %s: %s", fpath, strerror(errno));
		return HPT_EXIT_NO_INPUT;
	}
	if ((size_t)n > STAGE_LINK_MAX) {
		sbuf_addf(walk.err, "cannot stage the link %s: its target is longer than %d bytes",
			  fpath, STAGE_LINK_MAX);
		return HPT_EXIT_NO_INPUT;
	}
	target[n] = '\0';
	if (!sbuf_is_utf8(rel) || !sbuf_is_utf8(target)) {
		sbuf_addstr(walk.err, "cannot stage the link ");
		sbuf_add_printable(walk.err, fpath);
		sbuf_addstr(walk.err, " -> ");
		sbuf_add_printable(walk.err, target);
		sbuf_addstr(walk.err, ": its name or target is not UTF-8 (bytes shown as \\xHH)");
		return HPT_EXIT_NO_INPUT;
	}
	stage_manifest_add_link(walk.m, rel, target);
	statkey_of(sb, &walk.m->v[walk.m->n - 1].key);
	return 0;
}

static int visit(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *rel = ftw->level ? fpath + walk.rootlen + 1 : "";

	switch (type) {
	case FTW_D:
		return 0;
	case FTW_F:
		if (!S_ISREG(sb->st_mode))
			break;
		walk.status = add_file(fpath, sb, rel);
		return walk.status ? 1 : 0;
	case FTW_DNR:
		sbuf_addf(walk.err, "cannot read the directory %s", fpath);
		walk.status = HPT_EXIT_NO_INPUT;
		return 1;
	case FTW_NS:
		sbuf_addf(walk.err, "cannot stat %s", fpath);
		walk.status = HPT_EXIT_NO_INPUT;
		return 1;
	default: /* FTW_SL, FTW_SLN: FTW_PHYS reports links, never follows them */
		if (walk.tree && S_ISLNK(sb->st_mode) && ftw->level) {
			walk.status = add_link(fpath, sb, rel);
			return walk.status ? 1 : 0;
		}
		break;
	}
	sbuf_addf(walk.err, "cannot stage %s: it is %s; a data set is regular files and "
		  "directories", fpath, kind_of(sb->st_mode));
	walk.status = HPT_EXIT_NO_INPUT;
	return 1;
}

char *stage_scan_cache_file(const char *subdir, const char *key, struct sbuf *err)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char hex[65], *dir, *path;

	if (xdg && *xdg == '/')
		dir = xasprintf("%s/hpctrain/%s", xdg, subdir);
	else if (home && *home)
		dir = xasprintf("%s/.cache/hpctrain/%s", home, subdir);
	else
		return NULL; /* no place for a cache: every scan hashes */
	if (fileio_private_dir(dir, err)) {
		free(dir);
		return NULL;
	}
	EVP_Digest(key, strlen(key), md, &len, EVP_sha256(), NULL);
	stage_manifest_hex_of(md, hex);
	path = xasprintf("%s/%s.json", dir, hex);
	free(dir);
	return path;
}

/* The cache file for src, in a private directory made on the way. */
static char *cache_path(const char *src, struct sbuf *err)
{
	return stage_scan_cache_file("manifests", src, err);
}

/* The cached manifest of src into old, with the key of each of its
 * files when hashed (*keys, old->n of them, malloc'd; "keys" is the
 * array statkey_to_json wrote per file, in manifest order), and when it
 * was scanned.  A missing, unreadable or older cache (one without keys)
 * is no error: everything is hashed. */
static void cache_load(const char *path, const char *src, struct stage_manifest *old,
		       struct statkey **keys, int64_t *scanned_ns)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc = path ? jsonfile_load(path, CACHE_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err)
			   : NULL;
	const char *s = NULL;
	json_t *man = NULL, *jk = NULL;
	json_int_t t = 0;
	bool ok;

	*keys = NULL;
	ok = doc && !json_unpack(doc, "{s:s, s:I, s:o, s:o}", "src", &s, "scanned_ns", &t,
				 "manifest", &man, "keys", &jk) &&
	     !strcmp(s, src) && !stage_manifest_from_json(man, old, &err) &&
	     json_array_size(jk) == old->n;
	if (ok) {
		*keys = xcalloc(old->n ? old->n : 1, sizeof(**keys));
		for (size_t i = 0; i < old->n && ok; i++)
			ok = !statkey_from_json(json_array_get(jk, i), &(*keys)[i]);
	}
	if (ok) {
		*scanned_ns = t;
	} else {
		stage_manifest_release(old);
		free(*keys);
		*keys = NULL;
	}
	json_decref(doc);
	sbuf_release(&err);
}

static int cache_store(const char *path, const char *src, const struct stage_manifest *m,
		       int64_t scanned_ns, struct sbuf *err)
{
	json_t *keys = json_array(), *doc;
	char *text = NULL;
	int rc = -1;

	for (size_t i = 0; i < m->n; i++)
		if (json_array_append_new(keys, statkey_to_json(&m->v[i].key)))
			goto out;
	doc = json_pack("{s:s, s:I, s:o, s:O}", "src", src, "scanned_ns", (json_int_t)scanned_ns,
			"manifest", stage_manifest_to_json(m), "keys", keys);
	text = doc ? json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(doc);
	if (text)
		rc = fileio_write_atomic(path, text, strlen(text), 0600, 0, err);
out:
	if (rc && !err->len)
		sbuf_addf(err, "cannot write the manifest cache %s (out of memory)", path);
	json_decref(keys);
	free(text);
	return rc;
}

int stage_scan_forget(const char *src, struct sbuf *err)
{
	char *root = xstrdup(src), *cpath;
	size_t n = strlen(root);
	int rc = 0;

	while (n > 1 && root[n - 1] == '/')
		root[--n] = '\0';
	cpath = cache_path(root, err);
	if (cpath && fileremove_one(cpath, err)) {
		rc = -1;
	} else if (!cpath && err->len) {
		rc = -1;
	}
	free(cpath);
	free(root);
	return rc;
}

int stage_scan_since(const char *src, struct stage_manifest *m, struct stage_manifest *before,
		     uint64_t *bytes_read, unsigned flags, struct sbuf *err)
{
	struct stage_manifest old = { 0 };
	struct statkey *old_keys = NULL;
	uint64_t ignored = 0;
	int64_t scanned_ns = 0, now;
	struct timespec ts;
	struct stat st;
	char *root = xstrdup(src), *cpath;
	size_t n = strlen(root);
	int status = HPT_EXIT_OK;

	stage_manifest_release(m);
	while (n > 1 && root[n - 1] == '/')
		root[--n] = '\0';
	if (*root != '/') {
		sbuf_addf(err, "%s: a data source is an absolute path", SBUF_CLIP(src));
		free(root);
		return HPT_EXIT_NO_INPUT;
	}
	if (!sbuf_is_utf8(root)) {
		sbuf_addstr(err, "cannot stage ");
		sbuf_add_printable(err, root);
		sbuf_addstr(err, ": its path is not UTF-8 (bytes shown as \\xHH); rename it");
		free(root);
		return HPT_EXIT_NO_INPUT;
	}
	if (lstat(root, &st)) {
		sbuf_addf(err, "cannot stage %s: %s", root, strerror(errno));
		free(root);
		return HPT_EXIT_NO_INPUT;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	cpath = cache_path(root, err);
	if (!cpath && err->len) {
		status = HPT_EXIT_IO;
		goto out;
	}
	cache_load(cpath, root, &old, &old_keys, &scanned_ns);
	walk.root = root;
	walk.rootlen = n;
	walk.old = old.n ? &old : NULL;
	walk.old_keys = old_keys;
	walk.old_scanned_ns = scanned_ns;
	walk.m = m;
	walk.bytes_read = bytes_read ? bytes_read : &ignored;
	walk.err = err;
	walk.status = 0;
	walk.streamed = flags & STAGE_SCAN_STREAMED;
	walk.tree = flags & STAGE_SCAN_TREE;
	walk.took_racy = false;
	m->is_file = S_ISREG(st.st_mode);
	if (nftw(root, visit, 64, FTW_PHYS) && !walk.status) {
		sbuf_addf(err, "cannot walk %s: %s", root, strerror(errno));
		walk.status = HPT_EXIT_NO_INPUT;
	}
	if ((status = walk.status))
		goto out;
	if (stage_manifest_seal(m, err)) {
		status = HPT_EXIT_NO_INPUT;
		goto out;
	}
	/* a hash taken on trust is no more trusted for being cached anew */
	if (cpath && !walk.took_racy && cache_store(cpath, root, m, now, err))
		status = HPT_EXIT_IO;
out:
	if (status)
		stage_manifest_release(m);
	if (before) {
		stage_manifest_release(before);
		*before = old; /* handed over: old is not released */
		memset(&old, 0, sizeof(old));
	}
	stage_manifest_release(&old);
	memset(&walk, 0, sizeof(walk));
	free(old_keys);
	free(cpath);
	free(root);
	return status;
}

int stage_scan_counted(const char *src, struct stage_manifest *m, uint64_t *bytes_read,
		       struct sbuf *err)
{
	return stage_scan_since(src, m, NULL, bytes_read, 0, err);
}

int stage_scan(const char *src, struct stage_manifest *m, struct sbuf *err)
{
	return stage_scan_counted(src, m, NULL, err);
}
