/* container_digest.h - the content digest of a container image, the part
 * of a run's identity that a path alone cannot give: rebuilding
 * img.sqfs in place must make another run.
 *
 * Shell: reads the image (whole files, or a directory tree) and a cache
 * of earlier answers.  Digests are "sha256:" and 64 lowercase hex digits:
 *  - a SquashFS or SIF file: SHA-256 of its bytes;
 *  - a directory: SHA-256 of its tree, one record per entry sorted by
 *    path: the path, the mode, the size, and a regular file's content
 *    hash or a link's target (times and owners are left out: copying an
 *    image keeps its digest);
 *  - a reference: its "@sha256:" part; without one it cannot be pinned
 *    and the digest is "unpinned".
 * Files and trees are cached by path and a fingerprint of their stat
 * data (mode and statkey: device, inode, size, mtime and ctime, for
 * every entry of a tree; common/statkey.h), so a submit does not read a
 * 5 GB image again; the cache is a private JSON file
 * (container_digest_cache_path), each entry checked before use.  A hash
 * counts only when every file's statkey (and a tree's fingerprint) is
 * the same after the read as before it: an image written meanwhile is
 * an error, never a torn digest, cached or not.
 */
#ifndef HPT_CONTAINER_DIGEST_H
#define HPT_CONTAINER_DIGEST_H

#include "launcher/container/container_argv.h" // defines: enum container_image_kind

struct sbuf;

#define CONTAINER_DIGEST_SIZE 72 /* "sha256:" + 64 + NUL */
#define CONTAINER_DIGEST_UNPINNED "unpinned"

/* $XDG_CACHE_HOME/hpctrain/image-digests.json, else under
 * $HOME/.cache; NULL with neither set (no cache: always hash). */
char *container_digest_cache_path(void);

/* The digest of image (of kind) into out.  cache may be NULL.  A cache
 * that cannot be read or written costs time, not the answer: a note
 * goes to note.  0, or -1 with err (a file of the image unreadable). */
int container_digest(const char *image, enum container_image_kind kind, const char *cache,
		     char out[CONTAINER_DIGEST_SIZE], struct sbuf *note, struct sbuf *err);

/* The cache's answer alone: 0 with out when an entry matches the image's
 * fingerprint (a stat walk, nothing read), 1 when none does, -1 with err
 * when the image cannot be walked.  What every rank of a node can ask at
 * once, before one of them hashes. */
int container_digest_cached(const char *image, enum container_image_kind kind, const char *cache,
			    char out[CONTAINER_DIGEST_SIZE], struct sbuf *note, struct sbuf *err);

/* The same, hashed whatever the cache holds, and the answer stored over
 * the cache's entry: what a check that found the cached digest wrong
 * asks, so a wrong entry is dropped, never kept. */
int container_digest_fresh(const char *image, enum container_image_kind kind, const char *cache,
			   char out[CONTAINER_DIGEST_SIZE], struct sbuf *note, struct sbuf *err);

#endif
