/* late_ranks.c - the watchdog's verdict in words (late_ranks.h).  Pure. */
#include "trainer/comm/late_ranks.h" // defines: late_ranks_describe, enum late_state
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_addf

#include <stdbool.h>

/* Appends the ranges of ranks in state want; returns whether any. */
static bool add_ranges(const unsigned char *state, int world, int want, const char *head,
		       struct sbuf *out)
{
	int ranges = 0, more = 0;

	for (int r = 0; r < world;) {
		int end = r;

		if (state[r] != want) {
			r++;
			continue;
		}
		while (end + 1 < world && state[end + 1] == want)
			end++;
		if (ranges == LATE_RANKS_MAX_RANGES) {
			more += end - r + 1;
		} else {
			sbuf_addstr(out, ranges ? ", " : head);
			if (end == r)
				sbuf_addf(out, "%d", r);
			else
				sbuf_addf(out, "%d-%d", r, end);
			ranges++;
		}
		r = end + 1;
	}
	if (more)
		sbuf_addf(out, " and %d more rank%s", more, more == 1 ? "" : "s");
	return ranges > 0;
}

void late_ranks_describe(const unsigned char *state, int world, struct sbuf *out)
{
	bool silent = add_ranges(state, world, LATE_SILENT, "ranks that have not arrived: ", out);
	bool behind = add_ranges(state, world, LATE_BEHIND,
				 silent ? "; ranks stuck in an earlier wait: "
					: "ranks stuck in an earlier wait: ", out);

	if (!silent && !behind)
		sbuf_addstr(out, "every rank arrived; the collective is stuck");
}
