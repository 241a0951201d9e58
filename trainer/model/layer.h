/* layer.h - the layers of a model and the sequences that chain them.
 *
 * A model is a struct seq of layers run in order; a residual layer holds
 * two inner sequences (body and shortcut), which is all the graph the
 * bundled models need.  Activations are NHWC float buffers owned by the
 * sequence (act[i] is layer i's output), allocated once when the model
 * is built for a fixed batch size: the step loop never allocates.
 *
 * Invariants of a built layer: in and out are its shapes for the whole
 * batch; w/b/dw/db point into the model's parameter and gradient arenas
 * (NULL when the layer has none), each at an offset that is a multiple
 * of ARENA_ALIGN floats, and [arena_lo, arena_hi) is the layer's range
 * in them, alignment gaps included; running points into the model's
 * state arena (batch-norm running mean then variance).
 *
 * Synchronised batch norm (train.batchnorm: sync): a batch-norm layer
 * whose sync is set takes its training statistics over the global batch
 * of all data-parallel ranks.  The layer only adds partial sums; the
 * sums cross ranks through the bn_sync callback, so this file and
 * model.c stay free of MPI (comm.c provides the callback).
 */
#ifndef HPT_LAYER_H
#define HPT_LAYER_H

#include "trainer/cpu/backend.h" // defines: enum be_precision

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* NHWC; a fully connected activation is (n, 1, 1, c). */
struct shape {
	int n, h, w, c;
};

static inline size_t shape_count(struct shape s)
{
	return (size_t)s.n * s.h * s.w * s.c;
}

enum layer_kind {
	LAYER_CONV,
	LAYER_MAXPOOL,
	LAYER_AVGPOOL, /* window k, stride; global pooling is k = h = w */
	LAYER_LINEAR,
	LAYER_RELU,
	LAYER_BATCHNORM,
	LAYER_DROPOUT,
	LAYER_FLATTEN, /* NHWC -> (n,1,1,c*h*w) in PyTorch's (c,h,w) order */
	LAYER_RESIDUAL,
};

/* Every tensor in the parameter and gradient arenas starts at a multiple
 * of 64 floats, 256 bytes from the arena's start: cuBLASLt and cuDNN
 * choose kernels for 256-byte-aligned operands (and may assume it), and
 * on the CPU a tensor never shares a cache line with its neighbour.  The
 * gaps hold zeros and keep them: no backward writes them, and zero
 * parameters with zero gradients and optimizer state stay zero under
 * SGD and AdamW.  Checkpoints store the tensors without the gaps. */
#define ARENA_ALIGN 64

