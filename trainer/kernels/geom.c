/* geom.c - output sizes of convolution and pooling windows.
 * Core: shared by the reference kernels, the backend and the layers. */
#include "trainer/kernels/kernels.h" // defines: struct conv_geom, struct pool_geom

int conv_geom_finish(struct conv_geom *g)
{
	if (g->stride < 1 || g->r < 1 || g->s < 1 || g->pad < 0)
		return -1;
	g->p = (g->h + 2 * g->pad - g->r) / g->stride + 1;
	g->q = (g->w + 2 * g->pad - g->s) / g->stride + 1;
	return g->h + 2 * g->pad >= g->r && g->w + 2 * g->pad >= g->s ? 0 : -1;
}

int pool_geom_finish(struct pool_geom *g)
{
	if (g->stride < 1 || g->k < 1 || g->h < g->k || g->w < g->k)
		return -1;
	g->p = (g->h - g->k) / g->stride + 1;
	g->q = (g->w - g->k) / g->stride + 1;
	return 0;
}
