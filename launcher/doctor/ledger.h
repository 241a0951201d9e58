/* ledger.h - the node ledger: nodes that failed `hpctrain doctor`,
 * remembered across runs, per Slurm cluster.
 *
 * A failed node cools down: it is kept out of jobs until its cooldown
 * is over, and the cooldown doubles with each failure it has had (1 h,
 * 2 h, 4 h ... a week at most), so a node that keeps failing stays out
 * longer while one that failed once is tried again soon.  Each node's
 * last GEMM score (its speed next to the fastest node's) is kept too,
 * to tell a straggler from a node that merely passed.
 *
 * The document:
 *   {"version": 1, "clusters": {"CLUSTER": {"NODE": {"checks": N,
 *     "failures": K, "last_checked": T, "last_failure": T, "last_ok": T,
 *     "last_score": 0.97, "reason": "...", "cooldown_s": S, "until": T}}}}
 * times in epoch seconds; a field that never had a value is absent.
 *
 * Core (pure): the document and the clock's value come from the caller.
 * Shell (ledger_file.c): where the ledger lives, and reading and
 * rewriting it under a lock.
 */
#ifndef HPT_LEDGER_H
#define HPT_LEDGER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct sbuf;

/* One node's doctor result. */
struct ledger_event {
	const char *node;   /* Slurm node name */
	bool failed;        /* any check failed on it */
	const char *reason; /* first failing check's reason ("nics: mlx5_0 port 1 is DOWN"), or NULL */
	double score;       /* GEMM speed relative to the fastest node, 0..1; < 0 when unknown */
};

#define LEDGER_VERSION 1
#define LEDGER_COOLDOWN_BASE_S 3600        /* first failure: 1 h */
#define LEDGER_COOLDOWN_MAX_S (7 * 86400)  /* doubling stops at a week */
#define LEDGER_SAME_FAILURE_S 600          /* failures this soon after a cooldown began are its own */

/* {"version": 1, "clusters": {}}: a new reference. */
json_t *ledger_new(void);

/* 0, or -1 with err naming what is wrong (not an object, version not 1,
 * a node entry that is not an object, a field of the wrong type). */
int ledger_check(const json_t *doc, struct sbuf *err);

/* The cooldown after a node's failures-th failure: BASE * 2^(failures-1),
 * capped at MAX; 0 for no failure. */
long ledger_cooldown(long failures);

/* Records a doctor run on cluster: every node gets checks+1,
 * last_checked=now, last_score (when >= 0); a failed node gets
 * last_failure=now, reason, and, unless its current cooldown began less
 * than LEDGER_SAME_FAILURE_S before now (the same failure, seen by
 * another doctor: see ledger.c), failures+1,
 * cooldown_s=ledger_cooldown(failures), until=now+cooldown_s.  A node
 * that passes keeps its cooldown (it was checked while someone forced
 * it in) but its streak is noted: last_ok=now.  Every entry of doc is
 * clamped first (ledger_clamp). */
void ledger_record(json_t *doc, const char *cluster, const struct ledger_event *ev, size_t n,
		   time_t now);

/* Bounds every entry's cooldown to the policy's: an until beyond
 * now + LEDGER_COOLDOWN_MAX_S becomes that, a cooldown_s beyond
 * LEDGER_COOLDOWN_MAX_S becomes it.  Returns how many entries changed. */
size_t ledger_clamp(json_t *doc, time_t now);

/* Removes node from cluster (or from every cluster when cluster is
 * NULL), and a cluster left empty; returns how many entries went. */
int ledger_forget(json_t *doc, const char *cluster, const char *node);

/* Nodes of cluster whose until > now, sorted by name: *nodes is a
 * malloc'd array (NULL when none) of strings pointing into doc; free the
 * array only.  Returns the count. */
size_t ledger_cooling(const json_t *doc, const char *cluster, time_t now, const char ***nodes);

/* The entry of one node, or NULL (borrowed). */
const json_t *ledger_entry(const json_t *doc, const char *cluster, const char *node);

