/* suggest.c - closest-match suggestions for mistyped names.
 * Core: pure. */
#include "common/suggest.h" // defines: suggest_distance, suggest_best

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define SUGGEST_MAX_LEN 64

unsigned suggest_distance(const char *a, const char *b)
{
	/* Three rows of a (la+1) x (lb+1) table; names longer than 64 bytes
	 * are never typos of ours, so they are clipped, bounding the cost. */
	unsigned rows[3][SUGGEST_MAX_LEN + 1];
	size_t la = strnlen(a, SUGGEST_MAX_LEN), lb = strnlen(b, SUGGEST_MAX_LEN);
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			unsigned cost = ca != cb;
			unsigned best = prev[j] + 1;

			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (prev[j - 1] + cost < best)
				best = prev[j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best > 255 ? 255 : best;
		}
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *suggest_best(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word);
	unsigned limit = len / 3 > 1 ? (unsigned)(len / 3) : 1;
	const char *best = NULL;
	unsigned best_d = limit + 1;

	if (!len || len > SUGGEST_MAX_LEN)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned d = suggest_distance(word, candidates[i]);

		if (d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	if (best)
		return best;
	for (size_t i = 0; i < n; i++)
		if (len >= 3 && !strncasecmp(word, candidates[i], len))
			return candidates[i];
	return NULL;
}
