/* flatdoc.h - a document as flat (dotted key, value text) pairs, and
 * two such documents compared key by key.
 *
 * Core (pure): hpctrain diff flattens each run's resolved spec
 * (common/spec/ynode_flat.h) and its final metrics record (flatdoc_add_json)
 * into a flatdoc and asks which keys changed, appeared or went away.
 * Keys read "train.optimizer.lr", a sequence's items "data.stage[0].name";
 * a value is its text as the document would show it (a string quoted, a
 * number or a plain YAML scalar as written, an empty map "{}").
 *
 * Invariants: v[0, n) in the order added, keys unique (a second add of a
 * key replaces its value); every string is owned by the flatdoc.
 */
#ifndef HPT_FLATDOC_H
#define HPT_FLATDOC_H

#include <jansson.h>
#include <stddef.h>

struct flatdoc_pair {
	char *key;
	char *value;
};

struct flatdoc {
	struct flatdoc_pair *v;
	size_t n, alloc;
};

#define FLATDOC_INIT { NULL, 0, 0 }

/* One key that differs: old is NULL for a key only the second document
 * has, new_value NULL for one only the first has.  The strings point
 * into the two documents compared and live as long as they do. */
struct flatdoc_change {
	const char *key;
	const char *old_value;
	const char *new_value;
};

void flatdoc_release(struct flatdoc *d);

/* Sets key to value (both copied), replacing an earlier value of key. */
void flatdoc_set(struct flatdoc *d, const char *key, const char *value);

/* key's value, or NULL when d has no such key. */
const char *flatdoc_get(const struct flatdoc *d, const char *key);

/* Adds json under prefix (NULL or "" for none): an object's members as
 * prefix.member, an array's items as prefix[i], a scalar as its JSON
 * text (strings quoted); an empty object or array as "{}" or "[]". */
void flatdoc_add_json(struct flatdoc *d, const char *prefix, const json_t *json);

/* The keys whose values differ between a and b, or that only one has:
 * a's keys in a's order, then the keys only b has in b's order.
 * *out (free() it) holds *n changes; NULL when there are none.  Keys for
 * which skip (when not NULL) returns nonzero are left out: a caller
 * that shows some keys in sections of their own.  O(|a| * |b|): a spec
 * is some hundred keys, so no index. */
void flatdoc_compare(const struct flatdoc *a, const struct flatdoc *b,
		     int (*skip)(const char *key), struct flatdoc_change **out, size_t *n);

#endif
