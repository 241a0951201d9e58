/* code_list.h - a program's code as a listing: each regular file's
 * path, mode (the executable bit), size and sha256, each symbolic
 * link's target, and one digest over them that names the snapshot.
 * Pure core (code_list.c): structs, JSON and hashing of bytes in
 * memory; the scan of a real tree is code_scan.c's.
 *
 * Invariants of a sealed list: v is sorted by path, bytewise, with no
 * duplicates; every path is relative, UTF-8, made of non-empty
 * components that are neither "." nor ".."; a file's mode is 0644 or
 * 0755, a link's 0777; bytes is the sum of the files' sizes; digest is
 * "sha256:<64 hex>" of the canonical listing:
 *
 *   "hpctrain-code 1\n", then per entry
 *   "<mode in octal> <size> <sha256 hex> <path>\0"   a file
 *   "777 link <target> <path>\0"                     a link (target: its bytes)
 *
 * mtimes, owners and the snapshot's own modes (0600/0700) are not part
 * of it: touching a file keeps the digest, and so the run's hash. */
#ifndef HPT_CODE_LIST_H
#define HPT_CODE_LIST_H

#include "common/statkey.h" // defines: struct statkey

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

#define CODE_DIGEST_SIZE 72 /* "sha256:" + 64 hex + NUL, padded */
#define CODE_MODE_FILE 0644u
#define CODE_MODE_EXEC 0755u
#define CODE_MODE_LINK 0777u

struct code_entry {
	char *path;              /* relative to the code's directory */
	unsigned mode;           /* CODE_MODE_* */
	uint64_t size;           /* a file's bytes; a link's: 0 */
	unsigned char sha256[32];/* a file's; a link's: zero */
	char *link;              /* a link's target, as readlink(2) gave it; NULL for a file */
	struct statkey key;      /* the scan's, of the file when hashed; not in the listing */
};

struct code_list {
	struct code_entry *v;
	size_t n;
	uint64_t bytes;
	char digest[CODE_DIGEST_SIZE]; /* after code_list_seal */
};

/* Frees the entries and zeroes l; accepts a zeroed struct. */
void code_list_release(struct code_list *l);

/* Appends a regular file (mode: its st_mode; only the owner's
 * executable bit is kept) or a link to an unsealed list. */
void code_list_add_file(struct code_list *l, const char *path, unsigned mode, uint64_t size,
			const unsigned char sha256[32], const struct statkey *key);
void code_list_add_link(struct code_list *l, const char *path, const char *target);

/* Sorts, checks the invariants above, sums bytes, computes digest.  0,
 * or -1 with err naming the offending path (bytes that are not UTF-8
 * shown as \xHH). */
int code_list_seal(struct code_list *l, struct sbuf *err);

/* The index of path in a sealed list, or -1 (binary search). */
long code_list_find(const struct code_list *l, const char *path);

/* Whether a link's target, read from the link at path (relative to the
 * tree's top), names something outside the tree: absolute, or with
 * more ".." than the link has directories above it. */
bool code_list_link_escapes(const char *path, const char *target);

/* RUN/code.json, the record `hpctrain diff` reads:
 * {"digest", "dir", "snapshot", "files": [{"path","mode","size","sha256"} |
 *  {"path","mode","link"}], "file_count", "bytes", "git"}, files in the
 * list's order, file_count their number (links among them); git is stolen (NULL: null).  A new reference, or NULL
 * when jansson refuses a string or memory runs out. */
json_t *code_list_json(const struct code_list *l, const char *dir, const char *snapshot,
		       json_t *git);

#endif
