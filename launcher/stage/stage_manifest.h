/* stage_manifest.h - what a staged data set is: its regular files, each
 * with size and sha256 (and, for a tree staged as code, its executable
 * bit and its symbolic links), and one hash over them that names its
 * cache entry.
 * Pure core (stage_manifest.c): structs, JSON and hashing of bytes in
 * memory; the scan of a real tree is stage_scan.c's.
 *
 * Invariants of a sealed manifest (stage_manifest_seal, or one read back
 * by stage_manifest_from_json): v is sorted by path, bytewise, with no
 * duplicates; every path is relative, made of non-empty components that
 * are neither "." nor "..", or is "" for the one file of a file source
 * (is_file, then n == 1, a file); bytes is the sum of the sizes; hash is
 * "sha256:<64 hex>" of the canonical listing below.  A link's target is
 * non-empty UTF-8 of at most STAGE_LINK_MAX bytes; no path lies under a
 * link (a link never stands for a directory of the manifest), so a copy
 * that writes the paths in order never writes through a link it made.
 * So a manifest read from a peer or a cache names nothing outside the
 * directory it is copied into; a link may point anywhere (it is kept as
 * the text it is, never followed by the stage engine).
 *
 * The canonical listing of a manifest of plain files (no executable,
 * no link: every data set) is "hpctrain-stage-manifest 1\n", then per
 * file "<size in decimal> <sha256 hex> <path>\0"; for a file source the
 * one path is "".  One with an executable or a link (a code tree,
 * launcher/job/code_stage.h) is "hpctrain-stage-manifest 2\n", then per
 * entry "f <size> <sha256 hex> <path>\0" (0444), "x <size> <sha256 hex>
 * <path>\0" (executable, 0555) or "l <target>\0<path>\0" (a link): the
 * first form kept for plain files, so the hash of every data set
 * pinned before links and modes existed stands.  mtimes are not part of
 * it: touching a file without changing it keeps the entry (and the run's
 * identity), and a copy on a node, with its own mtimes, has the same
 * hash as its source. */
#ifndef HPT_STAGE_MANIFEST_H
#define HPT_STAGE_MANIFEST_H

#include "common/statkey.h" // defines: struct statkey

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

#define STAGE_HASH_SIZE 72            /* "sha256:" + 64 hex + NUL, padded */
#define STAGE_LINK_MAX 4095           /* a link target's bytes: PATH_MAX less its NUL */

struct stage_file {
	char *path;                   /* relative to the source; "" when the source is one file;
	                               * UTF-8 (sealing refuses other bytes: JSON carries none) */
	uint64_t size;                /* a link's: 0 */
	int64_t mtime_ns;             /* of the source file when hashed; a link's: 0 */
	unsigned char sha256[32];     /* a link's: zero */
	bool exec;                    /* copied 0555, not 0444 (a code tree's executable) */
	char *link;                   /* a symbolic link's target (copied as a link, never
	                               * followed); NULL for a file */
	struct statkey key;           /* the scan's: of the source file when hashed; not in the
	                               * JSON (stage_scan's cache keeps it), zero elsewhere */
};

struct stage_manifest {
	struct stage_file *v;         /* sorted by path (bytewise) */
	size_t n;
	uint64_t bytes;               /* sum of sizes */
	bool is_file;                 /* the source is one regular file */
	char hash[STAGE_HASH_SIZE];   /* "sha256:<hex>" of the canonical listing (paths, sizes,
	                               * file hashes; not mtimes): names the cache entry */
};

/* Frees the files and zeroes m; accepts a zeroed struct. */
void stage_manifest_release(struct stage_manifest *m);

/* Appends a file (path copied) to an unsealed manifest; not executable
 * (set the new last entry's exec for one that is). */
void stage_manifest_add(struct stage_manifest *m, const char *path, uint64_t size,
			int64_t mtime_ns, const unsigned char sha256[32]);

/* Appends a symbolic link (path and target copied) to an unsealed
 * manifest. */
void stage_manifest_add_link(struct stage_manifest *m, const char *path, const char *target);

/* Sorts, checks the invariants above (and that every path and link
 * target is UTF-8), sums bytes and computes hash.  0, or -1 with err
 * naming the offending path, its bytes that are not UTF-8 shown as \xHH. */
int stage_manifest_seal(struct stage_manifest *m, struct sbuf *err);

/* The index of path in a sealed manifest, or -1 (binary search). */
long stage_manifest_find(const struct stage_manifest *m, const char *path);

/* Names the files that differ between two sealed manifests of one
 * source, was and now, in path order: "PREFIX/PATH (changed)" (another
 * size, sha256, executable bit or link target, or a file become a link),
 * "(new)" (only in now) or "(gone)" (only in was);
 * PREFIX alone for a file source's one file.  At most max names, then
 * "and N more", appended to out separated by ", ".  Returns how many
 * files differ (0: out untouched).  O(files of both): one merge. */
size_t stage_manifest_diff(const struct stage_manifest *was, const struct stage_manifest *now,
			   const char *prefix, size_t max, struct sbuf *out);

/* {"bytes","files":[{"mtime_ns","path","sha256","size"[,"exec":true]} | {"link","path"}],
 *  "hash","is_file","version"} ("exec" only when true: a data set's JSON is as it was):
 * a new reference; dump it with JSON_SORT_KEYS | JSON_COMPACT for the
 * canonical text (what rank 0 broadcasts and the cache keeps).  NULL
 * when jansson refuses a string (a path that is not UTF-8, which only an
 * unsealed manifest holds) or memory runs out: callers check. */
json_t *stage_manifest_to_json(const struct stage_manifest *m);

/* Reads j into m (released first), checking every field, the invariants
 * above, and that "hash" is the hash of the listing: a manifest from a
 * file or a peer is trusted only as far as it checks.  0, or -1 with err. */
int stage_manifest_from_json(const json_t *j, struct stage_manifest *m, struct sbuf *err);

/* The 64 lower-case hex digits of hash ("sha256:<hex>"), or NULL when
 * hash is not of that form. */
const char *stage_manifest_hex(const char *hash);

/* Writes 64 hex digits and a NUL to out. */
void stage_manifest_hex_of(const unsigned char sha256[32], char out[65]);

/* 0 when hex is 64 hex digits, giving the 32 bytes; else -1. */
int stage_manifest_parse_hex(const char *hex, unsigned char out[32]);

/* Whether p is a relative path of non-empty components, none "." or
 * "..", without a trailing slash: one that names nothing outside the
 * directory it is read or copied under. */
bool stage_manifest_path_is_safe(const char *p);

#endif