/* Why node is left out of a submission, one line (no newline):
 * "excluding NODE: it failed doctor N time(s), last: WHY; cooling down
 * for M min more ('hpctrain doctor --forget NODE' clears it)".  entry is
 * the node's (ledger_entry). */
void ledger_cooling_note(const json_t *entry, const char *node, time_t now, struct sbuf *out);

/* The table of `hpctrain doctor --ledger`: a header, then one line per
 * cluster and node, sorted: cluster, node, failures, checks, last score,
 * state ("cooling until 2026-11-24 15:00 (2h 10m left)", UTC, or "ok"),
 * last reason.  "the ledger is empty" when there is nothing. */
void ledger_format(const json_t *doc, time_t now, struct sbuf *out);

/* Shell (ledger_file.c). */

/* $HPCTRAIN_LEDGER, else $XDG_STATE_HOME/hpctrain/nodes.json, else
 * $HOME/.local/state/hpctrain/nodes.json.  0, or -1 with err (no HOME). */
int ledger_path(struct sbuf *out, struct sbuf *err);

/* path is resolved first (realpath): a symlinked ledger is read and
 * rewritten where it points, and stays a link; a link to nothing is
 * refused.  The file and PATH.lock are opened without following a link
 * and refused when either is a link, not a regular file, or another
 * user's (HPT_EXIT_IO with err saying so): a directory others can write
 * must not let them choose what we create, replace or believe. */

/* Reads the ledger under a shared flock of PATH.lock; a missing file is
 * an empty ledger.  Entries are clamped (ledger_clamp) to the clock's
 * now.  0, or HPT_EXIT_IO with err naming the path (and for a corrupt
 * file the line and column). */
int ledger_load(const char *path, json_t **doc, struct sbuf *err);

/* Read-modify-write under an exclusive flock of PATH.lock (created 0600,
 * its directory made 0700): reads the ledger (missing = ledger_new();
 * clamped as ledger_load's), calls fn(doc, arg), and when fn returns 0
 * writes the result atomically (mode 0600).  0; fn's non-zero return,
 * with nothing written; HPT_EXIT_IO with err (a corrupt file among
 * them: see ledger_repair); or HPT_EXIT_INTERNAL with err when what fn
 * left is not a ledger (ledger_check), which is then not written either. */
int ledger_update(const char *path, int (*fn)(json_t *doc, void *arg), void *arg,
		  struct sbuf *err);

enum ledger_repair_flags {
	LEDGER_REPAIR_RESET = 1 << 0, /* start empty even from a whole ledger */
};

/* ledger_update that repairs: a file that is there but no node ledger
 * (not JSON, ledger_check refuses it, too large) is kept as
 * PATH.corrupt-YYYYmmddTHHMMSSZ, and fn gets an empty ledger; with
 * LEDGER_REPAIR_RESET a whole ledger is kept too, as PATH.reset-TIME,
 * and fn gets an empty one.  A backup is a hard link of the old file,
 * so it is whole or absent, made mode 0600, never over another file.
 * note gets one line saying what was kept where (the corrupt file's
 * complaint first), nothing when nothing was.  Once a file was kept,
 * the ledger is rewritten even when fn returns non-zero (then empty),
 * and fn's return is returned.  A file that cannot be read (a link,
 * another user's, I/O) is not repaired: HPT_EXIT_IO as ledger_update. */
int ledger_repair(const char *path, enum ledger_repair_flags flags,
		  int (*fn)(json_t *doc, void *arg), void *arg, struct sbuf *note, struct sbuf *err);

/* doctor --forget NODE: NODE's entries dropped (ledger_repair, 0).
 * 1 when NODE is not in the ledger (nothing written), else as
 * ledger_repair. */
int ledger_forget_node(const char *path, const char *node, struct sbuf *note, struct sbuf *err);
/* doctor --reset: the whole ledger kept as PATH.reset-TIME, and emptied
 * (ledger_repair with LEDGER_REPAIR_RESET). */
int ledger_reset(const char *path, struct sbuf *note, struct sbuf *err);

#endif
