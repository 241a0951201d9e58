/* metrics_line.c - one line of metrics.jsonl as a record (see
 * metrics_line.h). */
#include "common/metrics_line.h" // defines: metrics_line_load
#include "common/sbuf.h"         // defines: struct sbuf

#include <math.h>
#include <string.h>

/* Where a record glued to a torn line begins: every record the trainer
 * and the recipes write opens with its event. */
#define GLUE "{\"event\""

json_t *metrics_line_load(const char *line, size_t n, size_t *bad)
{
	const char *end = line + n;

	for (const char *p = line; p;) {
		json_t *o = json_loadb(p, (size_t)(end - p), JSON_REJECT_DUPLICATES, NULL);

		if (p == line && !json_is_object(o))
			(*bad)++;
		if (json_is_object(o))
			return o;
		json_decref(o);
		p = end - p > 1 ? memmem(p + 1, (size_t)(end - p - 1), GLUE, sizeof(GLUE) - 1) : NULL;
	}
	return NULL;
}

/* Whether key, when o gives it as a number, lies in [lo, hi] (lo_open:
 * (lo, hi]).  NaN fails every comparison, so it fails too. */
static bool within(json_t *o, const char *key, double lo, bool lo_open, double hi)
{
	json_t *v = json_object_get(o, key);
	double x;

	if (!json_is_number(v))
		return true;
	x = json_number_value(v);
	return (lo_open ? x > lo : x >= lo) && x <= hi;
}

static const char *const counts[] = { "step",  "epoch", "steps",   "total_steps", "world_size",
				      "ranks", "attempt", "restart" };

bool metrics_line_plausible(json_t *o)
{
	json_t *rates = json_object_get(o, "rank_samples_per_s"), *r;
	size_t i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (!within(o, counts[i], 0, false, INFINITY))
			return false;
	if (!within(o, "step_ms", METRICS_STEP_MS_MIN, false, METRICS_STEP_MS_MAX) ||
	    !within(o, "comm_ms", 0, false, METRICS_STEP_MS_MAX) ||
	    !within(o, "compute_ms", 0, false, METRICS_STEP_MS_MAX) ||
	    !within(o, "samples_per_s", 0, true, METRICS_RATE_MAX) ||
	    !within(o, "mean_samples_per_s", 0, true, METRICS_RATE_MAX) ||
	    !within(o, "global_samples_per_s", 0, true, METRICS_RATE_MAX) ||
	    !within(o, "global_batch", 0, true, METRICS_RATE_MAX))
		return false;
	/* a rank's rate may be 0: a rank that stalled through the step */
	json_array_foreach(rates, i, r)
		if (json_is_number(r) &&
		    !(json_number_value(r) >= 0 && json_number_value(r) <= METRICS_RATE_MAX))
			return false;
	return true;
}

void metrics_line_say_capped(const char *path, struct sbuf *out)
{
	sbuf_addf(out, "%s is larger than " METRICS_FILE_MAX_TEXT ": only its first "
		  METRICS_FILE_MAX_TEXT " was read", path);
}
