/* report_timeline.c - requeues, attempts and resizes along a run's steps
 * (report_timeline.h).  Core: no I/O, and no chart: the labels are text,
 * so that plan, which reads metrics through report_data, links no cairo. */
#include "launcher/report/report_timeline.h" // defines: struct report_timeline
#include "common/sbuf.h"                     // defines: struct sbuf, xrealloc
#include "common/strfmt.h" // defines: strfmt_label

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_timeline_init(struct report_timeline *t)
{
	memset(t, 0, sizeof(*t));
	t->restart = -1;
}

void report_timeline_release(struct report_timeline *t)
{
	free(t->events);
	report_timeline_init(t);
}

void report_timeline_attempt(struct report_timeline *t, int64_t attempt)
{
	t->attempt = attempt;
	/* an attempt that logged nothing leaves no mark: the next one that
	 * does opens with its own number */
	t->next_attempt = t->any;
	/* a new job: its restart count starts again */
	t->restart = -1;
}

/* Records an event; returns its bit for report_timeline_step. */
static unsigned add(struct report_timeline *t, int64_t step, int kind, int64_t from)
{
	struct report_event *e;

	t->events = xrealloc(t->events, (t->nevents + 1) * sizeof(*t->events));
	e = &t->events[t->nevents++];
	e->step = step;
	e->kind = kind;
	e->attempt = t->attempt ? t->attempt : 1;
	e->world_size = t->world_size;
	e->from_world_size = from;
	return 1u << kind;
}

/* Whether the record's own attempt differs from the last step's, both
 * said: a program that logs across attempts into one file. */
static bool attempt_field_changed(const struct report_timeline *t,
				  const struct report_step_origin *o)
{
	return o->attempt > 0 && t->last_attempt > 0 && o->attempt != t->last_attempt;
}

static bool restart_changed(const struct report_timeline *t, const struct report_step_origin *o)
{
	return o->restart >= 0 && t->restart >= 0 && o->restart != t->restart;
}

unsigned report_timeline_step(struct report_timeline *t, const struct report_step_origin *o,
			      bool went_back)
{
	bool attempt = t->any && (t->next_attempt || attempt_field_changed(t, o));
	bool requeue = t->any && !attempt && (went_back || restart_changed(t, o));
	bool resize = t->any && o->world_size > 0 && t->world_size > 0 &&
		      o->world_size != t->world_size;
	int64_t from = t->world_size;
	unsigned kinds = 0;

	/* the caller's attempt (its directory) wins over the record's */
	if (o->attempt > 0 && (!t->attempt || (attempt && !t->next_attempt)))
		t->attempt = o->attempt;
	if (o->world_size > 0)
		t->world_size = o->world_size;
	if (attempt)
		kinds |= add(t, o->step, REPORT_EVENT_ATTEMPT, 0);
	if (requeue)
		kinds |= add(t, o->step, REPORT_EVENT_REQUEUE, 0);
	if (resize)
		kinds |= add(t, o->step, REPORT_EVENT_RESIZE, from);
	t->last_attempt = o->attempt > 0 ? o->attempt : t->last_attempt;
	t->restart = o->restart >= 0 ? o->restart : t->restart;
	t->next_attempt = false;
	t->any = true;
	return kinds;
}

size_t report_timeline_count(const struct report_timeline *t, int kind)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nevents; i++)
		n += t->events[i].kind == kind;
	return n;
}

const char *report_timeline_kind_name(int kind)
{
	switch (kind) {
	case REPORT_EVENT_REQUEUE:
		return "requeue";
	case REPORT_EVENT_ATTEMPT:
		return "attempt";
	default:
		return "resize";
	}
}

void report_timeline_label(const struct report_timeline *t, size_t i, char *buf, size_t len)
{
	const struct report_event *e = &t->events[i];

	if (e->kind == REPORT_EVENT_ATTEMPT)
		strfmt_label(buf, len, "attempt %lld", (long long)e->attempt);
	else if (e->kind == REPORT_EVENT_RESIZE)
		strfmt_label(buf, len, "resize %lld->%lld", (long long)e->from_world_size,
			 (long long)e->world_size);
	else
		strfmt_label(buf, len, "requeue");
}

void report_timeline_format(const struct report_timeline *t, struct sbuf *out)
{
	for (size_t i = 0; i < t->nevents; i++) {
		const struct report_event *e = &t->events[i];

		if (e->kind == REPORT_EVENT_ATTEMPT)
			sbuf_addf(out, "  attempt %lld went on at step %lld", (long long)e->attempt,
				  (long long)e->step);
		else if (e->kind == REPORT_EVENT_REQUEUE)
			sbuf_addf(out, "  requeued at step %lld (attempt %lld)", (long long)e->step,
				  (long long)e->attempt);
		else
			sbuf_addf(out, "  resized from %lld to %lld ranks at step %lld (attempt %lld)",
				  (long long)e->from_world_size, (long long)e->world_size,
				  (long long)e->step, (long long)e->attempt);
		if (e->kind != REPORT_EVENT_RESIZE && e->world_size > 0)
			sbuf_addf(out, ", %lld ranks", (long long)e->world_size);
		sbuf_addch(out, '\n');
	}
}

json_t *report_timeline_json(const struct report_timeline *t)
{
	json_t *a = json_array();

	for (size_t i = 0; i < t->nevents; i++) {
		const struct report_event *e = &t->events[i];

		json_t *o = json_pack("{s:I, s:s, s:I, s:o}", "step", (json_int_t)e->step, "kind",
				      report_timeline_kind_name(e->kind), "attempt",
				      (json_int_t)e->attempt, "world_size",
				      e->world_size > 0 ? json_integer(e->world_size) : json_null());

		if (e->kind == REPORT_EVENT_RESIZE)
			json_object_set_new(o, "from_world_size", json_integer(e->from_world_size));
		json_array_append_new(a, o);
	}
	return a;
}
