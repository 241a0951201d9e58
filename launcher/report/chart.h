/* chart.h - line, point and bar charts as PNG files, drawn with cairo.
 *
 * A chart is series of (x, y) points, optional vertical markers (epochs),
 * labelled vertical flags (a run's requeues, attempts, resizes) and
 * labels.  chart_fit (pure) picks the axes' ranges and "nice" ticks;
 * chart_map_x/y (pure) give the pixel of a value, so a test can find a
 * curve in the picture; chart_write_png draws with cairo's paths and
 * text (nothing is drawn pixel by pixel) and writes the file.
 */
#ifndef HPT_CHART_H
#define HPT_CHART_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

#define CHART_MAX_TICKS 12

struct chart_series {
	char *label;        /* owned */
	double *x, *y;      /* owned; NAN points are gaps */
	size_t n;
	bool points;        /* markers at each point (a sweep), not only a line */
	bool dashed;
	bool bars;          /* a bar to each point instead of a line (one per node) */
};

/* A vertical line at x with a short label at its top. */
struct chart_flag {
	double x;
	char *label; /* owned */
};

struct chart {
	const char *title, *xlabel, *ylabel;
	int width, height;  /* pixels */
	struct chart_series *series;
	size_t nseries;
	double *marks;      /* owned: x of vertical markers (epoch ends) */
	size_t nmarks;
	struct chart_flag *flags; /* owned: solid, labelled, drawn over the marks */
	size_t nflags;
	const char *const *xnames; /* categorical x: the name of x = 0, 1, ... */
	size_t nxnames;
	bool y_from_zero;
	bool x_whole;       /* x ticks at whole numbers only (ranks) */
	/* chart_fit fills: */
	double x0, x1, y0, y1;
	double xt[CHART_MAX_TICKS], yt[CHART_MAX_TICKS];
	size_t nxt, nyt;
};

void chart_init(struct chart *c, const char *title, const char *xlabel, const char *ylabel,
		int width, int height);
void chart_release(struct chart *c);
/* Adds a series (copies x and y); returns it. */
struct chart_series *chart_add(struct chart *c, const char *label, const double *x,
			       const double *y, size_t n);
void chart_mark(struct chart *c, double x);
/* A labelled vertical line at x (copies label): where a run broke off
 * and went on, which a dashed epoch mark must not be mistaken for. */
void chart_flag(struct chart *c, double x, const char *label);
/* Whether any series has a finite point. */
bool chart_has_data(const struct chart *c);

/* Ticks at 1, 2 or 5 times a power of ten covering [lo, hi], at most
 * max of them; *a and *b become the first and last.  Returns the count. */
size_t chart_nice_ticks(double lo, double hi, size_t max, double *t, double *a, double *b);
/* Ranges and ticks from the data. */
void chart_fit(struct chart *c);
/* The plot area, in pixels: left, top, right, bottom. */
void chart_area(const struct chart *c, double *l, double *t, double *r, double *b);
double chart_map_x(const struct chart *c, double x);
double chart_map_y(const struct chart *c, double y);
/* Where a legend box w x h pixels goes: the corner of the plot area
 * (top right, top left, bottom right, bottom left) that the curves cross
 * least.  Call after chart_fit. */
void chart_legend_place(const struct chart *c, double w, double h, double *x, double *y);
/* The colour of series i, as 0..255 RGB. */
void chart_color(size_t i, unsigned char rgb[3]);

/* A chart file's mode: report's output is private, as a run is. */
#define CHART_FILE_MODE 0600

/* Fits and draws c into path (a PNG), atomically: drawn into memory,
 * then fileio_write_atomic (a mkstemp file beside path, renamed over it;
 * never a predictable name, never through a link planted at path).
 * 0, or -1 with err. */
int chart_write_png(struct chart *c, const char *path, struct sbuf *err);

#endif
