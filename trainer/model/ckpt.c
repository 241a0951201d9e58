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
#include "trainer/model/ckpt_pick.h" // defines: struct ckpt_cand, ckpt_pick, ckpt_pick_prune
#include "trainer/model/model.h" // defines: struct model
#include "trainer/model/optim.h" // defines: struct optim
#include "trainer/data/le_bytes.h"  // defines: le_put_*, le_get_*
#include "common/exitcode.h"  // defines: HPT_EXIT_*
#include "common/fileio.h"    // defines: fileio_read_flags, fileio_write_atomic, FILEIO_*
#include "common/sbuf.h"      // defines: struct sbuf

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CKPT_MAGIC "HPTCKPT1"
#define CKPT_HEAD_V1 140
#define CKPT_HEAD_V2 156
#define CKPT_HEAD 212
#define CKPT_VERSION 3
#define CKPT_MAX_BYTES ((size_t)1 << 36)
/* peek's answer for a file whose bytes are wrong (ckpt_pick's 1) */
#define CKPT_DAMAGED 1

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

/* Magic, CRC, version and length of the header: the version, or 0 with
 * err. */
static uint32_t check_head(const uint8_t *p, size_t len, const char *where, struct sbuf *err)
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
	return version;
}

/* The spec hash: 0, or -1 with err.  Apart from check_head because a
 * checkpoint of another spec is not damaged: resuming must stop on it,
 * not pass it over for an older one (ckpt_latest). */
static int check_hash(const uint8_t *p, const char *where, const char *hash, struct sbuf *err)
{
	if (hash && strncmp((const char *)p + 12, hash, 64)) {
		sbuf_addf(err, "%s: written for another spec (sha256:%.12s...), not this one (sha256:%.12s...)",
			  where, (const char *)p + 12, hash);
		return -1;
	}
	return 0;
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
	uint32_t version = check_head(p, len, where, err);

	if (!version || check_hash(p, where, hash, err))
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

/* ckpt_peek's work: 0, CKPT_DAMAGED (the file read, its bytes wrong:
 * truncated, flipped, a header that does not parse) or HPT_EXIT_NO_INPUT
 * (not to be read, or another spec's), with err. */
static int peek(const char *path, const char *hash, struct ckpt_meta *meta, struct sbuf *err)
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
	rc = CKPT_DAMAGED;
	if (!(meta->version = check_head(p, buf.len, path, err)))
		goto out;
	if (meta->version >= 3 && get_position(p, path, &st, err))
		goto out;
	rc = HPT_EXIT_NO_INPUT;
	if (check_hash(p, path, hash, err))
		goto out;
	meta->step = (int64_t)le_get_u64(p + 76);
	meta->global_batch = st.global_batch;
	meta->world = st.world;
	meta->batch = st.batch;
	meta->samples = st.samples;
	rc = 0;
out:
	sbuf_release(&buf);
	return rc;
}

int ckpt_peek(const char *path, const char *hash, struct ckpt_meta *meta, struct sbuf *err)
{
	int rc = peek(path, hash, meta, err);

	return rc == CKPT_DAMAGED ? HPT_EXIT_NO_INPUT : rc;
}

/* The header fields a candidate is ordered by, read without the CRC
 * (that is the verifier's, on the few it reaches): magic, version, step
 * and the version 3 position.  A file too short or not ours in format
 * keeps c->head false.  One not to be read at all (a link, a FIFO,
 * another user's or one others may write: someone else's hand in the
 * run) is -1 with err, whatever its place in the order. */
static int read_cand_head(struct ckpt_cand *c, struct sbuf *err)
{
	uint8_t p[CKPT_HEAD];
	int fd = fileio_open_regular(c->path, FILEIO_NOFOLLOW | FILEIO_OWNED, err);
	ssize_t n = fd < 0 ? -1 : pread(fd, p, sizeof(p), 0);

	if (fd < 0)
		return -1;
	close(fd);
	if (n < CKPT_HEAD_V1 || memcmp(p, CKPT_MAGIC, 8))
		return 0;
	c->version = le_get_u32(p + 8);
	if (c->version < 1 || c->version > CKPT_VERSION || (size_t)n < head_of(c->version))
		return 0;
	c->head = true;
	c->step = (int64_t)le_get_u64(p + 76);
	if (c->version >= 3) {
		c->global_batch = (int64_t)le_get_u64(p + CKPT_HEAD_V2);
		c->samples = (int64_t)le_get_u64(p + CKPT_HEAD_V2 + 32);
	}
	return 0;
}

/* The checkpoints in dir, by the exact name ckpt_save writes, newest
 * first by what they record (ckpt_pick.h).  *n of them, or NULL when
 * there are none (or no dir); the first file refused by read_cand_head
 * is said in refused.  O(files) headers of 212 bytes read. */
static struct ckpt_cand *list_ckpts(const char *dir, size_t *n, struct sbuf *refused)
{
	DIR *d = opendir(dir);
	struct ckpt_cand *c = NULL;
	struct sbuf why = SBUF_INIT;
	size_t alloc = 0;
	struct dirent *e;

