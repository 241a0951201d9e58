/* stage_source.h - the one read of a data set on the shared file system:
 * its files in manifest order as one byte stream, each checked against
 * the manifest as its last byte is read.
 * Shell (stage_source.c): open, read, fstat, sha256. */
#ifndef HPT_STAGE_SOURCE_H
#define HPT_STAGE_SOURCE_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct sbuf;
struct stage_manifest;

struct stage_source {
	const struct stage_manifest *m;
	char *root;          /* the source, without trailing slashes */
	size_t fi;           /* the file being read */
	uint64_t off;        /* its bytes read so far */
	int fd;              /* its descriptor, or -1 */
	struct stat st;      /* its fstat at open */
	EVP_MD_CTX *ctx;
	uint64_t bytes_read;
};

/* Starts reading src as m (which must outlive the source) describes it. */
void stage_source_open(struct stage_source *s, const char *src, const struct stage_manifest *m);

/* The next n bytes of the stream into buf (n no more than what is left).
 * Each file is fstat'ed when opened and after its last byte: its
 * statkey (device, inode, size, mtime, ctime) must not move, its size must be the manifest's and its sha256 the
 * manifest's.  0, or an HPT_EXIT_* status with err naming the file
 * (NO_INPUT: it cannot be opened; FAILURE: it changed while staged). */
int stage_source_read(struct stage_source *s, void *buf, size_t n, struct sbuf *err);

/* Closes and frees; accepts a zeroed struct. */
void stage_source_release(struct stage_source *s);

#endif
