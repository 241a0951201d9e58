/* container_squash.c - a SquashFS image mounted once per node with
 * squashfuse, shared by its ranks and unmounted by the last: see
 * container_squash.h.  Shell. */
#include "launcher/container/container_squash.h" // defines: container_squash_mount, container_squash_release
#include "launcher/container/container_image.h"  // defines: container_image_in_path
#include "launcher/container/container_proc.h"   // defines: container_proc_run
#include "launcher/container/container_digest.h" // defines: container_digest
#include "common/fileio.h"  // defines: fileio_private_dir, fileio_read_fd, fileio_write_atomic
#include "common/fileremove.h" // defines: fileremove_one
#include "common/sbuf.h"    // defines: struct sbuf, xasprintf
#include "common/statkey.h" // defines: struct statkey, statkey_*

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IDENT_MAX 8192
#define MOUNT_TRIES 20 /* a release between our mount and our shared lock, or another
			* rank mounting: look again */

/* 1 mounted and alive, 0 not mounted, -1 mounted but its server gone
 * (ENOTCONN) or unreadable: dir's device differs from its folder's. */
static int mount_state(const char *dir, const char *base)
{
	struct stat a, b;

	if (stat(dir, &a))
		return errno == ENOENT ? 0 : -1;
	if (stat(base, &b))
		return -1;
	return a.st_dev != b.st_dev;
}

/* A mount point or lock file goes, only when it is the caller's (the
 * mounts' folder is, but root may be given another user's TMPDIR). */
static void forget(const char *path)
{
	struct sbuf ignored = SBUF_INIT;

	fileremove_one(path, &ignored);
	sbuf_release(&ignored);
}

static void unmount(const char *dir)
{
	char *const argv[] = { "fusermount", "-u", "-q", (char *)dir, NULL };

	if (container_proc_run(argv, -1, false)) {
		char *const lazy[] = { "fusermount", "-u", "-z", "-q", (char *)dir, NULL };

		container_proc_run(lazy, -1, false); /* a dead server: detach it all the same */
	}
	forget(dir);
}

/* DIR/hpctrain-squash-UID, DIR the first absolute one of
 * $XDG_RUNTIME_DIR, $TMPDIR and /tmp. */
static char *base_path(void)
{
	const char *dirs[] = { getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"), "/tmp" };
	size_t i = 0;

	while (!dirs[i] || dirs[i][0] != '/')
		i++;
	return xasprintf("%s/hpctrain-squash-%u", dirs[i], (unsigned)getuid());
}

/* base_path, made private (or refused). */
static char *base_dir(struct sbuf *err)
{
	char *b = base_path();

	if (!fileio_private_dir(b, err))
		return b;
	free(b);
	return NULL;
}

/* The digest's hex, or the image's path with '/' as '_' when there is
 * none (a launch from a spec file that validate did not pin); then the
 * node's name (SLURMD_NODENAME, else the host's): a mount is the node's
 * own, and where nodes share the base directory (one host's
 * network-namespace nodes; a shared TMPDIR) one node's ranks holding the
 * lock must not keep another node's from mounting. */
static char *key_of(const char *image, const char *key)
{
	const char *hex = key ? strchr(key, ':') : NULL, *node = getenv("SLURMD_NODENAME");
	char host[256] = "", *k, *out;

	if (hex && strlen(hex + 1) >= 16) {
		k = xstrndup(hex + 1, 32);
	} else {
		k = xstrdup(image);
		for (char *p = k; *p; p++)
			if (*p == '/')
				*p = '_';
	}
	if ((!node || !*node) && !gethostname(host, sizeof(host) - 1))
		node = host;
	if (!node || !*node || strchr(node, '/'))
		return k;
	out = xasprintf("%s-%s", k, node);
	free(k);
	return out;
}

/* Is fd still the file at path (not one the last rank removed)? */
static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !lstat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The identity of a mount, DIR.id beside it: the statkey of the image
 * file it was made from, when its digest had just been checked, and that
 * file's path ("DEV INO SIZE MTIME_NS CTIME_NS PATH").  squashfuse reads
 * the file for as long as it serves the mount, so the mount serves the
 * checked image only while that file keeps its statkey: a file rewritten
 * in place (ctime moves), or replaced (another inode), makes the mount
 * stale. */
static char *ident_path(const char *dir)
{
	return xasprintf("%s.id", dir);
}

static int image_key(const char *image, struct statkey *k)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	if (stat(image, &st))
		return -1;
	statkey_of(&st, k);
	return 0;
}

