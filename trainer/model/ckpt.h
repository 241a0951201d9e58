/* ckpt.h - checkpoints: model, optimizer, data position, written
 * atomically into RUN/checkpoints/, the last N kept.
 *
 * A checkpoint is everything that decides the rest of a run: parameters,
 * batch-norm statistics, optimizer state, the number of updates done and
 * the running sums of the epoch's metrics.  Shuffling and dropout are
 * pure functions of (seed, epoch, step), so the step number is the whole
 * data and RNG position; resuming at step k therefore reproduces an
 * uninterrupted run bit for bit (at the same thread count).
 *
 * File: "HPTCKPT1", then little-endian fields (see ckpt.c), the float
 * vectors, and a CRC-32 of all that precedes it.  Version 2 adds the
 * loss scaler (amp.h); version 1 files still load, leaving the scaler
 * as the caller initialised it.  Version 3 adds the data position at
 * the world size that wrote it: global batch, ranks, per-rank batch,
 * accumulation steps, global samples consumed, epoch and samples into
 * it, so a run on another number of ranks holds the global batch
 * (resume.h); in older files global_batch is 0 (unknown) and the
 * caller decides.  Checkpoints carry the
 * spec hash and refuse to load into another spec's run.  Which file is
 * the newest is what each records (samples, then step), not its name:
 * ckpt_pick.h.
 */
#ifndef HPT_CKPT_H
#define HPT_CKPT_H

#include "trainer/model/amp.h" // defines: struct amp_scaler

#include <stddef.h>
#include <stdint.h>

struct model;
struct optim;
struct sbuf;

struct ckpt_state {
	int64_t step;          /* updates done */
	double epoch_loss;     /* sums over the current epoch's steps so far */
	int64_t epoch_correct, epoch_seen;
	struct amp_scaler scaler; /* scale and good_steps are saved (version 2) */
	/* version 3; global_batch 0 = a file from before (unknown) */
	int64_t global_batch, world, batch, accum;
	int64_t samples;   /* global samples consumed, all epochs */
	int64_t epoch, epoch_pos; /* the epoch under way, its samples consumed */
};

/* What a checkpoint's header says, read without a model (ckpt_peek). */
struct ckpt_meta {
	uint32_t version;
	int64_t step;
	int64_t global_batch, world, batch; /* 0 before version 3 */
	int64_t samples;                    /* global samples consumed; 0 before version 3 */
};

/* Core: encodes into out / decodes from a buffer (decode checks the
 * CRC, the hash and every size; 0 or -1 with err). */
void ckpt_encode(const char *hash, const struct ckpt_state *st, const struct model *m,
		 const struct optim *o, struct sbuf *out);
int ckpt_decode(const void *buf, size_t len, const char *where, const char *hash,
		struct ckpt_state *st, struct model *m, struct optim *o, struct sbuf *err);

/* Shell: writes DIR/ckpt-<step>.bin (mode 0600) atomically (temporary
 * file, fsync, rename, fsync of DIR).  Then, among the files named as
 * ckpt_save names them (ckpt_pick.h; a user's ckpt-best.bin is never
 * touched): those of another global batch (a run resumed with
 * --new-global-batch) are moved into DIR/retired-gb<G>-<samples>/, never
 * to be picked or pruned again, and of this global batch's all but the
 * newest keep (by samples consumed, not by name) are removed.  0, or an
 * enum hpt_exit status with err filled. */
int ckpt_save(const char *dir, const char *hash, const struct ckpt_state *st,
	      const struct model *m, const struct optim *o, int keep, struct sbuf *err);
/* The newest checkpoint in DIR that verifies (ckpt_peek), by what the
 * files record (ckpt_pick.h), into path and meta (NULL: not wanted).
 * A damaged newer one (truncated, a flipped byte) is passed over with a
 * line "warning: ...; passed over for an older checkpoint" in warn; one
 * not to be trusted (a link, another user's) or another spec's stops the
 * search.  0 found, 1 none, or HPT_EXIT_NO_INPUT with err (the newest's
 * fault when none verifies). */
int ckpt_latest(const char *dir, const char *hash, struct sbuf *path, struct ckpt_meta *meta,
		struct sbuf *warn, struct sbuf *err);
/* Removes every checkpoint of the trainer's naming in DIR (--fresh);
 * other files and retired lineages stay.  0 or HPT_EXIT_IO with err. */
int ckpt_remove_all(const char *dir, struct sbuf *err);
/* Reads path and checks it as ckpt_load does (owner, CRC, version,
 * spec hash) without a model: the header only, so that every rank can
 * size its batches before building the model.  0 or a status. */
int ckpt_peek(const char *path, const char *hash, struct ckpt_meta *meta, struct sbuf *err);
/* Loads path; 0 or an enum hpt_exit status with err naming the file.
 * A link, a file that is not regular, one another user owns or one that
 * group or others may write is refused unread (HPT_EXIT_NO_INPUT). */
int ckpt_load(const char *path, const char *hash, struct ckpt_state *st, struct model *m,
	      struct optim *o, struct sbuf *err);

#endif
