/* stage_cache.h - a node's cache of staged data sets, private to its user.
 * Shell (stage_cache.c): files, flock(2), directories.
 *
 * Layout of <cache> (0700):
 *   <hex>/          a published entry: the data set's files (0444; a code
 *                   tree's executables 0555, its links as links), named
 *                   by its manifest hash; complete and verified, or absent
 *   <hex>.json      its record: the manifest, the statkey (common/statkey.h:
 *                   device, inode, size, mtime, ctime) of every file at
 *                   publication or at its last verified hash, the file name of a file source, the names
 *                   and sources it was staged for; its mtime is the entry's
 *                   last use (touched on every use), which eviction orders by
 *   <hex>.lock      the use lock: every user of the entry holds a shared
 *                   flock on it for as long as it reads the data (a job's
 *                   ranks, through stage_cache_hold); removal takes it
 *                   exclusive and non-blocking, and skips an entry in use
 *   <hex>.fetch     the fetch lock: exclusive while one process checks,
 *                   copies, repairs or removes the entry; so two jobs on a
 *                   node never copy one entry twice: the second waits and
 *                   takes what the first published
 *   pycache/        Python's bytecode of the user's programs run from a
 *                   code snapshot (stage_pycache_dir); not an entry:
 *                   eviction and --clear leave it
 *   .tmp-<hex>-XXXXXX  a copy in progress (its fetch lock held), renamed
 *                   to <hex>/ only once every file's size and sha256 match;
 *                   one left by a killed process is removed by eviction
 *
 * Two locks, not one converted from exclusive to shared: flock(2) does
 * not promise to convert atomically, and an evictor slipping into the gap
 * would remove an entry its user had just checked.  Taken in the order
 * fetch then use; removal takes both without waiting, so it never blocks
 * a job and never deadlocks with one.  Lock files are unlinked only with
 * both locks held, and every locker checks after flock that the path
 * still names the file it locked (else it opens it again). */
#ifndef HPT_STAGE_CACHE_H
#define HPT_STAGE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

struct sbuf;
struct stage_manifest;
struct statkey;

enum stage_cache_flags {
	STAGE_CACHE_VERIFY = 1 << 0, /* hash every file of a cached entry, not only changed ones */
	STAGE_CACHE_WAIT = 1 << 1,   /* wait for another process's fetch instead of BUSY */
};

enum stage_claim_state {
	STAGE_CLAIM_NONE = 0,
	STAGE_CLAIM_HIT,  /* the entry is published and passed the checks; use_fd holds it */
	STAGE_CLAIM_MISS, /* absent (or was damaged and is removed); fetch_fd is ours: copy it */
	STAGE_CLAIM_BUSY, /* another process fetches it now (without STAGE_CACHE_WAIT) */
};

/* One process's claim on one entry.  Zeroed with fds -1 by
 * stage_claim_init; stage_claim_release closes what it holds. */
struct stage_claim {
	enum stage_claim_state state;
	int fetch_fd;
	int use_fd;
	bool repaired; /* a damaged copy was found and removed */
};

void stage_claim_init(struct stage_claim *c);
void stage_claim_release(struct stage_claim *c);

/* Makes cache a private directory (0700, ours, no one else may write it).
 * 0 or -1 with err. */
int stage_cache_open(const char *cache, struct sbuf *err);

/* Claims the entry of m in cache.  file_name: for a file source, the
 * name a program sees inside the entry (the source's basename; an entry
 * reached under a second name gets a hard link of that name); NULL for a
 * directory.  The reuse checks of a published entry: every file's size
 * and mode (0444, or 0555 for an executable of a code tree); every
 * link's target (readlink, never followed);
 * its sha256 when its statkey differs from the one recorded at
 * publication (or at its last verified hash, which rewrites it), or
 * always with STAGE_CACHE_VERIFY.  A damaged entry is removed (note
 * says what was wrong) and claimed as a miss; one in use by another
 * process cannot be removed and is an error.  0, or an HPT_EXIT_* status
 * with err (a lock or directory that cannot be made: IO). */
int stage_cache_claim(const char *cache, const struct stage_manifest *m, const char *file_name,
		      unsigned flags, struct stage_claim *c, struct sbuf *note, struct sbuf *err);

/* Publishes the verified copy tmp (a directory in cache, see stage_sink.h)
 * as m's entry for a MISS claim: renames it into place, writes the
 * record (keys: each file's statkey in the copy, in manifest order; name
 * and src: what it was staged as), syncs the cache directory and turns
 * the claim into a HIT.  0 or an HPT_EXIT_* status with err. */
int stage_cache_publish(const char *cache, const struct stage_manifest *m, const char *file_name,
			const char *tmp, const struct statkey *keys, const char *name, const char *src,
			struct stage_claim *c, struct sbuf *err);

/* Holds the published entry hash ("sha256:<hex>") of cache for as long as
 * the returned descriptor stays open (a shared flock on its use lock):
 * neither eviction nor --clear removes it meanwhile.  Waits for a fetch
 * in progress.  The descriptor (close-on-exec: hpctrain launch keeps it
 * for the life of the rank), or -1 with err (no such entry: not staged
 * on this node, or evicted). */
int stage_cache_hold(const char *cache, const char *hash);

/* Removes entry hex (64 hex digits) of cache when no one uses or fetches
 * it: 0 removed, 1 in use or being fetched (left as it is), -1 with err
 * (a part of it another user owns, which stays: common/fileremove.h). */
int stage_cache_remove(const char *cache, const char *hex, struct sbuf *err);

/* flock(2)s op (LOCK_SH, LOCK_EX, with LOCK_NB) on "<cache>/<hex><suffix>"
 * (".lock" or ".fetch"), creating it with create: the descriptor, or -1
 * with errno (EWOULDBLOCK: held by another; ENOENT: missing). */
int stage_cache_lock(const char *cache, const char *hex, const char *suffix, int op, bool create);

#endif
