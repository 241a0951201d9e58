/* linediff.c - a unified diff of two texts (Myers' algorithm).  Core
 * (pure); see linediff.h. */
#include "common/linediff.h" // defines: linediff_unified, linediff_is_text
#include "common/sbuf.h"     // defines: struct sbuf, xmalloc, xcalloc

#include <stdlib.h>
#include <string.h>

/* A line with its newline, when it has one. */
struct line {
	const char *s;
	size_t len;
};

/* The edit script: one op per line of a or b, in order. */
enum op { OP_SAME, OP_DEL, OP_ADD };

bool linediff_is_text(const char *buf, size_t len)
{
	return len <= LINEDIFF_MAX_BYTES && !memchr(buf, '\0', len);
}

static size_t split(const char *s, size_t len, struct line **out)
{
	size_t n = 1;

	for (const char *p = s; (p = memchr(p, '\n', len - (size_t)(p - s))); p++)
		n++;
	*out = xmalloc(n * sizeof(**out));
	n = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(s + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - s) + 1 : len;

		(*out)[n++] = (struct line){ s + i, end - i };
		i = end;
	}
	return n;
}

static bool same(const struct line *x, const struct line *y)
{
	return x->len == y->len && !memcmp(x->s, y->s, x->len);
}

/* Myers: the edit script of a[0,n) into b[0,m), written backwards from
 * ops[*k - 1] down.  trace[d] holds V before round d for diagonals
 * -d-1..d+1.  Returns -1, writing nothing, past LINEDIFF_MAX_EDITS. */
static int myers(const struct line *a, int n, const struct line *b, int m, enum op *ops,
		 size_t *k)
{
	int max = n + m, found = -1, x, y;
	int *base = xcalloc(2 * (size_t)max + 3, sizeof(*base)), *v = base + max + 1;
	int **trace = xcalloc(LINEDIFF_MAX_EDITS + 1, sizeof(*trace));

	for (int d = 0; d <= max && d <= LINEDIFF_MAX_EDITS && found < 0; d++) {
		trace[d] = xmalloc((2 * (size_t)d + 3) * sizeof(**trace));
		memcpy(trace[d], v - d - 1, (2 * (size_t)d + 3) * sizeof(**trace));
		for (int kd = -d; kd <= d; kd += 2) {
			x = kd == -d || (kd != d && v[kd - 1] < v[kd + 1]) ? v[kd + 1] : v[kd - 1] + 1;
			y = x - kd;
			for (; x < n && y < m && same(&a[x], &b[y]); x++, y++)
				;
			v[kd] = x;
			if (x >= n && y >= m) {
				found = d;
				break;
			}
		}
	}
	x = n;
	y = m;
	for (int d = found; d >= 0; d--) {
		int *pv = trace[d] + d + 1, kd = x - y, pk, px, py;

		if (!d) {
			for (; x > 0; x--)
				ops[--*k] = OP_SAME;
			break;
		}
		pk = kd == -d || (kd != d && pv[kd - 1] < pv[kd + 1]) ? kd + 1 : kd - 1;
		px = pv[pk];
		py = px - pk;
		for (; x > px && y > py; x--, y--)
			ops[--*k] = OP_SAME;
		ops[--*k] = pk == kd + 1 ? OP_ADD : OP_DEL;
		x = px;
		y = py;
	}
	for (int d = 0; d <= LINEDIFF_MAX_EDITS; d++)
		free(trace[d]);
	free(trace);
	free(base);
	return found < 0 ? -1 : 0;
}

/* The whole script: the common head and tail kept, Myers between, or
 * all of a's middle removed then all of b's added past the limit. */
static size_t script(const struct line *a, size_t n, const struct line *b, size_t m,
		     enum op **out)
{
	size_t head = 0, tail = 0, len, k;
	enum op *ops;

