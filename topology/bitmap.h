/* bitmap.h - a small growable set of unsigned integers (CPU and NUMA ids).
 *
 * Core (pure).  node_topo and the planner use it instead of hwloc_bitmap_t
 * so that no hwloc type gets past the probe (topology/probe*) and the
 * binder (launcher/rank/bind.c), and so that a plan can be computed and
 * compared without linking hwloc at all.
 *
 * Invariants: w is NULL exactly when nw == 0; bits at and above nw * 64
 * are zero; a zeroed struct bitmap (BITMAP_INIT) is a valid empty set.
 * Sets are finite: there is no "all bits from here on" as in hwloc.
 * Every operation grows the destination as needed and never fails except
 * through xmalloc(), which exits on out-of-memory.
 */
#ifndef HPT_BITMAP_H
#define HPT_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

struct bitmap {
	uint64_t *w;
	size_t nw;   /* number of 64-bit words in w */
};

#define BITMAP_INIT { NULL, 0 }

/* Ids above this are refused by bitmap_parse_list(); probe.c refuses them
 * too, so a hostile XML cannot make us allocate gigabytes. */
#define BITMAP_MAX_BIT (1u << 20)

void bitmap_init(struct bitmap *b);
void bitmap_release(struct bitmap *b);
/* Empties the set, keeping its storage. */
void bitmap_zero(struct bitmap *b);

void bitmap_set(struct bitmap *b, unsigned bit);
void bitmap_set_range(struct bitmap *b, unsigned lo, unsigned hi);
void bitmap_clr(struct bitmap *b, unsigned bit);
bool bitmap_test(const struct bitmap *b, unsigned bit);

size_t bitmap_count(const struct bitmap *b);
bool bitmap_is_empty(const struct bitmap *b);
/* First set bit, or -1 when empty. */
int bitmap_first(const struct bitmap *b);
/* First set bit strictly after prev (prev = -1 starts), or -1. */
int bitmap_next(const struct bitmap *b, int prev);
/* Highest set bit, or -1 when empty. */
int bitmap_last(const struct bitmap *b);

#define bitmap_foreach(bit, b) \
	for ((bit) = bitmap_first(b); (bit) >= 0; (bit) = bitmap_next((b), (bit)))

/* dst may alias a or b in all three. */
void bitmap_copy(struct bitmap *dst, const struct bitmap *src);
void bitmap_and(struct bitmap *dst, const struct bitmap *a, const struct bitmap *b);
void bitmap_or(struct bitmap *dst, const struct bitmap *a, const struct bitmap *b);
void bitmap_andnot(struct bitmap *dst, const struct bitmap *a, const struct bitmap *b);

bool bitmap_is_subset(const struct bitmap *sub, const struct bitmap *super);
bool bitmap_intersects(const struct bitmap *a, const struct bitmap *b);
bool bitmap_equal(const struct bitmap *a, const struct bitmap *b);
/* Orders sets by their lowest differing bit; for sorting and caching. */
int bitmap_compare(const struct bitmap *a, const struct bitmap *b);

/* Appends the Linux list format of /proc/self/status Cpus_allowed_list:
 * "0-3,8-11", "5", or "" for the empty set. */
void bitmap_format_list(const struct bitmap *b, struct sbuf *out);
/* Parses that format ("0-3,8,10-11"; whitespace around the whole string
 * allowed; "" is the empty set) into b, replacing its contents.  Returns
 * 0, or -1 on a syntax error, a reversed range or an id above
 * BITMAP_MAX_BIT; b is then empty. */
int bitmap_parse_list(struct bitmap *b, const char *s);

/* Mixes the set into a 64-bit hash h (for topology fingerprints); equal
 * sets give equal results whatever their storage size.  Not cryptographic. */
uint64_t bitmap_hash(const struct bitmap *b, uint64_t h);

#endif
