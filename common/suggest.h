/* suggest.h - "did you mean" for commands, flags, spec keys and values.
 * Core: pure string distance, no I/O. */
#ifndef HPT_SUGGEST_H
#define HPT_SUGGEST_H

#include <stddef.h>

/* Optimal-string-alignment distance (Levenshtein plus transpositions),
 * case-insensitive; saturates at 255 so long hostile keys stay cheap. */
unsigned suggest_distance(const char *a, const char *b);

/* Returns the candidate closest to word when it is close enough to be a
 * plausible typo (distance <= max(1, len/3), or word is a prefix of it),
 * else NULL.  Ties go to the earliest candidate, so tables decide. */
const char *suggest_best(const char *word, const char *const *candidates, size_t n);

#endif
