/* stage_scan.h - the manifest of a data set on the shared file system,
 * hashing only what changed since the last scan.
 * Shell (stage_scan.c): walks the tree, reads files, keeps a per-user
 * cache of manifests. */
#ifndef HPT_STAGE_SCAN_H
#define HPT_STAGE_SCAN_H

#include <stdbool.h>
#include <stdint.h>

struct sbuf;
struct stage_manifest;

/* The manifest of src (a regular file or a directory tree of regular files;
 * symlinks (but see STAGE_SCAN_TREE), devices etc. refused naming them; so is a path or a file name
 * that is not UTF-8, shown with its other bytes as \xHH: NO_INPUT), hashing
 * only files whose key (path, and device, inode, size, mtime and ctime:
 * common/statkey.h) changed since the cached manifest in
 * $XDG_CACHE_HOME/hpctrain/manifests/ (else ~/.cache/...), written atomically
 * 0600 in a 0700 directory.  A file that changes while hashed: error naming it.
 * A cached hash is not trusted for a file whose mtime lies within 2 s
 * before the cache was written (git's "racily clean" case: a change in
 * the same mtime tick would keep size and mtime).
 * 0 or an HPT_EXIT_* code (NO_INPUT for a missing/unreadable source or one
 * that is not made of regular files, FAILURE for a file changing while
 * hashed, IO when the cache cannot be written), err says why. */
int stage_scan(const char *src, struct stage_manifest *m, struct sbuf *err);

/* Drops the cached manifest of src: a read of src found a file that
 * does not match it (stage_source.h), so its hashes are not to be
 * trusted again.  0 (also when there was none), or -1 with err. */
int stage_scan_forget(const char *src, struct sbuf *err);

/* stage_scan, adding the bytes it read from src to *bytes_read. */
int stage_scan_counted(const char *src, struct stage_manifest *m, uint64_t *bytes_read,
		       struct sbuf *err);

/* The caller reads every byte of src again and checks it against the
 * manifest's hashes (stage_source.h, which fails naming a file that
 * differs): a racily clean file's cached hash is taken for now rather
 * than read twice, and such a scan leaves the cache as it was.  A data
 * set written just before submit is then read once by the stage step. */
#define STAGE_SCAN_STREAMED 1u

/* The source is a tree staged as code (the code snapshot's data.stage
 * entry, launcher/job/code_stage.h): a file's executable bit (the
 * owner's) and symbolic links (their target, never followed) go into
 * the manifest.  Without it a link is refused, as a data set's (whose
 * program would read what a link names from the shared file system,
 * not the node's copy), and modes are not data: chmod of a data file
 * keeps its manifest and the runs that name it. */
#define STAGE_SCAN_TREE 2u

/* stage_scan_counted, with flags (STAGE_SCAN_*), that also hands back,
 * in *before (released first), the cached manifest of src the scan
 * started from: what the last scan of src saw (submit's, when it pinned
 * the entry), empty when there was none.  For naming what changed since
 * (stage_manifest_diff). */
int stage_scan_since(const char *src, struct stage_manifest *m, struct stage_manifest *before,
		     uint64_t *bytes_read, unsigned flags, struct sbuf *err);

/* Hashes fd (opened on path, whose fstat before the read is *st) to its
 * end in large reads: 0 with sha256 and *n bytes read, or an HPT_EXIT_*
 * code with err naming path (a read error, or a size or mtime that
 * differs after the read from *st: the file changed while read). */
struct stat;
int stage_scan_hash_fd(int fd, const char *path, const struct stat *st, unsigned char sha256[32],
		       uint64_t *n, struct sbuf *err);

/* Whether rel (under the directory dfd, or AT_FDCWD) is a symbolic link
 * whose target is exactly target: readlinkat(2), never followed.  How
 * the stage engine verifies a link, as a sha256 verifies a file. */
bool stage_scan_link_is(int dfd, const char *rel, const char *target);

/* $XDG_CACHE_HOME/hpctrain/SUBDIR/<sha256 of key>.json (else under
 * ~/.cache), its directory made private (0700) on the way: the cache
 * file of one source or tree.  NULL when there is no place for a cache
 * (every file is hashed), or, with err, when the directory cannot be
 * made.  malloc'd. */
char *stage_scan_cache_file(const char *subdir, const char *key, struct sbuf *err);

#endif
