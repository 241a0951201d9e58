/* chart.c - fit and draw line charts with cairo (see chart.h).
 * Core (ranges, ticks, mapping) and the drawing, which only cairo does. */
#include "launcher/report/chart.h" // defines: struct chart, chart_write_png
#include "common/fileio.h"         // defines: fileio_write_atomic
#include "common/sbuf.h"           // defines: struct sbuf, x* allocators
#include "common/strfmt.h" // defines: strfmt_label

#include <cairo.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Margins around the plot area, in pixels. */
#define LEFT 78
#define RIGHT 24
#define TOP 40
#define BOTTOM 56

/* A palette that stays apart in colour and in grey (Okabe-Ito). */
static const unsigned char palette[][3] = {
	{ 0, 114, 178 }, { 213, 94, 0 }, { 0, 158, 115 }, { 204, 121, 167 },
	{ 230, 159, 0 }, { 86, 180, 233 }, { 0, 0, 0 },   { 240, 228, 66 },
};

void chart_color(size_t i, unsigned char rgb[3])
{
	memcpy(rgb, palette[i % (sizeof(palette) / sizeof(palette[0]))], 3);
}

void chart_init(struct chart *c, const char *title, const char *xlabel, const char *ylabel,
		int width, int height)
{
	memset(c, 0, sizeof(*c));
	c->title = title;
	c->xlabel = xlabel;
	c->ylabel = ylabel;
	c->width = width;
	c->height = height;
}

void chart_release(struct chart *c)
{
	for (size_t i = 0; i < c->nseries; i++) {
		free(c->series[i].label);
		free(c->series[i].x);
		free(c->series[i].y);
	}
	free(c->series);
	free(c->marks);
	for (size_t i = 0; i < c->nflags; i++)
		free(c->flags[i].label);
	free(c->flags);
	memset(c, 0, sizeof(*c));
}

struct chart_series *chart_add(struct chart *c, const char *label, const double *x,
			       const double *y, size_t n)
{
	struct chart_series *s;

	c->series = xrealloc(c->series, (c->nseries + 1) * sizeof(*c->series));
	s = &c->series[c->nseries++];
	memset(s, 0, sizeof(*s));
	s->label = xstrdup(label);
	s->x = xcalloc(n + 1, sizeof(double));
	s->y = xcalloc(n + 1, sizeof(double));
	if (n) {
		memcpy(s->x, x, n * sizeof(double));
		memcpy(s->y, y, n * sizeof(double));
	}
	s->n = n;
	return s;
}

void chart_mark(struct chart *c, double x)
{
	c->marks = xrealloc(c->marks, (c->nmarks + 1) * sizeof(double));
	c->marks[c->nmarks++] = x;
}

void chart_flag(struct chart *c, double x, const char *label)
{
	c->flags = xrealloc(c->flags, (c->nflags + 1) * sizeof(*c->flags));
	c->flags[c->nflags].x = x;
	c->flags[c->nflags++].label = xstrdup(label);
}

bool chart_has_data(const struct chart *c)
{
	for (size_t i = 0; i < c->nseries; i++)
		for (size_t k = 0; k < c->series[i].n; k++)
			if (isfinite(c->series[i].x[k]) && isfinite(c->series[i].y[k]))
				return true;
	return false;
}

/* hi - lo, halved: finite for any two finite numbers, where hi - lo
 * itself overflows to inf for -1e308 and 1e308 (and a chart came out
 * blank).  Every span below is taken this way. */
static double half_span(double lo, double hi)
{
	return hi / 2 - lo / 2;
}

size_t chart_nice_ticks(double lo, double hi, size_t max, double *t, double *a, double *b)
{
	static const double steps[] = { 1, 2, 5, 10 };
	double half = half_span(lo, hi), mag, step = 1;
	size_t n = 0;

	if (!(half > 0)) {
		double pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;

		lo = fmax(lo - pad, -DBL_MAX);
		hi = fmin(hi + pad, DBL_MAX);
		half = half_span(lo, hi);
	}
	/* log10 of the span per gap, the span counted in halves */
	mag = pow(10, floor(log10(half / (double)(max > 1 ? max - 1 : 1)) + log10(2.0)));
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (!isfinite(steps[i] * mag))
			break; /* 10 x 1e308: keep the step before */
		step = steps[i] * mag;
		if (ceil(hi / step) - floor(lo / step) + 1 <= (double)max)
			break;
	}
	*a = floor(lo / step) * step;
	*b = ceil(hi / step) * step;
	if (!isfinite(*a)) /* a round tick beyond the largest double */
		*a = lo;
	if (!isfinite(*b))
		*b = hi;
	for (double v = *a; isfinite(v) && v - *b <= step * 1e-9 && n < max; v += step)
		t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

