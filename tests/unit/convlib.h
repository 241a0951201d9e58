/* convlib.h - the convolution fixture the trainer's tests share: one
 * geometry's operands, filled with the same seeded normals everywhere
 * (x seed 1, w 2, b 3, dy 4), and their reference in double, so the CPU
 * backend at fp32 (test_backend), at its low precisions (test_amp) and
 * the CUDA backend (test_cuda) are checked on the same numbers.
 * Header only. */
#ifndef HPT_CONVLIB_H
#define HPT_CONVLIB_H

#include "tests/unit/trainlib.h"
#include <stdbool.h>
#include "trainer/kernels/kernels.h"

struct conv_case {
	struct conv_geom g;
	size_t nx, nw, ny;
	float *x, *w, *b, *dy;   /* the inputs */
	float *y, *dx, *dw, *db; /* for a backend's outputs */
};

static inline void conv_case_init(struct conv_case *c, struct conv_geom g)
{
	assert_int_equal(conv_geom_finish(&g), 0);
	c->g = g;
	c->nx = (size_t)g.n * g.h * g.w * g.c;
	c->nw = (size_t)g.k * g.c * g.r * g.s;
	c->ny = (size_t)g.n * g.p * g.q * g.k;
	c->x = malloc(c->nx * 4), c->w = malloc(c->nw * 4), c->b = malloc(g.k * 4);
	c->dy = malloc(c->ny * 4);
	c->y = malloc(c->ny * 4), c->dx = malloc(c->nx * 4), c->dw = malloc(c->nw * 4);
	c->db = malloc(g.k * 4);
	fill_normalf(c->x, c->nx, 1), fill_normalf(c->w, c->nw, 2), fill_normalf(c->b, g.k, 3);
	fill_normalf(c->dy, c->ny, 4);
}

static inline void conv_case_release(struct conv_case *c)
{
	free(c->x), free(c->w), free(c->b), free(c->dy);
	free(c->y), free(c->dx), free(c->dw), free(c->db);
}

/* The reference of a case in double: y from x, w, b (then ReLU when
 * relu); dx, dw and db from dy as the case holds it when computed (a
 * ReLU's caller masks dy first, as the layer does). */
struct conv_ref {
	double *y, *dx, *dw, *db;
};

static inline double *conv_to_f64(const float *f, size_t n)
{
	double *d = malloc(n * sizeof(*d));

	for (size_t i = 0; i < n; i++)
		d[i] = f[i];
	return d;
}

static inline void conv_ref_forward(struct conv_ref *r, const struct conv_case *c, bool relu)
{
	double *x = conv_to_f64(c->x, c->nx), *w = conv_to_f64(c->w, c->nw);
	double *b = conv_to_f64(c->b, c->g.k);

	r->y = malloc(c->ny * sizeof(double));
	conv2d_fwd_ref(&c->g, x, w, b, r->y);
	if (relu)
		relu_fwd_f64(c->ny, r->y, r->y);
	free(x), free(w), free(b);
}

static inline void conv_ref_backward(struct conv_ref *r, const struct conv_case *c)
{
	double *x = conv_to_f64(c->x, c->nx), *w = conv_to_f64(c->w, c->nw);
	double *dy = conv_to_f64(c->dy, c->ny);

	r->dx = malloc(c->nx * sizeof(double)), r->dw = malloc(c->nw * sizeof(double));
	r->db = malloc(c->g.k * sizeof(double));
	conv2d_bwd_data_ref(&c->g, dy, w, r->dx);
	conv2d_bwd_weights_ref(&c->g, x, dy, r->dw, r->db);
	free(x), free(w), free(dy);
}

static inline void conv_ref_release(struct conv_ref *r)
{
	free(r->y), free(r->dx), free(r->dw), free(r->db);
	memset(r, 0, sizeof(*r));
}

#endif
