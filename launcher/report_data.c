/* report_data.c - parse metrics.jsonl into series (see report_data.h).
 * Core: no I/O. */
#include "launcher/report_data.h" // defines: report_parse, struct report_run
#include "common/sbuf.h"          // defines: x* allocators

#include <jansson.h>
#include <math.h>
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

/* The slot of step in r->steps, appended or (a repeat) reused. */
static struct report_step *step_slot(struct report_run *r, int64_t step)
{
	/* records come in step order, but for a resume: look back a little */
	for (size_t i = r->nsteps; i-- > 0 && r->steps[i].step >= step;)
		if (r->steps[i].step == step) {
			step_release(&r->steps[i]);
			return &r->steps[i];
		}
	r->steps = xrealloc(r->steps, (r->nsteps + 1) * sizeof(*r->steps));
	return &r->steps[r->nsteps++];
}

static void take_step(struct report_run *r, json_t *o)
{
	json_t *rates = json_object_get(o, "rank_samples_per_s");
	struct report_step *s = step_slot(r, json_integer_value(json_object_get(o, "step")));

	s->step = json_integer_value(json_object_get(o, "step"));
	s->epoch = json_integer_value(json_object_get(o, "epoch"));
	s->loss = num(o, "loss");
	s->accuracy = num(o, "accuracy");
	s->lr = num(o, "lr");
	s->samples_per_s = num(o, "samples_per_s");
	s->step_ms = num(o, "step_ms");
	s->comm_ms = num(o, "comm_ms");
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
	p->step = json_integer_value(json_object_get(o, "steps"));
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

	if (!ev)
		r->bad_lines++;
	else if (!strcmp(ev, "step") && json_is_integer(json_object_get(o, "step")))
		take_step(r, o);
	else if (!strcmp(ev, "epoch") && json_is_integer(json_object_get(o, "epoch")))
		take_epoch(r, o);
	else if (!strcmp(ev, "summary"))
		take_summary(r, o);
	else if (!strcmp(ev, "step") || !strcmp(ev, "epoch"))
		r->bad_lines++; /* without its number; other events are not charted */
}

void report_parse(const char *text, size_t len, struct report_run *out)
{
	const char *end = text + len;

	memset(out, 0, sizeof(*out));
	out->test_accuracy = out->test_loss = NAN;
	out->mean_samples_per_s = out->global_samples_per_s = NAN;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		json_t *o = n ? json_loadb(line, n, 0, NULL) : NULL;

		if (json_is_object(o))
			take(out, o);
		else if (n)
			out->bad_lines++;
		json_decref(o);
		line += n + 1;
	}
}

void report_run_release(struct report_run *r)
{
	for (size_t i = 0; i < r->nsteps; i++)
		step_release(&r->steps[i]);
	free(r->steps);
	free(r->epochs);
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
