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
 * fill (a few 4 MB chunks per node) is small next to a data set.
 *
 * No rank holds the chain: each learns its own link from collectives of
 * O(entries) bytes (stage_mpi.c: an all-reduce and two exclusive scans,
 * log N messages a rank) and from the rank after it, which sends it its
 * rank.  An allgather of every rank's misses did the same with
 * O(N x entries) bytes on every rank. */
#ifndef HPT_STAGE_PLAN_H
#define HPT_STAGE_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* A rank's link in an entry's chain, which is 0 (the reader) first, then
 * every other rank that lacks the entry, in rank order.  len: the
 * chain's length, 0 when no rank lacks the entry (nothing to send);
 * place: the rank's index in it, -1 when not in it; prev and next: the
 * ranks before and after it, -1 when none.  has_next: whether there is
 * one, before the rank after it has said which. */
struct stage_link {
	int len, place, prev, next;
	int has_next;
};

/* The link of a rank from what the collectives give it: in, whether it
 * is in the chain (rank 0, or it lacks the entry); lacking, how many
 * ranks lack the entry; nin, how many ranks are in the chain; before,
 * how many ranks below it are; prev_in, the highest rank below it that
 * is (-1 for none).  next stays -1: the rank after says it. */
void stage_plan_link(int in, int lacking, int nin, int before, int prev_in,
		     struct stage_link *link);

/* The number of chunks of at most chunk bytes that carry bytes. */
uint64_t stage_plan_chunks(uint64_t bytes, size_t chunk);

#endif
