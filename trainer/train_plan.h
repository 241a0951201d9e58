/* train_plan.h - the batch shape a run trains with: the global batch it
 * holds, the per-rank batch and the gradient-accumulation steps.
 *
 * A fresh run's global batch is ranks x train.batch_per_rank.  A resumed
 * run holds its checkpoint's global batch at any number of ranks
 * (resume.h decides how), unless --new-global-batch asks for ranks x
 * batch_per_rank instead; a checkpoint from before version 3 records
 * none and takes ranks x batch_per_rank.  Shell: rank 0 picks the newest
 * checkpoint that verifies (ckpt_latest: by samples consumed, passing
 * over a damaged one with a warning on stderr), keeps its path for the
 * load, and the hooks share its header, so every rank sizes its model
 * from the same answer before building it.
 */
#ifndef HPT_TRAIN_PLAN_H
#define HPT_TRAIN_PLAN_H

#include "trainer/model/resume.h" // defines: struct resume_plan

#include <stdbool.h>
#include <stdint.h>

struct sbuf;
struct train_config;
struct train_hooks;

struct train_plan {
	struct resume_plan plan;
	bool resumed;                /* the run directory holds a checkpoint */
	int64_t ckpt_global, ckpt_world, ckpt_batch; /* its shape; 0 = unrecorded */
	char *ckpt_path; /* rank 0: the checkpoint chosen, NULL when none (train_plan_release) */
};

/* Fills tp for cfg on cfg->world ranks; collective when hooks->share is
 * set.  0, or an enum hpt_exit status: HPT_EXIT_BAD_SPEC when the
 * checkpoint's global batch does not split over this many ranks (err
 * names both batches and the rank counts that hold the old one, on rank
 * 0; the others' err stays empty). */
int train_plan_make(const struct train_config *cfg, const struct train_hooks *hooks,
		    struct train_plan *tp, struct sbuf *err);

/* Frees tp->ckpt_path; accepts a zeroed struct. */
void train_plan_release(struct train_plan *tp);

/* The one stderr line saying how a checkpoint of another shape resumes,
 * into out; nothing when the shape is the checkpoint's. */
void train_plan_describe(const struct train_plan *tp, int world, struct sbuf *out);

#endif