/* Ticks at every whole number from lo to hi, with half a unit around:
 * 1 and 2 ranks, not 1.2 and 1.4. */
static void whole_ticks(struct chart *c, double lo, double hi)
{
	c->nxt = 0;
	for (double v = ceil(lo); v <= floor(hi) && c->nxt < CHART_MAX_TICKS; v++)
		c->xt[c->nxt++] = v;
	c->x0 = fmin(lo, ceil(lo) - 0.5);
	c->x1 = fmax(hi, floor(hi) + 0.5);
}

void chart_fit(struct chart *c)
{
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;

	for (size_t i = 0; i < c->nseries; i++)
		for (size_t k = 0; k < c->series[i].n; k++) {
			double x = c->series[i].x[k], y = c->series[i].y[k];

			if (!isfinite(x) || !isfinite(y))
				continue;
			xlo = fmin(xlo, x);
			xhi = fmax(xhi, x);
			ylo = fmin(ylo, y);
			yhi = fmax(yhi, y);
		}
	if (!isfinite(xlo))
		xlo = 0, xhi = 1, ylo = 0, yhi = 1;
	if (c->y_from_zero && ylo > 0)
		ylo = 0;
	/* markers at the ends would be cut in half by the frame */
	for (size_t i = 0; i < c->nseries && isfinite(xlo); i++)
		if (c->series[i].points) {
			double pad = half_span(xlo, xhi) * 0.08;

			xlo -= xlo >= 0 && xlo - pad < 0 ? xlo : pad;
			xhi += pad;
			xlo = fmax(xlo, -DBL_MAX);
			xhi = fmin(xhi, DBL_MAX);
			break;
		}
	if (c->nxnames) {
		xlo = -0.5;
		xhi = (double)c->nxnames - 0.5;
		c->x0 = xlo;
		c->x1 = xhi;
		c->nxt = 0;
		for (size_t i = 0; i < c->nxnames && i < CHART_MAX_TICKS; i++)
			c->xt[c->nxt++] = (double)i;
	} else {
		c->nxt = chart_nice_ticks(xlo, xhi, 8, c->xt, &c->x0, &c->x1);
	}
	if (c->x_whole && c->nxt > 1 && c->xt[1] - c->xt[0] < 1)
		whole_ticks(c, xlo, xhi);
	c->nyt = chart_nice_ticks(ylo, yhi, 7, c->yt, &c->y0, &c->y1);
}

void chart_area(const struct chart *c, double *l, double *t, double *r, double *b)
{
	*l = LEFT;
	*t = TOP;
	*r = c->width - RIGHT;
	*b = c->height - BOTTOM;
}

double chart_map_x(const struct chart *c, double x)
{
	double l, t, r, b;

	chart_area(c, &l, &t, &r, &b);
	return l + half_span(c->x0, x) / half_span(c->x0, c->x1) * (r - l);
}

double chart_map_y(const struct chart *c, double y)
{
	double l, t, r, b;

	chart_area(c, &l, &t, &r, &b);
	return b - half_span(c->y0, y) / half_span(c->y0, c->y1) * (b - t);
}

/* Whole numbers as they are (80000, not 8e+04), others %g with at most
 * 4 significant digits: tick labels stay short. */
static void tick_text(double v, char *buf, size_t len)
{
	if (fabs(v) < 1e7 && v == floor(v))
		strfmt_label(buf, len, "%.0f", v);
	else
		strfmt_label(buf, len, "%.4g", v);
}

static void text_at(cairo_t *cr, const char *s, double x, double y, double ax, double ay)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - e.width * ax - e.x_bearing, y + e.height * ay);
	cairo_show_text(cr, s);
}

static void draw_axes(const struct chart *c, cairo_t *cr)
{
	double l, t, r, b;
	char buf[32];

	chart_area(c, &l, &t, &r, &b);
	cairo_set_font_size(cr, 12);
	for (size_t i = 0; i < c->nyt; i++) {
		double y = chart_map_y(c, c->yt[i]);

		cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
		cairo_move_to(cr, l, y);
		cairo_line_to(cr, r, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		tick_text(c->yt[i], buf, sizeof(buf));
		text_at(cr, buf, l - 6, y, 1, 0.5);
	}
	for (size_t i = 0; i < c->nxt; i++) {
		double x = chart_map_x(c, c->xt[i]);
		const char *s = buf;

		if (c->nxnames)
			s = c->xnames[(size_t)c->xt[i]];
		else
			tick_text(c->xt[i], buf, sizeof(buf));
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		cairo_move_to(cr, x, b);
		cairo_line_to(cr, x, b + 4);
		cairo_stroke(cr);
		text_at(cr, s, x, b + 8, 0.5, 1);
	}
	cairo_rectangle(cr, l, t, r - l, b - t);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 13);
	text_at(cr, c->xlabel, (l + r) / 2, c->height - 14, 0.5, 0);
	cairo_save(cr);
	cairo_translate(cr, 18, (t + b) / 2);
	cairo_rotate(cr, -M_PI / 2);
	text_at(cr, c->ylabel, 0, 0, 0.5, 0.5);
	cairo_restore(cr);
	cairo_set_font_size(cr, 15);
	text_at(cr, c->title, (l + r) / 2, 14, 0.5, 0.5);
}