static inline size_t arena_align(size_t off)
{
	return (off + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
}

struct seq;

/* Sums buf[0, n) element-wise over all data-parallel ranks, in place;
 * every rank calls it in the same order (the same model, layer by
 * layer), twice per batch-norm layer and training step: once in
 * forward (sum x, sum x^2, count), once in backward (sum dy, sum dy
 * xhat).  0, or -1 with one line in err. */
struct bn_sync {
	int (*allreduce_sum)(void *ctx, double *buf, size_t n, struct sbuf *err);
	void *ctx;
};

struct layer {
	enum layer_kind kind;
	struct shape in, out;
	int id;       /* position in the model, depth first; keys dropout masks */
	bool need_dx; /* false for the first layer: nothing wants d(input) */
	/* configuration */
	int k, stride, pad; /* conv (k = kernel size, out.c = filters), pool */
	bool relu;          /* conv, linear: ReLU fused after the bias */
	/* A ReLU layer followed by a max pool: the pool masks its own output
	 * gradient by its output > 0 and the layer skips its mask.  Exact:
	 * the pool routes each window's gradient to the window's maximum,
	 * which is > 0 exactly when the pool's output is; the pass is over
	 * the pooled gradient, k*k times smaller. */
	bool relu_by_pool;  /* conv, linear: the next layer applies the mask */
	bool pool_masks;    /* max pool: apply the previous layer's mask */
	/* An emulated convolution followed by a max pool without overlap:
	 * the pool rounds its own (k*k times smaller) gradient to the
	 * convolution's precision before routing it, and the convolution
	 * skips its pass over the full-size one (be_conv_set_dy_rounded).
	 * Exact: routing copies values, so rounding before equals after. */
	be_round_fn round_dy; /* max pool */
	/* A one-channel first convolution with ReLU and the 2x2 max pool
	 * after it run as one (kernels/conv1pool.c) in the pool's place: the
	 * convolution computes nothing itself and has no activation. */
	bool fused_into_pool; /* conv */
	bool fused_conv;      /* max pool: computes the convolution before it */
	struct layer *conv;   /* fused max pool: that convolution */
	int32_t *arg;         /* fused max pool: each window's argmax */
	double *part;         /* fused max pool: per-image weight-gradient sums */
	double p;           /* dropout probability */
	double eps, momentum; /* batch norm */
	enum be_precision prec; /* conv, linear: compute precision; others run fp32 */
	/* parameters, views into the model's arenas */
	float *w, *b, *dw, *db;
	size_t nw, nb;
	size_t arena_lo, arena_hi;
	float *running;
	size_t nrunning;
	/* working state */
	uint64_t key;  /* dropout: mask key of the current step */
	float *save;   /* batch norm: mean, invstd, unbiased var (3c) */
	const struct bn_sync *sync; /* batch norm: global statistics; NULL: this rank's */
	double *sums;  /* batch norm: forward sums (2c+1), then backward sums (2c) */
	float *tmp;    /* residual: the pre-activation sum and its gradient */
	float *tmp2;   /* residual: the shortcut's input gradient */
	void *be;      /* struct be_conv or struct be_pool */
	struct seq *body, *shortcut; /* residual; shortcut NULL = identity */
	/* Seconds in training forward and backward passes since they were
	 * last zeroed (model_layer_times): a fused max pool holds its
	 * convolution's, a residual layer its whole block's. */
	double fwd_s, bwd_s;
};

/* Called after a layer's backward with the arena range whose gradients
 * are now final; ranges arrive in increasing order (the arena is laid
 * out in reverse layer order), so communication can start per bucket. */
struct grad_hook {
	int (*on_grad_ready)(void *ctx, size_t lo, size_t hi);
	void *ctx;
};

/* What a device does for the one walk of the layers (seq_forward,
 * seq_backward and residual blocks, in layer.c), as curl's struct
 * Curl_ssl is what a TLS backend does: the CPU's table is layer_cpu.c's,
 * the GPU's model_cuda.c's, whose sequences are device copies of the
 * host's.  forward and backward run one layer of any kind but
 * LAYER_RESIDUAL, which the walk runs from the other four; pointers are
 * the device's.  Each returns 0 or -1 with one line in err. */
struct layer_ops {
	int (*forward)(struct layer *l, const float *x, float *y, bool train, struct sbuf *err);
	/* dy (shape out) may be overwritten; dx (shape in) may be NULL. */
	int (*backward)(struct layer *l, const float *x, const float *y, float *dy, float *dx,
			struct sbuf *err);
	int (*add)(size_t n, const float *a, const float *b, float *y, struct sbuf *err);
	int (*relu_forward)(size_t n, const float *x, float *y, struct sbuf *err);
	int (*relu_backward)(size_t n, const float *y, const float *dy, float *dx, struct sbuf *err);
	int (*copy)(float *dst, const float *src, size_t n, struct sbuf *err);
};

/* The CPU's (layer_cpu.c): oneDNN through backend.h, kernels/. */
extern const struct layer_ops layer_cpu_ops;

struct seq {
	struct layer *v;
	size_t n, alloc;
	const struct layer_ops *ops; /* the device its buffers are on */
	float **act;    /* act[i]: output of v[i]; NULL for a layer fused into the next */
	const float *input; /* the input of the last forward */
	float *g[2];    /* gradient ping-pong buffers, max activation size */
};

/* Sizing the layers of a sequence before the arenas exist: parameters
 * and state values, and the arena floats the parameters take with their
 * alignment gaps. */
void layer_count_params(const struct layer *l, size_t *nparam, size_t *nstate);
size_t layer_arena_floats(const struct layer *l);
/* Points the layer at its place in the arenas, from *off (a multiple of
 * ARENA_ALIGN) upwards, and advances *off past its tensors and their
 * alignment gaps; residual layers recurse in reverse order. */
void layer_assign(struct layer *l, float *params, float *grads, size_t *off, float *state,
		  size_t *soff);

/* The backend geometry of a conv or pooling layer for its whole batch. */
/* The FLOPs per sample of one training step through a convolution or
 * linear layer: forward, weight gradient and, where it is computed
 * (need_dx), input gradient, each as many as the forward; 0 for the
 * other kinds (their work is not counted as FLOPs). */
double layer_train_flops(const struct layer *l);

struct conv_geom layer_conv_geom(const struct layer *l);
struct pool_geom layer_pool_geom(const struct layer *l);

/* Plans CPU backend primitives and working buffers; 0 or -1 with err. */
int layer_setup(struct layer *l, struct sbuf *err);
/* The kernel a set-up convolution or linear layer runs (backend.h),
 * the fused first layer's included; false for other kinds. */
bool layer_kernel(const struct layer *l, struct be_kernel *k);
void layer_release(struct layer *l);

/* x has shape in, y shape out, on the device of ops.  key keys dropout. */
int layer_forward(const struct layer_ops *ops, struct layer *l, const float *x, float *y,
		  bool train, uint64_t key, struct sbuf *err);
/* dy (shape out) may be overwritten; dx (shape in) may be NULL. */
int layer_backward(const struct layer_ops *ops, struct layer *l, const float *x,
		   const float *y, float *dy, float *dx, struct sbuf *err);

/* Sequences.  seq_setup and seq_release are the CPU's (layer_cpu.c):
 * they plan the fused first layer and the buffers, and set ops. */
struct layer *seq_push(struct seq *s, enum layer_kind kind, struct shape in);
int seq_setup(struct seq *s, struct sbuf *err);
void seq_release(struct seq *s);
struct shape seq_out(const struct seq *s, struct shape in);
int seq_forward(struct seq *s, const float *x, bool train, uint64_t key, struct sbuf *err);
const float *seq_output(const struct seq *s);
int seq_backward(struct seq *s, float *dy, float *dx, const struct grad_hook *hook,
		 struct sbuf *err);

#endif
