/* container_digest.c - an image's content digest, and its cache.
 * Shell: see container_digest.h. */
#include "launcher/container/container_digest.h" // defines: container_digest, container_digest_cache_path
#include "common/fileio.h"   // defines: fileio_open_regular, fileio_write_atomic, fileio_private_dir
#include "common/jsonfile.h" // defines: jsonfile_load
#include "common/sbuf.h"     // defines: struct sbuf, xasprintf
#include "common/statkey.h"  // defines: struct statkey, statkey_*

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAX (16u << 20)
#define TREE_MAX_DEPTH 256

struct entry {
	char *rel; /* "." for the root, else "a/b" */
	struct stat st;
};

struct tree {
	struct entry *v;
	size_t n;
};

static void hex_of(const unsigned char *md, char out[65])
{
	for (int i = 0; i < 32; i++)
		/* encode-ok: two hex digits and the NUL: always 3 */
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	hex_of(md, out);
}

/* A file's SHA-256, read in 1 MiB pieces: an image may be many GB.
 * want: the stat the caller keyed the answer on (NULL: none); the hash
 * counts only when the open file has that statkey before the read and
 * after it, so a digest is never of an image that changed meanwhile
 * (torn), nor cached under another file's fingerprint. */
static int file_sha256(const char *path, unsigned flags, const struct stat *want, char out[65],
		       struct sbuf *err)
{
	int fd = fileio_open_regular(path, flags, err), rc = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	size_t cap = 1u << 20;
	char *buf = xmalloc(cap);
	struct statkey before = { 0 }, after = { 0 };
	struct stat st;
	ssize_t got;

	if (fd < 0 || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		if (fd >= 0 && !err->len)
			sbuf_addstr(err, "cannot set up sha256 (libcrypto)");
		rc = -1;
		goto out;
	}
	if (!fstat(fd, &st))
		statkey_of(&st, &before);
	if (want) {
		statkey_of(want, &after);
		if (!statkey_is_equal(&before, &after))
			goto changed;
	}
	while ((got = read(fd, buf, cap)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
			rc = -1;
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)got);
	}
	memset(&after, 0, sizeof(after));
	if (!fstat(fd, &st))
		statkey_of(&st, &after);
	if (!statkey_is_equal(&before, &after))
		goto changed;
	EVP_DigestFinal_ex(ctx, md, NULL);
	hex_of(md, out);
	goto out;
changed:
	sbuf_addf(err, "%s changed while its digest was computed (its size, mtime or ctime "
		  "moved); pin it when nothing writes it", path);
	rc = -1;
out:
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return rc;
}

static void tree_add(struct tree *t, const char *rel, const struct stat *st)
{
	t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	t->v[t->n].rel = xstrdup(rel);
	t->v[t->n++].st = *st;
}

static void tree_release(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].rel);
	free(t->v);
}

/* Every entry under root/rel, links not followed. */
static int tree_walk(const char *root, const char *rel, int depth, struct tree *t,
		     struct sbuf *err)
{
	char *dir = xasprintf("%s/%s", root, rel);
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d || depth > TREE_MAX_DEPTH) {
		sbuf_addf(err, "cannot read %s: %s", dir, d ? "nested too deep" : strerror(errno));
		rc = -1;
	}
	while (!rc && (de = readdir(d))) {
		char *sub, *path;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = strcmp(rel, ".") ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		path = xasprintf("%s/%s", root, sub);
		if (lstat(path, &st)) {
			sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
			rc = -1;
		} else {
			tree_add(t, sub, &st);
			if (S_ISDIR(st.st_mode))
				rc = tree_walk(root, sub, depth + 1, t, err);
		}
		free(sub);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
	return rc;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->rel, ((const struct entry *)b)->rel);
}

/* What the cache compares: every entry's mode and statkey
 * (common/statkey.h: device, inode, size, mtime and ctime), the stat
 * data a change to its content moves; ctime even when a rewrite keeps
 * size and mtime (touch -d, cp -p). */
