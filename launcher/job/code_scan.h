/* code_scan.h - a code tree's listing from the file system: which files
 * are in it (git's view where it is a work tree, else a walk; ignore
 * files, code.include and code.exclude applied), their limits, and
 * their hashes, cached so that an unchanged tree costs a stat per file.
 * Shell (code_scan.c): lstat, readdir, readlink, reads; the cache file. */
#ifndef HPT_CODE_SCAN_H
#define HPT_CODE_SCAN_H

struct code_list;
struct job_code;
struct sbuf;

/* The sealed listing of dir (absolute, a directory) into l (released
 * first), as code_list.h describes it.  skip holds nskip absolute paths
 * never listed (output.dir: the runs and their snapshots; data.stage
 * sources, pinned on their own), nor is any .git directory, nor the
 * hash cache's directory.  Symbolic links are kept as
 * links; one that points outside the tree is named in warn (a line per
 * link).  Hashes come from a per-user cache in
 * $XDG_CACHE_HOME/hpctrain/code/ (else ~/.cache/...), keyed by
 * common/statkey.h; a file whose mtime lies within 2 s before the
 * cache was written is hashed again (git's racily clean case).
 * 0, or HPT_EXIT_NO_INPUT (a FIFO, socket or device, an unreadable
 * file, a name that is not UTF-8, more than c's limits: err naming the
 * file, or the largest subdirectories), HPT_EXIT_FAILURE (a file that
 * changed while hashed, named). */
#include <stddef.h>

int code_scan(const char *dir, const struct job_code *c, const char *const *skip, size_t nskip,
	      struct code_list *l, struct sbuf *warn, struct sbuf *err);

#endif