	*n = 0;
	while (d && (e = readdir(d))) {
		int64_t step;

		if (!ckpt_pick_is_name(e->d_name, &step))
			continue;
		if (*n == alloc)
			c = xrealloc(c, (alloc = alloc * 2 + 8) * sizeof(*c));
		c[*n] = (struct ckpt_cand){ .path = xasprintf("%s/%s", dir, e->d_name), .step = step };
		sbuf_reset(&why);
		if (read_cand_head(&c[(*n)++], &why) && !refused->len)
			sbuf_add(refused, why.buf, why.len);
	}
	if (d)
		closedir(d);
	sbuf_release(&why);
	ckpt_pick_sort(c, *n);
	return c;
}

/* Moves a file of another global batch's lineage into
 * dir/retired-gb<G>-<samples>/, samples being where the new lineage
 * took over: a directory per change, so no older retired file is
 * replaced, and none is ever listed, picked or pruned again. */
static int retire(const char *dir, const struct ckpt_cand *c, int64_t samples, struct sbuf *err)
{
	char *into = xasprintf("%s/retired-gb%lld-%lld", dir, (long long)c->global_batch,
			       (long long)samples);
	char *to = xasprintf("%s/%s", into, strrchr(c->path, '/') + 1);
	int rc = 0;

	if ((mkdir(into, 0700) && errno != EEXIST) || rename(c->path, to)) {
		sbuf_addf(err, "cannot retire old checkpoint %s into %s: %s", c->path, into,
			  strerror(errno));
		rc = HPT_EXIT_IO;
	}
	free(into);
	free(to);
	return rc;
}

/* After a save: the lineage of another global batch retired, this one's
 * pruned to the newest keep. */
static int prune(const char *dir, const struct ckpt_state *st, int keep, struct sbuf *err)
{
	struct sbuf ignored = SBUF_INIT; /* a refused file is pruned like any other */
	size_t n;
	struct ckpt_cand *c = list_ckpts(dir, &n, &ignored);
	enum ckpt_fate *fate = xcalloc(n ? n : 1, sizeof(*fate));
	int rc = 0;

	ckpt_pick_prune(c, n, st->global_batch, keep, fate);
	for (size_t i = 0; i < n && !rc; i++) {
		if (fate[i] == CKPT_RETIRE) {
			rc = retire(dir, &c[i], st->samples, err);
		} else if (fate[i] == CKPT_REMOVE && unlink(c[i].path) && errno != ENOENT) {
			sbuf_addf(err, "cannot remove old checkpoint %s: %s", c[i].path,
				  strerror(errno));
			rc = HPT_EXIT_IO;
		}
	}
	free(fate);
	ckpt_cands_release(c, n);
	sbuf_release(&ignored);
	return rc;
}

int ckpt_save(const char *dir, const char *hash, const struct ckpt_state *st,
	      const struct model *m, const struct optim *o, int keep, struct sbuf *err)
{
	struct sbuf out = SBUF_INIT;
	char *path = xasprintf("%s/ckpt-%012lld.bin", dir, (long long)st->step);
	int rc;

	ckpt_encode(hash, st, m, o, &out);
	rc = fileio_write_atomic(path, out.buf, out.len, 0600, 0, err);
	sbuf_release(&out);
	free(path);
	if (rc)
		return HPT_EXIT_IO;
	/* written first, then the old lineage moved: a crash in between
	 * leaves both, and the new file records more samples */
	return prune(dir, st, keep, err);
}

struct verify_ctx {
	const char *hash;
	struct ckpt_meta *meta;
};

static int verify_one(void *ctx, const struct ckpt_cand *c, struct sbuf *why)
{
	const struct verify_ctx *v = ctx;

	return peek(c->path, v->hash, v->meta, why);
}

int ckpt_latest(const char *dir, const char *hash, struct sbuf *path, struct ckpt_meta *meta,
		struct sbuf *warn, struct sbuf *err)
{
	struct sbuf refused = SBUF_INIT;
	size_t n, chosen = 0;
	struct ckpt_cand *c = list_ckpts(dir, &n, &refused);
	struct ckpt_meta ignored;
	struct verify_ctx v = { hash, meta ? meta : &ignored };
	int rc = HPT_EXIT_NO_INPUT;

	if (refused.len) /* not passed over: nothing is trained on its word */
		sbuf_add(err, refused.buf, refused.len);
	else
		rc = ckpt_pick(c, n, verify_one, &v, &chosen, warn, err);
	if (!rc) {
		sbuf_reset(path);
		sbuf_addstr(path, c[chosen].path);
	}
	ckpt_cands_release(c, n);
	sbuf_release(&refused);
	return rc;
}

int ckpt_remove_all(const char *dir, struct sbuf *err)
{
	struct sbuf ignored = SBUF_INIT; /* --fresh removes a refused one too */
	size_t n;
	struct ckpt_cand *c = list_ckpts(dir, &n, &ignored);
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		if (unlink(c[i].path) && errno != ENOENT) {
			sbuf_addf(err, "cannot remove %s: %s", c[i].path, strerror(errno));
			rc = HPT_EXIT_IO;
		}
	ckpt_cands_release(c, n);
	sbuf_release(&ignored);
	return rc;
}
