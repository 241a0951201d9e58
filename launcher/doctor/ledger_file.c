/* ledger_file.c - where the node ledger lives, and reading and rewriting
 * it under a lock.  Shell: see ledger.h.
 *
 * Writers hold an exclusive flock of PATH.lock from their read to their
 * rename, so two doctor runs never lose each other's records; readers
 * take it shared, so they never read between a writer's read and its
 * rename.  The lock is a file of its own because the ledger itself is
 * replaced by rename(2), which would leave a lock on the old inode. */
#include "launcher/doctor/ledger.h" // defines: ledger_path, ledger_load, ledger_update
#include "common/exitcode.h" // defines: HPT_EXIT_IO, HPT_EXIT_INTERNAL
#include "common/fileio.h"   // defines: fileio_read, fileio_write_atomic, fileio_mkdirs
#include "common/sbuf.h"     // defines: struct sbuf

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Far beyond any cluster's node count; a bigger file is not a ledger. */
#define LEDGER_MAX_BYTES (64u << 20)

int ledger_path(struct sbuf *out, struct sbuf *err)
{
	const char *v;

	if ((v = getenv("HPCTRAIN_LEDGER")) && *v)
		sbuf_addstr(out, v);
	/* The XDG base directory rules ignore a relative XDG_STATE_HOME. */
	else if ((v = getenv("XDG_STATE_HOME")) && *v == '/')
		sbuf_addf(out, "%s/hpctrain/nodes.json", v);
	else if ((v = getenv("HOME")) && *v)
		sbuf_addf(out, "%s/.local/state/hpctrain/nodes.json", v);
	else {
		sbuf_addstr(err, "cannot place the node ledger: neither HPCTRAIN_LEDGER, "
				 "XDG_STATE_HOME nor HOME is set");
		return -1;
	}
	return 0;
}

/* Opens and flocks PATH.lock; the descriptor, or -1 with errno set. */
static int lock_open(const char *path, int how)
{
	char *lock = xasprintf("%s.lock", path);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600), saved;

	free(lock);
	if (fd < 0)
		return -1;
	while (flock(fd, how))
		if (errno != EINTR) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
	return fd;
}

/* ledger_check, its complaint put after the path. */
static int checked(const char *path, const json_t *doc, struct sbuf *err)
{
	struct sbuf why = SBUF_INIT;
	int rc = ledger_check(doc, &why);

	if (rc)
		sbuf_addf(err, "%s: %s", path, why.buf);
	sbuf_release(&why);
	return rc;
}

/* Reads and checks path, the lock held; a missing file is ledger_new(). */
static int read_locked(const char *path, json_t **doc, struct sbuf *err)
{
	struct sbuf text = SBUF_INIT;
	json_error_t je;
	int rc = HPT_EXIT_IO;

	*doc = NULL;
	if (!fileio_exists(path)) {
		*doc = ledger_new();
		return 0;
	}
	if (fileio_read(path, LEDGER_MAX_BYTES, &text, err))
		goto out;
	if (text.len > LEDGER_MAX_BYTES) {
		sbuf_addf(err, "%s: larger than %u MiB, not a node ledger", path,
			  LEDGER_MAX_BYTES >> 20);
		goto out;
	}
	if (!(*doc = json_loadb(text.buf, text.len, JSON_REJECT_DUPLICATES, &je))) {
		/* je.text quotes the file, which may hold a terminal's escapes */
		sbuf_addf(err, "%s:%d:%d: not a node ledger: ", path, je.line, je.column);
		ledger_add_escaped(err, je.text);
		goto out;
	}
	if (checked(path, *doc, err)) {
		json_decref(*doc);
		*doc = NULL;
		goto out;
	}
	ledger_clamp(*doc, time(NULL));
	rc = 0;
out:
	sbuf_release(&text);
	return rc;
}

int ledger_load(const char *path, json_t **doc, struct sbuf *err)
{
	int fd = lock_open(path, LOCK_SH), rc;

	/* No directory: no ledger yet.  A lock that cannot be made (someone
	 * else's read-only ledger) still leaves a whole file to read: every
	 * writer renames a complete one into place. */
	if (fd < 0 && errno == ENOENT) {
		*doc = ledger_new();
		return 0;
	}
	rc = read_locked(path, doc, err);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The parent directory of path, made 0700; 0 or -1 with err. */
static int make_parent(const char *path, struct sbuf *err)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int rc = 0;

	if (!slash || slash == path)
		return 0;
	dir = xstrndup(path, (size_t)(slash - path));
	rc = fileio_mkdirs(dir, 0700, err);
	free(dir);
	return rc;
}

/* Pretty, sorted, and six digits for a real: a score is a ratio, and
 * jansson's default of 17 writes 0.97 as 0.96999999999999997. */
static int write_doc(const char *path, const json_t *doc, struct sbuf *err)
{
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
	struct sbuf out = SBUF_INIT;
	int rc;

	if (!text) {
		sbuf_addf(err, "cannot write %s: the node ledger does not encode", path);
		return HPT_EXIT_INTERNAL;
	}
	sbuf_addstr(&out, text);
	sbuf_addch(&out, '\n');
	free(text);
	rc = fileio_write_atomic(path, out.buf, out.len, 0600, 0, err) ? HPT_EXIT_IO : 0;
	sbuf_release(&out);
	return rc;
}

int ledger_update(const char *path, int (*fn)(json_t *doc, void *arg), void *arg,
		  struct sbuf *err)
{
	json_t *doc = NULL;
	int fd, rc;

	if (make_parent(path, err))
		return HPT_EXIT_IO;
	if ((fd = lock_open(path, LOCK_EX)) < 0) {
		sbuf_addf(err, "cannot lock %s.lock: %s", path, strerror(errno));
		return HPT_EXIT_IO;
	}
	if (!(rc = read_locked(path, &doc, err)) && !(rc = fn(doc, arg))) {
		/* What fn made is checked as a reader would, before it replaces the file. */
		rc = checked(path, doc, err) ? HPT_EXIT_INTERNAL : write_doc(path, doc, err);
	}
	json_decref(doc);
	close(fd);
	return rc;
}
