/* model_cuda.h - a built model's mirror on the GPU: the same layers run
 * through backend_cuda.h, on device arenas laid out exactly as the host
 * arenas of model.h.  Shell over the CUDA backend (device memory).
 *
 * The host struct model stays the model of record: model_build() plans
 * it, model_init() or a checkpoint fills it, and checkpoints are written
 * from it.  The mirror holds what the step loop touches every step:
 * parameters, gradients, batch-norm state, optimizer state (m, v),
 * activations, the loss and its gradient, and the cuDNN plans of every
 * convolution and pooling layer.
 *
 * Invariants: the device parameter, gradient, state and optimizer
 * arenas have the host's sizes and layout (reverse layer order), so
 * [arena_lo, arena_hi) of a host layer addresses the same values on the
 * device, a gradient bucket is a prefix range in both, and upload and
 * download are plain copies.  Between model_cuda_upload() and
 * model_cuda_download() the device copies are newer than the host's.
 *
 * Precision: convolutions at each layer's prec, linear-layer GEMMs at
 * the model's prec (bf16/fp16 inputs on tensor cores); accumulation,
 * activations, gradients, master weights and optimizer state are fp32.
 * Other layers run fp32 kernels whose arithmetic mirrors kernels/ (same
 * dropout masks; the optimizer is optim.c's, element for element).
 *
 * Built without nvcc, model_cuda_none.c fails every call: such a
 * trainer never asks for the GPU (cmd_train.c checks
 * be_cuda_device_count() first).
 */
#ifndef HPT_MODEL_CUDA_H
#define HPT_MODEL_CUDA_H

#include "trainer/model/layer.h" // defines: struct grad_hook

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct model;
struct model_cuda;
struct optim;
struct sbuf;

/* Mirrors m, built by model_build() (its parameters need not be set
 * yet), on the device be_cuda_init() selected, with optimizer state for
 * o.  m and o must outlive the mirror.  NULL with err on failure (out
 * of device memory, a precision cuDNN lacks on this GPU). */
struct model_cuda *model_cuda_create(struct model *m, const struct optim *o, struct sbuf *err);
void model_cuda_free(struct model_cuda *mc);

/* Host -> device: parameters, batch-norm state, optimizer state (after
 * model_init, a checkpoint load or a broadcast). */
int model_cuda_upload(struct model_cuda *mc, const struct optim *o, struct sbuf *err);
/* Device -> host, the same three (before a checkpoint). */
int model_cuda_download(struct model_cuda *mc, struct optim *o, struct sbuf *err);

/* model_forward on the device: copies x (the host batch, shape
 * m->input) up and queues the forward; returns without waiting for it. */
int model_cuda_forward(struct model_cuda *mc, const float *x, bool train, uint64_t key,
		       struct sbuf *err);
/* The last forward's logits into the host model's output buffer,
 * model_logits(m) (evaluation, tests). */
int model_cuda_logits(struct model_cuda *mc, struct sbuf *err);
/* model_loss on the device after model_cuda_forward: the loss gradient
 * stays on the device for model_cuda_backward; *loss and *correct come
 * back (waits for the forward). */
int model_cuda_loss(struct model_cuda *mc, const int32_t *labels, const float *targets,
		    double *loss, int64_t *correct, struct sbuf *err);
/* amp_scale on the device's loss gradient with amp_factor's k; poison
 * puts a NaN in it (amp_forward_overflow). */
int model_cuda_scale_loss_grad(struct model_cuda *mc, float k, bool poison, struct sbuf *err);
/* model_backward on the device from the loss gradient of
 * model_cuda_loss; hook gets the same arena ranges as on the CPU, for
 * the device gradient arena. */
int model_cuda_backward(struct model_cuda *mc, const struct grad_hook *hook, struct sbuf *err);
/* Loss scaling: gradients /= scale, *overflow = any not finite (as
 * amp_unscale). */
int model_cuda_unscale(struct model_cuda *mc, double scale, bool *overflow, struct sbuf *err);
/* optim_update(o, params, grads, 0, narena, lr) on the device; the
 * caller still calls optim_tick(o). */
int model_cuda_update(struct model_cuda *mc, const struct optim *o, double lr, struct sbuf *err);

/* The device gradient arena, narena floats (data parallelism). */
float *model_cuda_grads(struct model_cuda *mc);
/* Since the last call: the batch's copy (into pinned memory on the host,
 * then to the device, where it overlaps computation) and the host's
 * waits for the GPU (the loss, the fp16 overflow check), in ms. */
void model_cuda_step_times(struct model_cuda *mc, double *copy_ms, double *sync_ms);

#endif
