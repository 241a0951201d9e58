/* status_watch.h - `hpctrain status` of a run or a sweep: each run's Slurm
 * state with its progress from metrics.jsonl, once or (--wait) until every
 * job has ended, with a live line on a terminal.
 * Shell (Slurm, files, stdout). */
#ifndef HPT_STATUS_WATCH_H
#define HPT_STATUS_WATCH_H

struct runref;

/* ref is a SWEEP (or a RUN).  Needs hpt_slurm_init.  Returns 0, 1 (--wait:
 * not every job COMPLETED) or another exit status. */
int status_watch(const struct runref *ref, int json, int wait);

#endif