	while (head < n && head < m && same(&a[head], &b[head]))
		head++;
	while (tail < n - head && tail < m - head && same(&a[n - 1 - tail], &b[m - 1 - tail]))
		tail++;
	/* at most n + m ops; the middle's own script fills from its end */
	ops = xmalloc((n + m + 1) * sizeof(*ops));
	len = head + (n - head - tail) + (m - head - tail) + tail;
	for (size_t i = 0; i < head; i++)
		ops[i] = OP_SAME;
	k = len - tail;
	for (size_t i = 0; i < tail; i++)
		ops[k + i] = OP_SAME;
	if (myers(a + head, (int)(n - head - tail), b + head, (int)(m - head - tail), ops, &k)) {
		k = head;
		for (size_t i = head; i < n - tail; i++)
			ops[k++] = OP_DEL;
		for (size_t i = head; i < m - tail; i++)
			ops[k++] = OP_ADD;
		*out = ops;
		return len;
	}
	/* Myers' script is shorter than len when it kept lines in the middle */
	memmove(ops + head, ops + k, (len - k) * sizeof(*ops));
	*out = ops;
	return head + len - k;
}

static void put_line(struct sbuf *out, char mark, const struct line *l)
{
	sbuf_addch(out, mark);
	sbuf_add(out, l->s, l->len);
	if (!l->len || l->s[l->len - 1] != '\n')
		sbuf_addstr(out, "\n\\ No newline at end of file\n");
}

/* diff -u's range: "l,n"; "l" when n is 1; the line before when n is 0. */
static void put_range(struct sbuf *out, char mark, size_t first, size_t count)
{
	if (count == 1)
		sbuf_addf(out, " %c%zu", mark, first + 1);
	else
		sbuf_addf(out, " %c%zu,%zu", mark, count ? first + 1 : first, count);
}

/* One hunk: ops[from, to), a's lines from ai, b's from bi. */
static void put_hunk(const enum op *ops, size_t from, size_t to, const struct line *a, size_t ai,
		     const struct line *b, size_t bi, struct sbuf *out)
{
	size_t na = 0, nb = 0;

	for (size_t i = from; i < to; i++) {
		na += ops[i] != OP_ADD;
		nb += ops[i] != OP_DEL;
	}
	sbuf_addstr(out, "@@");
	put_range(out, '-', ai, na);
	put_range(out, '+', bi, nb);
	sbuf_addstr(out, " @@\n");
	for (size_t i = from; i < to; i++) {
		if (ops[i] == OP_SAME) {
			put_line(out, ' ', &a[ai++]);
			bi++;
		} else if (ops[i] == OP_DEL) {
			put_line(out, '-', &a[ai++]);
		} else {
			put_line(out, '+', &b[bi++]);
		}
	}
}

/* Where the hunk that starts at change c ends: after its last change
 * closer than 2 * LINEDIFF_CONTEXT + 1 unchanged lines to the next. */
static size_t hunk_end(const enum op *ops, size_t len, size_t c)
{
	size_t last = c, i = c;

	while (i < len) {
		if (ops[i] != OP_SAME) {
			last = i++;
			continue;
		}
		if (i - last > 2 * LINEDIFF_CONTEXT)
			break;
		i++;
	}
	return last + 1 + LINEDIFF_CONTEXT < len ? last + 1 + LINEDIFF_CONTEXT : len;
}

size_t linediff_unified(const char *a, size_t alen, const char *b, size_t blen,
			const char *label_a, const char *label_b, struct sbuf *out,
			struct linediff_stat *st)
{
	struct linediff_stat count = { 0, 0 };
	struct line *la, *lb;
	size_t n = split(a, alen, &la), m = split(b, blen, &lb), len, edits = 0;
	size_t ai = 0, bi = 0, i = 0;
	enum op *ops;

	len = script(la, n, lb, m, &ops);
	while (i < len) {
		size_t from, to;

		if (ops[i] == OP_SAME) {
			ai++, bi++, i++;
			continue;
		}
		if (!edits)
			sbuf_addf(out, "--- %s\n+++ %s\n", label_a, label_b);
		from = i > LINEDIFF_CONTEXT ? i - LINEDIFF_CONTEXT : 0;
		ai -= i - from;
		bi -= i - from;
		to = hunk_end(ops, len, i);
		put_hunk(ops, from, to, la, ai, lb, bi, out);
		for (; from < to; from++) {
			count.removed += ops[from] == OP_DEL;
			count.added += ops[from] == OP_ADD;
			ai += ops[from] != OP_ADD;
			bi += ops[from] != OP_DEL;
		}
		edits = count.removed + count.added;
		i = to;
	}
	free(ops);
	free(la);
	free(lb);
	if (st)
		*st = count;
	return edits;
}
