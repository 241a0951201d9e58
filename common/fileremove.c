/* fileremove.c - removals that take only the caller's own files (see
 * fileremove.h).  Shell: lstat, nftw, unlink, rmdir. */
#include "common/fileremove.h" // defines: fileremove_tree, fileremove_one
#include "common/sbuf.h"       // defines: struct sbuf

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* nftw(3) passes no argument to its callback: the walk's first foreign
 * part, or its first failure, is kept here (one walk at a time; the
 * commands are single-threaded). */
static struct {
	struct sbuf *err;
	int failed;
} walk;

static int refuse(const char *path, const struct stat *st, struct sbuf *err)
{
	sbuf_addf(err, "refusing to remove %s: it belongs to uid %u, not to uid %u", path,
		  (unsigned)st->st_uid, (unsigned)geteuid());
	errno = EPERM;
	return -1;
}

static int check_visit(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_NS || type == FTW_DNR) {
		sbuf_addf(walk.err, "cannot remove %s: %s", p, strerror(errno));
		return walk.failed = -1;
	}
	if (st->st_uid != geteuid())
		return walk.failed = refuse(p, st, walk.err);
	return 0;
}

static int remove_visit(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((type == FTW_DP ? rmdir(p) : unlink(p)) && errno != ENOENT) {
		sbuf_addf(walk.err, "cannot remove %s: %s", p, strerror(errno));
		return walk.failed = -1;
	}
	return 0;
}

int fileremove_one(const char *path, struct sbuf *err)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : (sbuf_addf(err, "cannot remove %s: %s", path,
						       strerror(errno)), -1);
	if (st.st_uid != geteuid())
		return refuse(path, &st, err);
	if ((S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path)) && errno != ENOENT) {
		sbuf_addf(err, "cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int fileremove_tree(const char *path, struct sbuf *err)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : (sbuf_addf(err, "cannot remove %s: %s", path,
						       strerror(errno)), -1);
	if (!S_ISDIR(st.st_mode))
		return fileremove_one(path, err);
	walk.err = err;
	walk.failed = 0;
	/* FTW_PHYS: a link inside is checked and removed, never followed */
	if (nftw(path, check_visit, 32, FTW_PHYS) || walk.failed) {
		if (!walk.failed)
			sbuf_addf(err, "cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	if (nftw(path, remove_visit, 32, FTW_DEPTH | FTW_PHYS) || walk.failed) {
		if (!walk.failed)
			sbuf_addf(err, "cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
