/* statkey.h - what a cache of hashes keys a file on: the stat(2) data
 * that any change to its bytes moves, so that a cached hash is reused
 * only for the very file it was computed from.
 * Pure core (statkey.c): a struct stat in, a key out; no file touched.
 *
 * Size and mtime alone are not enough: `touch -d` (or cp -p, rsync -t,
 * tar x) sets an old mtime on new bytes of the same size.  The kernel
 * sets ctime itself on every write, chmod, link and utimes, and no
 * system call sets it back; a file replaced by rename is another inode.
 * So a key is (device, inode, size, mtime ns, ctime ns), compared whole.
 * ctime moves also on a chmod or a new hard link: such a file is hashed
 * again, which costs time, never a wrong answer. */
#ifndef HPT_STATKEY_H
#define HPT_STATKEY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct stat;

struct statkey {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
};

/* The key of st. */
void statkey_of(const struct stat *st, struct statkey *k);

/* Every field equal. */
bool statkey_is_equal(const struct statkey *a, const struct statkey *b);

/* [dev, ino, size, mtime_ns, ctime_ns] as a new JSON array; NULL only
 * when out of memory. */
json_t *statkey_to_json(const struct statkey *k);

/* Reads what statkey_to_json wrote: 0, or -1 when j is not five
 * integers (k then zeroed, which no file's key equals). */
int statkey_from_json(const json_t *j, struct statkey *k);

#endif
