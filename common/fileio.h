/* fileio.h - bounded reads and atomic writes of whole files, and the
 * checks that keep other users' files and directories out of a run.
 * Shell: the only file I/O the commands do goes through here, so every
 * failure is reported the same way (path, then strerror), and every
 * rule about what a file may be lives in one place:
 *
 *  - an input is a regular file (a FIFO would hang a read, a device or a
 *    directory means nothing as input), opened without blocking first;
 *  - an output is written to a fresh mkstemp(3) file beside it and
 *    renamed, so it never follows a link another user planted;
 *  - a private directory (a run, a report's ranks/, checkpoints/) is
 *    made 0700 and refused when another user owns it or group or others
 *    may write it, and so is a file read from one under FILEIO_OWNED.
 */
#ifndef HPT_FILEIO_H
#define HPT_FILEIO_H

#include <stddef.h>

struct sbuf;

/* How fileio_open_regular and fileio_read_flags treat path. */
enum fileio_flags {
	FILEIO_NOFOLLOW = 1 << 0, /* refuse a symbolic link as the last component */
	FILEIO_OWNED = 1 << 1,    /* refuse a file another user owns or group or others may write */
};

/* Opens path read-only, refusing anything but a regular file (a FIFO, a
 * socket, a device, a directory) without blocking on it: the open is
 * O_NONBLOCK, cleared once fstat(2) says regular.  flags as above.
 * Returns the descriptor (close-on-exec), or -1 with err ("cannot read
 * x: it is a FIFO, not a regular file"). */
int fileio_open_regular(const char *path, unsigned flags, struct sbuf *err);

/* The checks fileio_open_regular makes after its open(2) (a regular
 * file; FILEIO_OWNED as above), on a descriptor the caller opened itself
 * (created, or read-write, as a lock is): fd, made blocking again, or -1
 * with fd closed and err. */
int fileio_vet_fd(int fd, const char *path, unsigned flags, struct sbuf *err);

/* Reads fd to its end, or to max + 1 bytes so that a caller can tell
 * "too large", appending to out.  0, or -1 with err naming path. */
int fileio_read_fd(int fd, const char *path, size_t max, struct sbuf *out, struct sbuf *err);

/* 0 when path opens as fileio_open_regular(path, 0) would, else -1 with
 * its message: for a command that answers "no such input" (status 4)
 * before handing the path to a reader that says less. */
int fileio_check_regular(const char *path, struct sbuf *err);

/* Reads at most max + 1 bytes of path ("-" = stdin, which may be a pipe)
 * into out, so a caller can tell "too large" without reading a huge file.
 * A path is opened with fileio_open_regular(flags).  Returns 0, or -1
 * with a message ("cannot open x: No such file ...") in err. */
int fileio_read_flags(const char *path, size_t max, unsigned flags, struct sbuf *out,
		      struct sbuf *err);
/* fileio_read_flags with no flags. */
int fileio_read(const char *path, size_t max, struct sbuf *out, struct sbuf *err);

/* Opens path for appending, creating it (O_EXCL, then mode 0600 whatever
 * the umask) when missing, never through a symbolic link, and refusing
 * anything but a regular file this user owns and others cannot write.
 * Returns the descriptor (close-on-exec, blocking), or -1 with err. */
int fileio_open_append(const char *path, struct sbuf *err);

/* Writes data to path atomically: a temporary file (mkstemp, in the same
 * directory), fchmod to mode (the umask does not apply), fsync, rename
 * over path, fsync of the directory.  rename(2) replaces a link planted
 * at path instead of following it.  With exclusive set, fails if path
 * exists (without racing: link(2) instead of rename).  0 or -1 with err. */
int fileio_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
			int exclusive, struct sbuf *err);

/* fileio_write_atomic (not exclusive) without the two fsyncs: for a
 * file rewritten every few seconds whose loss in a crash costs nothing
 * (a rank's liveness record), where syncing a shared file system that
 * often for every rank would cost more than the file is worth.  Still a
 * mkstemp name, renamed: never through a link.  0 or -1 with err. */
int fileio_write_unsynced(const char *path, const void *data, size_t len, unsigned mode,
			  struct sbuf *err);

/* mkdir -p: creates path and its missing parents with mode (less the
 * umask).  Returns 0, or -1 with errno set and, when err is not NULL, a
 * message naming the part that could not be made. */
int fileio_mkdirs(const char *path, unsigned mode, struct sbuf *err);

/* 0 when path (followed if a link) is owned by the effective user and
 * neither group nor others may write it; else -1 with err ("refusing x:
 * it belongs to uid 65534, not to uid 0" or "refusing x: group or others
 * may write it (mode 0777)"). */
int fileio_check_owned(const char *path, struct sbuf *err);

/* Makes path a private directory: creates it and its missing parents
 * 0700 (fileio_mkdirs), then requires a directory that passes
 * fileio_check_owned.  An existing one keeps its mode (a site may have
 * let a group read it).  0, or -1 with err. */
int fileio_private_dir(const char *path, struct sbuf *err);

/* 1 if path names an existing file or directory, else 0. */
int fileio_exists(const char *path);

/* The absolute path of the running program (/proc/self/exe) into buf
 * of len bytes.  0, or -1 when it cannot be read or does not fit. */
int fileio_self_exe(char *buf, size_t len);

#endif
