/* container_squash.c - a SquashFS image mounted once per node with
 * squashfuse, shared by its ranks and unmounted by the last: see
 * container_squash.h.  Shell. */
#include "launcher/container/container_squash.h" // defines: container_squash_mount, container_squash_release
#include "launcher/container/container_image.h"  // defines: container_image_in_path
#include "launcher/container/container_proc.h"   // defines: container_proc_run
#include "common/fileio.h" // defines: fileio_private_dir, fileio_read_fd
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf

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

static void unmount(const char *dir)
{
	char *const argv[] = { "fusermount", "-u", "-q", (char *)dir, NULL };

	if (container_proc_run(argv, -1, false)) {
		char *const lazy[] = { "fusermount", "-u", "-z", "-q", (char *)dir, NULL };

		container_proc_run(lazy, -1, false); /* a dead server: detach it all the same */
	}
	rmdir(dir);
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

/* Under LOCK_EX: mounted when this returns 0. */
static int mount_locked(const char *image, const char *dir, const char *base, struct sbuf *err)
{
	char *const argv[] = { "squashfuse", (char *)image, (char *)dir, NULL };
	int state = mount_state(dir, base), rc, efd;
	char tmp[4200];

	if (state > 0)
		return 0;
	if (state < 0)
		unmount(dir);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		sbuf_addf(err, "cannot make the mount point %s: %s", dir, strerror(errno));
		return -1;
	}
	/* squashfuse's complaint, in an unlinked file of our own folder */
	snprintf(tmp, sizeof(tmp), "%s/.squashfuse-XXXXXX", base);
	efd = mkostemp(tmp, O_CLOEXEC);
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
		rmdir(dir);
		rc = -1;
	}
	if (efd >= 0)
		close(efd);
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
		if (same_file(fd, lock) && mount_state(dir, base) > 0) {
			rc = 0;
			break;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			if (errno != EWOULDBLOCK)
				goto out;
			continue; /* another rank mounts: wait for it, shared */
		}
		if (!same_file(fd, lock)) {
			/* the last rank out removed it after we opened it */
			close(fd);
			fd = -1;
			continue;
		}
		if (mount_locked(image, dir, base, err)) {
			unlink(lock); /* held LOCK_EX: no rank has the image */
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
		char *lock = xasprintf("%s.lock", m->dir);

		unmount(m->dir);
		unlink(lock);
		free(lock);
	}
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	free(m->dir);
	*m = (struct container_squash)CONTAINER_SQUASH_INIT;
}
