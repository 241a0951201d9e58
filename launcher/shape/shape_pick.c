/* shape_pick.c - predicted runs of candidate shapes and the pick: see
 * shape_pick.h.  Core. */
#include "launcher/shape/shape_pick.h" // defines: struct shape_candidate, shape_pick
#include "common/numcheck.h"           // defines: numcheck_int64, numcheck_time_add
#include "common/sbuf.h"               // defines: struct sbuf, xcalloc, SBUF_CLIP

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHAPES 64
#define MAX_NODES 100000u
/* a predicted run of more than 100 years is no plan: the past runs'
 * figures cannot be right, and the shape is not offered */
#define MAX_RUN_S (100 * 366 * 86400.0)

int64_t shape_steps(const struct shape_work *w, unsigned ranks)
{
	double global = (double)w->batch_per_rank * ranks;
	int64_t n, per_epoch;

	if (w->fixed_steps)
		return w->max_steps > 0 ? w->max_steps : 0;
	if (!(global > 0) || !ranks)
		return 0;
	if (w->max_steps > 0) {
		double steps = ceil((double)w->max_steps * w->spec_ranks / ranks);

		return numcheck_int64(steps, &n) ? 0 : n;
	}
	if (w->epochs <= 0 || !(w->samples_per_epoch > 0))
		return 0;
	/* the trainer ends each epoch on a last, partial batch; an epoch's
	 * samples come from past runs' records: no step count past int64 */
	if (numcheck_int64(ceil(w->samples_per_epoch / global), &per_epoch) ||
	    __builtin_mul_overflow(w->epochs, per_epoch, &n))
		return 0;
	return n;
}

void shape_predict(struct shape_candidate *c, const struct shape_fit *f,
		   const struct shape_work *w, double overhead_s)
{
	unsigned ranks = c->nodes * c->ranks_per_node;
	double step = shape_model_step_s(f, c->nodes, c->ranks_per_node, &c->rel_err);

	c->steps = shape_steps(w, ranks);
	c->run_s = (double)c->steps * step + overhead_s;
	c->node_hours = c->nodes * c->run_s / 3600.0;
	if (!(c->run_s >= 0 && c->run_s <= MAX_RUN_S) || !isfinite(c->rel_err) ||
	    numcheck_time_add(c->start, c->run_s, &c->finish)) {
		c->runnable = false;
		free(c->why);
		c->why = xstrdup("its predicted run is out of all measure (over 100 years, or "
				 "not a number): the past runs' figures cannot be right");
	}
}

/* a before b in the order the pick prefers (see shape_pick.h) */
static bool better(const struct shape_candidate *a, const struct shape_candidate *b,
		   bool by_cost)
{
	if (by_cost && a->node_hours != b->node_hours)
		return a->node_hours < b->node_hours;
	if (a->finish != b->finish)
		return a->finish < b->finish;
	return a->node_hours < b->node_hours;
}

long shape_pick(const struct shape_candidate *v, size_t n, struct shape_deadline d)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		if (!v[i].runnable || !v[i].steps || (d.set && v[i].finish > d.at))
			continue;
		if (best < 0 || better(&v[i], &v[best], d.set))
			best = (long)i;
	}
	return best;
}

static int parse_uint(const char *s, const char *end, unsigned max, unsigned *out)
{
	unsigned long v = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return -1;
	}
	*out = (unsigned)v;
	return v ? 0 : -1;
}

int shape_parse_list(const char *s, struct shape_candidate **v, size_t *n, struct sbuf *err)
{
	*v = xcalloc(MAX_SHAPES, sizeof(**v));
	*n = 0;
	while (*s) {
		const char *end = s + strcspn(s, ","), *x = memchr(s, 'x', (size_t)(end - s));
		struct shape_candidate *c = &(*v)[*n];

		if (*n == MAX_SHAPES) {
			sbuf_addf(err, "more than %d shapes", MAX_SHAPES);
			goto fail;
		}
		if (!x || parse_uint(s, x, MAX_NODES, &c->nodes) ||
		    parse_uint(x + 1, end, 1024, &c->ranks_per_node)) {
			sbuf_addf(err, "expected NODESxRANKS (e.g. 2x4), got '%.*s'",
				  (int)(end - s > 64 ? 64 : end - s), s);
			goto fail;
		}
		(*n)++;
		s = *end ? end + 1 : end;
		if (*end && !*s) {
			sbuf_addstr(err, "a trailing ','");
			goto fail;
		}
	}
	if (*n)
		return 0;
	sbuf_addstr(err, "no shape given");
fail:
	free(*v);
	*v = NULL;
	*n = 0;
	return -1;
}

/* "+N[smhd]" from now: 0 and *out, or -1. */
static int parse_relative(const char *s, time_t now, time_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s + 1, &end, 10);
	if (errno || end == s + 1 || v <= 0 || v > 366LL * 86400)
		return -1;
	switch (*end) {
	case '\0': case 's': break;
	case 'm': v *= 60; break;
	case 'h': v *= 3600; break;
	case 'd': v *= 86400; break;
	default: return -1;
	}
	if (*end && end[1])
		return -1;
	*out = now + (time_t)v;
	return 0;
}

/* A local "YYYY-MM-DDTHH:MM[:SS]": 0 and *out, -1 for another form, -2
 * when mktime would move it (Feb 30, hour 25 is refused by strptime
 * already, a time a DST change skips) rather than read it back. */
static int parse_absolute(const char *s, time_t *out)
{
	struct tm tm, asked;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M", &tm);
	if (end && *end == ':')
		end = strptime(end, ":%S", &tm);
	if (!end || *end)
		return -1;
	tm.tm_isdst = -1;
	asked = tm;
	*out = mktime(&tm);
	if (tm.tm_year != asked.tm_year || tm.tm_mon != asked.tm_mon ||
	    tm.tm_mday != asked.tm_mday || tm.tm_hour != asked.tm_hour ||
	    tm.tm_min != asked.tm_min || tm.tm_sec != asked.tm_sec)
		return -2;
	return 0;
}

int shape_parse_deadline(const char *s, time_t now, struct shape_deadline *out)
{
	int rc = *s == '+' ? parse_relative(s, now, &out->at) : parse_absolute(s, &out->at);

	out->set = !rc;
	return rc;
}

void shape_candidates_free(struct shape_candidate *v, size_t n)
{
	for (size_t i = 0; i < n && v; i++)
		free(v[i].why);
	free(v);
}
