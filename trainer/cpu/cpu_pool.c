/* cpu_pool.c - pooling on the CPU backend (backend.h be_pool_*).
 * Max pooling is plain C (kernels/maxpool.c: oneDNN 2.6's training-mode
 * max pooling is six times slower than memory allows here); average
 * pooling is oneDNN.  Pooling runs fp32 at every precision: it is
 * memory-bound on fp32 activations. */
#include "trainer/cpu/cpu_internal.h"    // defines: struct prim, prim_*, mem_*
#include "trainer/kernels/kernels.h" // defines: maxpool_fwd_f32, maxpool_bwd_f32

#include <stdint.h>
#include <stdlib.h>

/* Max pooling runs kernels/maxpool.c (see there why not oneDNN) with
 * its argmax in arg; average pooling runs oneDNN. */
struct be_pool {
	struct pool_geom g;
	int32_t *arg;
	struct prim fwd, bwd;
	dnnl_memory_t x, y, dy, dx, ws;
	void *ws_buf;
};

void be_pool_free(struct be_pool *pl)
{
	if (!pl)
		return;
	prim_release(&pl->fwd);
	prim_release(&pl->bwd);
	if (pl->x)
		dnnl_memory_destroy(pl->x);
	if (pl->y)
		dnnl_memory_destroy(pl->y);
	if (pl->dy)
		dnnl_memory_destroy(pl->dy);
	if (pl->dx)
		dnnl_memory_destroy(pl->dx);
	if (pl->ws)
		dnnl_memory_destroy(pl->ws);
	free(pl->ws_buf);
	free(pl->arg);
	free(pl);
}

struct be_pool *be_pool_create(const struct pool_geom *g, bool max, unsigned flags,
			       enum be_precision prec, struct sbuf *err)
{
	struct be_pool *pl = calloc(1, sizeof(*pl));
	dnnl_memory_desc_t x_md, y_md;
	dnnl_dims_t xd = { g->n, g->c, g->h, g->w }, yd = { g->n, g->c, g->p, g->q };
	dnnl_dims_t strides = { g->stride, g->stride }, kernel = { g->k, g->k }, pad = { 0, 0 };
	dnnl_alg_kind_t alg = max ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding;
	dnnl_pooling_desc_t d;
	const dnnl_memory_desc_t *wsmd;

	if (!pl) {
		sbuf_addstr(err, "out of memory");
		return NULL;
	}
	(void)prec; /* pooling runs fp32 at every precision (see the top) */
	pl->g = *g;
	if (max) {
		pl->arg = calloc((size_t)g->n * g->p * g->q * g->c, sizeof(*pl->arg));
		if (!pl->arg) {
			sbuf_addstr(err, "out of memory");
			goto fail;
		}
		return pl;
	}
	DNNL_TRY(dnnl_memory_desc_init_by_tag(&x_md, 4, xd, dnnl_f32, dnnl_nhwc));
	DNNL_TRY(dnnl_memory_desc_init_by_tag(&y_md, 4, yd, dnnl_f32, dnnl_nhwc));
	DNNL_TRY(dnnl_pooling_forward_desc_init(&d, dnnl_forward_training, alg, &x_md, &y_md,
						strides, kernel, pad, pad));
	DNNL_TRY(prim_create(&pl->fwd, &d, NULL, NULL));
	wsmd = dnnl_primitive_desc_query_md(pl->fwd.pd, dnnl_query_workspace_md, 0);
	if (wsmd && dnnl_memory_desc_get_size(wsmd)) {
		pl->ws_buf = aligned_alloc(64, (dnnl_memory_desc_get_size(wsmd) + 63) / 64 * 64);
		if (!pl->ws_buf) {
			sbuf_addstr(err, "out of memory");
			goto fail;
		}
		DNNL_TRY(dnnl_memory_create(&pl->ws, wsmd, cpu_engine, pl->ws_buf));
	}
	if (flags & BE_NEED_DX) {
		DNNL_TRY(dnnl_pooling_backward_desc_init(&d, alg, &x_md, &y_md, strides, kernel,
							 pad, pad));
		DNNL_TRY(prim_create(&pl->bwd, &d, pl->fwd.pd, NULL));
	}
	DNNL_TRY(mem_create(&pl->x, &x_md));
	DNNL_TRY(mem_create(&pl->y, &y_md));
	DNNL_TRY(mem_create(&pl->dx, &x_md));
	DNNL_TRY(mem_create(&pl->dy, &y_md));
	return pl;
fail:
	be_pool_free(pl);
	return NULL;
}

int be_pool_forward(struct be_pool *pl, const float *x, float *y, struct sbuf *err)
{
	dnnl_exec_arg_t a[3] = { { DNNL_ARG_SRC, pl->x }, { DNNL_ARG_DST, pl->y },
				 { DNNL_ARG_WORKSPACE, pl->ws } };

	if (pl->arg) {
		maxpool_fwd_f32(&pl->g, x, y, pl->arg);
		return 0;
	}
	DNNL_TRY(mem_set(pl->x, x));
	DNNL_TRY(mem_set(pl->y, y));
	DNNL_TRY(prim_run(&pl->fwd, pl->ws ? 3 : 2, a));
	return 0;
fail:
	return -1;
}

int be_pool_backward(struct be_pool *pl, const float *dy, float *dx, struct sbuf *err)
{
	dnnl_exec_arg_t a[3] = { { DNNL_ARG_DIFF_DST, pl->dy }, { DNNL_ARG_DIFF_SRC, pl->dx },
				 { DNNL_ARG_WORKSPACE, pl->ws } };

	if (pl->arg) {
		maxpool_bwd_f32(&pl->g, dy, pl->arg, dx);
		return 0;
	}
	if (!pl->bwd.p) {
		sbuf_addstr(err, "be_pool_backward: pooling planned without a backward pass");
		return -1;
	}
	DNNL_TRY(mem_set(pl->dy, dy));
	DNNL_TRY(mem_set(pl->dx, dx));
	DNNL_TRY(prim_run(&pl->bwd, pl->ws ? 3 : 2, a));
	return 0;
fail:
	return -1;
}
