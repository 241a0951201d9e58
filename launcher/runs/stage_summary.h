/* stage_summary.h - a run's staging step in one summary: the per-node
 * records hpctrain stage writes (RUN/stage/<node>.json, see
 * launcher/stage/stage_job.h) summed, for hpctrain status and report.
 *
 * Core (stage_summary.c): record texts in, a summary and its line, JSON
 * and per-node rows out; a test feeds it hostile texts directly.  Its
 * reader (stage_summary_load.c, shell): the records of one attempt.
 *
 * Every figure comes from a file a job wrote, so none is trusted: a
 * record that is not a JSON object with a "node" string is skipped and
 * counted; a byte count that is not a non-negative integer counts as 0
 * and marks the node (odd); seconds that are not a finite number >= 0
 * are NAN ("-" in text, null in JSON) and play no part in the slowest
 * and median node; sums saturate at UINT64_MAX instead of wrapping.
 */
#ifndef HPT_STAGE_SUMMARY_H
#define HPT_STAGE_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* At most this many records are read, and a record's size at most
 * STAGE_SUMMARY_RECORD_MAX: one per node of a job, and a node's record
 * is a few hundred bytes per data.stage entry. */
#define STAGE_SUMMARY_NODES_MAX 65536
#define STAGE_SUMMARY_RECORD_MAX (1u << 20)

/* One node's record. */
struct stage_node {
	char *node;            /* owned: the record's "node", as written (escape to print) */
	double seconds;        /* the node's stage time; NAN when not said */
	uint64_t bytes_read, bytes_sent, bytes_received;
	size_t entries, hits, refetched;
	bool odd;              /* a figure was missing or not a count */
};

struct stage_summary {
	struct stage_node *nodes; /* owned, by node name after stage_summary_finish */
	size_t n;
	uint64_t bytes_read, bytes_sent, bytes_received; /* saturating sums */
	size_t entries, hits, refetched;                 /* over every node */
	size_t skipped;        /* records that were not a node's record */
	/* stage_summary_finish fills: */
	long slowest;          /* index of the node with the most seconds; -1: none said */
	double median_s;       /* of the nodes' seconds said; NAN: none */
};

void stage_summary_init(struct stage_summary *s);
/* Frees the nodes; accepts a zeroed struct. */
void stage_summary_release(struct stage_summary *s);

/* Adds one record's text (len bytes, need not end in NUL).  0, or -1
 * when it is not a node's record (counted in skipped). */
int stage_summary_add(struct stage_summary *s, const char *text, size_t len);

/* Sorts the nodes by name and finds the slowest and the median.  Two
 * records of one node (a file copied by hand) are both kept. */
void stage_summary_finish(struct stage_summary *s);

/* "3 nodes, 12.4 MB read from the source, 24.8 MB sent, 1/3 hits,
 * slowest node 0.41 s (n2)" (sizes in the unit that suits them,
 * sbuf_add_bytes): control characters in a node's name are escaped.
 * Nothing when s has no nodes. */
void stage_summary_format(const struct stage_summary *s, struct sbuf *out);

/* {"nodes": N, "bytes_read", "bytes_sent", "bytes_received", "entries",
 *  "hits", "refetched", "skipped_records", "slowest": {"node", "seconds"}
 *  or null, "median_seconds" (null: not said), "per_node": [{"node",
 *  "seconds", "bytes_read", "bytes_sent", "bytes_received", "entries",
 *  "hits", "refetched"}]}: a new reference, or NULL when memory runs out
 *  (node names were read from JSON, so are UTF-8): never one that leaves
 *  a node out. */
json_t *stage_summary_json(const struct stage_summary *s);

/* stage_summary_load.c (shell) */

/* Reads the records DIR/stage/<node>.json (DIR an attempt directory) into s and finishes
 * it.  Each record is opened as fileio_open_regular(FILEIO_NOFOLLOW)
 * does: a link, a FIFO or a directory named so is skipped and
 * counted, as are one another user owns or others may write (FILEIO_OWNED)
 * and one larger than STAGE_SUMMARY_RECORD_MAX.  No stage/
 * directory is no records (s->n 0), not an error. */
void stage_summary_load(const char *dir, struct stage_summary *s);

#endif