/* Does the mount at dir still serve the image it was checked against? */
static bool ident_is_current(const char *dir)
{
	char *id = ident_path(dir);
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	unsigned long long dev, ino, size;
	long long mt, ct;
	struct statkey was, now;
	int off = 0;
	bool ok = false;

	if (!fileio_read_flags(id, IDENT_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &text, &err) &&
	    sscanf(text.buf, "%llu %llu %llu %lld %lld %n", &dev, &ino, &size, &mt, &ct, &off) == 5 &&
	    off > 0 && text.buf[off] == '/') {
		text.buf[strcspn(text.buf, "\n")] = '\0';
		was = (struct statkey){ dev, ino, size, mt, ct };
		ok = !image_key(text.buf + off, &now) && statkey_is_equal(&was, &now);
	}
	sbuf_release(&text);
	sbuf_release(&err);
	free(id);
	return ok;
}

/* Under LOCK_EX, before mounting image: its content digest is key's
 * (when key is a digest), and *k its statkey, unchanged across the hash.
 * The mount point's name claims the digest; this is what makes it true. */
static int check_image(const char *image, const char *key, struct statkey *k, struct sbuf *err)
{
	char got[CONTAINER_DIGEST_SIZE], *cache;
	struct sbuf note = SBUF_INIT;
	struct statkey after;
	int rc = 0;

	if (image_key(image, k)) {
		sbuf_addf(err, "cannot read the image %s: %s", image, strerror(errno));
		return -1;
	}
	if (key && !strncmp(key, "sha256:", 7)) {
		cache = container_digest_cache_path();
		rc = container_digest(image, CONTAINER_IMAGE_SQUASHFS, cache, got, &note, err);
		free(cache);
		if (!rc && strcmp(got, key)) {
			sbuf_addf(err, "the image %s is not the one pinned (pinned %.19s..., now "
				  "%.19s...): it changed since the run was validated; validate or "
				  "submit it again", image, key, got);
			rc = -1;
		}
	}
	if (!rc && (image_key(image, &after) || !statkey_is_equal(k, &after))) {
		sbuf_addf(err, "the image %s changed while it was checked; launch it when "
			  "nothing writes it", image);
		rc = -1;
	}
	sbuf_release(&note);
	return rc;
}

/* Under LOCK_EX: mounted when this returns 0, from image checked against
 * key (check_image), with its identity recorded.  A mount there already
 * whose identity is not current (its image file changed or was
 * replaced since) is unmounted first: it would serve other bytes under
 * the digest's name. */
static int mount_locked(const char *image, const char *key, const char *dir, const char *base,
			struct sbuf *err)
{
	char *const argv[] = { "squashfuse", (char *)image, (char *)dir, NULL };
	int state = mount_state(dir, base), rc, efd;
	struct statkey k, after;
	char tmp[4200], *id, *text;

	if (state > 0 && ident_is_current(dir))
		return 0;
	if (state != 0)
		unmount(dir);
	if (check_image(image, key, &k, err))
		return -1;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		sbuf_addf(err, "cannot make the mount point %s: %s", dir, strerror(errno));
		return -1;
	}
	/* squashfuse's complaint, in an unlinked file of our own folder */
	/* a base too long for tmp: no complaint captured, rather than a
	 * mkostemp on a cut path (which would not end in XXXXXX) */
	efd = (size_t)snprintf(tmp, sizeof(tmp), "%s/.squashfuse-XXXXXX", base) < sizeof(tmp)
		      ? mkostemp(tmp, O_CLOEXEC) : -1;
	if (efd >= 0)
		unlink(tmp);
	rc = container_proc_run(argv, efd, true);
	if (rc || mount_state(dir, base) <= 0) {
		struct sbuf msg = SBUF_INIT, ignored = SBUF_INIT;

		if (efd >= 0 && lseek(efd, 0, SEEK_SET) == 0)
			fileio_read_fd(efd, tmp, 512, &msg, &ignored);
		sbuf_addf(err, "squashfuse %s %s failed (exit status %d)%s%.*s", image, dir, rc,
			  msg.len ? ": " : "", (int)strcspn(msg.buf, "\n"), msg.buf);
		sbuf_release(&msg);
		sbuf_release(&ignored);
		forget(dir);
		rc = -1;
	}
	if (efd >= 0)
		close(efd);
	if (rc)
		return -1;
	/* squashfuse opened the path after the check: the same file? */
	id = ident_path(dir);
	text = xasprintf("%llu %llu %llu %lld %lld %s\n", (unsigned long long)k.dev,
			 (unsigned long long)k.ino, (unsigned long long)k.size, (long long)k.mtime_ns,
			 (long long)k.ctime_ns, image);
	if (image_key(image, &after) || !statkey_is_equal(&k, &after)) {
		sbuf_addf(err, "the image %s changed while it was mounted; launch it when nothing "
			  "writes it", image);
		rc = -1;
	} else if (fileio_write_atomic(id, text, strlen(text), 0600, 0, err)) {
		rc = -1;
	}
	if (rc)
		unmount(dir);
	free(id);
	free(text);
	return rc ? -1 : 0;
}

