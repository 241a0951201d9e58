/* fileio.c - bounded whole-file reads and atomic whole-file writes.
 * Shell. */
#include "common/fileio.h" // defines: fileio_read, fileio_write_atomic, fileio_self_exe
#include "common/sbuf.h"   // defines: struct sbuf

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fileio_read(const char *path, size_t max, struct sbuf *out, struct sbuf *err)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	struct stat st;

	if (fd < 0) {
		sbuf_addf(err, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		sbuf_addf(err, "cannot read %s: it is a directory", path);
		close(fd);
		return -1;
	}
	while (out->len <= max) {
		ssize_t n;

		sbuf_grow(out, 65536);
		n = read(fd, out->buf + out->len, max + 1 - out->len < 65536 ? max + 1 - out->len : 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
			if (fd != STDIN_FILENO)
				close(fd);
			return -1;
		}
		if (!n)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	free(copy);
	if (fd < 0)
		return -1;
	if (fsync(fd) && errno != EINVAL)
		rc = -1;
	close(fd);
	return rc;
}

int fileio_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
			int exclusive, struct sbuf *err)
{
	char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp), rc = -1;

	if (fd < 0) {
		sbuf_addf(err, "cannot create %s: %s", tmp, strerror(errno));
		goto out_free;
	}
	if (fchmod(fd, mode) || write_all(fd, data, len) || fsync(fd)) {
		sbuf_addf(err, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		goto out_unlink;
	}
	if (close(fd)) {
		sbuf_addf(err, "cannot write %s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	if (exclusive ? link(tmp, path) : rename(tmp, path)) {
		sbuf_addf(err, "cannot create %s: %s", path, strerror(errno));
		goto out_unlink;
	}
	if (fsync_dir_of(path)) {
		sbuf_addf(err, "cannot sync the directory of %s: %s", path, strerror(errno));
		goto out_unlink;
	}
	rc = 0;
out_unlink:
	if (rc || exclusive)
		unlink(tmp);
out_free:
	free(tmp);
	return rc;
}

int fileio_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int fileio_mkdirs(const char *path, unsigned mode, struct sbuf *err)
{
	char *copy;
	int rc = 0;

	if (!*path) {
		if (err)
			sbuf_addstr(err, "cannot create a directory with an empty name");
		errno = ENOENT;
		return -1;
	}
	copy = xstrdup(path);

	/* Each prefix ending at a '/', then the whole path; one that exists
	 * already (EEXIST) is fine. */
	for (char *p = copy + 1;; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, mode) && errno != EEXIST) {
			int saved = errno;

			if (err)
				sbuf_addf(err, "cannot create %s: %s", copy, strerror(saved));
			errno = saved;
			rc = -1;
		}
		*p = c;
		if (rc || !c)
			break;
	}
	free(copy);
	return rc;
}

int fileio_self_exe(char *buf, size_t len)
{
	ssize_t n = len > 1 ? readlink("/proc/self/exe", buf, len - 1) : -1;

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	return 0;
}
