/* report_straggler.c - a run's slow ranks (report_straggler.h).  Core. */
#include "launcher/report/report_straggler.h" // defines: report_stragglers, report_stragglers_format
#include "common/sbuf.h"                      // defines: struct sbuf, xcalloc
#include "common/straggler.h"                 // defines: struct straggler, straggler_*

#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *hit_json(const struct straggler_hit *h, double threshold, int64_t steps)
{
	return json_pack("{s:s, s:I, s:i, s:n, s:I, s:f, s:s, s:f, s:f, s:f, s:I, s:b}", "event",
			 "straggler", "step", (json_int_t)h->to, "rank", h->rank, "node",
			 "from_step", (json_int_t)h->from, "slower", h->slower, "cause",
			 straggler_cause_names[h->cause], "compute_ms", h->compute_ms,
			 "median_compute_ms", h->median_compute_ms, "threshold", threshold, "steps",
			 (json_int_t)steps, "from_rates", 1);
}

/* The detector over the step records' rates: a change of the ranks'
 * count (a resize) starts it over.  O(steps x ranks). */
static void from_rates(const struct report_run *r, double threshold, int64_t steps, json_t *out)
{
	struct straggler det = { 0 };
	struct straggler_hit *hits = NULL;
	double *ms = NULL;
	size_t world = 0;
	int64_t prev = 0;

	for (size_t i = 0; i < r->nsteps; i++) {
		const struct report_step *s = &r->steps[i];
		size_t n;

		if (s->nranks < 2)
			continue;
		if (s->nranks != world) {
			straggler_release(&det);
			free(hits);
			free(ms);
			world = s->nranks;
			hits = xcalloc(world, sizeof(*hits));
			ms = xcalloc(world, sizeof(*ms));
			if (straggler_init(&det, threshold, steps, world))
				break;
			prev = s->step - 1;
		}
		for (size_t k = 0; k < world; k++) /* ms a sample; a rate of 0 is unjudged */
			ms[k] = s->rank_rates[k] > 0 ? 1e3 / s->rank_rates[k] : NAN;
		n = straggler_observe(&det, prev + 1, s->step, ms, NULL, hits, world);
		for (size_t k = 0; k < n; k++)
			json_array_append_new(out, hit_json(&hits[k], threshold, steps));
		prev = s->step;
	}
	straggler_release(&det);
	free(hits);
	free(ms);
}

json_t *report_stragglers(const struct report_run *r, double threshold, int64_t steps)
{
	json_t *a = json_array();

	if (r->stragglers && json_array_size(r->stragglers))
		json_array_extend(a, r->stragglers);
	else if (threshold > 1)
		from_rates(r, threshold, steps, a);
	return a;
}

static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

void report_stragglers_format(const json_t *a, const char *indent, struct sbuf *out)
{
	size_t i;
	json_t *o;

	json_array_foreach(a, i, o) {
		struct straggler_hit h;
		const char *cause = json_string_value(json_object_get(o, "cause"));
		struct sbuf node = SBUF_INIT;

		memset(&h, 0, sizeof(h));
		h.rank = (int)json_integer_value(json_object_get(o, "rank"));
		h.from = json_integer_value(json_object_get(o, "from_step"));
		h.to = json_integer_value(json_object_get(o, "step"));
		h.slower = num(o, "slower");
		h.compute_ms = num(o, "compute_ms");
		h.median_compute_ms = num(o, "median_compute_ms");
		h.comm_ms = num(o, "comm_ms");
		h.median_comm_ms = num(o, "median_comm_ms");
		h.cause = cause && !strcmp(cause, "communication") ? STRAGGLER_COMM
			: cause && !strcmp(cause, "compute") ? STRAGGLER_COMPUTE
			: STRAGGLER_RATE;
		/* a record's node is whatever the file says: printable only */
		sbuf_add_printable(&node, json_string_value(json_object_get(o, "node")) ?: "");
		sbuf_addstr(out, indent);
		sbuf_addstr(out, "slow rank: ");
		straggler_describe(&h, node.buf, out);
		sbuf_addch(out, '\n');
		sbuf_release(&node);
	}
}
