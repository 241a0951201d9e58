/* ckpt.c - checkpoint encoding (core) and files (shell).
 *
 *   offset  size  field
 *        0     8  "HPTCKPT1"
 *        8     4  version (3; 1 and 2 are read too)
 *       12    64  spec hash, lowercase hex
 *       76     8  step
 *       84     8  optimizer updates (Adam's t)
 *       92     8  epoch loss sum (IEEE double)
 *      100    16  epoch correct, epoch samples
 *      116    24  nparams, nstate, optimizer state vectors
 *      140     8  loss scale (IEEE double)             from version 2
 *      148     8  clean steps since the last change    from version 2
 *      156    56  global batch, ranks, per-rank batch,  from version 3
 *                  accumulation steps, global samples,
 *                  epoch, samples into the epoch
 *  140/156/212  -  params, state, optimizer vectors (floats), then CRC-32
 *
 * The parameter and optimizer vectors hold the model's tensors back to
 * back in arena order (m->spans), without the arena's alignment gaps:
 * the same bytes as before the arena was aligned, so older files load.
 */
#include "trainer/model/ckpt.h"  // defines: ckpt_*
#include "trainer/model/model.h" // defines: struct model
#include "trainer/model/optim.h" // defines: struct optim
#include "trainer/data/le_bytes.h"  // defines: le_put_*, le_get_*
#include "common/exitcode.h"  // defines: HPT_EXIT_*
#include "common/fileio.h"    // defines: fileio_read_flags, fileio_write_atomic, FILEIO_*
#include "common/sbuf.h"      // defines: struct sbuf

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define CKPT_MAGIC "HPTCKPT1"
#define CKPT_HEAD_V1 140
#define CKPT_HEAD_V2 156
#define CKPT_HEAD 212
#define CKPT_VERSION 3
#define CKPT_MAX_BYTES ((size_t)1 << 36)

/* The tensors of an arena-shaped vector (parameters, optimizer state). */
static void pack_tensors(struct sbuf *out, const struct model *m, const float *v)
{
	for (size_t i = 0; i < m->nspans; i++)
		le_put_floats(out, v + m->spans[i].off, m->spans[i].n);
}

/* Returns the bytes read. */
static size_t unpack_tensors(const uint8_t *p, const struct model *m, float *v)
{
	size_t at = 0;

	for (size_t i = 0; i < m->nspans; i++) {
		le_get_floats(p + at, v + m->spans[i].off, m->spans[i].n);
		at += 4 * m->spans[i].n;
	}
	return at;
}

void ckpt_encode(const char *hash, const struct ckpt_state *st, const struct model *m,
		 const struct optim *o, struct sbuf *out)
{
	int nv = optim_state_vectors(o);
	char h[64] = { 0 };

	memcpy(h, hash, strnlen(hash, 64));
	sbuf_add(out, CKPT_MAGIC, 8);
	le_put_u32(out, CKPT_VERSION);
	sbuf_add(out, h, 64);
	le_put_u64(out, (uint64_t)st->step);
	le_put_u64(out, (uint64_t)o->t);
	le_put_f64(out, st->epoch_loss);
	le_put_u64(out, (uint64_t)st->epoch_correct);
	le_put_u64(out, (uint64_t)st->epoch_seen);
	le_put_u64(out, m->nparams);
	le_put_u64(out, m->nstate);
	le_put_u64(out, (uint64_t)nv);
	le_put_f64(out, st->scaler.scale > 0 ? st->scaler.scale : 1.0); /* zeroed: no scaler */
	le_put_u64(out, (uint64_t)st->scaler.good_steps);
	le_put_u64(out, (uint64_t)st->global_batch);
	le_put_u64(out, (uint64_t)st->world);
	le_put_u64(out, (uint64_t)st->batch);
	le_put_u64(out, (uint64_t)st->accum);
	le_put_u64(out, (uint64_t)st->samples);
	le_put_u64(out, (uint64_t)st->epoch);
	le_put_u64(out, (uint64_t)st->epoch_pos);
	pack_tensors(out, m, m->params);
	le_put_floats(out, m->state, m->nstate);
	pack_tensors(out, m, o->m);
	if (nv == 2)
		pack_tensors(out, m, o->v);
	le_put_u32(out, (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)out->buf, (uInt)out->len));
}

