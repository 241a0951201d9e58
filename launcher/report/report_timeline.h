/* report_timeline.h - where a run's training broke off and went on, for
 * hpctrain report: the requeues, new attempts and resizes along its one
 * timeline of steps.
 *
 * Core: what each step record says of where it ran in, events out; no
 * I/O (the caller reads the files, report_data parses the records).  A
 * run is read as one timeline: attempt 1's metrics.jsonl (RUN), then
 * each RUN/attempts/N's in order, the caller saying where each begins
 * (report_timeline_attempt).  Three breaks are told apart:
 *   requeue  Slurm requeued the job (preemption, exit 75, a node failed
 *            under it): the same attempt's file goes on, and the steps go
 *            back to its checkpoint, or the record's restart changes;
 *   attempt  the run was submitted again (after a lost node, rerun): the
 *            next attempt directory's file, or the record's attempt
 *            changes within one file;
 *   resize   the world size changed from the last step that said it.
 * An event is history: it stays when later records replace the steps
 * around it (a later attempt resumed from an earlier checkpoint).
 */
#ifndef HPT_REPORT_TIMELINE_H
#define HPT_REPORT_TIMELINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

enum report_event_kind { REPORT_EVENT_REQUEUE, REPORT_EVENT_ATTEMPT, REPORT_EVENT_RESIZE };

struct report_event {
	int64_t step;       /* the first step logged after the break */
	int kind;           /* enum report_event_kind */
	int64_t attempt;    /* the attempt that step ran in (1, 2, ...) */
	int64_t world_size; /* the ranks from that step on; 0 when nothing says */
	int64_t from_world_size; /* a resize's: the ranks before it; else 0 */
};

/* What one step record says of where it ran: its step and, 0 or -1
 * when it does not say, its attempt (HPCTRAIN_ATTEMPT, >= 1), restart
 * (SLURM_RESTART_COUNT, >= 0) and world size (>= 1). */
struct report_step_origin {
	int64_t step, attempt, restart, world_size;
};

/* events in the order they happened, not necessarily by step (an
 * attempt may resume from before an earlier requeue's step). */
struct report_timeline {
	struct report_event *events; /* owned */
	size_t nevents;
	int64_t attempt;      /* of the records being read; 0 until the caller
			       * or a record says */
	int64_t last_attempt; /* the last step's attempt field; 0: not said */
	int64_t restart;      /* the last step's restart field; -1: not said */
	int64_t world_size;   /* the last world size said; 0: none yet */
	bool next_attempt;    /* the caller began an attempt after steps were
			       * seen: the next step opens it */
	bool any;             /* a step was taken */
};

void report_timeline_init(struct report_timeline *t);
/* Frees the events; accepts a zeroed struct. */
void report_timeline_release(struct report_timeline *t);

/* The records that follow are attempt's (its directory's file).  The
 * first attempt that logged a step opens the timeline; each later one
 * that does is an attempt event at its first step. */
void report_timeline_attempt(struct report_timeline *t, int64_t attempt);

/* Takes the next step record, o; went_back says its step is at or
 * before the last one taken.  Returns the events it opened, as bits
 * 1 << enum report_event_kind (0: none). */
unsigned report_timeline_step(struct report_timeline *t, const struct report_step_origin *o,
			      bool went_back);

/* How many events of kind t holds. */
size_t report_timeline_count(const struct report_timeline *t, int kind);
/* "requeue", "attempt" or "resize". */
const char *report_timeline_kind_name(int kind);

/* Event i's short label for a chart's flag at its step: "requeue",
 * "attempt 2", "resize 4->8". */
void report_timeline_label(const struct report_timeline *t, size_t i, char *buf, size_t len);
/* The events as text lines (indented two spaces, "  requeued at step
 * 110 (attempt 1)"), nothing when there are none. */
void report_timeline_format(const struct report_timeline *t, struct sbuf *out);
/* The events as a JSON array of {step, kind, attempt, world_size}
 * (world_size null when not said), a resize's with from_world_size too;
 * a new reference. */
json_t *report_timeline_json(const struct report_timeline *t);

#endif
