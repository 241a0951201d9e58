/* tune.c - the pure part of choosing kernels by measurement (tune.h):
 * the fastest candidate, the time budget, the cache key, the mode. */
#include "trainer/tune.h" // defines: struct tune_cand, struct tune_key, tune_*

#include <stdio.h>
#include <string.h>

int tune_pick(const struct tune_cand *c, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (c[i].ms >= 0 && (best < 0 || c[i].ms < c[best].ms))
			best = (int)i;
	return best;
}

bool tune_may_go_on(double spent_s, double next_s, double step_s)
{
	double limit = TUNE_MAX_S;

	if (step_s > 0 && TUNE_SHARE * TUNE_RUN_STEPS * step_s < limit)
		limit = TUNE_SHARE * TUNE_RUN_STEPS * step_s;
	return spent_s + (next_s > 0 ? next_s : 0) <= limit;
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

	for (size_t i = 0; i < 3; i++) {
		put(buf, size, &len, words[i], true);
		put(buf, size, &len, "|", false);
	}
	snprintf(num, sizeof(num), "t%d|", k->threads);
	put(buf, size, &len, num, false);
	put(buf, size, &len, k->op, true);
	put(buf, size, &len, "|", false);
	put(buf, size, &len, k->prec, true);
	for (size_t i = 0; i < k->nshape; i++) {
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
