/* shape_batch.h - which batch a user's program holds when its shape
 * changes, read from what its past runs logged: a global batch it
 * splits among its ranks (gradient accumulation, as
 * templates/torch-ddp.py does), so one rank's work shrinks as ranks
 * grow; or a batch per rank, so the global batch grows with them (the
 * bundled trainer's train.batch_per_rank).  The model (shape_model.h)
 * differs between the two, and hpctrain plan says which it took and
 * from what.
 * Core: points in (shape_model.h), an answer and its words out.
 *
 * The evidence, strongest first:
 *   - global_batch in the step records (hpctrain-program(7), METRICS):
 *     the same at every world size, the program holds it; different,
 *     its batch is per rank.  Logged at one world size only, it is
 *     taken as held (a program that logs its global batch has it as a
 *     setting, as the template does), and the words say assumed.
 *   - else the samples of a step over all ranks, samples_per_s (one
 *     rank's) x step time x world size, at two world sizes or more:
 *     within 10% of each other, held; else per rank.  Rates are noisy,
 *     hence the margin; a logged global_batch needs none.
 *   - else per rank: the model that holds for the bundled trainer.
 */
#ifndef HPT_SHAPE_BATCH_H
#define HPT_SHAPE_BATCH_H

#include "launcher/shape/shape_model.h" // defines: struct shape_point

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

enum shape_batch_source {
	SHAPE_BATCH_NONE,  /* nothing logged: per rank by default */
	SHAPE_BATCH_FIELD, /* global_batch in the step records */
	SHAPE_BATCH_RATE,  /* samples_per_s x step_ms x world size */
};

struct shape_batch {
	bool global;                   /* holds a global batch (else per rank) */
	enum shape_batch_source source;
	double global_batch;           /* when global: the samples a step holds */
	unsigned world_sizes;          /* distinct world sizes the evidence spans */
	unsigned lo, hi;               /* the smallest and largest of them */
	double at_lo, at_hi;           /* the global batch logged (or derived) at each */
};

/* What p[0..n) say (see above).  Points with no shape are ignored. */
void shape_batch_infer(const struct shape_point *p, size_t n, struct shape_batch *out);

/* Appends the answer and its evidence in words: "holds a global batch
 * of 64 (global_batch in metrics.jsonl, the same at world sizes 1 and
 * 4)", or "takes its batch per rank (...)". */
void shape_batch_describe(const struct shape_batch *b, struct sbuf *out);

#endif
