/* ledger_file.c - where the node ledger lives, and reading and rewriting
 * it under a lock.  Shell: see ledger.h.
 *
 * Writers hold an exclusive flock of PATH.lock from their read to their
 * rename, so two doctor runs never lose each other's records; readers
 * take it shared, so they never read between a writer's read and its
 * rename.  The lock is a file of its own because the ledger itself is
 * replaced by rename(2), which would leave a lock on the old inode.
 *
 * The ledger may sit in a directory others can write (HPCTRAIN_LEDGER
 * names any path), so nothing here follows a link another user could
 * plant: PATH is resolved first (realpath), so a user's own symlinked
 * ledger is rewritten where it points and stays a link; the file and
 * the lock are then opened with O_NOFOLLOW, and refused when they are
 * links, not regular files, another user's or writable by others. */
#include "launcher/doctor/ledger.h" // defines: ledger_path, ledger_load, ledger_update, ledger_repair
#include "common/exitcode.h" // defines: HPT_EXIT_IO, HPT_EXIT_INTERNAL
#include "common/fileio.h"   // defines: fileio_vet_fd, fileio_read_fd, fileio_write_atomic, fileio_mkdirs
#include "common/sbuf.h"     // defines: struct sbuf, sbuf_add_printable

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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

/* path with its links resolved, malloc'd: the file a rewrite replaces.
 * A path to nothing yet is itself; a link to nothing is refused (NULL
 * with err), since following it would create a file where it points. */
static char *resolve(const char *path, struct sbuf *err)
{
	char *real = realpath(path, NULL);
	struct stat st;
	int e = errno;

	if (real)
		return real;
	if (e == ENOENT && !lstat(path, &st) && S_ISLNK(st.st_mode))
		sbuf_addf(err, "the node ledger %s is a symbolic link to nothing: create what it "
			  "names, or remove it", path);
	else if (e == ENOENT)
		return xstrdup(path);
	else
		sbuf_addf(err, "cannot resolve %s: %s", path, strerror(e));
	return NULL;
}

/* open(2) of path with O_NOFOLLOW (and O_NONBLOCK: a FIFO planted there
 * must not hang us), its refusal of a link said in err; -1 with errno
 * set, and nothing said for ENOENT, EACCES and EROFS, which the caller
 * may take as a ledger not made yet or not writable. */
static int open_nofollow(const char *path, int flags, struct sbuf *err)
{
	/* open-ok: O_NONBLOCK, and every caller vets the descriptor (fileio_vet_fd) */
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600), e = errno;

	if (fd < 0 && e == ELOOP)
		sbuf_addf(err, "%s is a symbolic link: refusing to follow it (remove it if you "
			  "did not make it)", path);
	else if (fd < 0 && e != ENOENT && e != EACCES && e != EROFS)
		sbuf_addf(err, "cannot open %s: %s", path, strerror(e));
	errno = e;
	return fd;
}

/* Opens (creating it 0600) and flocks PATH.lock: the descriptor, or -1
 * with errno set and err filled (but as open_nofollow leaves it). */
