/* report_data.c - parse metrics.jsonl into series (see report_data.h).
 * Core: no I/O but report_read's, from a stream its caller opened. */
#include "launcher/report/report_data.h" // defines: report_parse, struct report_run
#include "launcher/report/report_timeline.h" // defines: report_timeline_step
#include "common/metrics_line.h"         // defines: metrics_line_load, metrics_line_plausible
#include "common/sbuf.h"          // defines: struct sbuf, x* allocators

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void step_release(struct report_step *s)
{
	free(s->rank_rates);
	s->rank_rates = NULL;
	s->nranks = 0;
}

/* What the record says of where it ran (report_timeline.h): its
 * world_size, else how many ranks' rates it carries. */
static void step_origin(json_t *o, struct report_step_origin *w)
{
	json_t *a = json_object_get(o, "attempt"), *rs = json_object_get(o, "restart");
	json_t *ws = json_object_get(o, "world_size");
	json_t *rates = json_object_get(o, "rank_samples_per_s");

	w->step = json_integer_value(json_object_get(o, "step"));
	w->attempt = json_is_integer(a) && json_integer_value(a) > 0 ? json_integer_value(a) : 0;
	w->restart = json_is_integer(rs) && json_integer_value(rs) >= 0 ? json_integer_value(rs) : -1;
	w->world_size = json_is_integer(ws) && json_integer_value(ws) > 0 ? json_integer_value(ws)
		      : json_is_array(rates) ? (int64_t)json_array_size(rates) : 0;
}

/* The slot for a step record o.  A step at or before the last one means
 * the run went on from a checkpoint (a requeue appends to the file, a
 * later attempt's file follows): what was logged from there on is
 * superseded, so it is dropped, and the series stays in step order
 * whatever the two logged.  A new attempt's records replace the
 * earlier attempt's summary: the run trained again after it. */
static struct report_step *step_slot(struct report_run *r, json_t *o)
{
	struct report_step_origin w;
	unsigned kinds;

	step_origin(o, &w);
	kinds = report_timeline_step(&r->timeline, &w,
				     r->nsteps && r->steps[r->nsteps - 1].step >= w.step);
	r->restarts += !!(kinds & (1u << REPORT_EVENT_REQUEUE));
	if (kinds & (1u << REPORT_EVENT_ATTEMPT) && r->summary) {
		r->summary = false;
		r->test_accuracy = r->test_loss = NAN;
		r->mean_samples_per_s = r->global_samples_per_s = NAN;
		r->ranks = 0;
	}
	while (r->nsteps && r->steps[r->nsteps - 1].step >= w.step) {
		step_release(&r->steps[--r->nsteps]);
		r->superseded++;
	}
	r->steps = xrealloc(r->steps, (r->nsteps + 1) * sizeof(*r->steps));
	return &r->steps[r->nsteps++];
}

static void take_step(struct report_run *r, json_t *o)
{
	json_t *rates = json_object_get(o, "rank_samples_per_s");
	struct report_step *s = step_slot(r, o);

	s->step = json_integer_value(json_object_get(o, "step"));
	s->epoch = json_integer_value(json_object_get(o, "epoch"));
	s->loss = num(o, "loss");
	s->accuracy = num(o, "accuracy");
	s->lr = num(o, "lr");
	s->samples_per_s = num(o, "samples_per_s");
	s->step_ms = num(o, "step_ms");
	s->comm_ms = num(o, "comm_ms");
	s->global_batch = num(o, "global_batch");
	s->world_size = json_integer_value(json_object_get(o, "world_size"));
	s->attempt = json_integer_value(json_object_get(o, "attempt"));
	s->rank_rates = NULL;
	s->nranks = 0;
	if (json_is_array(rates) && json_array_size(rates)) {
		s->nranks = json_array_size(rates);
		s->rank_rates = xcalloc(s->nranks, sizeof(double));
		for (size_t i = 0; i < s->nranks; i++)
			s->rank_rates[i] = json_is_number(json_array_get(rates, i))
						   ? json_number_value(json_array_get(rates, i)) : NAN;
	}
}

static void take_epoch(struct report_run *r, json_t *o)
{
	int64_t e = json_integer_value(json_object_get(o, "epoch"));
	struct report_epoch *p = NULL;

	for (size_t i = 0; i < r->nepochs && !p; i++)
		if (r->epochs[i].epoch == e)
			p = &r->epochs[i];
	if (!p) {
		r->epochs = xrealloc(r->epochs, (r->nepochs + 1) * sizeof(*r->epochs));
		p = &r->epochs[r->nepochs++];
	}
	p->epoch = e;
	/* without "steps", the epoch ended at the last step logged */
	p->step = json_is_integer(json_object_get(o, "steps"))
		  ? json_integer_value(json_object_get(o, "steps"))
		  : r->nsteps ? r->steps[r->nsteps - 1].step : 0;
	p->train_loss = num(o, "train_loss");
	p->train_accuracy = num(o, "train_accuracy");
	p->test_loss = num(o, "test_loss");
	p->test_accuracy = num(o, "test_accuracy");
}

