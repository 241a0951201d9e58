/* sweep_record.h - OUTPUT/<name>/sweep-<hash12>.json: one sweep's record.
 *
 * Shell.  The record lists the sweep's axes, its points (each with its
 * values, its run directory relative to the record's own directory and
 * its array task) and the array jobs that ran them, newest last:
 *
 *   {"sweep": "sweep-0a1b2c3d4e5f", "sha256": "...", "name": "fmnist",
 *    "mode": "grid", "max_parallel": 2,
 *    "axes": [{"key": "train.optimizer.lr", "values": [0.01, 0.05]}, ...],
 *    "points": [{"index": 0, "params": {"train.optimizer.lr": 0.01, ...},
 *                "run": "0a1b2c3d4e5f", "dir": "0a1b2c3d4e5f", "sha256": "...",
 *                "array": 0, "task": 0}, ...],
 *    "arrays": [{"job_id": 1234, "spec": "0-5%2", "points": [0, 1, ...],
 *                "dir": "sweep-0a1b2c3d4e5f.arrays/1", "submitted_at": "..."}]}
 *
 * The sweep's hash is that of its points' hashes in order, so the same
 * sweep lands on the same record; submitting it again makes new attempts
 * of its runs and appends their arrays.
 */
#ifndef HPT_SWEEP_RECORD_H
#define HPT_SWEEP_RECORD_H

#include <jansson.h>

struct sbuf;

/* Loads and checks a record (points, each with a run).  0, or -1 with err. */
int sweep_record_load(const char *path, json_t **doc, struct sbuf *err);
/* Replaces the record atomically.  0, or -1 with err. */
int sweep_record_save(const char *path, const json_t *doc, struct sbuf *err);
/* Point's run directory (absolute when path is); free it. */
char *sweep_record_run(const char *path, const json_t *point);
/* Whether a file name is a sweep record's: sweep-<12 hex>.json. */
int sweep_record_is_name(const char *name);

#endif
