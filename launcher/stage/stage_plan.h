/* stage_plan.h - who reads and who forwards an entry: the chain.
 * Pure core (stage_plan.c).
 *
 * Rank 0 reads the source once; the chunks flow down a chain of exactly
 * the ranks (nodes) that lack the entry, in rank order, each forwarding
 * to the next while it writes its own copy.  A node that holds the entry
 * takes no part; rank 0 keeps a copy only if it lacks one.  A chain costs
 * each link one pass of the data, so the time is that of one copy plus
 * (length - 1) chunks of pipeline fill, whatever the number of nodes; a
 * tree would shorten the fill but make inner nodes send twice, and the
 * fill (a few 4 MB chunks per node) is small next to a data set. */
#ifndef HPT_STAGE_PLAN_H
#define HPT_STAGE_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* The chain of an entry into chain[] (room for nranks): 0 (the reader)
 * first, then every other rank r with lacks[r] != 0 in rank order.  Its
 * length, or 0 when no rank lacks the entry (nothing to send). */
int stage_plan_chain(const unsigned char *lacks, int nranks, int *chain);

/* rank's place in chain: its index (-1 when not in it), and the ranks
 * before and after it (-1 when none). */
int stage_plan_place(const int *chain, int len, int rank, int *prev, int *next);

/* The number of chunks of at most chunk bytes that carry bytes. */
uint64_t stage_plan_chunks(uint64_t bytes, size_t chunk);

#endif
