/* stage_summary.c - the nodes' staging records summed (see
 * stage_summary.h).  Pure core: texts in, a summary out. */
#include "launcher/runs/stage_summary.h" // defines: struct stage_summary, stage_summary_*
#include "common/sbuf.h"                 // defines: struct sbuf, sbuf_add_number, xrealloc

#include <math.h> /* isfinite, isnan: macros, no libm */
#include <stdlib.h>
#include <string.h>

void stage_summary_init(struct stage_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->slowest = -1;
	s->median_s = NAN;
}

void stage_summary_release(struct stage_summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->nodes[i].node);
	free(s->nodes);
	stage_summary_init(s);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A byte count: a non-negative JSON integer; anything else is 0 and odd. */
static uint64_t count(json_t *o, const char *key, bool *odd)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		*odd = true;
		return 0;
	}
	return (uint64_t)json_integer_value(v);
}

int stage_summary_add(struct stage_summary *s, const char *text, size_t len)
{
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *name = json_object_get(doc, "node"), *secs, *entries;
	struct stage_node *nd;

	if (!json_is_object(doc) || !json_is_string(name) || !*json_string_value(name)) {
		json_decref(doc);
		s->skipped++;
		return -1;
	}
	s->nodes = xrealloc(s->nodes, (s->n + 1) * sizeof(*s->nodes));
	nd = &s->nodes[s->n++];
	memset(nd, 0, sizeof(*nd));
	nd->node = xstrdup(json_string_value(name));
	secs = json_object_get(doc, "seconds");
	nd->seconds = json_is_number(secs) ? json_number_value(secs) : NAN;
	if (!isfinite(nd->seconds) || nd->seconds < 0) {
		nd->seconds = NAN;
		nd->odd = true;
	}
	nd->bytes_read = count(doc, "bytes_read", &nd->odd);
	nd->bytes_sent = count(doc, "bytes_sent", &nd->odd);
	nd->bytes_received = count(doc, "bytes_received", &nd->odd);
	entries = json_object_get(doc, "entries");
	if (!json_is_array(entries))
		nd->odd = true;
	for (size_t i = 0; i < json_array_size(entries); i++) {
		json_t *e = json_array_get(entries, i), *re = json_object_get(e, "refetched");

		if (!json_is_object(e)) {
			nd->odd = true;
			continue;
		}
		nd->entries++;
		nd->hits += json_is_true(json_object_get(e, "hit"));
		nd->refetched += json_is_integer(re) && json_integer_value(re) > 0;
	}
	s->bytes_read = add_sat(s->bytes_read, nd->bytes_read);
	s->bytes_sent = add_sat(s->bytes_sent, nd->bytes_sent);
	s->bytes_received = add_sat(s->bytes_received, nd->bytes_received);
	s->entries += nd->entries;
	s->hits += nd->hits;
	s->refetched += nd->refetched;
	json_decref(doc);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct stage_node *x = a, *y = b;

	return strcmp(x->node, y->node);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* O(n log n) in nodes, at most STAGE_SUMMARY_NODES_MAX: a sort, no
 * selection algorithm. */
void stage_summary_finish(struct stage_summary *s)
{
	double *v = xcalloc(s->n + 1, sizeof(double));
	size_t m = 0;

	if (s->n)
		qsort(s->nodes, s->n, sizeof(*s->nodes), by_name);
	s->slowest = -1;
	for (size_t i = 0; i < s->n; i++) {
		double t = s->nodes[i].seconds;

		if (isnan(t))
			continue;
		v[m++] = t;
		if (s->slowest < 0 || t > s->nodes[s->slowest].seconds)
			s->slowest = (long)i;
	}
	if (m)
		qsort(v, m, sizeof(double), by_value);
	s->median_s = !m ? NAN : m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
	free(v);
}

void stage_summary_format(const struct stage_summary *s, struct sbuf *out)
{
	if (!s->n)
		return;
	sbuf_addf(out, "%zu node%s, ", s->n, s->n == 1 ? "" : "s");
	sbuf_add_bytes(out, (double)s->bytes_read);
	sbuf_addstr(out, " read from the source, ");
	sbuf_add_bytes(out, (double)s->bytes_sent);
	sbuf_addf(out, " sent, %zu/%zu hits", s->hits, s->entries);
	if (s->refetched)
		sbuf_addf(out, ", %zu fetched again", s->refetched);
	if (s->slowest >= 0) {
		sbuf_addstr(out, ", slowest node ");
		sbuf_add_number(out, s->nodes[s->slowest].seconds, 2);
		sbuf_addstr(out, " s (");
		sbuf_add_printable(out, s->nodes[s->slowest].node);
		sbuf_addch(out, ')');
	}
	if (s->skipped)
		sbuf_addf(out, "; %zu record%s skipped", s->skipped, s->skipped == 1 ? "" : "s");
}

/* A count for JSON: jansson's integers are signed, a saturated sum is not. */
static json_t *json_count(uint64_t v)
{
	return v > INT64_MAX ? json_real((double)v) : json_integer((json_int_t)v);
}

static json_t *json_seconds(double t)
{
	return isnan(t) ? json_null() : json_real(t);
}

json_t *stage_summary_json(const struct stage_summary *s)
{
	json_t *per = json_array(), *o;

	for (size_t i = 0; i < s->n; i++) {
		const struct stage_node *nd = &s->nodes[i];

		if (json_array_append_new(per, json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
							 "node", nd->node, "seconds",
							 json_seconds(nd->seconds), "bytes_read",
							 json_count(nd->bytes_read), "bytes_sent",
							 json_count(nd->bytes_sent), "bytes_received",
							 json_count(nd->bytes_received), "entries",
							 (json_int_t)nd->entries, "hits",
							 (json_int_t)nd->hits, "refetched",
							 (json_int_t)nd->refetched))) {
			json_decref(per); /* a node left out would lie: none */
			return NULL;
		}
	}
	o = json_pack("{s:I, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o}", "nodes",
		      (json_int_t)s->n, "bytes_read", json_count(s->bytes_read), "bytes_sent",
		      json_count(s->bytes_sent), "bytes_received", json_count(s->bytes_received),
		      "entries", (json_int_t)s->entries, "hits", (json_int_t)s->hits,
		      "refetched", (json_int_t)s->refetched, "skipped_records",
		      (json_int_t)s->skipped, "median_seconds", json_seconds(s->median_s),
		      "per_node", per);
	if (json_object_set_new(o, "slowest",
				s->slowest < 0 ? json_null()
					       : json_pack("{s:s, s:f}", "node",
							   s->nodes[s->slowest].node, "seconds",
							   s->nodes[s->slowest].seconds))) {
		json_decref(o);
		return NULL;
	}
	return o;
}
