/* ynode.h - a bounded YAML document tree built from libyaml events.
 *
 * The job spec is small, but it arrives from users and templates, so the
 * tree builder refuses what a spec never needs and an attacker would use:
 * aliases (billion-laughs bombs), tags other than !!str, several
 * documents, nesting deeper than YNODE_MAX_DEPTH, more than
 * YNODE_MAX_NODES nodes, NUL bytes, invalid UTF-8 and inputs over
 * YNODE_MAX_BYTES.  Nothing is expanded, so memory stays proportional
 * to the input and time linear in it.  Core: parses a buffer, no I/O.
 *
 * Invariants: a MAP node's kids alternate key, value (nkids is even) and
 * every key is a SCALAR with unique text; `where` points at a string that
 * lives as long as the tree (the file name, or the --set flag text).
 */
#ifndef HPT_YNODE_H
#define HPT_YNODE_H

#include <stdbool.h>
#include <stddef.h>

#define YNODE_MAX_BYTES (1u << 20)
#define YNODE_MAX_DEPTH 32
#define YNODE_MAX_NODES 100000

struct diag_list;

enum ynode_kind { YNODE_SCALAR, YNODE_MAP, YNODE_SEQ };

struct ynode {
	enum ynode_kind kind;
	const char *where; /* file name or flag, for diagnostics */
	int line, col;     /* 1-based; 0 for nodes made from a --set flag */
	char *str;         /* SCALAR: the text (NUL-free, checked) */
	size_t len;
	bool quoted;       /* SCALAR: quoted, block or !!str: always a string */
	bool reported;     /* an error about this node is already recorded */
	struct ynode **kids;
	size_t nkids, alloc;
};

/* Parses text (len bytes, need not be NUL-terminated) into *root.
 * Returns -1 with *root NULL when no tree can be built (syntax error or a
 * refused construct), after appending positioned errors to dl.  Returns 0
 * with a tree otherwise; duplicate keys are then reported in dl and all
 * but the first occurrence dropped, so validation can go on and report
 * everything else too.  An empty document gives *root NULL. */
int ynode_parse(const char *where, const char *text, size_t len,
		   struct ynode **root, struct diag_list *dl);

void ynode_free(struct ynode *n);
struct ynode *ynode_new(enum ynode_kind kind, const char *where, int line, int col);
struct ynode *ynode_new_scalar(const char *where, int line, int col,
			       const char *s, size_t len, bool quoted);
void ynode_append(struct ynode *parent, struct ynode *kid);

/* MAP lookup by key text; NULL when absent or n is not a MAP. */
struct ynode *ynode_get(const struct ynode *map, const char *key);

/* A plain scalar that YAML's core schema reads as null: "", ~, null. */
bool ynode_is_null(const struct ynode *n);

const char *ynode_kind_name(const struct ynode *n);

#endif
