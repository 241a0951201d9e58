/* stage_evict.h - what a node cache holds, and making room in it: the
 * entries with their size, last use and whether a job uses them now;
 * least-recently-used eviction above a size; --clear.
 * Shell (stage_evict.c): the cache directory, records, locks. */
#ifndef HPT_STAGE_EVICT_H
#define HPT_STAGE_EVICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct sbuf;

struct stage_evict_entry {
	char hex[65];
	char *name;          /* as it was last published; NULL if the record is unreadable */
	char *src;
	uint64_t bytes;
	time_t last_use;     /* its record's mtime */
	bool in_use;         /* a job holds it (its use lock is held shared) */
};

struct stage_evict_list {
	struct stage_evict_entry *v;
	size_t n;
	uint64_t bytes;      /* of all entries */
};

/* The published entries of cache, least recently used first.  A cache
 * that does not exist is empty.  0, or -1 with err. */
int stage_evict_list(const char *cache, struct stage_evict_list *l, struct sbuf *err);
void stage_evict_list_release(struct stage_evict_list *l);

/* As JSON: {"cache", "bytes", "entries": [{"hash", "name", "src", "bytes",
 * "last_use" (ISO 8601), "in_use"}]}; NULL when a string is not UTF-8
 * or memory runs out (json_print says so). */
json_t *stage_evict_list_json(const char *cache, const struct stage_evict_list *l);

/* Removes the temporaries of cache that their writer left: a copy in
 * progress (".tmp-<hex>-XXXXXX") or an entry moved aside for removal
 * is written only under its entry's fetch lock, so one whose fetch lock
 * this process can take (LOCK_EX, without waiting) has no writer left
 * (killed mid-copy; the kernel let its lock go), and is removed while
 * that lock is held.  Each stage step calls this on its cache: a cache
 * in /dev/shm would otherwise keep every killed step's copy in memory
 * until eviction.  A line per removed copy goes to log; errors are
 * skipped (the next step tries again).  O(entries of cache). */
void stage_evict_abandoned(const char *cache, struct sbuf *log);

/* Removes least recently used entries that no one uses or fetches until
 * the cache holds at most max_bytes, and copies in progress that were
 * abandoned (their fetch lock free).  Appends a line per removed or
 * skipped entry to log.  0, or -1 with err (as for every removal here,
 * a cache or a part of an entry another user owns: common/fileremove.h). */
int stage_evict_lru(const char *cache, uint64_t max_bytes, struct sbuf *log, struct sbuf *err);

/* --clear: removes the entries hexes[0..n) (every entry when n is 0),
 * skipping those in use; appends a line per entry to log.  0 when every
 * named entry is gone, 1 when some were in use, -1 with err (a cache
 * another user owns, even to root: "refusing DIR: it belongs to uid N,
 * not to uid 0"). */
int stage_evict_clear(const char *cache, const char *const *hexes, size_t n, struct sbuf *log,
		      struct sbuf *err);

#endif