int container_squash_mount(const char *image, const char *key, struct container_squash *m,
			   struct sbuf *err)
{
	char *base = NULL, *k = NULL, *lock = NULL, *dir = NULL;
	int fd = -1, rc = -1;

	*m = (struct container_squash)CONTAINER_SQUASH_INIT;
	if (!container_image_in_path("squashfuse") || !container_image_in_path("fusermount")) {
		sbuf_addf(err, "no squashfuse (and fusermount) in PATH to mount it outside ch-run");
		return -1;
	}
	if (!(base = base_dir(err)))
		goto out;
	k = key_of(image, key);
	lock = xasprintf("%s/%s.lock", base, k);
	dir = xasprintf("%s/%s", base, k);
	for (int i = 0; i < MOUNT_TRIES && rc; i++) {
		/* open-ok: a lock, never read; O_RDWR does not block on a FIFO */
		if (fd < 0 && (fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
			sbuf_addf(err, "cannot open %s: %s", lock, strerror(errno));
			goto out;
		}
		/* Mounted already: share it at once.  Waiting for LOCK_EX
		 * here would wait for every rank holding it shared, that
		 * is, for their programs' end: a node's ranks ran one after
		 * the other, and ch-run --join peers found the first gone. */
		if (flock(fd, LOCK_SH))
			goto out;
		if (same_file(fd, lock) && mount_state(dir, base) > 0 && ident_is_current(dir)) {
			rc = 0;
			break;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			if (errno != EWOULDBLOCK)
				goto out;
			if (same_file(fd, lock) && mount_state(dir, base) > 0 &&
			    !ident_is_current(dir) && i == MOUNT_TRIES - 1) {
				sbuf_addf(err, "the mount %s serves an image file that changed since "
					  "it was mounted, and another rank still uses it", dir);
				goto out;
			}
			continue; /* another rank mounts: wait for it, shared */
		}
		if (!same_file(fd, lock)) {
			/* the last rank out removed it after we opened it */
			close(fd);
			fd = -1;
			continue;
		}
		if (mount_locked(image, key, dir, base, err)) {
			forget(lock); /* held LOCK_EX: no rank has the image */
			goto out;
		}
		/* flock converts by unlocking first: a last rank may unmount
		 * in between, so look again under the shared lock */
		if (flock(fd, LOCK_SH))
			goto out;
		rc = mount_state(dir, base) > 0 && same_file(fd, lock) ? 0 : -1;
	}
	if (rc)
		sbuf_addf(err, "the mount of %s at %s kept going away", image, dir);
out:
	if (rc && err->len == 0)
		sbuf_addf(err, "cannot mount %s: %s", image, strerror(errno));
	if (!rc) {
		m->dir = dir;
		m->lock_fd = fd;
		dir = NULL;
	} else if (fd >= 0) {
		/* the last rank to give up takes the lock file away, as the
		 * last one out of a mount does: no rank holds it, and nothing
		 * is mounted there (the first rank's refusal unlinked it, and
		 * a waiting rank may have made it again) */
		if (!flock(fd, LOCK_EX | LOCK_NB) && same_file(fd, lock) && mount_state(dir, base) == 0)
			forget(lock);
		close(fd);
	}
	free(base);
	free(k);
	free(lock);
	free(dir);
	return rc;
}

char *container_squash_path(const char *image, const char *key)
{
	char *base = base_path(), *k = key_of(image, key), *dir = xasprintf("%s/%s", base, k);

	free(base);
	free(k);
	return dir;
}

int container_squash_inherit(struct container_squash *m)
{
	return m->lock_fd >= 0 ? fcntl(m->lock_fd, F_SETFD, 0) : 0;
}

void container_squash_release(struct container_squash *m)
{
	if (!m || !m->dir)
		return;
	if (m->lock_fd >= 0 && !flock(m->lock_fd, LOCK_EX | LOCK_NB)) {
		/* no other rank holds it; one that opened the lock file
		 * meanwhile finds it gone once it has the lock, and makes
		 * another */
		char *lock = xasprintf("%s.lock", m->dir), *id = ident_path(m->dir);

		unmount(m->dir);
		forget(id);
		forget(lock);
		free(lock);
		free(id);
	}
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	free(m->dir);
	*m = (struct container_squash)CONTAINER_SQUASH_INIT;
}
