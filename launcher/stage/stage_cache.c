/* stage_cache.c - claim, check, publish, hold and remove entries of a
 * node's data cache (layout and locking in stage_cache.h).
 * Shell: flock(2), stat, rename, the entry records. */
#include "launcher/stage/stage_cache.h"    // defines: struct stage_claim, stage_cache_*
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*
#include "launcher/stage/stage_scan.h"     // defines: stage_scan_hash_fd, stage_scan_link_is
#include "common/exitcode.h"               // defines: HPT_EXIT_*
#include "common/fileio.h"                 // defines: fileio_private_dir, fileio_write_atomic
#include "common/fileremove.h"             // defines: fileremove_tree, fileremove_one
#include "common/jsonfile.h"               // defines: jsonfile_load
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf
#include "common/statkey.h"                // defines: struct statkey, statkey_*

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD_MAX (256u << 20)

void stage_claim_init(struct stage_claim *c)
{
	memset(c, 0, sizeof(*c));
	c->fetch_fd = -1;
	c->use_fd = -1;
}

void stage_claim_release(struct stage_claim *c)
{
	if (!c)
		return;
	if (c->fetch_fd >= 0)
		close(c->fetch_fd);
	if (c->use_fd >= 0)
		close(c->use_fd);
	stage_claim_init(c);
}

int stage_cache_open(const char *cache, struct sbuf *err)
{
	return fileio_private_dir(cache, err);
}

/* Opens (creating with create) and flocks path with op; when the file
 * was unlinked while we waited for the lock (a removal holding it), opens
 * the new one.  The descriptor, or -1 with errno (EWOULDBLOCK: held). */
static int lock_open(const char *path, int op, bool create)
{
	for (;;) {
		/* open-ok: a lock, never read; O_RDWR does not block on a FIFO */
		int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
		struct stat a, b;
		int r, e;

		if (fd < 0)
			return -1;
		while ((r = flock(fd, op)) && errno == EINTR)
			;
		if (r) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		close(fd);
		if (!create) {
			errno = ENOENT;
			return -1;
		}
	}
}

static char *entry_file(const char *cache, const char *hex, const char *suffix)
{
	return xasprintf("%s/%s%s", cache, hex, suffix);
}

/* Moves the entry directory aside first (so a reader never sees it half
 * removed), then deletes it, then its record. */
static int remove_entry_files(const char *cache, const char *hex, struct sbuf *err)
{
	char *dir = entry_file(cache, hex, ""), *rec = entry_file(cache, hex, ".json");
	char *aside = xasprintf("%s/.tmp-%s-removed-%ld", cache, hex, (long)getpid());
	int rc = 0;

	if (!rename(dir, aside)) {
		rc = fileremove_tree(aside, err);
		if (rc) /* another user's part (common/fileremove.h): the entry stays, whole */
			rename(aside, dir);
	} else if (errno != ENOENT)
		rc = fileremove_tree(dir, err);
	if (!rc)
		rc = fileremove_one(rec, err);
	free(dir);
	free(rec);
	free(aside);
	return rc;
}

/* The published entry's record, checked against m: 0 with *keys
 * (m->n of them, malloc'd; zero, which no file's key equals, where the
 * record has none: one written before keys, whose files are then
 * hashed) and *stored (the file source's name in the entry, or NULL);
 * 1 when there is neither record nor directory; 2 when what is there is
 * damaged, note saying how. */
static int read_record(const char *cache, const char *hex, const struct stage_manifest *m,
		       struct statkey **keys, char **stored, struct sbuf *note)
{
	char *rec = entry_file(cache, hex, ".json"), *dir = entry_file(cache, hex, "");
	struct stage_manifest got = { 0 };
	struct sbuf err = SBUF_INIT;
	json_t *doc, *man = NULL, *mt = NULL, *v, *jfile = NULL;
	const char *file;
	struct stat st;
	int rc = 2;
	size_t i;

