/* model.h - the bundled models, their parameter arena and the loss.
 *
 * The parameters of all layers live in one flat float arena (and the
 * gradients in a second one of the same layout), in REVERSE layer order:
 * the last layer's weights come first.  Backward produces gradients from
 * the last layer to the first, so the finished gradients always form a
 * growing prefix [0, hi) of the arena, and a data-parallel run (comm.c)
 * can cut the arena into buckets and start each bucket's allreduce as
 * soon as backward has passed it (grad_hook in layer.h).  Each tensor
 * starts at a multiple of ARENA_ALIGN floats (layer.h), so the arena is
 * narena floats, a little more than the nparams parameters.  The
 * optimizer and broadcasts treat the arena as one vector of narena
 * floats; checkpoints store the nparams parameters without the gaps
 * (spans), so the file does not depend on the alignment.
 *
 * Batch-norm running statistics are not trained: they sit in a separate
 * state arena, checkpointed but neither reduced nor updated by the
 * optimizer.  Batch-norm gamma and beta are ordinary parameters: their
 * gradients are in the arena and averaged with the rest.  With
 * synchronised batch norm (model_set_bn_sync) the running statistics
 * come from the global batch and so are the same on every rank; without
 * it each rank keeps its own and rank 0's are the ones checkpointed.
 */
#ifndef HPT_MODEL_H
#define HPT_MODEL_H

#include "trainer/model/layer.h" // defines: struct seq, struct shape, struct grad_hook, struct bn_sync

#include <stdbool.h>
#include <stdint.h>

struct sbuf;

enum loss_kind {
	LOSS_XENT,   /* softmax cross-entropy over classes, int32 labels */
	LOSS_BCE,    /* sigmoid binary cross-entropy, one output, 0/1 targets */
	LOSS_MULTI,  /* multi-label BCE, one output per label, 0/1 targets */
};

/* One tensor of the arenas: floats [off, off + n). */
struct arena_span {
	size_t off, n;
};

struct model {
	int kind; /* enum model_kind of common/spec/spec.h */
	struct seq net;
	struct shape input;
	int outputs;
	enum loss_kind loss;
	enum be_precision prec; /* of the convolutions (backend.h) */
	float *params, *grads; /* the arenas, narena floats each */
	size_t narena;
	size_t nparams;        /* parameters: narena less the alignment gaps */
	struct arena_span *spans; /* the tensors in arena order */
	size_t nspans;
	float *state;
	size_t nstate;
	float *dlogits;
};

/* Builds model `kind` (enum model_kind) for batches of input shape
 * (n, h, w, c) and `outputs` classes or labels, with convolutions at
 * precision prec (parameters, loss and the other layers stay fp32),
 * plans its primitives and
 * allocates everything the step loop needs.  Parameters are zero; call
 * model_init().  Returns 0, or -1 with err filled (e.g. an input too
 * small for the model's pooling). */
int model_build(struct model *m, int kind, struct shape input, int outputs,
		enum loss_kind loss, enum be_precision prec, struct sbuf *err);
void model_release(struct model *m);

/* PyTorch's default initialisation (kaiming-uniform with a = sqrt(5):
 * weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); batch norm
 * gamma 1, beta 0, running mean 0, variance 1), drawn from seed in layer
 * order, weights before biases. */
void model_init(struct model *m, uint64_t seed);

/* Makes every batch-norm layer take its training statistics over all
 * data-parallel ranks through sync (layer.h), or its own batch when
 * sync is NULL (the default).  sync must outlive the model's use. */
void model_set_bn_sync(struct model *m, const struct bn_sync *sync);

/* Forward on x (input shape); the logits are model_logits(m).  key makes
 * dropout masks (a pure function of it, so resume is exact). */
int model_forward(struct model *m, const float *x, bool train, uint64_t key,
		  struct sbuf *err);
const float *model_logits(const struct model *m);

/* The loss of the last forward and its gradient in m->dlogits; labels
 * (XENT) or targets (BCE, n*outputs) as the loss needs.  *correct
 * counts right predictions (per output for LOSS_MULTI). */
double model_loss(struct model *m, const int32_t *labels, const float *targets,
		  int64_t *correct);

/* Backward from m->dlogits; gradients overwrite m->grads. */
int model_backward(struct model *m, const struct grad_hook *hook, struct sbuf *err);

/* FLOPs of one sample's training step in convolutions and linear
 * layers, for throughput figures: forward, weight gradient, and the
 * input gradient of the layers that compute it (not the first layer's). */
double model_train_flops_per_sample(const struct model *m);

/* Number of layers, depth first (dropout keys, diagnostics). */
int model_count_layers(const struct model *m);

/* Where training time goes, per layer of the top level (a residual
 * block is one; a fused first convolution is its max pool's): the
 * seconds its training forward and backward passes took since the last
 * reset, and its FLOPs per sample (layer_train_flops). */
struct layer_time {
	char name[48]; /* "conv 3x3 32>64", "conv+maxpool 3x3 1>32", "relu", ... */
	double fwd_s, bwd_s, flops;
};
size_t model_layer_times(struct model *m, struct layer_time *out, size_t max);
void model_layer_times_reset(struct model *m);

/* The kernel of one convolution or linear layer, as planned. */
struct model_kernel {
	enum layer_kind kind;
	struct be_kernel k;
};
/* Fills out[0..max) with the model's convolution and linear layers in
 * order, depth first; returns how many the model has. */
size_t model_kernels(const struct model *m, struct model_kernel *out, size_t max);
/* Appends one summary of those kernels, identical ones counted once:
 * "conv 1x fp32 conv1pool:avx2 (1 input channel, fused ...), conv 1x
 * bf16 jit_bf16:avx512_core_bf16, linear 2x bf16 brg:avx512_core_bf16". */
void model_describe_kernels(const struct model *m, struct sbuf *out);

#endif
