/* data_shard.c - hpctrain's sharded binary format for user data.
 * Shell: reads and writes files.
 *
 * A data set is a directory of shards DIR/train-NNNNN.hpts and
 * DIR/test-NNNNN.hpts.  Each shard is one file:
 *
 *   offset  size  field (little-endian)
 *        0     8  magic "HPTSHRD1"
 *        8     4  format version (1)
 *       12     4  header size (64)
 *       16     8  n, samples in this shard
 *       24    12  h, w, c (uint32 each)
 *       36     4  label_dim: 1 = a class index per sample, L > 1 = L 0/1 flags
 *       40     4  classes (label_dim 1) or L
 *       44     4  CRC-32 (zlib) of the payload
 *       48    16  zero
 *       64     -  payload: n*h*w*c pixel bytes (NHWC), then n*label_dim label bytes
 *
 * A whole shard is read at once; the CRC catches truncation and bit rot,
 * so a corrupt file is named instead of training on garbage.
 */
#include "trainer/data/data.h"  // defines: struct dataset, data_load_shards, data_write_shards
#include "trainer/data/le_bytes.h"  // defines: le_put_*, le_get_*
#include "common/exitcode.h"  // defines: HPT_EXIT_NO_INPUT, HPT_EXIT_IO
#include "common/fileio.h"    // defines: fileio_read, fileio_write_atomic
#include "common/sbuf.h"      // defines: struct sbuf

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define SHARD_MAGIC "HPTSHRD1"
#define SHARD_HEADER 64
#define SHARD_MAX_BYTES (SIZE_MAX / 2)

struct shard_head {
	uint64_t n;
	uint32_t h, w, c, label_dim, classes, crc;
};

static uint32_t crc_of(const uint8_t *p, size_t len)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	while (len) {
		uInt chunk = len > (1u << 30) ? 1u << 30 : (uInt)len;

		crc = crc32(crc, p, chunk);
		p += chunk;
		len -= chunk;
	}
	return (uint32_t)crc;
}

/* Appends one shard file's samples to d (the first shard sets shapes). */
static int read_shard(struct dataset *d, const char *path, struct sbuf *err)
{
	struct sbuf buf = SBUF_INIT;
	const uint8_t *p;
	struct shard_head h;
	uint64_t per, npix, nlab;
	int st = HPT_EXIT_NO_INPUT;

	if (fileio_read(path, SHARD_MAX_BYTES, &buf, err))
		goto out;
	p = (const uint8_t *)buf.buf;
	if (buf.len < SHARD_HEADER || memcmp(p, SHARD_MAGIC, 8)) {
		sbuf_addf(err, "%s: not an hpctrain shard (bad magic)", path);
		goto out;
	}
	if (le_get_u32(p + 8) != 1 || le_get_u32(p + 12) != SHARD_HEADER) {
		sbuf_addf(err, "%s: shard format version %u is not supported", path,
			  le_get_u32(p + 8));
		goto out;
	}
	h.n = le_get_u64(p + 16);
	h.h = le_get_u32(p + 24);
	h.w = le_get_u32(p + 28);
	h.c = le_get_u32(p + 32);
	h.label_dim = le_get_u32(p + 36);
	h.classes = le_get_u32(p + 40);
	h.crc = le_get_u32(p + 44);
	if (!h.h || !h.w || !h.c || h.h > 65536 || h.w > 65536 || h.c > 4096 || !h.label_dim ||
	    h.label_dim > 4096 || h.classes < 1 || h.classes > 65536 || h.n > (1ull << 40)) {
		sbuf_addf(err, "%s: implausible shard header (%llu samples of %ux%ux%u)", path,
			  (unsigned long long)h.n, h.h, h.w, h.c);
		goto out;
	}
	per = (uint64_t)h.h * h.w * h.c;
	npix = h.n * per;
	nlab = h.n * h.label_dim;
	if (buf.len != SHARD_HEADER + npix + nlab) {
		sbuf_addf(err, "%s: %s: %zu bytes, the header announces %llu", path,
			  buf.len < SHARD_HEADER + npix + nlab ? "truncated" : "trailing bytes",
			  buf.len, (unsigned long long)(SHARD_HEADER + npix + nlab));
		goto out;
	}
	if (crc_of(p + SHARD_HEADER, npix + nlab) != h.crc) {
		sbuf_addf(err, "%s: corrupt: the payload's CRC-32 does not match the header", path);
		goto out;
	}
	if (d->n && (d->h != (int)h.h || d->w != (int)h.w || d->c != (int)h.c ||
		     d->label_dim != (int)h.label_dim)) {
		sbuf_addf(err, "%s: samples are %ux%ux%u with %u labels, earlier shards %dx%dx%d with %d",
			  path, h.h, h.w, h.c, h.label_dim, d->h, d->w, d->c, d->label_dim);
		goto out;
	}
	{
		uint8_t *px = realloc(d->pixels, (d->n + h.n) * per);
		uint8_t *lb = px ? realloc(d->labels, (d->n + h.n) * h.label_dim) : NULL;

		if (px)
			d->pixels = px; /* dataset_release() frees whichever grew */
		if (!px || !lb) {
			sbuf_addf(err, "out of memory reading %s", path);
			goto out;
		}
		d->labels = lb;
	}
	memcpy(d->pixels + d->n * per, p + SHARD_HEADER, npix);
	memcpy(d->labels + d->n * h.label_dim, p + SHARD_HEADER + npix, nlab);
	d->n += (int64_t)h.n;
	d->h = (int)h.h;
	d->w = (int)h.w;
	d->c = (int)h.c;
	d->label_dim = (int)h.label_dim;
	d->classes = d->classes > (int)h.classes ? d->classes : (int)h.classes;
	d->loss = h.label_dim > 1 ? LOSS_MULTI : LOSS_XENT;
	d->bytes_read += buf.len;
	st = 0;
out:
	sbuf_release(&buf);
	return st;
}