static void draw_marks(const struct chart *c, cairo_t *cr)
{
	static const double dash[] = { 4, 4 };
	double l, t, r, b;

	chart_area(c, &l, &t, &r, &b);
	cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
	cairo_set_dash(cr, dash, 2, 0);
	for (size_t i = 0; i < c->nmarks; i++) {
		double x = chart_map_x(c, c->marks[i]);

		if (x < l || x > r)
			continue;
		cairo_move_to(cr, x, t);
		cairo_line_to(cr, x, b);
		cairo_stroke(cr);
	}
	cairo_set_dash(cr, NULL, 0, 0);
}

/* Each flag a solid dark red line with its label at the top, inside the
 * plot area; labels of flags close together step down a line each (up
 * to three) so they do not overprint. */
static void draw_flags(const struct chart *c, cairo_t *cr)
{
	double l, t, r, b, last = -1e9;
	int row = 0;

	chart_area(c, &l, &t, &r, &b);
	cairo_set_font_size(cr, 11);
	for (size_t i = 0; i < c->nflags; i++) {
		double x = chart_map_x(c, c->flags[i].x);

		if (x < l || x > r)
			continue;
		row = x - last < 90 ? (row + 1) % 3 : 0;
		last = x;
		cairo_set_source_rgb(cr, 0.7, 0.1, 0.1);
		cairo_move_to(cr, x, t);
		cairo_line_to(cr, x, b);
		cairo_stroke(cr);
		/* past the middle, the label goes left of its line */
		text_at(cr, c->flags[i].label, x > (l + r) / 2 ? x - 3 : x + 3, t + 8 + 13 * row,
			x > (l + r) / 2 ? 1 : 0, 0.5);
	}
}

/* A bar from the axis's foot (or 0, when the axis spans it) to each
 * point, 0.6 of the spacing of whole x values wide, at most 80 pixels:
 * values of separate things (nodes), which a line would join. */
static void draw_bars(const struct chart *c, const struct chart_series *s, cairo_t *cr)
{
	double w = fmin(0.6 * fabs(chart_map_x(c, 1) - chart_map_x(c, 0)), 80);
	double base = chart_map_y(c, c->y0 < 0 && c->y1 > 0 ? 0 : c->y0);

	for (size_t k = 0; k < s->n; k++) {
		double x, y;

		if (!isfinite(s->x[k]) || !isfinite(s->y[k]))
			continue;
		x = chart_map_x(c, s->x[k]);
		y = chart_map_y(c, s->y[k]);
		cairo_rectangle(cr, x - w / 2, fmin(y, base), w, fabs(base - y));
	}
	cairo_fill(cr);
}

static void draw_series(const struct chart *c, const struct chart_series *s, size_t i,
			cairo_t *cr)
{
	static const double dash[] = { 7, 4 };
	unsigned char rgb[3];
	bool pen = false;

	chart_color(i, rgb);
	cairo_set_source_rgb(cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
	if (s->bars) {
		draw_bars(c, s, cr);
		return;
	}
	cairo_set_line_width(cr, 2.5);
	cairo_set_dash(cr, s->dashed ? dash : NULL, s->dashed ? 2 : 0, 0);
	for (size_t k = 0; k < s->n; k++) {
		double x, y;

		if (!isfinite(s->x[k]) || !isfinite(s->y[k])) {
			pen = false;
			continue;
		}
		x = chart_map_x(c, s->x[k]);
		y = chart_map_y(c, s->y[k]);
		if (pen)
			cairo_line_to(cr, x, y);
		else
			cairo_move_to(cr, x, y);
		pen = true;
	}
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	for (size_t k = 0; s->points && k < s->n; k++) {
		if (!isfinite(s->x[k]) || !isfinite(s->y[k]))
			continue;
		cairo_new_sub_path(cr);
		cairo_arc(cr, chart_map_x(c, s->x[k]), chart_map_y(c, s->y[k]), 4.5, 0, 2 * M_PI);
		cairo_fill(cr);
	}
	cairo_set_line_width(cr, 1);
}

/* How many points of the curves, sampled along each segment, fall in
 * the box (x, y, w, h) in pixels. */
static size_t covered(const struct chart *c, double x, double y, double w, double h)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nseries; i++) {
		const struct chart_series *s = &c->series[i];

		for (size_t k = 0; k < s->n; k++) {
			bool seg = k && isfinite(s->x[k - 1]) && isfinite(s->y[k - 1]);
			double px = chart_map_x(c, s->x[k]), py = chart_map_y(c, s->y[k]);
			double qx = seg ? chart_map_x(c, s->x[k - 1]) : px;
			double qy = seg ? chart_map_y(c, s->y[k - 1]) : py;

			if (!isfinite(s->x[k]) || !isfinite(s->y[k]))
				continue;
			for (int j = 0; j < 16; j++) {
				double u = px + (qx - px) * j / 16, v = py + (qy - py) * j / 16;

				n += u >= x && u <= x + w && v >= y && v <= y + h;
			}
		}
	}
	return n;
}