static void tree_fingerprint(const struct tree *t, char out[65])
{
	struct sbuf s = SBUF_INIT;

	for (size_t i = 0; i < t->n; i++) {
		struct statkey k;

		statkey_of(&t->v[i].st, &k);
		sbuf_addf(&s, "%s%c%o %llu %llu %llu %lld %lld\n", t->v[i].rel, 0,
			  (unsigned)t->v[i].st.st_mode, (unsigned long long)k.dev,
			  (unsigned long long)k.ino, (unsigned long long)k.size, (long long)k.mtime_ns,
			  (long long)k.ctime_ns);
	}
	sha256_hex(s.buf, s.len, out);
	sbuf_release(&s);
}

/* One record per entry: path, mode, size (0 for a directory, whose size
 * depends on the file system), then a file's hash or a link's target. */
static int tree_hash(const char *root, const struct tree *t, char out[65], struct sbuf *err)
{
	struct sbuf s = SBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct stat *st = &t->v[i].st;
		char *path = xasprintf("%s/%s", root, t->v[i].rel), hex[65] = "", target[4097];
		ssize_t n;

		sbuf_addf(&s, "%s%c%o%c%lld%c", t->v[i].rel, 0, (unsigned)st->st_mode, 0,
			  S_ISDIR(st->st_mode) ? 0LL : (long long)st->st_size, 0);
		if (S_ISREG(st->st_mode) && !(rc = file_sha256(path, FILEIO_NOFOLLOW, st, hex, err))) {
			sbuf_addstr(&s, hex);
		} else if (S_ISLNK(st->st_mode)) {
			n = readlink(path, target, sizeof(target) - 1);
			if (n < 0) {
				sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
				rc = -1;
			} else {
				sbuf_add(&s, target, (size_t)n);
			}
		}
		sbuf_addch(&s, '\n');
		free(path);
	}
	if (!rc)
		sha256_hex(s.buf, s.len, out);
	sbuf_release(&s);
	return rc;
}

char *container_digest_cache_path(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return xasprintf("%s/hpctrain/image-digests.json", xdg);
	if (home && home[0] == '/')
		return xasprintf("%s/.cache/hpctrain/image-digests.json", home);
	return NULL;
}

static int is_digest(const char *s)
{
	return s && strlen(s) == 71 && !strncmp(s, "sha256:", 7) &&
	       strspn(s + 7, "0123456789abcdef") == 64;
}

/* The cached digest of image when its fingerprint still matches: an
 * entry is used only when both strings have their exact form. */
static int cache_get(json_t *cache, const char *image, const char *fp, char *out)
{
	json_t *e = json_object_get(json_object_get(cache, "images"), image);
	const char *f = json_string_value(json_object_get(e, "fingerprint"));
	const char *d = json_string_value(json_object_get(e, "digest"));

	if (!f || strcmp(f, fp) || !is_digest(d))
		return -1;
	strcpy(out, d);
	return 0;
}

static json_t *cache_load(const char *cache, struct sbuf *note)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL;

	if (cache && fileio_exists(cache)) {
		doc = jsonfile_load(cache, CACHE_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
		if (!doc)
			sbuf_addf(note, "ignoring the digest cache: %s\n", err.buf);
		else if (!json_is_object(json_object_get(doc, "images"))) {
			sbuf_addf(note, "ignoring the digest cache %s: no \"images\" object\n", cache);
			json_decref(doc);
			doc = NULL;
		}
	}
	sbuf_release(&err);
	return doc ? doc : json_pack("{s:i, s:{}}", "version", 1, "images");
}

static void cache_store(json_t *doc, const char *cache, const char *image, const char *fp,
			const char *digest, struct sbuf *note)
{
	struct sbuf err = SBUF_INIT;
	char *dir = xstrdup(cache), *slash = strrchr(dir, '/'), *text;

	/* a path that is not UTF-8 cannot be a JSON key: not cached, said */
	if (json_object_set_new(json_object_get(doc, "images"), image,
				json_pack("{s:s, s:s}", "fingerprint", fp, "digest", digest))) {
		sbuf_addstr(note, "the digest was not cached: the image path is not UTF-8\n");
		free(dir);
		return;
	}
	text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	*slash = '\0';
	if (!text || fileio_private_dir(dir, &err) ||
	    fileio_write_atomic(cache, text, strlen(text), 0600, 0, &err))
		sbuf_addf(note, "the digest was not cached: %s\n", err.len ? err.buf : "out of memory");
	free(text);
	free(dir);
	sbuf_release(&err);
}

