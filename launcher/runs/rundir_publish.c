/* rundir_publish.c - directories published whole (see rundir_publish.h).
 * Shell: flock, mkdtemp, rename, common/fileremove. */
#include "launcher/runs/rundir_publish.h" // defines: rundir_publish_*
#include "common/fileio.h"                // defines: fileio_vet_fd, FILEIO_OWNED
#include "common/fileremove.h"            // defines: fileremove_tree
#include "common/sbuf.h"                  // defines: struct sbuf, xasprintf

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define PUBLISH_TMP_TAG ".tmp-"

/* parent/.lock opened: a lock, never read: a regular file of this
 * user's, whatever was planted there.  The descriptor, or -1 with err. */
static int open_lock(const char *path, struct sbuf *err)
{
	/* open-ok: O_NONBLOCK, then fileio_vet_fd */
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

	if (fd < 0) {
		sbuf_addf(err, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	return fileio_vet_fd(fd, path, FILEIO_OWNED, err);
}

/* flock(fd, op), again after a signal; 0, or -1 with err (fd closed)
 * unless op's LOCK_NB found it held (-1, errno EWOULDBLOCK, fd open). */
static int lock_fd(int fd, int op, const char *path, struct sbuf *err)
{
	int r;

	while ((r = flock(fd, op)) && errno == EINTR)
		;
	if (r && !((op & LOCK_NB) && errno == EWOULDBLOCK)) {
		sbuf_addf(err, "cannot lock %s: %s", path, strerror(errno));
		close(fd);
	}
	return r;
}

int rundir_publish_lock(const char *parent, struct sbuf *err)
{
	char *path = xasprintf("%s/.lock", parent);
	int fd = open_lock(path, err);

	if (fd >= 0 && lock_fd(fd, LOCK_EX, path, err))
		fd = -1;
	free(path);
	return fd;
}

int rundir_publish_lock_shared(const char *parent, struct sbuf *err)
{
	char *path = xasprintf("%s/.lock", parent);
	int fd = open_lock(path, err);

	if (fd >= 0 && !lock_fd(fd, LOCK_EX | LOCK_NB, path, err))
		rundir_publish_sweep(parent); /* no writer holds it: every temporary is an orphan */
	else if (fd >= 0 && errno != EWOULDBLOCK)
		fd = -1; /* lock_fd closed it */
	/* from exclusive to shared, or wait for a sweeper to finish */
	if (fd >= 0 && lock_fd(fd, LOCK_SH, path, err))
		fd = -1;
	free(path);
	return fd;
}

void rundir_publish_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* the last descriptor of the open file: the flock goes */
}

/* A name rundir_publish_tmp makes: ".", a stem, ".tmp-", six characters. */
static int is_tmp_name(const char *n)
{
	const char *tag = strstr(n, PUBLISH_TMP_TAG);

	return n[0] == '.' && tag && tag > n + 1 && strlen(tag + strlen(PUBLISH_TMP_TAG)) == 6;
}

void rundir_publish_discard(const char *tmp)
{
	struct sbuf ignored = SBUF_INIT;

	/* a task link inside is removed, never followed; in a shared
	 * output.dir, another user's temporary stays, even for root */
	if (tmp)
		fileremove_tree(tmp, &ignored);
	sbuf_release(&ignored);
}

void rundir_publish_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *path;

		if (!is_tmp_name(e->d_name))
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		rundir_publish_discard(path);
		free(path);
	}
	if (d)
		closedir(d);
}

char *rundir_publish_tmp(const char *dir, const char *stem, struct sbuf *err)
{
	char *tmp = xasprintf("%s/.%s" PUBLISH_TMP_TAG "XXXXXX", dir, stem);

	if (!mkdtemp(tmp)) { /* mode 0700 whatever the umask */
		sbuf_addf(err, "cannot create a directory in %s: %s", dir, strerror(errno));
		free(tmp);
		return NULL;
	}
	return tmp;
}

int rundir_publish_numbered(const char *tmp, const char *base, int first, int max,
			    struct sbuf *err)
{
	for (int n = first; n <= max; n++) {
		char *dir = xasprintf("%s/%d", base, n);
		int rc = -1;

		if (!mkdir(dir, 0700)) {
			if (!rename(tmp, dir))
				rc = n;
			else {
				sbuf_addf(err, "cannot rename %s to %s: %s", tmp, dir, strerror(errno));
				rmdir(dir);
			}
			free(dir);
			return rc;
		}
		if (errno != EEXIST) {
			sbuf_addf(err, "cannot create %s: %s", dir, strerror(errno));
			free(dir);
			return -1;
		}
		free(dir);
	}
	sbuf_addf(err, "%s: more than %d directories", base, max);
	return -1;
}
