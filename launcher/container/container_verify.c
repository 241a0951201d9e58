/* container_verify.c - an image a runtime reads by itself, checked
 * against its pin before the program starts (container_verify.h). */
#include "launcher/container/container_verify.h" // defines: container_verify, container_verify_is_needed
#include "launcher/container/container_digest.h" // defines: container_digest, container_digest_fresh
#include "common/fileio.h"    // defines: fileio_private_dir
#include "common/sbuf.h"      // defines: struct sbuf, xasprintf
#include "common/spec/spec.h" // defines: enum container_runtime

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool container_verify_is_needed(int runtime, enum container_image_kind kind, bool writable)
{
	if (writable || kind == CONTAINER_IMAGE_REF)
		return false;
	if (kind == CONTAINER_IMAGE_DIR)
		return true;
	return runtime == CONTAINER_APPTAINER || runtime == CONTAINER_ENROOT;
}

/* The node's ranks take turns at the digest: the first one hashes what
 * changed, the others find it cached.  -1: no lock (no cache, or its
 * folder cannot be made), which costs time, never the answer. */
static int lock_cache(const char *cache)
{
	char *lock = xasprintf("%s.lock", cache), *dir = xstrdup(cache), *slash = strrchr(dir, '/');
	struct sbuf ignored = SBUF_INIT;
	int fd = -1;

	if (slash)
		*slash = '\0';
	if (slash && !fileio_private_dir(dir, &ignored))
		/* open-ok: a lock, never read; O_RDWR does not block on a FIFO */
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && flock(fd, LOCK_EX)) {
		close(fd);
		fd = -1;
	}
	free(lock);
	free(dir);
	sbuf_release(&ignored);
	return fd;
}

/* Was the cache written at or after t (by a peer rank that hashed)? */
static bool written_since(const char *cache, const struct timespec *t)
{
	struct stat st;

	return cache && !stat(cache, &st) &&
	       (st.st_mtim.tv_sec > t->tv_sec ||
		(st.st_mtim.tv_sec == t->tv_sec && st.st_mtim.tv_nsec >= t->tv_nsec));
}

int container_verify(const char *image, enum container_image_kind kind, const char *pin,
		     struct sbuf *err)
{
	char got[CONTAINER_DIGEST_SIZE], *cache;
	struct sbuf note = SBUF_INIT;
	struct timespec asked;
	int rc, fd;

	if (!pin || strncmp(pin, "sha256:", 7))
		return 0;
	cache = container_digest_cache_path();
	/* the usual case, on every rank at once: a stat walk and the cache */
	rc = container_digest_cached(image, kind, cache, got, &note, err);
	if (rc < 0 || (!rc && !strcmp(got, pin)))
		goto out;
	/* a hash, by one rank of the node at a time (the next finds it
	 * cached); an answer that is not the pin is asked again from the
	 * image, and replaces the cache's entry, before the image is
	 * refused on its word */
	clock_gettime(CLOCK_REALTIME, &asked);
	fd = cache ? lock_cache(cache) : -1;
	rc = container_digest(image, kind, cache, got, &note, err);
	/* not again when a peer rank wrote the entry while this one waited:
	 * its fresh answer is the one to refuse on, not N reads of a tree */
	if (!rc && strcmp(got, pin) && !written_since(cache, &asked))
		rc = container_digest_fresh(image, kind, cache, got, &note, err);
	if (fd >= 0)
		close(fd);
	if (!rc && strcmp(got, pin)) {
		sbuf_addf(err, "the image %s is not the one pinned (pinned %.19s..., now %.19s...): it "
			  "changed since the run was validated; validate or submit it again",
			  image, pin, got);
		rc = 1;
	}
out:
	free(cache);
	sbuf_release(&note);
	return rc;
}
