/* tune.c - the pure part of choosing kernels by measurement (tune.h):
 * the fastest candidate, the time budget, a candidate's median time,
 * what a layer's tuning found,
 * the cache key, the mode. */
#include "trainer/cpu/tune.h" // defines: struct tune_cand, struct tune_key, tune_*

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tune_pick(const struct tune_cand *c, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (c[i].ms >= 0 && (best < 0 || c[i].ms < c[best].ms))
			best = (int)i;
	return best;
}

bool tune_may_go_on(double spent_s, double next_s)
{
	return spent_s + (next_s > 0 ? next_s : 0) <= TUNE_MAX_S;
}

/* max - min of v[0, n) over their median. */
static double spread(const double *v, int n)
{
	double s[TUNE_REPS], lo = v[0], hi = v[0], mid;

	for (int i = 0; i < n; i++) {
		s[i] = v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	mid = tune_median(s, n);
	return mid > 0 ? (hi - lo) / mid : 0;
}

bool tune_may_repeat(const double *v, int done, double spent_s, double pass_s)
{
	/* the minimum may overrun the budget by TUNE_MIN_REPS short passes:
	 * a candidate admitted but timed once would be a guess */
	if (done < TUNE_MIN_REPS)
		return true;
	return done < TUNE_REPS && spread(v, done) > TUNE_SPREAD &&
	       tune_may_go_on(spent_s, pass_s);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double tune_median(double *v, int n)
{
	if (n < 1)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool tune_is_complete(const struct tune_cand *c, size_t n)
{
	size_t timed = 0;

	for (size_t i = 0; i < n; i++) {
		if (c[i].ms == TUNE_NOT_REACHED)
			return false;
		timed += c[i].ms >= 0;
	}
	return timed >= 2;
}

/* Appends to buf as snprintf would, keeping *len the length needed. */
__attribute__((format(printf, 4, 5))) static void addf(char *buf, size_t size, size_t *len,
							 const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf + (*len < size ? *len : size), *len < size ? size - *len : 0, fmt, ap);
	va_end(ap);
	*len += r > 0 ? (size_t)r : 0;
}

int tune_describe(const struct tune_cand *c, size_t n, char *buf, size_t size)
{
	int best = tune_pick(c, n);
	size_t len = 0, timed = 0, untimed = 0;

	for (size_t i = 0; i < n; i++)
		timed += c[i].ms >= 0, untimed += c[i].ms == TUNE_NOT_REACHED;
	if (size)
		buf[0] = '\0';
	if (timed < 2 && !untimed)
		return 0;
	if (best >= 0)
		addf(buf, size, &len, "%s %.2f ms", c[best].name, c[best].ms);
	for (size_t i = 0; i < n; i++)
		if ((int)i != best && c[i].ms >= 0)
			addf(buf, size, &len, ", %s %.2f ms", c[i].name, c[i].ms);
	for (size_t i = 0, k = 0; i < n; i++) {
		if (c[i].ms != TUNE_NOT_REACHED)
			continue;
		if (k++)
			addf(buf, size, &len, ", %s", c[i].name);
		else
			addf(buf, size, &len, "%s%g s budget spent before %s", timed ? "; " : "",
			     TUNE_MAX_S, c[i].name);
	}
	return (int)len;
}

/* Appends s to buf at *len; a field (field true) with spaces and '|'
 * as '_', so that fields never run into each other. */
static void put(char *buf, size_t size, size_t *len, const char *s, bool field)
{
	for (; s && *s; s++, (*len)++)
		if (*len + 1 < size)
			buf[*len] = field && (*s == ' ' || *s == '|' || *s == '\t' || *s == '\n')
					    ? '_' : *s;
}

int tune_key_format(const struct tune_key *k, char *buf, size_t size)
{
	const char *words[] = { k->cpu, k->onednn, k->isa };
	char num[16];
	size_t len = 0;

	/* encode-ok: an int and two characters in 16 */
	snprintf(num, sizeof(num), "v%d|", TUNE_KEY_VERSION);
	put(buf, size, &len, num, false);
	for (size_t i = 0; i < 3; i++) {
		put(buf, size, &len, words[i], true);
		put(buf, size, &len, "|", false);
	}
	/* encode-ok: an int and two characters in 16 */
	snprintf(num, sizeof(num), "t%d|", k->threads);
	put(buf, size, &len, num, false);
	put(buf, size, &len, k->op, true);
	put(buf, size, &len, "|", false);
	put(buf, size, &len, k->prec, true);
	for (size_t i = 0; i < k->nshape; i++) {
		/* encode-ok: an int and two characters in 16 */
		snprintf(num, sizeof(num), "%c%d", i ? 'x' : '|', k->shape[i]);
		put(buf, size, &len, num, false);
	}
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return (int)len;
}

int tune_parse_mode(const char *s, bool *tune)
{
	if (!s || !*s || !strcmp(s, "tune")) {
		*tune = true;
		return 0;
	}
	if (!strcmp(s, "fixed")) {
		*tune = false;
		return 0;
	}
	return -1;
}
