/* fileremove.h - remove a file or a tree in a cache or output directory,
 * only when the effective user owns every part of it.
 *
 * Shell.  Caches and output directories may be shared (an output.dir
 * several users write runs into, /tmp) or reached by root (stage --clear
 * --cache DIR): a removal there must never take another user's entry,
 * not even as root, who could.  Every such removal goes through here:
 * stage --clear and eviction, abandoned copies, a run's temporaries and
 * abandoned attempts, a sweep's points, mount points of images.
 *
 * The tree is checked (lstat, never following a link) before anything
 * goes, so a foreign part leaves it whole.  Between the check and the
 * removal only a user who may write the directory can swap a part in:
 * the caller's own (a private 0700 directory) or root.
 */
#ifndef HPT_FILEREMOVE_H
#define HPT_FILEREMOVE_H

struct sbuf;

/* Removes path: a file, a link (never followed) or a directory with all
 * it holds.  0 when removed or absent; -1 with err when any part belongs
 * to another user ("refusing to remove x: it belongs to uid 1000, not to
 * uid 0"; nothing removed) or a removal failed. */
int fileremove_tree(const char *path, struct sbuf *err);

/* Removes path, a file or a link (never followed), or an empty
 * directory, under the same rule.  0 when removed or absent, else -1
 * with err. */
int fileremove_one(const char *path, struct sbuf *err);

#endif
