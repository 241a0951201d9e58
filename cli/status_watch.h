/* status_watch.h - `hpctrain status` of a run or a sweep: each run's Slurm
 * state with its progress from metrics.jsonl, once or (--wait) until every
 * job has ended, with a live line on a terminal.
 * Shell (Slurm, files, stdout). */
#ifndef HPT_STATUS_WATCH_H
#define HPT_STATUS_WATCH_H

#include "common/sbuf.h" // defines: struct sbuf

#include <time.h>

struct runref;

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

/* ref is a SWEEP (or a RUN).  Needs hpt_slurm_init.  Returns 0, 1 (--wait:
 * not every job COMPLETED) or another exit status. */
int status_watch(const struct runref *ref, int json, int wait);

#endif