static int read_split(struct dataset *d, const char *dir, const char *split, struct sbuf *err)
{
	char *pattern = xasprintf("%s/%s-*.hpts", dir, split);
	glob_t g;
	int st = 0, rc = glob(pattern, 0, NULL, &g);

	memset(d, 0, sizeof(*d));
	if (rc == GLOB_NOMATCH || (!rc && !g.gl_pathc)) {
		sbuf_addf(err, "%s: no %s shards (%s-*.hpts) in the data directory", dir, split,
			  split);
		st = HPT_EXIT_NO_INPUT;
	} else if (rc) {
		sbuf_addf(err, "%s: cannot list the data directory", dir);
		st = HPT_EXIT_NO_INPUT;
	}
	for (size_t i = 0; !st && i < g.gl_pathc; i++)
		st = read_shard(d, g.gl_pathv[i], err);
	if (!rc)
		globfree(&g);
	free(pattern);
	return st;
}

int data_load_shards(struct dataset *train, struct dataset *test, const char *dir,
		     struct sbuf *err)
{
	int st = read_split(train, dir, "train", err);

	if (!st)
		st = read_split(test, dir, "test", err);
	if (!st && (train->h != test->h || train->w != test->w || train->c != test->c ||
		    train->label_dim != test->label_dim)) {
		sbuf_addf(err, "%s: test shards hold %dx%dx%d samples, training shards %dx%dx%d",
			  dir, test->h, test->w, test->c, train->h, train->w, train->c);
		st = HPT_EXIT_NO_INPUT;
	}
	if (st) {
		dataset_release(train);
		dataset_release(test);
		return st;
	}
	train->classes = test->classes = train->classes > test->classes ? train->classes
									: test->classes;
	dataset_normalise_from(train, train);
	test->mean = train->mean;
	test->std = train->std;
	return 0;
}

int data_write_shards(const struct dataset *d, const char *dir, const char *split, int nshards,
		      struct sbuf *err)
{
	size_t per = (size_t)d->h * d->w * d->c;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		sbuf_addf(err, "cannot create %s: %s", dir, strerror(errno));
		return HPT_EXIT_IO;
	}
	for (int s = 0; s < nshards; s++) {
		int64_t lo = d->n * s / nshards, hi = d->n * (s + 1) / nshards;
		size_t npix = (size_t)(hi - lo) * per, nlab = (size_t)(hi - lo) * d->label_dim;
		struct sbuf out = SBUF_INIT;
		char *path = xasprintf("%s/%s-%05d.hpts", dir, split, s);
		uint32_t crc;
		int rc;

		crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), d->pixels + lo * per, (uInt)npix);
		crc = (uint32_t)crc32(crc, d->labels + lo * d->label_dim, (uInt)nlab);
		sbuf_add(&out, SHARD_MAGIC, 8);
		le_put_u32(&out, 1);
		le_put_u32(&out, SHARD_HEADER);
		le_put_u64(&out, (uint64_t)(hi - lo));
		le_put_u32(&out, (uint32_t)d->h);
		le_put_u32(&out, (uint32_t)d->w);
		le_put_u32(&out, (uint32_t)d->c);
		le_put_u32(&out, (uint32_t)d->label_dim);
		le_put_u32(&out, (uint32_t)d->classes);
		le_put_u32(&out, crc);
		sbuf_add(&out, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
		sbuf_add(&out, d->pixels + lo * per, npix);
		sbuf_add(&out, d->labels + lo * d->label_dim, nlab);
		rc = fileio_write_atomic(path, out.buf, out.len, 0644, 0, err);
		sbuf_release(&out);
		free(path);
		if (rc)
			return HPT_EXIT_IO;
	}
	return 0;
}