static void take_summary(struct report_run *r, json_t *o)
{
	r->summary = true;
	r->test_accuracy = num(o, "test_accuracy");
	r->test_loss = num(o, "test_loss");
	r->mean_samples_per_s = num(o, "mean_samples_per_s");
	r->global_samples_per_s = num(o, "global_samples_per_s");
	r->ranks = json_integer_value(json_object_get(o, "ranks"));
}

static void take(struct report_run *r, json_t *o)
{
	const char *ev = json_string_value(json_object_get(o, "event"));

	if (!ev || !metrics_line_plausible(o))
		r->bad_lines++; /* a figure no run logs: no chart, no fit from it */
	else if (!strcmp(ev, "step") && json_is_integer(json_object_get(o, "step")))
		take_step(r, o);
	else if (!strcmp(ev, "epoch") && json_is_integer(json_object_get(o, "epoch")))
		take_epoch(r, o);
	else if (!strcmp(ev, "summary"))
		take_summary(r, o);
	else if (!strcmp(ev, "data"))
		data_read_take(&r->data, o);
	else if (!strcmp(ev, "straggler") && json_is_integer(json_object_get(o, "rank")))
		json_array_append(r->stragglers, o);
	else if (!strcmp(ev, "step") || !strcmp(ev, "epoch"))
		r->bad_lines++; /* without its number; other events are not charted */
}

void report_run_init(struct report_run *r)
{
	memset(r, 0, sizeof(*r));
	r->test_accuracy = r->test_loss = NAN;
	r->mean_samples_per_s = r->global_samples_per_s = NAN;
	report_timeline_init(&r->timeline);
	r->stragglers = json_array();
}

void report_run_attempt(struct report_run *r, int64_t attempt)
{
	report_timeline_attempt(&r->timeline, attempt);
}

void report_add_line(struct report_run *r, const char *line, size_t n)
{
	json_t *o = n ? metrics_line_load(line, n, &r->bad_lines) : NULL;

	if (o)
		take(r, o);
	json_decref(o);
}

void report_parse(const char *text, size_t len, struct report_run *out)
{
	const char *end = text + len;

	report_run_init(out);
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);

		report_add_line(out, line, n);
		line += n + 1;
	}
}

/* Appends the bytes of [p, end) up to a newline to line, unless line is
 * over REPORT_LINE_MAX already (the rest of such a line is dropped, and
 * the line counted as not a record).  Returns where the scan stopped. */
static const char *take_bytes(struct sbuf *line, bool *too_long, const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n = (size_t)((nl ? nl : end) - p);

	if (!*too_long && line->len + n > REPORT_LINE_MAX) {
		*too_long = true;
		sbuf_release(line);
	}
	if (!*too_long)
		sbuf_add(line, p, n);
	return p + n;
}

int report_read(FILE *fp, struct report_run *out)
{
	report_run_init(out);
	return report_read_more(fp, out);
}

int report_read_more(FILE *fp, struct report_run *out)
{
	struct sbuf line = SBUF_INIT;
	bool too_long = false;
	char chunk[65536];
	size_t got, total = 0;

	out->capped = false;
	while (total < METRICS_FILE_MAX &&
	       (got = fread(chunk, 1, sizeof(chunk) < METRICS_FILE_MAX - total
					  ? sizeof(chunk) : METRICS_FILE_MAX - total, fp)) > 0) {
		total += got;
		for (const char *p = chunk, *end = chunk + got; p < end;) {
			p = take_bytes(&line, &too_long, p, end);
			if (p == end)
				break; /* the line goes on in the next chunk */
			p++;
			out->bad_lines += too_long;
			if (!too_long)
				report_add_line(out, line.buf, line.len);
			sbuf_reset(&line);
			too_long = false;
		}
	}
	/* at the cap, the line read last may be cut: counted as bad, as a
	 * torn line is */
	if (total >= METRICS_FILE_MAX && getc(fp) != EOF)
		out->capped = true;
	out->bad_lines += too_long;
	if (!too_long && line.len) /* a last line without its newline */
		report_add_line(out, line.buf, line.len);
	sbuf_release(&line);
	return ferror(fp) ? -1 : 0;
}

void report_run_release(struct report_run *r)
{
	for (size_t i = 0; i < r->nsteps; i++)
		step_release(&r->steps[i]);
	free(r->steps);
	free(r->epochs);
	report_timeline_release(&r->timeline);
	json_decref(r->stragglers);
	memset(r, 0, sizeof(*r));
}

bool report_has_comm(const struct report_run *r)
{
	for (size_t i = 0; i < r->nsteps; i++)
		if (!isnan(r->steps[i].comm_ms))
			return true;
	return false;
}

size_t report_max_ranks(const struct report_run *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].nranks > n)
			n = r->steps[i].nranks;
	return n;
}

double report_throughput(const struct report_run *r, int64_t ranks)
{
	if (!r->summary)
		return NAN;
	if (!isnan(r->global_samples_per_s))
		return r->global_samples_per_s;
	return r->mean_samples_per_s * (double)(ranks > 0 ? ranks : 1);
}
