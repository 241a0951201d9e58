/* linediff.h - the unified diff of two texts, line by line, as diff -u
 * writes it.
 *
 * Core (pure): hpctrain diff shows what changed in a file between two
 * runs' code snapshots.  Myers' O((N+M)D) greedy algorithm finds a
 * shortest edit script, so a one-line change in a large file costs
 * little; past LINEDIFF_MAX_EDITS edits (after the common head and tail
 * are set aside) the rest is shown as removed, then added: still a
 * correct diff, not a shortest one, and the trace Myers keeps (D^2
 * integers) stays under 20 MB.
 */
#ifndef HPT_LINEDIFF_H
#define HPT_LINEDIFF_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

#define LINEDIFF_CONTEXT 3         /* unchanged lines around a change, as diff -u */
#define LINEDIFF_MAX_EDITS 2048
#define LINEDIFF_MAX_BYTES (1u << 20) /* a larger file is not diffed as text */

/* Whether buf can be shown as text in a diff: at most
 * LINEDIFF_MAX_BYTES and no NUL byte (diff(1)'s "binary" test). */
bool linediff_is_text(const char *buf, size_t len);

/* What a diff takes away and puts in, in lines. */
struct linediff_stat {
	size_t removed, added;
};

/* Appends to out the unified diff that turns a (alen bytes) into b:
 * "--- label_a", "+++ label_b", then hunks "@@ -l,n +l,n @@" of
 * LINEDIFF_CONTEXT lines of context, each line prefixed " ", "-" or "+",
 * and "\ No newline at end of file" after a last line without one.
 * Appends nothing when the texts are equal.  *st (when not NULL) gets
 * the lines removed and added.  Returns their sum: 0 for equal texts. */
size_t linediff_unified(const char *a, size_t alen, const char *b, size_t blen,
			const char *label_a, const char *label_b, struct sbuf *out,
			struct linediff_stat *st);

#endif
