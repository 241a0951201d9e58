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
 * them; supervisors read each other's to tell a stalled job from one
 * stalled rank.
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
