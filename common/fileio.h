/* fileio.h - bounded reads and atomic writes of whole files.
 * Shell: the only file I/O the login-node commands do goes through here,
 * so every failure is reported the same way (path, then strerror). */
#ifndef HPT_FILEIO_H
#define HPT_FILEIO_H

#include <stddef.h>

struct sbuf;

/* Reads at most max + 1 bytes of path ("-" = stdin) into out, so a
 * caller can tell "too large" without reading a huge file.  Returns 0,
 * or -1 with a message ("cannot open x: No such file ...") in err. */
int fileio_read(const char *path, size_t max, struct sbuf *out, struct sbuf *err);

/* Writes data to path atomically: a temporary file in the same directory,
 * fsync, rename over path, fsync of the directory.  With exclusive set,
 * fails if path exists (without racing: link(2) instead of rename).
 * mode is the new file's permission bits.  0 or -1 with err filled. */
int fileio_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
			int exclusive, struct sbuf *err);

/* mkdir -p: creates path and its missing parents with mode (less the
 * umask).  Returns 0, or -1 with errno set and, when err is not NULL, a
 * message naming the part that could not be made. */
int fileio_mkdirs(const char *path, unsigned mode, struct sbuf *err);

/* 1 if path names an existing file or directory, else 0. */
int fileio_exists(const char *path);

/* The absolute path of the running program (/proc/self/exe) into buf
 * of len bytes.  0, or -1 when it cannot be read or does not fit. */
int fileio_self_exe(char *buf, size_t len);

#endif