static void reference_digest(const char *image, char out[CONTAINER_DIGEST_SIZE],
			     struct sbuf *note)
{
	const char *at = strstr(image, "@sha256:");

	if (at && strlen(at + 1) == 71 && is_digest(at + 1)) {
		strcpy(out, at + 1);
		return;
	}
	strcpy(out, CONTAINER_DIGEST_UNPINNED);
	sbuf_addf(note, "warning: the image reference %s cannot be pinned (it has no @sha256: "
		  "digest); it is recorded as unpinned, and the run may start another image\n",
		  image);
}

/* The image's stat fingerprint, its tree for a directory.  The image
 * itself may be a link (img.sqfs -> img-v2.sqfs); nothing inside it is
 * followed. */
static int fingerprint(const char *image, enum container_image_kind kind, struct tree *t,
		       char fp[65], struct sbuf *err)
{
	struct stat st;

	if (stat(image, &st)) {
		sbuf_addf(err, "container image %s: %s", image, strerror(errno));
		return -1;
	}
	tree_add(t, ".", &st);
	if (kind == CONTAINER_IMAGE_DIR && tree_walk(image, ".", 0, t, err))
		return -1;
	qsort(t->v, t->n, sizeof(*t->v), entry_cmp);
	tree_fingerprint(t, fp);
	return 0;
}

/* How digest_of treats the cache: believe an entry that matches (else
 * hash), only look (1 when no entry matches: nothing read), or hash
 * whatever it holds. */
enum digest_use { DIGEST_REUSE, DIGEST_LOOK, DIGEST_FRESH };

static int digest_of(const char *image, enum container_image_kind kind, const char *cache,
		     enum digest_use use, char out[CONTAINER_DIGEST_SIZE], struct sbuf *note,
		     struct sbuf *err)
{
	struct tree t = { NULL, 0 };
	json_t *doc = NULL;
	char fp[65], hex[65];
	int rc = 0;

	if (kind == CONTAINER_IMAGE_REF) {
		reference_digest(image, out, note);
		return 0;
	}
	if ((rc = fingerprint(image, kind, &t, fp, err)))
		goto out;
	doc = cache_load(cache, note);
	if (use != DIGEST_FRESH && !cache_get(doc, image, fp, out))
		goto out;
	if (use == DIGEST_LOOK) {
		rc = 1;
		goto out;
	}
	rc = kind == CONTAINER_IMAGE_DIR ? tree_hash(image, &t, hex, err)
					 : file_sha256(image, 0, &t.v[0].st, hex, err);
	if (!rc && kind == CONTAINER_IMAGE_DIR) {
		/* every file was checked while read; the tree itself (an
		 * entry added, removed or renamed) is checked here */
		struct tree again = { NULL, 0 };
		char fp2[65];

		rc = fingerprint(image, kind, &again, fp2, err);
		if (!rc && strcmp(fp, fp2)) {
			sbuf_addf(err, "%s changed while its digest was computed; pin it when "
				  "nothing writes it", image);
			rc = -1;
		}
		tree_release(&again);
	}
	if (rc)
		goto out;
	if (snprintf(out, CONTAINER_DIGEST_SIZE, "sha256:%s", hex) != CONTAINER_DIGEST_SIZE - 1) {
		sbuf_addstr(err, "internal error: a digest of the wrong length");
		rc = -1;
		goto out;
	}
	if (cache)
		cache_store(doc, cache, image, fp, out, note);
out:
	json_decref(doc);
	tree_release(&t);
	return rc;
}

int container_digest(const char *image, enum container_image_kind kind, const char *cache,
		     char out[CONTAINER_DIGEST_SIZE], struct sbuf *note, struct sbuf *err)
{
	return digest_of(image, kind, cache, DIGEST_REUSE, out, note, err);
}

int container_digest_cached(const char *image, enum container_image_kind kind, const char *cache,
			    char out[CONTAINER_DIGEST_SIZE], struct sbuf *note, struct sbuf *err)
{
	return digest_of(image, kind, cache, DIGEST_LOOK, out, note, err);
}

int container_digest_fresh(const char *image, enum container_image_kind kind, const char *cache,
			   char out[CONTAINER_DIGEST_SIZE], struct sbuf *note, struct sbuf *err)
{
	return digest_of(image, kind, cache, DIGEST_FRESH, out, note, err);
}
