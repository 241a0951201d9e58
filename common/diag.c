/* diag.c - collect and render positioned diagnostics.
 * Core except diag_report(), the one place diagnostics are printed. */
#include "common/diag.h" // defines: struct diag_list, diag_*
#include "common/sbuf.h" // defines: struct sbuf, x* allocators

#include <stdlib.h>
#include <string.h>

void diag_list_init(struct diag_list *dl)
{
	memset(dl, 0, sizeof(*dl));
}

void diag_list_release(struct diag_list *dl)
{
	for (size_t i = 0; i < dl->n; i++) {
		free(dl->v[i].where);
		free(dl->v[i].path);
		free(dl->v[i].msg);
	}
	free(dl->v);
	diag_list_init(dl);
}

void diag_vadd(struct diag_list *dl, enum diag_severity sev, const char *where,
	       int line, int col, const char *path, const char *fmt, va_list ap)
{
	size_t max = dl->max ? dl->max : 100;
	struct sbuf msg = SBUF_INIT;
	struct diag *d;

	/* A hostile file can hold millions of errors; reporting the first
	 * hundred is as useful and keeps memory bounded. */
	if (dl->n >= max) {
		dl->dropped++;
		return;
	}
	if (dl->n == dl->alloc) {
		dl->alloc = dl->alloc ? dl->alloc * 2 : 8;
		dl->v = xrealloc(dl->v, dl->alloc * sizeof(*dl->v));
	}
	sbuf_vaddf(&msg, fmt, ap);
	d = &dl->v[dl->n++];
	d->severity = sev;
	d->where = xstrdup(where ? where : "");
	d->line = line;
	d->col = col;
	d->path = xstrdup(path ? path : "");
	d->msg = sbuf_detach(&msg, NULL);
}

void diag_add(struct diag_list *dl, enum diag_severity sev, const char *where,
	      int line, int col, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(dl, sev, where, line, col, path, fmt, ap);
	va_end(ap);
}

size_t diag_count(const struct diag_list *dl, enum diag_severity sev)
{
	size_t n = 0;

	for (size_t i = 0; i < dl->n; i++)
		n += dl->v[i].severity == sev;
	if (sev == DIAG_ERROR)
		n += dl->dropped;
	return n;
}

bool diag_has_errors(const struct diag_list *dl)
{
	return diag_count(dl, DIAG_ERROR) > 0;
}

void diag_sort(struct diag_list *dl)
{
	/* Insertion sort: stable, and lists are short (at most max). */
	for (size_t i = 1; i < dl->n; i++) {
		struct diag key = dl->v[i];
		size_t j = i;

		while (j > 0) {
			const struct diag *p = &dl->v[j - 1];
			int c = strcmp(p->where, key.where);

			if (!c)
				c = p->line != key.line ? (p->line > key.line ? 1 : -1)
							: (p->col > key.col) - (p->col < key.col);
			if (c <= 0)
				break;
			dl->v[j] = dl->v[j - 1];
			j--;
		}
		dl->v[j] = key;
	}
}

/* A flag as where ("--sweep lr=1,2,..." whole) and a key path are the
 * user's words, which can be 100 KB: shown clipped (sbuf_clip).  A file
 * name is shown whole, as a compiler does. */
void diag_format(const struct diag *d, struct sbuf *out)
{
	char clip[SBUF_CLIP_SIZE];
	size_t start = out->len;

	if (*d->where)
		sbuf_addf(out, "%s:", *d->where == '-' ? sbuf_clip(d->where, clip) : d->where);
	if (d->line > 0)
		sbuf_addf(out, "%d:%d:", d->line, d->col);
	if (out->len > start)
		sbuf_addch(out, ' ');
	if (d->severity == DIAG_WARNING)
		sbuf_addstr(out, "warning: ");
	if (*d->path)
		sbuf_addf(out, "%s: ", sbuf_clip(d->path, clip));
	sbuf_addstr(out, d->msg);
}

void diag_report_as(FILE *fp, const char *prefix, const struct diag_list *dl)
{
	struct sbuf line = SBUF_INIT;

	for (size_t i = 0; i < dl->n; i++) {
		sbuf_reset(&line);
		diag_format(&dl->v[i], &line);
		fprintf(fp, "%s%s%s\n", prefix ? prefix : "", prefix ? ": " : "", line.buf);
	}
	if (dl->dropped)
		fprintf(fp, "%s: %zu more errors not shown\n", prefix ? prefix : "hpctrain",
			dl->dropped);
	sbuf_release(&line);
}

void diag_report(FILE *fp, const struct diag_list *dl)
{
	diag_report_as(fp, NULL, dl);
}

static bool diag_equal(const struct diag *a, const struct diag *b)
{
	return a->severity == b->severity && a->line == b->line && a->col == b->col &&
	       !strcmp(a->where, b->where) && !strcmp(a->path, b->path) && !strcmp(a->msg, b->msg);
}

void diag_drop_warnings(struct diag_list *dl)
{
	size_t kept = 0;

	for (size_t i = 0; i < dl->n; i++) {
		if (dl->v[i].severity == DIAG_ERROR) {
			dl->v[kept++] = dl->v[i];
			continue;
		}
		free(dl->v[i].where);
		free(dl->v[i].path);
		free(dl->v[i].msg);
	}
	dl->n = kept;
}

void diag_merge(struct diag_list *dst, const struct diag_list *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct diag *d = &src->v[i];
		bool seen = false;

		for (size_t j = 0; j < dst->n && !seen; j++)
			seen = diag_equal(&dst->v[j], d);
		if (!seen)
			diag_add(dst, d->severity, d->where, d->line, d->col, d->path, "%s", d->msg);
	}
	dst->dropped += src->dropped;
}
