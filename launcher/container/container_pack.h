/* container_pack.h - a directory image packed once into a SquashFS file,
 * for container.stage.
 * Shell: runs mksquashfs under a lock, publishes by rename.
 * A directory image is tens of thousands of small files, symbolic links
 * among them: copied as it is, every job would walk them all on the
 * shared file system, and a data set's copy holds regular files only.
 * Packed, it is one file that the stage step reads in one sweep and
 * launch mounts on each node (container_squash.h).  The pack is named by
 * the directory's content digest (container_digest.h), so the same tree
 * is packed once, whichever job, run or user's submit asks for it.
 */
#ifndef HPT_CONTAINER_PACK_H
#define HPT_CONTAINER_PACK_H

#include <stdbool.h>

struct sbuf;

/* The folder packs live in: <output_dir>/.images, made absolute (a
 * relative output_dir is taken from the current directory), so that the
 * compute nodes, which read the run's records under output_dir, read the
 * pack too.  Owned string. */
char *container_pack_dir(const char *output_dir);

/* *packed = <packs_dir>/<hex>.sqfs for digest "sha256:<hex>" of dir.  A
 * pack already there is reused when it is a regular file of ours whose
 * SquashFS superblock is whole (its magic, and the bytes it says it
 * uses present); else, under an flock(2) on <hex>.lock so that two
 * submits pack once, mksquashfs packs dir reproducibly (zstd, no
 * extended attributes, creation time 0) into a temporary file that is
 * made 0600, synced and renamed over.  *made says whether this call packed it.  0, or -1 with
 * err (mksquashfs missing or failing, with its last words). */
int container_pack(const char *dir, const char *digest, const char *packs_dir, char **packed,
		   bool *made, struct sbuf *err);

#endif
