/* data_idx.c - read IDX files (the MNIST/Fashion-MNIST format), gzipped
 * or plain, with zlib.  Shell: file I/O; every error names the file.
 *
 * IDX: a big-endian header (magic 0x0000 08 D: unsigned bytes, D
 * dimensions; then D 32-bit sizes) and the bytes.  Images are (n, rows,
 * cols) and become n x rows x cols x 1; labels are (n) class indices or
 * (n, L) 0/1 flags (multi-label).
 */
#include "trainer/data/data.h"   // defines: struct dataset, data_load_idx
#include "common/exitcode.h"   // defines: HPT_EXIT_NO_INPUT
#include "common/fileio.h"     // defines: fileio_open_regular
#include "common/sbuf.h"       // defines: struct sbuf

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_MAX_BYTES (UINT64_C(1) << 34) /* 16 GiB: refuse absurd headers */

/* Reads exactly len bytes or fails naming what was expected. */
static int read_exact(gzFile f, const char *path, void *buf, uint64_t len, const char *what,
		      struct sbuf *err)
{
	uint8_t *p = buf;

	while (len) {
		unsigned chunk = len > (1u << 30) ? 1u << 30 : (unsigned)len;
		int n = gzread(f, p, chunk);

		if (n < 0) {
			int zerr;
			const char *msg = gzerror(f, &zerr);

			sbuf_addf(err, "%s: corrupt or unreadable (%s) while reading %s", path,
				  zerr == Z_ERRNO ? strerror(errno) : msg, what);
			return -1;
		}
		if (n == 0) {
			sbuf_addf(err, "%s: truncated: the file ends inside the %s", path, what);
			return -1;
		}
		p += n;
		len -= (unsigned)n;
	}
	return 0;
}

/* Opens path and reads its header; dims[] gets the sizes, *bytes grows
 * by the file's size (what reading it all costs). */
static int idx_open(const char *path, gzFile *out, int want_min, int want_max, uint32_t *dims,
		    int *ndims, uint64_t *bytes, struct sbuf *err)
{
	uint8_t h[4], b[4];
	/* A regular file or nothing: gzopen would block on a FIFO. */
	int fd = fileio_open_regular(path, 0, err);
	gzFile f = fd < 0 ? NULL : gzdopen(fd, "rb");
	struct stat st;

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st))
		*bytes += (uint64_t)st.st_size;
	if (!f) {
		sbuf_addf(err, "cannot open %s: out of memory", path);
		close(fd);
		return -1;
	}
	if (read_exact(f, path, h, 4, "IDX header", err))
		goto fail;
	if (h[0] || h[1] || h[2] != 0x08 || h[3] < want_min || h[3] > want_max) {
		sbuf_addf(err,
			  "%s: not an IDX file of unsigned bytes with %d..%d dimensions "
			  "(magic %02x%02x%02x%02x)",
			  path, want_min, want_max, h[0], h[1], h[2], h[3]);
		goto fail;
	}
	*ndims = h[3];
	for (int i = 0; i < *ndims; i++) {
		if (read_exact(f, path, b, 4, "IDX header", err))
			goto fail;
		dims[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
		if (!dims[i]) {
			sbuf_addf(err, "%s: dimension %d of the IDX header is zero", path, i + 1);
			goto fail;
		}
	}
	*out = f;
	return 0;
fail:
	gzclose(f);
	return -1;
}

int data_load_idx(struct dataset *d, const char *images, const char *labels, struct sbuf *err)
{
	uint32_t di[3], dl[2];
	int ni, nl;
	gzFile fi = NULL, fl = NULL;
	uint64_t npix, nlab;
	uint8_t extra;

	memset(d, 0, sizeof(*d));
	if (idx_open(images, &fi, 3, 3, di, &ni, &d->bytes_read, err))
		goto fail;
	if (idx_open(labels, &fl, 1, 2, dl, &nl, &d->bytes_read, err))
		goto fail;
	if (di[0] != dl[0]) {
		sbuf_addf(err, "%s has %u labels for the %u images of %s", labels, dl[0], di[0],
			  images);
		goto fail;
	}
	npix = (uint64_t)di[0] * di[1] * di[2];
	nlab = (uint64_t)dl[0] * (nl == 2 ? dl[1] : 1);
	if (npix > IDX_MAX_BYTES || di[1] > 65536 || di[2] > 65536 || (nl == 2 && dl[1] > 4096)) {
		sbuf_addf(err, "%s: implausible IDX sizes %ux%ux%u", images, di[0], di[1], di[2]);
		goto fail;
	}
	d->n = di[0];
	d->h = (int)di[1];
	d->w = (int)di[2];
	d->c = 1;
	d->label_dim = nl == 2 ? (int)dl[1] : 1;
	d->pixels = malloc(npix);
	d->labels = malloc(nlab);
	if (!d->pixels || !d->labels) {
		sbuf_addf(err, "out of memory reading %s", images);
		goto fail;
	}
	if (read_exact(fi, images, d->pixels, npix, "pixels", err) ||
	    read_exact(fl, labels, d->labels, nlab, "labels", err))
		goto fail;
	if (gzread(fi, &extra, 1) != 0 || gzread(fl, &extra, 1) != 0) {
		sbuf_addf(err, "%s or %s: trailing bytes after the data the header announces",
			  images, labels);
		goto fail;
	}
	if (d->label_dim == 1) {
		int most = 0;

		for (int64_t i = 0; i < d->n; i++)
			most = d->labels[i] > most ? d->labels[i] : most;
		d->classes = most + 1 < 2 ? 2 : most + 1;
		d->loss = LOSS_XENT;
	} else {
		d->classes = d->label_dim;
		d->loss = LOSS_MULTI;
	}
	gzclose(fi);
	gzclose(fl);
	return 0;
fail:
	if (fi)
		gzclose(fi);
	if (fl)
		gzclose(fl);
	dataset_release(d);
	return HPT_EXIT_NO_INPUT;
}

bool data_idx_pair_present(const char *dir)
{
	char *ti = xasprintf("%s/train-images-idx3-ubyte.gz", dir);
	bool there = access(ti, R_OK) == 0;

	free(ti);
	return there;
}

int data_load_idx_pair(struct dataset *train, struct dataset *test, const char *dir,
		       struct sbuf *err)
{
	char *ti = xasprintf("%s/train-images-idx3-ubyte.gz", dir);
	char *tl = xasprintf("%s/train-labels-idx1-ubyte.gz", dir);
	char *vi = xasprintf("%s/t10k-images-idx3-ubyte.gz", dir);
	char *vl = xasprintf("%s/t10k-labels-idx1-ubyte.gz", dir);
	int st = data_load_idx(train, ti, tl, err);

	if (!st)
		st = data_load_idx(test, vi, vl, err);
	if (!st && (train->h != test->h || train->w != test->w ||
		    train->label_dim != test->label_dim)) {
		sbuf_addf(err, "%s: test images are %dx%d, training images %dx%d", vi, test->h,
			  test->w, train->h, train->w);
		st = HPT_EXIT_NO_INPUT;
	}
	if (!st) {
		if (test->classes > train->classes)
			train->classes = test->classes;
		test->classes = train->classes;
		dataset_normalise_from(train, train);
		test->mean = train->mean;
		test->std = train->std;
	} else {
		dataset_release(train);
		dataset_release(test);
	}
	free(ti);
	free(tl);
	free(vi);
	free(vl);
	return st;
}