	*keys = NULL;
	*stored = NULL;
	doc = jsonfile_load(rec, RECORD_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
	if (!doc) {
		if (lstat(rec, &st) && errno == ENOENT && lstat(dir, &st) && errno == ENOENT)
			rc = 1;
		else
			sbuf_addf(note, "its record is unreadable (%s)", err.buf);
		goto out;
	}
	if (json_unpack(doc, "{s:o, s?o, s?o}", "manifest", &man, "keys", &mt, "file", &jfile))
		man = NULL;
	file = json_string_value(jfile); /* null for a directory */
	if (!man ||
	    stage_manifest_from_json(man, &got, &err) || strcmp(got.hash, m->hash) ||
	    (mt && (!json_is_array(mt) || json_array_size(mt) != m->n)) || (m->is_file && !file)) {
		sbuf_addf(note, "its record does not describe it%s%s", err.len ? ": " : "", err.buf);
		goto out;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		sbuf_addstr(note, "its directory is missing");
		goto out;
	}
	*keys = xcalloc(m->n ? m->n : 1, sizeof(**keys));
	json_array_foreach(mt, i, v)
		statkey_from_json(v, &(*keys)[i]); /* a bad one is zero: hashed */
	*stored = file ? xstrdup(file) : NULL;
	rc = 0;
out:
	stage_manifest_release(&got);
	json_decref(doc);
	sbuf_release(&err);
	free(rec);
	free(dir);
	return rc;
}

/* Rewrites the record's keys after the files they had moved for were
 * hashed and matched (or a link was added: ctime): so the next claim
 * trusts them again without a read.  Best effort: a record left as it
 * was costs a hash next time, never a wrong answer. */
static void rewrite_keys(const char *cache, const char *hex, const struct statkey *keys, size_t n)
{
	char *rec = entry_file(cache, hex, ".json"), *text = NULL;
	struct sbuf err = SBUF_INIT;
	json_t *doc = jsonfile_load(rec, RECORD_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
	json_t *a = json_array();
	bool ok = doc && a;

	for (size_t i = 0; i < n && ok; i++)
		ok = !json_array_append_new(a, statkey_to_json(&keys[i]));
	if (ok && !json_object_set(doc, "keys", a) &&
	    (text = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT)))
		fileio_write_atomic(rec, text, strlen(text), 0600, 0, &err);
	free(text);
	json_decref(a);
	json_decref(doc);
	sbuf_release(&err);
	free(rec);
}

/* The reuse checks on a published entry (see stage_cache_claim); 0 when
 * it passes, else 2 with note.  Makes file_name a link to the stored file
 * when they differ. */
static int check_entry(const char *cache, const char *hex, const struct stage_manifest *m,
		       const char *file_name, bool verify, struct sbuf *note)
{
	char *dir = entry_file(cache, hex, ""), *stored = NULL;
	struct statkey *keys = NULL;
	bool moved = false;
	int rc, dfd = -1;

	rc = read_record(cache, hex, m, &keys, &stored, note);
	if (rc)
		goto out;
	rc = 2;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		sbuf_addf(note, "cannot open it: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct stage_file *f = &m->v[i];
		const char *rel = m->is_file ? stored : f->path;
		unsigned char sha[32];
		struct sbuf err = SBUF_INIT;
		struct statkey now;
		struct stat st;
		uint64_t n;
		int fd, bad;

		if (f->link) {
			if (!stage_scan_link_is(dfd, rel, f->link)) {
				sbuf_addf(note, "%s is not a link to %s", rel, f->link);
				goto out;
			}
			continue;
		}
		if (fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
			sbuf_addf(note, "%s is missing", rel);
			goto out;
		}
		if ((uint64_t)st.st_size != f->size) {
			sbuf_addf(note, "%s has %lld bytes, not %llu", rel, (long long)st.st_size,
				  (unsigned long long)f->size);
			goto out;
		}
		statkey_of(&st, &now);
		if (!verify && statkey_is_equal(&now, &keys[i]))
			continue;
		/* a FIFO swapped in since the fstatat must not hang us:
		 * open-ok: O_NONBLOCK, then fileio_vet_fd */
		fd = openat(dfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			fd = fileio_vet_fd(fd, rel, 0, &err);
		bad = fd < 0 || stage_scan_hash_fd(fd, rel, &st, sha, &n, &err) ||
		      memcmp(sha, f->sha256, 32);
		if (fd >= 0)
			close(fd);
		sbuf_release(&err);
		if (bad) {
			sbuf_addf(note, "%s does not match its sha256", rel);
			goto out;
		}
		/* after the bytes, whose damage says more; a chmod moves
		 * ctime, so a file whose statkey stands kept its mode */
		if ((st.st_mode & 07777) != (f->exec ? 0555u : 0444u)) {
			sbuf_addf(note, "%s has the mode %04o, not %04o", rel,
				  (unsigned)(st.st_mode & 07777), f->exec ? 0555u : 0444u);
			goto out;
		}
		moved |= !statkey_is_equal(&now, &keys[i]);
		keys[i] = now;
	}
	if (m->is_file && strcmp(stored, file_name)) {
		struct stat a, b;

		if (fstatat(dfd, file_name, &b, AT_SYMLINK_NOFOLLOW)) {
			if (linkat(dfd, stored, dfd, file_name, 0)) {
				sbuf_addf(note, "cannot name its file %s: %s", file_name, strerror(errno));
				goto out;
			}
			/* a new link moves the file's ctime: record it, or
			 * every later claim would hash the file again */
			if (!fstatat(dfd, stored, &a, AT_SYMLINK_NOFOLLOW)) {
				statkey_of(&a, &keys[0]);
				moved = true;
			}
		} else if (fstatat(dfd, stored, &a, AT_SYMLINK_NOFOLLOW) || a.st_ino != b.st_ino) {
			sbuf_addf(note, "%s is not its file", file_name);
			goto out;
		}
	}
	if (moved)
		rewrite_keys(cache, hex, keys, m->n);
	rc = 0;
out:
	if (dfd >= 0)
		close(dfd);
	free(dir);
	free(stored);
	free(keys);
	return rc;
}

/* Takes the use lock shared, touches the record (the last use), lets
 * the fetch lock go: the claim becomes a HIT. */
static int become_hit(const char *cache, const char *hex, struct stage_claim *c, struct sbuf *err)
{
	char *use = entry_file(cache, hex, ".lock"), *rec = entry_file(cache, hex, ".json");
	int rc = 0;

	c->use_fd = lock_open(use, LOCK_SH, true);
	if (c->use_fd < 0) {
		sbuf_addf(err, "cannot lock %s: %s", use, strerror(errno));
		rc = HPT_EXIT_IO;
	} else {
		utimensat(AT_FDCWD, rec, NULL, AT_SYMLINK_NOFOLLOW);
		close(c->fetch_fd);
		c->fetch_fd = -1;
		c->state = STAGE_CLAIM_HIT;
	}
	free(use);
	free(rec);
	return rc;
}

int stage_cache_claim(const char *cache, const struct stage_manifest *m, const char *file_name,
		      unsigned flags, struct stage_claim *c, struct sbuf *note, struct sbuf *err)
{
	const char *hex = stage_manifest_hex(m->hash);
	char *fetch, *use = NULL;
	int rc, ufd;

	stage_claim_release(c);
	if (!hex) {
		sbuf_addf(err, "bad manifest hash '%s'", SBUF_CLIP(m->hash));
		return HPT_EXIT_INTERNAL;
	}
	fetch = entry_file(cache, hex, ".fetch");
	c->fetch_fd = lock_open(fetch, LOCK_EX | ((flags & STAGE_CACHE_WAIT) ? 0 : LOCK_NB), true);
	if (c->fetch_fd < 0) {
		rc = errno == EWOULDBLOCK ? 0 : HPT_EXIT_IO;
		if (rc)
			sbuf_addf(err, "cannot lock %s: %s", fetch, strerror(errno));
		else
			c->state = STAGE_CLAIM_BUSY;
		free(fetch);
		return rc;
	}
	free(fetch);
	rc = check_entry(cache, hex, m, file_name, flags & STAGE_CACHE_VERIFY, note);
	if (!rc)
		return become_hit(cache, hex, c, err);
	c->state = STAGE_CLAIM_MISS;
	if (rc == 1)
		return 0;
	/* damaged: remove it, unless a job still reads it */
	use = entry_file(cache, hex, ".lock");
	ufd = lock_open(use, LOCK_EX | LOCK_NB, true);
	if (ufd < 0) {
		sbuf_addf(err, "the cached copy %s/%s is damaged (%s) and in use by another job; "
			  "it cannot be replaced until that job ends", cache, hex, note->buf);
		free(use);
		stage_claim_release(c);
		return HPT_EXIT_FAILURE;
	}
	free(use);
	rc = remove_entry_files(cache, hex, err) ? HPT_EXIT_IO : 0;
	close(ufd);
	c->repaired = true;
	return rc;
}

int stage_cache_publish(const char *cache, const struct stage_manifest *m, const char *file_name,
			const char *tmp, const struct statkey *keys, const char *name, const char *src,
			struct stage_claim *c, struct sbuf *err)
{
	const char *hex = stage_manifest_hex(m->hash);
	char *dir = entry_file(cache, hex, ""), *rec = entry_file(cache, hex, ".json"), *text = NULL;
	json_t *mt = json_array(), *doc;
	int rc = HPT_EXIT_IO;

	if (c->state != STAGE_CLAIM_MISS) {
		sbuf_addstr(err, "publishing an entry that was not claimed as a miss");
		rc = HPT_EXIT_INTERNAL;
		goto out;
	}
	for (size_t i = 0; i < m->n; i++)
		if (json_array_append_new(mt, statkey_to_json(&keys[i])))
			break;
	doc = json_array_size(mt) != m->n ? NULL :
	      json_pack("{s:o, s:O, s:s?, s:s, s:s, s:I}", "manifest", stage_manifest_to_json(m),
			"keys", mt, "file", m->is_file ? file_name : NULL, "name", name,
			"src", src, "published", (json_int_t)time(NULL));
	text = doc ? json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text) {
		/* checked before the rename: an entry never goes without a record */
		sbuf_addf(err, "cannot write the record of %s (a name that is not UTF-8, or out "
			  "of memory)", dir);
		rc = HPT_EXIT_INTERNAL;
		goto out;
	}
	if (rename(tmp, dir)) {
		sbuf_addf(err, "cannot publish %s as %s: %s", tmp, dir, strerror(errno));
		goto out;
	}
	/* fileio_write_atomic syncs the cache directory, and with it the rename */
	if (fileio_write_atomic(rec, text, strlen(text), 0600, 0, err))
		goto out;
	rc = become_hit(cache, hex, c, err);
out:
	json_decref(mt);
	free(text);
	free(dir);
	free(rec);
	return rc;
}

int stage_cache_hold(const char *cache, const char *hash)
{
	const char *hex = stage_manifest_hex(hash);
	char *fetch, *use, *dir;
	struct stat st;
	int ffd, ufd = -1;

	if (!hex) {
		errno = EINVAL;
		return -1;
	}
	fetch = entry_file(cache, hex, ".fetch");
	use = entry_file(cache, hex, ".lock");
	dir = entry_file(cache, hex, "");
	ffd = lock_open(fetch, LOCK_EX, false);
	if (ffd >= 0) {
		if (!lstat(dir, &st) && S_ISDIR(st.st_mode))
			ufd = lock_open(use, LOCK_SH, false);
		else
			errno = ENOENT;
		if (ufd >= 0) { /* a use: the record's mtime is the last one */
			char *rec = entry_file(cache, hex, ".json");

			utimensat(AT_FDCWD, rec, NULL, AT_SYMLINK_NOFOLLOW);
			free(rec);
		}
		close(ffd);
	}
	free(fetch);
	free(use);
	free(dir);
	return ufd;
}

int stage_cache_remove(const char *cache, const char *hex, struct sbuf *err)
{
	char *fetch = entry_file(cache, hex, ".fetch"), *use = entry_file(cache, hex, ".lock");
	int ffd, ufd = -1, rc = 1;

	ffd = lock_open(fetch, LOCK_EX | LOCK_NB, true);
	if (ffd >= 0)
		ufd = lock_open(use, LOCK_EX | LOCK_NB, true);
	if (ufd >= 0) {
		rc = remove_entry_files(cache, hex, err) ? -1 : 0;
		if (!rc && (fileremove_one(use, err) || fileremove_one(fetch, err)))
			rc = -1;
	}
	if (ufd >= 0)
		close(ufd);
	if (ffd >= 0)
		close(ffd);
	free(fetch);
	free(use);
	return rc;
}

int stage_cache_lock(const char *cache, const char *hex, const char *suffix, int op, bool create)
{
	char *path = entry_file(cache, hex, suffix);
	int fd = lock_open(path, op, create), e = errno;

	free(path);
	errno = e;
	return fd;
}
