/* ticker.h - the line status --wait keeps showing: rewritten in place on
 * a terminal, printed anew on a pipe when it says something new.
 * Shell (stdout, the clock); status_watch.c and cmd_status.c share it. */
#ifndef HPT_TICKER_H
#define HPT_TICKER_H

#include "common/sbuf.h" // defines: struct sbuf

#include <time.h>

/* How often --wait asks Slurm again: one small RPC per job every this
 * many ms; slurmctld answers thousands a second, and jobs here live
 * seconds to days. */
#define TICKER_POLL_MS 500

/* The --wait line: rewritten in place on a terminal (live); on a pipe,
 * printed when its key (the states in it) changes, or every 30 s while
 * only its figures move. */
struct ticker {
	int live;
	struct sbuf last, last_key;
	time_t said;
};

void ticker_init(struct ticker *t, int live);
void ticker_show(struct ticker *t, const char *line, const char *key);
/* Clears a live line; releases t. */
void ticker_end(struct ticker *t);

#endif
