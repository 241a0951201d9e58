/* fileio.c - bounded whole-file reads of regular files only, atomic
 * whole-file writes, and the checks on private directories (fileio.h).
 * Shell. */
#include "common/fileio.h" // defines: fileio_read, fileio_write_atomic, fileio_private_dir
#include "common/sbuf.h"   // defines: struct sbuf

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular one is, for the message. */
static const char *kind_of(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	return "a file of an unknown kind";
}

static int check_regular(const char *path, const struct stat *st, struct sbuf *err)
{
	if (S_ISREG(st->st_mode))
		return 0;
	if (S_ISDIR(st->st_mode))
		sbuf_addf(err, "cannot read %s: it is a directory", path);
	else
		sbuf_addf(err, "cannot read %s: it is %s, not a regular file", path,
			  kind_of(st->st_mode));
	return -1;
}

/* Owned by the effective user, and no one else may write it: what a run
 * directory, a checkpoint or the metrics must be before they are used. */
static int check_owner(const char *path, const struct stat *st, struct sbuf *err)
{
	if (st->st_uid != geteuid()) {
		sbuf_addf(err, "refusing %s: it belongs to uid %u, not to uid %u", path,
			  (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		sbuf_addf(err, "refusing %s: group or others may write it (mode %04o)", path,
			  (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

static void say_open_failed(const char *path, int saved, unsigned flags, struct sbuf *err)
{
	if (saved == ELOOP && (flags & FILEIO_NOFOLLOW))
		sbuf_addf(err, "cannot open %s: it is a symbolic link", path);
	else if (saved == ENXIO) /* O_WRONLY|O_NONBLOCK on a FIFO without a reader */
		sbuf_addf(err, "cannot open %s: it is not a regular file", path);
	else
		sbuf_addf(err, "cannot open %s: %s", path, strerror(saved));
}

int fileio_vet_fd(int fd, const char *path, unsigned flags, struct sbuf *err)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st)) {
		sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (check_regular(path, &st, err) ||
	    ((flags & FILEIO_OWNED) && check_owner(path, &st, err)))
		goto out_close;
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
		goto out_close;
	}
	return fd;
out_close:
	close(fd);
	return -1;
}

int fileio_open_regular(const char *path, unsigned flags, struct sbuf *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
				    (flags & FILEIO_NOFOLLOW ? O_NOFOLLOW : 0));

	if (fd < 0) {
		say_open_failed(path, errno, flags, err);
		return -1;
	}
	return fileio_vet_fd(fd, path, flags, err);
}

int fileio_check_regular(const char *path, struct sbuf *err)
{
	int fd = fileio_open_regular(path, 0, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int fileio_read_fd(int fd, const char *path, size_t max, struct sbuf *out, struct sbuf *err)
{
	while (out->len <= max) {
		size_t want = max + 1 - out->len < 65536 ? max + 1 - out->len : 65536;
		ssize_t n;

		sbuf_grow(out, 65536);
		n = read(fd, out->buf + out->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		if (!n)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
	return 0;
}

int fileio_read_flags(const char *path, size_t max, unsigned flags, struct sbuf *out,
		      struct sbuf *err)
{
	struct stat st;
	int fd, rc;

	/* stdin is what the caller piped or redirected: a pipe is fine, and
	 * nothing else could be meant by "-". */
	if (!strcmp(path, "-")) {
		if (!fstat(STDIN_FILENO, &st) && S_ISDIR(st.st_mode)) {
			sbuf_addf(err, "cannot read %s: it is a directory", path);
			return -1;
		}
		return fileio_read_fd(STDIN_FILENO, path, max, out, err);
	}
	fd = fileio_open_regular(path, flags, err);
	if (fd < 0)
		return -1;
	rc = fileio_read_fd(fd, path, max, out, err);
	close(fd);
	return rc;
}

int fileio_read(const char *path, size_t max, struct sbuf *out, struct sbuf *err)
{
	return fileio_read_flags(path, max, 0, out, err);
}

int fileio_open_append(const char *path, struct sbuf *err)
{
	const int base = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = -1;

	/* O_EXCL first, so a file this call makes is known to be its own
	 * and gets 0600 whatever the umask; then the existing one.  Twice,
	 * in case the file vanished between the two opens. */
	for (int i = 0; i < 2 && fd < 0; i++) {
		fd = open(path, base | O_CREAT | O_EXCL, 0600);
		if (fd >= 0 && fchmod(fd, 0600)) {
			sbuf_addf(err, "cannot write %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (fd < 0 && errno == EEXIST)
			fd = open(path, base);
		if (fd < 0 && errno != ENOENT)
			break;
	}
	if (fd < 0) {
		say_open_failed(path, errno, FILEIO_NOFOLLOW, err);
		return -1;
	}
	return fileio_vet_fd(fd, path, FILEIO_OWNED, err);
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

/* fileio_write_atomic's body; sync says whether to fsync the file and
 * the directory. */
static int write_via_temp(const char *path, const void *data, size_t len, unsigned mode,
			  int exclusive, int sync, struct sbuf *err)
{
	char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC), rc = -1;

	if (fd < 0) { /* the random name would tell the reader nothing */
		sbuf_addf(err, "cannot write %s: %s", path, strerror(errno));
		goto out_free;
	}
	if (fchmod(fd, mode) || write_all(fd, data, len) || (sync && fsync(fd))) {
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
	if (sync && fsync_dir_of(path)) {
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

int fileio_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
			int exclusive, struct sbuf *err)
{
	return write_via_temp(path, data, len, mode, exclusive, 1, err);
}

int fileio_write_unsynced(const char *path, const void *data, size_t len, unsigned mode,
			  struct sbuf *err)
{
	return write_via_temp(path, data, len, mode, 0, 0, err);
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

int fileio_check_owned(const char *path, struct sbuf *err)
{
	struct stat st;

	if (stat(path, &st)) {
		sbuf_addf(err, "cannot use %s: %s", path, strerror(errno));
		return -1;
	}
	return check_owner(path, &st, err);
}

int fileio_private_dir(const char *path, struct sbuf *err)
{
	struct stat st;

	if (fileio_mkdirs(path, 0700, err))
		return -1;
	if (stat(path, &st)) {
		sbuf_addf(err, "cannot use %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		sbuf_addf(err, "cannot use %s: it is not a directory", path);
		return -1;
	}
	return check_owner(path, &st, err);
}

int fileio_self_exe(char *buf, size_t len)
{
	ssize_t n = len > 1 ? readlink("/proc/self/exe", buf, len - 1) : -1;

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	return 0;
}
