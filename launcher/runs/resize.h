/* resize.h - how many nodes the next attempt of a run may ask for.
 *
 * Core (pure): the spec's node range and the nodes the cluster has left
 * in, a decision out.  A run whose resources.nodes is a range MIN-MAX
 * may come back smaller after a failed preflight or a lost node, never
 * below MIN; a fixed size N is the range N-N.  Nothing here reads Slurm:
 * the caller counts the nodes (the cluster's, less those excluded).
 */
#ifndef HPT_RESIZE_H
#define HPT_RESIZE_H

#include <stdint.h>

struct sbuf;

/* The largest size the next attempt can have: MAX, or the nodes left
 * when fewer (left < 0: not known, MAX).  0 with *next in [min, max];
 * -1 when left < min, with why ("2 nodes left, resources.nodes needs at
 * least 3"): resubmitting would only wait for nodes that are not there. */
int resize_next(int64_t min, int64_t max, int64_t left, int64_t *next, struct sbuf *why);

#endif
