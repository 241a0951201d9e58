/* data.h - data sets and the sharded, shuffled batch loader.
 *
 * A struct dataset is either stored (8-bit pixels and labels in memory,
 * from Fashion-MNIST's IDX files or hpctrain shards) or generated (the
 * synthetic sets: sample i is a pure function of (set, i), so any rank
 * can make any sample and nothing is stored).  Samples come out as
 * normalised float NHWC images and a label: a class index for softmax,
 * or 0/1 targets for binary and multi-label sigmoid losses.
 *
 * Loading functions return 0 or an enum hpt_exit status with err naming
 * the file: HPT_EXIT_NO_INPUT for a file that is missing, unreadable,
 * truncated or corrupt.  They never exit.
 */
#ifndef HPT_DATA_H
#define HPT_DATA_H

#include "trainer/model/model.h" // defines: enum loss_kind

#include <stdint.h>

struct sbuf;

enum data_gen { DATA_STORED, DATA_SYNTHETIC, DATA_HEP_SYNTHETIC };

struct dataset {
	int64_t n;
	int h, w, c;
	int classes;   /* XENT: number of classes; BCE: 1; MULTI: labels */
	int label_dim; /* bytes of label per sample: 1, or the label count */
	enum loss_kind loss;
	uint8_t *pixels; /* stored: n*h*w*c, NHWC */
	uint8_t *labels; /* stored: n*label_dim */
	float mean, std; /* stored: x = (pixel/255 - mean) / std */
	enum data_gen gen;
	int64_t gen_offset; /* generated: sample i is generator sample offset + i */
	uint64_t bytes_read; /* stored: bytes of the files read to load it (compressed, for IDX) */
};

void dataset_release(struct dataset *d);

/* One sample: x gets h*w*c floats; label (XENT) or target (BCE/MULTI,
 * classes floats) gets the label. */
void dataset_sample(const struct dataset *d, int64_t i, float *x, int32_t *label,
		    float *target);

/* Fashion-MNIST (or MNIST) from DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz. */
int data_load_idx_pair(struct dataset *train, struct dataset *test, const char *dir,
		       struct sbuf *err);
/* Whether DIR holds that pair's training images (a staged copy of
 * Fashion-MNIST as Debian ships it, rather than shards). */
bool data_idx_pair_present(const char *dir);
/* One IDX image file and its label file (gzip or plain). */
int data_load_idx(struct dataset *d, const char *images, const char *labels, struct sbuf *err);

/* Shards written by data_write_shards(): DIR/train-*.hpts, DIR/test-*.hpts. */
int data_load_shards(struct dataset *train, struct dataset *test, const char *dir,
		     struct sbuf *err);
/* Writes d as nshards files DIR/SPLIT-00000.hpts ..., each atomically. */
int data_write_shards(const struct dataset *d, const char *dir, const char *split, int nshards,
		      struct sbuf *err);

/* The generated sets: "synthetic" (8x8x1, 4 classes from a hidden linear
 * teacher, 5% of labels replaced at random: no classifier beats 96.25%)
 * and "hep-synthetic" (64x64x1 calorimeter-like events, signal = one
 * narrow energy deposit among wide ones; binary). */
void data_synthetic(struct dataset *train, struct dataset *test, enum data_gen gen);
/* The best accuracy any classifier can reach on a generated set. */
double data_synthetic_bound(enum data_gen gen);

/* Mean and standard deviation of a stored set's pixels (into d). */
void dataset_normalise_from(struct dataset *d, const struct dataset *ref);

/* Batches for one rank.  Each epoch draws a permutation of the whole set
 * from (seed, epoch); step s of that epoch takes the global batch
 * [s*G, (s+1)*G) of it, G = B*world*accum, and micro-step a of rank r
 * the slice resume_slice_offset() names, [s*G + (a*world + r)*B, +B).
 * So ranks get disjoint samples, and world ranks x batch B see exactly
 * what 1 rank x batch world*B, or 1 rank x world steps of B, sees. */
struct loader {
	const struct dataset *d;
	int batch, rank, world;
	int accum; /* micro-steps per step; 1 unless loader_set_accum */
	uint64_t seed;
	int64_t epoch; /* of perm; -1 = none yet */
	int64_t *perm;
	int64_t steps_per_epoch;
};

int loader_init(struct loader *ld, const struct dataset *d, int batch, int rank, int world,
		uint64_t seed, struct sbuf *err);
void loader_release(struct loader *ld);
/* Micro-steps per step (gradient accumulation): the global batch grows
 * to batch*world*accum, steps_per_epoch shrinks; -1 with err when the
 * set holds less than one global batch. */
int loader_set_accum(struct loader *ld, int accum, struct sbuf *err);
/* Fills one batch of the shuffled order (micro-step 0); computes the
 * epoch's permutation when the epoch changes. */
void loader_batch(struct loader *ld, int64_t epoch, int64_t step, float *x, int32_t *labels,
		  float *targets);
/* The same for micro-step micro of the step. */
void loader_micro_batch(struct loader *ld, int64_t epoch, int64_t step, int micro, float *x,
			int32_t *labels, float *targets);
/* resume_batch_hash() of the whole global batch of (epoch, step), the
 * same at any world size for the same global batch. */
uint64_t loader_batch_hash(struct loader *ld, int64_t epoch, int64_t step);
/* Fills batch number b of the set in order, without shuffling; the last
 * batch is padded with copies of sample 0.  Returns the real count. */
int loader_eval_batch(const struct dataset *d, int batch, int64_t b, float *x, int32_t *labels,
		      float *targets);

#endif
