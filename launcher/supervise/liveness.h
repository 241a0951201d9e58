/* liveness.h - RUN/ranks/rank-N.json: what one supervised rank is doing.
 *
 * Shell, but for liveness_activity (pure).  The supervisor rewrites its
 * rank's file (fileio_write_unsynced: a mkstemp file, mode 0600, renamed,
 * so readers never see half of one; not fsync'd, as the old rename-only
 * write was not: every 5 s per rank on a shared file system would cost
 * more than a record a crash makes stale anyway) when its state changes
 * and at most every LIVENESS_PERIOD_S while the program runs.  The file
 * holds the node, pids, binding, state, the program's CPU time, the bytes
 * of output, the time of the last output and of the last heartbeat, and
 * the exit status once there is one (after a SIGKILL, with the OOM
 * kills its memory cgroups counted: the program's failure either way).  `hpctrain status RUN --ranks` reads
 * them.
 *
 * A stalled job is told from one stalled rank by RUN/ranks/progress, one
 * file for all ranks (liveness_mark_*): its mtime is never more than a
 * period older than the latest progress of any rank.  A rank touches it
 * only when it has progressed and the mtime it last saw is over a period
 * old, and reads it only while it is itself idle: O(1) per rank, and a
 * few touches per period for the whole job, where reading every rank's
 * record was O(N) per idle rank per period (O(N^2) per job).
 */
#ifndef HPT_LIVENESS_H
#define HPT_LIVENESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sbuf;

#define LIVENESS_PERIOD_S 5
#define LIVENESS_MAX_BYTES (1 << 20) /* a rank's file with its contract: a few KiB */

struct liveness {
	unsigned rank, world;
	const char *host;
	pid_t pid;                /* the program's */
	const char *state;        /* starting, running, preempting, stalled, exited */
	double started, updated;  /* seconds since the epoch */
	double last_output, last_heartbeat, last_progress; /* 0 = never */
	double first_heartbeat;   /* the program's first step (0 = none yet): a
				   * recovery's time to its first step */
	double cpu_s;             /* the program's user+system CPU seconds */
	uint64_t output_bytes;
	int exit_status;          /* -1 while running; 128+N for signal N */
	int signal;               /* the signal that ended the program, or 0 */
	long long oom_kills;      /* after a SIGKILL: the OOM killer's count in its
				   * memory cgroups while it ran (oom.h); -1 not asked */
	json_t *contract;         /* borrowed: plan against what the rank got */
	json_t *inside;           /* borrowed: the same read from the program
				   * inside its runtime (contract_inside), or NULL */
};

/* Writes DIR/rank-N.json.  0, or -1 with err. */
int liveness_write(const char *dir, const struct liveness *l, struct sbuf *err);

/* The program's user+system CPU seconds from /proc, or -1. */
double liveness_cpu_seconds(pid_t pid);

/* The latest last_progress among the other ranks' files in dir, and how
 * many of those files there are; 0 when none. */
double liveness_latest_progress(const char *dir, unsigned self, unsigned *files);

/* The progress mark, DIR/progress: opened for touching (created 0600
 * when missing, never through a link, refused when another user owns
 * it).  The descriptor, or -1 with err. */
int liveness_mark_open(const char *dir, struct sbuf *err);

/* Whether a rank that progressed at progress, and last saw the mark at
 * seen or later, must look at the mark again (and touch it when it is
 * still as old): only then can the mark be over period older than
 * progress.  Pure. */
int liveness_mark_due(double seen, double progress, double period);

/* Keeps the mark within period of progress: when due, reads its mtime
 * through fd and touches it (the file system's clock) if that is still
 * over period old.  Returns what the rank knows of the mark now (a time
 * it is at least as late as), to pass as seen next time. */
double liveness_mark_note(int fd, double seen, double progress, double period);

/* The mark's mtime, read by path (an open, which revalidates a network
 * file system's cached attributes), or 0 when there is none. */
double liveness_mark_read(const char *dir);

/* Reads every DIR/rank-N.json, sorted by rank; *n gets the count.  One
 * that is not a regular file (a FIFO) or not JSON is skipped.  The
 * caller json_decref()s each and frees the array. */
json_t **liveness_load_dir(const char *dir, size_t *n);

/* What the rank of record r (a rank-N.json as loaded) is doing at now
 * (seconds since the epoch), for status --ranks: "progressing", "idle
 * 42s" (no progress for over 2 x LIVENESS_PERIOD_S), "exited 139
 * (SIGSEGV)", "exited 0", or the state itself ("starting", "stalled",
 * ...; "?" when the record has none).  Writes at most len bytes to buf.
 * Pure: the record and now in, text out. */
void liveness_activity(json_t *r, double now, char *buf, size_t len);

/* Whether rank record r (as loaded) shows its program past its start:
 * a heartbeat, or, when output_counts (a program not known to touch the
 * heartbeat), any output.  Pure. */
bool liveness_has_started(json_t *r, bool output_counts);

/* Which ranks of world have not started (liveness_has_started), from
 * the n records v (sorted by rank, as liveness_load_dir gives them):
 * "no record from ranks 1-3; starting: 0 on node1, 4,5 on node2" (only
 * the parts that apply).  Pure. */
void liveness_say_unstarted(json_t **v, size_t n, unsigned world, bool output_counts,
			    struct sbuf *out);

/* How often a supervisor rewrites its record while nothing changes:
 * LIVENESS_PERIOD_S, or half a stall timeout shorter than two of those
 * (at least 1 s), so that a record is never staler than the stall it
 * helps to judge. */
double liveness_period(int64_t stall_s);

#endif