static size_t head_of(uint32_t version)
{
	return version == 1 ? CKPT_HEAD_V1 : version == 2 ? CKPT_HEAD_V2 : CKPT_HEAD;
}

/* Magic, CRC, version, length of the header and spec hash: the version,
 * or 0 with err. */
static uint32_t check_head(const uint8_t *p, size_t len, const char *where, const char *hash,
			   struct sbuf *err)
{
	uint32_t version;

	if (len < CKPT_HEAD_V1 + 4 || memcmp(p, CKPT_MAGIC, 8)) {
		sbuf_addf(err, "%s: not an hpctrain checkpoint", where);
		return 0;
	}
	if (le_get_u32(p + len - 4) !=
	    (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)p, (uInt)(len - 4))) {
		sbuf_addf(err, "%s: corrupt checkpoint (CRC-32 mismatch)", where);
		return 0;
	}
	version = le_get_u32(p + 8);
	if (version < 1 || version > CKPT_VERSION) {
		sbuf_addf(err, "%s: checkpoint version %u is not supported", where, version);
		return 0;
	}
	if (len < head_of(version) + 4) {
		sbuf_addf(err, "%s: %zu bytes, too short for a version %u checkpoint", where, len,
			  version);
		return 0;
	}
	if (hash && strncmp((const char *)p + 12, hash, 64)) {
		sbuf_addf(err, "%s: written for another spec (sha256:%.12s...), not this one (sha256:%.12s...)",
			  where, (const char *)p + 12, hash);
		return 0;
	}
	return version;
}

/* The version 3 position; a sign bit set in any is a corrupt file. */
static int get_position(const uint8_t *p, const char *where, struct ckpt_state *st,
			struct sbuf *err)
{
	int64_t v[7];

	for (int i = 0; i < 7; i++)
		if ((v[i] = (int64_t)le_get_u64(p + CKPT_HEAD_V2 + 8 * i)) < 0 || v[i] > (INT64_C(1) << 50)) {
			sbuf_addf(err, "%s: invalid data position", where);
			return -1;
		}
	if (v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[0] != v[1] * v[2] * v[3]) {
		sbuf_addf(err, "%s: global batch %lld is not %lld ranks x %lld x %lld steps", where,
			  (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3]);
		return -1;
	}
	st->global_batch = v[0];
	st->world = v[1];
	st->batch = v[2];
	st->accum = v[3];
	st->samples = v[4];
	st->epoch = v[5];
	st->epoch_pos = v[6];
	return 0;
}

int ckpt_decode(const void *buf, size_t len, const char *where, const char *hash,
		struct ckpt_state *st, struct model *m, struct optim *o, struct sbuf *err)
{
	const uint8_t *p = buf;
	uint64_t np, ns, nv;
	size_t want, head;
	uint32_t version = check_head(p, len, where, hash, err);

	if (!version)
		return -1;
	head = head_of(version);
	np = le_get_u64(p + 116);
	ns = le_get_u64(p + 124);
	nv = le_get_u64(p + 132);
	if (np != m->nparams || ns != m->nstate || nv != (uint64_t)optim_state_vectors(o)) {
		sbuf_addf(err, "%s: holds %llu parameters and %llu optimizer vectors, the model has %zu and %d",
			  where, (unsigned long long)np, (unsigned long long)nv, m->nparams,
			  optim_state_vectors(o));
		return -1;
	}
	want = head + 4 * (np + ns + nv * np) + 4;
	if (len != want) {
		sbuf_addf(err, "%s: %zu bytes, expected %zu", where, len, want);
		return -1;
	}
	st->step = (int64_t)le_get_u64(p + 76);
	o->t = (int64_t)le_get_u64(p + 84);
	st->epoch_loss = le_get_f64(p + 92);
	st->epoch_correct = (int64_t)le_get_u64(p + 100);
	st->epoch_seen = (int64_t)le_get_u64(p + 108);
	if (version >= 2) {
		double scale = le_get_f64(p + 140);

		/* A scale that is not a positive finite number would poison
		 * every gradient: refuse it like a size mismatch. */
		if (!(scale > 0 && scale < 1e300)) {
			sbuf_addf(err, "%s: invalid loss scale %g", where, scale);
			return -1;
		}
		st->scaler.scale = scale;
		st->scaler.good_steps = (int64_t)le_get_u64(p + 148);
	}
	st->global_batch = st->world = st->batch = st->accum = 0;
	if (version >= 3 && get_position(p, where, st, err))
		return -1;
	p += head;
	p += unpack_tensors(p, m, m->params);
	le_get_floats(p, m->state, ns);
	p += 4 * ns;
	p += unpack_tensors(p, m, o->m);
	if (nv == 2)
		unpack_tensors(p, m, o->v);
	return 0;
}

