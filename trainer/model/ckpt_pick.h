/* ckpt_pick.h - which checkpoint a run resumes from, and which ones
 * saving prunes or retires: decided by what each file records, never by
 * how its name sorts.
 *
 * Pure core: candidates in (their names, the header fields ckpt.c read,
 * and for the pick a verifier the caller supplies), decisions out.
 * Only names of the exact form the trainer writes are candidates
 * (ckpt-<12 or more digits>.bin): a user's ckpt-best.bin is never taken,
 * pruned or retired.  Newest means most global samples consumed (version
 * 3), then most steps; a file from before version 3 records no samples
 * and counts as older than any that does (it was written before the
 * trainer that writes them).  Steps alone would lie: --new-global-batch
 * renumbers them downward.
 */
#ifndef HPT_CKPT_PICK_H
#define HPT_CKPT_PICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

struct ckpt_cand {
	char *path;           /* owned (ckpt_cands_release frees it) */
	bool head;            /* the header read: the fields below hold */
	uint32_t version;
	int64_t step;         /* from the header; from the name when !head */
	int64_t samples;      /* global samples consumed; 0 before version 3 */
	int64_t global_batch; /* the lineage; 0 = unrecorded (before version 3) */
};

/* What saving does with a candidate. */
enum ckpt_fate {
	CKPT_KEEP,
	CKPT_REMOVE, /* the current lineage beyond the newest keep */
	CKPT_RETIRE, /* another global batch's: moved aside, never current again */
};

/* Whether name (a file name, no directory) is one the trainer writes;
 * its step into *step when step is not NULL. */
bool ckpt_pick_is_name(const char *name, int64_t *step);

/* Sorts c newest first (see above); ties by path, so the order is total. */
void ckpt_pick_sort(struct ckpt_cand *c, size_t n);

/* Walks c (sorted) newest first and asks verify about each: 0 it
 * verifies, 1 it is damaged (pass it over), another value an
 * enum hpt_exit status that stops the walk (a file that is not to be
 * trusted, or another spec's: not a case for quietly taking an older
 * one).  verify fills why for 1 and for a status.  Each file passed over
 * adds "warning: WHY; passed over for an older checkpoint" as a line to
 * warn.  Returns 0 with *chosen the index, 1 when n is 0, the status of
 * a stop with err = its why, or HPT_EXIT_NO_INPUT when none verifies
 * with err = the newest's why (the older ones' are in warn). */
int ckpt_pick(const struct ckpt_cand *c, size_t n,
	      int (*verify)(void *ctx, const struct ckpt_cand *c, struct sbuf *why), void *ctx,
	      size_t *chosen, struct sbuf *warn, struct sbuf *err);

/* For saving at global_batch with keep kept: fate[i] for each of c
 * (sorted).  Another lineage's files (a recorded global batch not this
 * one) retire; of the rest, the newest keep stay.  A header not read
 * counts as this lineage's, in its place by its name's step. */
void ckpt_pick_prune(const struct ckpt_cand *c, size_t n, int64_t global_batch, int keep,
		     enum ckpt_fate *fate);

/* Frees the paths of c[0..n) and c. */
void ckpt_cands_release(struct ckpt_cand *c, size_t n);

#endif