void chart_legend_place(const struct chart *c, double w, double h, double *x, double *y)
{
	double l, t, r, b, best = INFINITY;
	double cx[4], cy[4];

	chart_area(c, &l, &t, &r, &b);
	/* top right, top left, bottom right, bottom left: the first that the
	 * curves cross least */
	cx[0] = cx[2] = r - w - 6;
	cx[1] = cx[3] = l + 6;
	cy[0] = cy[1] = t + 6;
	cy[2] = cy[3] = b - h - 6;
	for (int i = 0; i < 4; i++) {
		double n = (double)covered(c, cx[i], cy[i], w, h);

		if (n < best) {
			best = n;
			*x = cx[i];
			*y = cy[i];
		}
	}
}

static void draw_legend(const struct chart *c, cairo_t *cr)
{
	double w = 0, h = 18.0 * (double)c->nseries + 8, x, y;

	cairo_set_font_size(cr, 12);
	for (size_t i = 0; i < c->nseries; i++) {
		cairo_text_extents_t e;

		cairo_text_extents(cr, c->series[i].label, &e);
		w = fmax(w, e.x_advance);
	}
	if (c->nseries < 2 && !(c->nseries == 1 && *c->series[0].label))
		return;
	w += 38;
	chart_legend_place(c, w, h, &x, &y);
	cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
	cairo_rectangle(cr, x, y, w, h);
	cairo_fill(cr);
	for (size_t i = 0; i < c->nseries; i++) {
		double ly = y + 12 + 18.0 * (double)i;
		unsigned char rgb[3];

		chart_color(i, rgb);
		cairo_set_source_rgb(cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
		cairo_rectangle(cr, x + 6, ly - 2, 20, 4);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
		text_at(cr, c->series[i].label, x + 32, ly, 0, 0.5);
	}
}

/* cairo's PNG writer, into memory: the file itself is written by
 * fileio_write_atomic, never by cairo (which would fopen a name). */
static cairo_status_t to_sbuf(void *closure, const unsigned char *data, unsigned int len)
{
	sbuf_add(closure, data, len);
	return CAIRO_STATUS_SUCCESS;
}

int chart_write_png(struct chart *c, const char *path, struct sbuf *err)
{
	cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, c->width, c->height);
	cairo_t *cr = cairo_create(sf);
	struct sbuf png = SBUF_INIT;
	cairo_status_t st;
	int rc = 0;

	chart_fit(c);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_line_width(cr, 1);
	draw_axes(c, cr);
	draw_marks(c, cr);
	draw_flags(c, cr);
	cairo_save(cr);
	{
		double l, t, r, b;

		chart_area(c, &l, &t, &r, &b);
		cairo_rectangle(cr, l, t, r - l, b - t);
		cairo_clip(cr);
	}
	for (size_t i = 0; i < c->nseries; i++)
		draw_series(c, &c->series[i], i, cr);
	cairo_restore(cr);
	draw_legend(c, cr);
	cairo_destroy(cr);
	st = cairo_surface_write_to_png_stream(sf, to_sbuf, &png);
	cairo_surface_destroy(sf);
	if (st != CAIRO_STATUS_SUCCESS) {
		sbuf_addf(err, "cannot write %s: %s", path, cairo_status_to_string(st));
		rc = -1;
	} else {
		rc = fileio_write_atomic(path, png.buf, png.len, CHART_FILE_MODE, 0, err);
	}
	sbuf_release(&png);
	return rc;
}