/* Sorted newest last: names carry the step zero-padded. */
static int list_ckpts(const char *dir, glob_t *g)
{
	char *pattern = xasprintf("%s/ckpt-*.bin", dir);
	int rc = glob(pattern, 0, NULL, g);

	free(pattern);
	return rc;
}

int ckpt_save(const char *dir, const char *hash, const struct ckpt_state *st,
	      const struct model *m, const struct optim *o, int keep, struct sbuf *err)
{
	struct sbuf out = SBUF_INIT;
	char *path = xasprintf("%s/ckpt-%012lld.bin", dir, (long long)st->step);
	glob_t g;
	int rc;

	ckpt_encode(hash, st, m, o, &out);
	rc = fileio_write_atomic(path, out.buf, out.len, 0600, 0, err);
	sbuf_release(&out);
	free(path);
	if (rc)
		return HPT_EXIT_IO;
	if (!list_ckpts(dir, &g)) {
		for (size_t i = 0; i + keep < g.gl_pathc; i++)
			if (unlink(g.gl_pathv[i]) && errno != ENOENT) {
				sbuf_addf(err, "cannot remove old checkpoint %s: %s", g.gl_pathv[i],
					  strerror(errno));
				globfree(&g);
				return HPT_EXIT_IO;
			}
		globfree(&g);
	}
	return 0;
}

int ckpt_latest(const char *dir, struct sbuf *path)
{
	glob_t g;

	if (list_ckpts(dir, &g))
		return 1;
	if (!g.gl_pathc) {
		globfree(&g);
		return 1;
	}
	sbuf_reset(path);
	sbuf_addstr(path, g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
	return 0;
}

int ckpt_load(const char *path, const char *hash, struct ckpt_state *st, struct model *m,
	      struct optim *o, struct sbuf *err)
{
	struct sbuf buf = SBUF_INIT;
	int rc = HPT_EXIT_NO_INPUT;

	/* Only a regular file of this user that no one else may write: a
	 * checkpoint decides every parameter of the rest of the run. */
	if (!fileio_read_flags(path, CKPT_MAX_BYTES, FILEIO_NOFOLLOW | FILEIO_OWNED, &buf, err) &&
	    !ckpt_decode(buf.buf, buf.len, path, hash, st, m, o, err))
		rc = 0;
	sbuf_release(&buf);
	return rc;
}

int ckpt_peek(const char *path, const char *hash, struct ckpt_meta *meta, struct sbuf *err)
{
	struct sbuf buf = SBUF_INIT;
	struct ckpt_state st = { 0 };
	const uint8_t *p;
	int rc = HPT_EXIT_NO_INPUT;

	/* the whole file for its CRC: once per run, before the model */
	if (fileio_read_flags(path, CKPT_MAX_BYTES, FILEIO_NOFOLLOW | FILEIO_OWNED, &buf, err))
		goto out;
	p = (const uint8_t *)buf.buf;
	memset(meta, 0, sizeof(*meta));
	if (!(meta->version = check_head(p, buf.len, path, hash, err)))
		goto out;
	if (meta->version >= 3 && get_position(p, path, &st, err))
		goto out;
	meta->step = (int64_t)le_get_u64(p + 76);
	meta->global_batch = st.global_batch;
	meta->world = st.world;
	meta->batch = st.batch;
	rc = 0;
out:
	sbuf_release(&buf);
	return rc;
}
