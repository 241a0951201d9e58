/* stage_sink.h - one node's copy of a data set, written as its bytes
 * arrive: the files of the manifest, in its order, concatenated (a code
 * tree's links made where they come, with no bytes).
 * Shell (stage_sink.c): a temporary directory in the cache, files,
 * sha256 of what was written, one sync at the end. */
#ifndef HPT_STAGE_SINK_H
#define HPT_STAGE_SINK_H

#include "common/sbuf.h"    // defines: struct sbuf
#include "common/statkey.h" // defines: struct statkey

#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stage_manifest;

/* tmp is "<cache>/.tmp-<hex>-XXXXXX" (0700) and stays until the sink is
 * published (stage_sink_take) or released (removed).  Once failed, a sink
 * drops what it is given and err says why; the chain goes on around it. */
struct stage_sink {
	const struct stage_manifest *m;
	char *tmp;
	char *file_name;     /* a file source's name in the entry */
	int dfd;             /* tmp, open */
	size_t fi;           /* the file being written */
	uint64_t off;        /* its bytes written so far */
	int fd;              /* its descriptor, or -1 */
	EVP_MD_CTX *ctx;
	struct statkey *keys; /* each file's statkey once written and made 0444 (0555
			       * executable), or each link's once made, in
			       * manifest order: what the reuse checks compare */
	uint64_t bytes;      /* bytes written */
	bool failed;
	bool io_error;       /* failed by a write, create or sync of this node's storage
			      * (ENOSPC, EIO, EDQUOT): not a copy to fetch again */
	bool damage;         /* tests: write the stream's first byte flipped */
	bool verified;       /* the bytes given are the ones a stage_source hashed
			      * and checks against the manifest as it reads them
			      * (the reader's own copy): not hashed again here,
			      * sizes still checked */
	struct sbuf err;
};

/* Starts a copy of m (which must outlive the sink) in a new temporary
 * directory of cache.  0, or -1 with err. */
int stage_sink_open(struct stage_sink *s, const char *cache, const struct stage_manifest *m,
		    const char *file_name, struct sbuf *err);

/* Writes the next n bytes of the stream.  0, or -1 once the sink failed
 * (more bytes than the manifest, a write error, a file whose sha256 does
 * not match); later calls then do nothing.  A failed create, write,
 * chmod or sync sets io_error: the node's storage refused (a full cache
 * is ENOSPC), which reading the source again cannot mend; a copy whose
 * bytes do not match is the one failure that suggests bad hardware. */
int stage_sink_write(struct stage_sink *s, const void *buf, size_t n);

/* After the last byte: every file complete and matching the manifest
 * (size and sha256), read-only (0444, or 0555 executable), every link
 * made with its target, synced to disk.  0, or -1 with s->err. */
int stage_sink_finish(struct stage_sink *s);

/* Forgets tmp after stage_cache_publish renamed it. */
void stage_sink_take(struct stage_sink *s);

/* Closes and frees, removing tmp unless taken; accepts a zeroed struct
 * (never opened) and a released one. */
void stage_sink_release(struct stage_sink *s);

#endif