static int lock_open(const char *path, int how, struct sbuf *err)
{
	char *lock = xasprintf("%s.lock", path);
	int fd = open_nofollow(lock, O_RDWR | O_CREAT, err), e = errno;

	if (fd >= 0 && (fd = fileio_vet_fd(fd, lock, FILEIO_OWNED, err)) < 0)
		e = EPERM;
	while (fd >= 0 && flock(fd, how))
		if ((e = errno) != EINTR) {
			sbuf_addf(err, "cannot lock %s: %s", lock, strerror(e));
			close(fd);
			fd = -1;
		}
	free(lock);
	errno = e;
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

/* The text of an opened ledger as a checked, clamped document; *corrupt
 * set when the file is there but no node ledger.  0 or HPT_EXIT_IO. */
static int parse(const char *path, const struct sbuf *text, json_t **doc, bool *corrupt,
		 struct sbuf *err)
{
	json_error_t je;

	*corrupt = true;
	if (text->len > LEDGER_MAX_BYTES) {
		sbuf_addf(err, "%s: larger than %u MiB, not a node ledger", path,
			  LEDGER_MAX_BYTES >> 20);
		return HPT_EXIT_IO;
	}
	if (!(*doc = json_loadb(text->buf, text->len, JSON_REJECT_DUPLICATES, &je))) {
		/* je.text quotes the file, which may hold a terminal's escapes */
		sbuf_addf(err, "%s:%d:%d: not a node ledger: ", path, je.line, je.column);
		sbuf_add_printable(err, je.text);
		return HPT_EXIT_IO;
	}
	if (checked(path, *doc, err)) {
		json_decref(*doc);
		*doc = NULL;
		return HPT_EXIT_IO;
	}
	*corrupt = false;
	ledger_clamp(*doc, time(NULL));
	return 0;
}

/* Reads and checks path, the lock held; a missing file is ledger_new().
 * *fd is the open file (-1 when none), for a backup; *corrupt as parse. */
static int read_locked(const char *path, int *fd, json_t **doc, bool *corrupt, struct sbuf *err)
{
	struct sbuf text = SBUF_INIT;
	int rc = HPT_EXIT_IO;

	*doc = NULL;
	*corrupt = false;
	if ((*fd = open_nofollow(path, O_RDONLY, err)) < 0 && errno == ENOENT) {
		*doc = ledger_new();
		return 0;
	}
	if (*fd < 0 && (errno == EACCES || errno == EROFS))
		sbuf_addf(err, "cannot open %s: %s", path, strerror(errno));
	if (*fd >= 0 && (*fd = fileio_vet_fd(*fd, path, FILEIO_OWNED, err)) >= 0 &&
	    !fileio_read_fd(*fd, path, LEDGER_MAX_BYTES, &text, err))
		rc = parse(path, &text, doc, corrupt, err);
	sbuf_release(&text);
	return rc;
}

int ledger_load(const char *path, json_t **doc, struct sbuf *err)
{
	char *real = resolve(path, err);
	int lock, fd = -1, rc = HPT_EXIT_IO;
	bool corrupt;

	*doc = NULL;
	if (!real)
		return HPT_EXIT_IO;
	lock = lock_open(real, LOCK_SH, err);
	/* No directory: no ledger yet.  A lock that cannot be made (a
	 * read-only directory) still leaves a whole file to read: every
	 * writer renames a complete one into place. */
	if (lock < 0 && errno == ENOENT) {
		*doc = ledger_new();
		rc = 0;
	} else if (lock >= 0 || errno == EACCES || errno == EROFS) {
		rc = read_locked(real, &fd, doc, &corrupt, err);
	}
	if (fd >= 0)
		close(fd);
	if (lock >= 0)
		close(lock);
	free(real);
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

/* Keeps the file open at fd (path's) as PATH.KIND-YYYYmmddTHHMMSSZ[-N]:
 * a hard link, so it is whole or absent, made 0600 and never replacing
 * a file; its name appended to out.  0 or HPT_EXIT_IO with err. */
static int backup(const char *path, int fd, const char *kind, struct sbuf *out,
		  struct sbuf *err)
{
	time_t now = time(NULL);
	char when[32];
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	for (int i = 1; i < 100; i++) {
		char *name = i == 1 ? xasprintf("%s.%s-%s", path, kind, when)
				    : xasprintf("%s.%s-%s-%d", path, kind, when, i);

		if (!link(path, name) && !fchmod(fd, 0600)) {
			sbuf_addstr(out, name);
			free(name);
			return 0;
		}
		if (errno != EEXIST) {
			sbuf_addf(err, "cannot keep %s as %s: %s", path, name, strerror(errno));
			free(name);
			return HPT_EXIT_IO;
		}
		free(name);
	}
	sbuf_addf(err, "cannot keep %s: too many backups of this second", path);
	return HPT_EXIT_IO;
}

/* Under the lock: a corrupt file (why holds why it is), or with
 * LEDGER_REPAIR_RESET any file, kept aside and replaced by an empty
 * ledger in *doc; what was done said in note.  Whether it was; when
 * the backup fails, *rc is HPT_EXIT_IO and why says so too. */
static bool repair(const char *path, int fd, bool corrupt, enum ledger_repair_flags flags,
		   json_t **doc, int *rc, struct sbuf *note, struct sbuf *why)
{
	struct sbuf kept = SBUF_INIT, fail = SBUF_INIT;

	if (fd < 0 || (!corrupt && !(flags & LEDGER_REPAIR_RESET)))
		return false;
	if ((*rc = backup(path, fd, corrupt ? "corrupt" : "reset", &kept, &fail))) {
		sbuf_addf(why, "%s%s", why->len ? "; " : "", fail.buf);
		goto out;
	}
	if (corrupt)
		sbuf_addf(note, "%s; kept it as %s, and the ledger starts empty", why->buf, kept.buf);
	else
		sbuf_addf(note, "kept the ledger %s as %s, and it starts empty", path, kept.buf);
	json_decref(*doc);
	*doc = ledger_new();
out:
	sbuf_release(&kept);
	sbuf_release(&fail);
	return !*rc;
}

/* ledger_update and ledger_repair: repairing is a repair's flags with
 * note, or plain (note NULL). */
static int update(const char *path, enum ledger_repair_flags flags, struct sbuf *note,
		  int (*fn)(json_t *doc, void *arg), void *arg, struct sbuf *err)
{
	struct sbuf why = SBUF_INIT;
	json_t *doc = NULL;
	char *real;
	int lock, fd = -1, rc = HPT_EXIT_IO;
	bool corrupt, repaired = false;

	if (make_parent(path, err) || !(real = resolve(path, err)))
		return HPT_EXIT_IO;
	if ((lock = lock_open(real, LOCK_EX, err)) < 0) {
		if (errno == ENOENT || errno == EACCES || errno == EROFS)
			sbuf_addf(err, "cannot lock %s.lock: %s", real, strerror(errno));
		goto out;
	}
	rc = read_locked(real, &fd, &doc, &corrupt, &why);
	if (note && (corrupt || (!rc && (flags & LEDGER_REPAIR_RESET))))
		repaired = repair(real, fd, corrupt, flags, &doc, &rc, note, &why);
	if (rc && !repaired)
		sbuf_addstr(err, why.buf);
	if (!rc && (rc = fn(doc, arg)) && repaired) {
		/* the repair stands whatever fn made of the empty ledger */
		json_decref(doc);
		doc = ledger_new();
	}
	/* What fn made is checked as a reader would, before it replaces the file. */
	if (!rc || repaired) {
		int wrc = checked(real, doc, err) ? HPT_EXIT_INTERNAL : write_doc(real, doc, err);

		rc = wrc ? wrc : rc;
	}
	close(lock);
out:
	if (fd >= 0)
		close(fd);
	json_decref(doc);
	sbuf_release(&why);
	free(real);
	return rc;
}

int ledger_update(const char *path, int (*fn)(json_t *doc, void *arg), void *arg,
		  struct sbuf *err)
{
	return update(path, 0, NULL, fn, arg, err);
}

int ledger_repair(const char *path, enum ledger_repair_flags flags,
		  int (*fn)(json_t *doc, void *arg), void *arg, struct sbuf *note, struct sbuf *err)
{
	return update(path, flags, note, fn, arg, err);
}

static int forget_node(json_t *doc, void *arg)
{
	const char *node = arg;

	return ledger_forget(doc, NULL, node) ? 0 : 1;
}

int ledger_forget_node(const char *path, const char *node, struct sbuf *note, struct sbuf *err)
{
	return ledger_repair(path, 0, forget_node, (void *)node, note, err);
}

static int reset_all(json_t *doc, void *arg)
{
	(void)arg;
	json_object_set_new(doc, "clusters", json_object());
	return 0;
}

int ledger_reset(const char *path, struct sbuf *note, struct sbuf *err)
{
	return ledger_repair(path, LEDGER_REPAIR_RESET, reset_all, NULL, note, err);
}
