/* late_ranks.h - the watchdog's verdict in words: which ranks had not
 * reached a wait that timed out, as ranges ("1, 4-7, 12"), a list that
 * stays short at any world size.  Pure core (late_ranks.c). */
#ifndef HPT_LATE_RANKS_H
#define HPT_LATE_RANKS_H

struct sbuf;

/* What the collecting rank learned of each rank during a stall. */
enum late_state {
	LATE_SILENT = 0, /* no report: stopped, dead, computing, or in another call */
	LATE_ARRIVED,    /* reported this wait (or a later one) */
	LATE_BEHIND,     /* reported an earlier wait: it is stuck there */
};

/* At most this many ranges are named in each list; the rest are counted. */
#define LATE_RANKS_MAX_RANGES 16

/* Appends to out, for state[0..world): "ranks that have not arrived:
 * R[, R...]" (ranges of LATE_SILENT ranks), then "; ranks stuck in an
 * earlier wait: R[, ...]" when any is LATE_BEHIND; past
 * LATE_RANKS_MAX_RANGES ranges, " and N more ranks".  When every rank
 * arrived: "every rank arrived; the collective is stuck". */
void late_ranks_describe(const unsigned char *state, int world, struct sbuf *out);

#endif
