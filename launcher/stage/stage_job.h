/* stage_job.h - what one staging step does on a node: the entries to
 * stage (from a job's data.stage, or --entry on the command line), the
 * node's cache, and what happened to each entry, for RUN/stage/<node>.json.
 * Pure core (stage_job.c): no file, no MPI. */
#ifndef HPT_STAGE_JOB_H
#define HPT_STAGE_JOB_H

#include "launcher/stage/stage_manifest.h" // defines: STAGE_HASH_SIZE

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* One data set.  manifest: "sha256:<hex>" pinned at submit (a step
 * refuses a source whose manifest hash has moved since), or NULL. */
struct stage_entry {
	char *name;
	char *src;
	char *manifest;
	bool is_file;
	bool tree;           /* the code snapshot's entry (spec_code_is_stage_entry):
	                      * scanned and copied with its executables and links
	                      * (STAGE_SCAN_TREE); a data entry refuses links */

	/* what the step did, for the record */
	char hash[STAGE_HASH_SIZE];
	char *path;          /* what HPCTRAIN_DATA_<NAME> names on this node */
	bool hit;            /* the node had it before this step */
	uint64_t bytes;      /* the data set's size */
	double seconds;      /* spent on it by this node */
	int refetched;       /* fetched again: damaged in the cache, or a copy that failed */
};

struct stage_job {
	struct stage_entry *v;
	size_t n;
	char *cache;         /* this node's cache directory */
	uint64_t max_bytes;  /* evict least recently used entries above it; 0: no limit */
	bool verify;         /* hash every cached file, not only those whose mtime moved */
	int damage;          /* tests: damage this node's next N copies as they are written */

	/* this node's totals, for the record */
	double seconds;
	uint64_t bytes_read;     /* source bytes read (scan and transfer) */
	uint64_t bytes_sent;
	uint64_t bytes_received;
	uint64_t proc_rchar;     /* the kernel's count of what this process read (rchar of
	                          * /proc/self/io: files and sockets, MPI's included), a
	                          * check owing nothing to the counts above; 0: unknown */
	bool node_failed;        /* a copy failed verification twice here: this node's
	                          * disk or memory, not the source (the ledger's business) */
};

/* Adds an entry (strings copied; manifest may be NULL). */
void stage_job_add(struct stage_job *j, const char *name, const char *src, const char *manifest,
		   bool is_file);

/* Parses "NAME=SRC" or "NAME=SRC@sha256:<64 hex>" (a pinned manifest)
 * into j: NAME is [a-z0-9_-]+ and unique, SRC an absolute path.
 * 0, or -1 with err. */
int stage_job_parse_entry(struct stage_job *j, const char *arg, struct sbuf *err);

struct job;
/* The entries of job->data.stage (name, src, the pinned manifest; tree
 * for the code snapshot's) into
 * out, with out->cache (stage_cache_dir of data.cache.dir, data.to,
 * preflight.scratch, tmpdir and uid) and out->max_bytes
 * (data.cache.max_gb).  0, or an HPT_EXIT_* status with err. */
int stage_job_from_spec(const struct job *job, const char *tmpdir, unsigned uid,
			struct stage_job *out, struct sbuf *err);

/* Frees entries and cache; accepts a zeroed struct. */
void stage_job_release(struct stage_job *j);

/* The node's record (RUN/stage/<node>.json): {"node", "seconds",
 * "bytes_read", "bytes_sent", "bytes_received", "proc_rchar", "cache", "entries": [{"name",
 * "manifest", "path", "hit", "bytes", "seconds", "refetched"}]}.  NULL
 * when a string is not UTF-8 (the node's name or the cache path: the
 * rest is checked before) or memory runs out. */
json_t *stage_job_record(const struct stage_job *j, const char *node);

#endif
