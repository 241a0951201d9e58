/* shape_check.c - a planned run's prediction against what happened: see
 * shape_check.h.  Core. */
#include "launcher/shape/shape_check.h" // defines: struct shape_check, shape_check_format
#include "common/duration.h"             // defines: duration_add_hms
#include "common/sbuf.h"                 // defines: struct sbuf

#include <math.h>
#include <string.h>

int shape_check_from_json(json_t *plan, struct shape_check *c)
{
	json_int_t nodes = 0, rpn = 0, start = 0;
	double run = 0, err = 0;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(plan) ||
	    json_unpack(plan, "{s:I, s:I, s:I, s:F, s:F}", "nodes", &nodes, "ranks_per_node", &rpn,
			"start", &start, "run_s", &run, "rel_err", &err) ||
	    nodes <= 0 || rpn <= 0 || nodes > 100000 || rpn > 1024 || !(run >= 0) ||
	    !isfinite(run) || !(err >= 0) || !isfinite(err))
		return -1;
	c->nodes = (unsigned)nodes;
	c->ranks_per_node = (unsigned)rpn;
	c->pred_start = (time_t)start;
	c->pred_run_s = run;
	c->rel_err = err;
	return 0;
}

bool shape_check_started(const struct shape_check *c)
{
	return c->start > 0;
}

bool shape_check_ended(const struct shape_check *c)
{
	return c->start > 0 && c->end >= c->start;
}

double shape_check_start_err_s(const struct shape_check *c)
{
	return (double)(c->start - c->pred_start);
}

double shape_check_run_err(const struct shape_check *c)
{
	return c->pred_run_s > 0 ? (double)(c->end - c->start) / c->pred_run_s - 1 : 0;
}

static void clock_of(struct sbuf *out, time_t t)
{
	struct tm tm;
	char buf[32];

	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	sbuf_addstr(out, buf);
}

void shape_check_format(const struct shape_check *c, time_t now, struct sbuf *out)
{
	sbuf_addf(out, "plan: %ux%u, start predicted ", c->nodes, c->ranks_per_node);
	clock_of(out, c->pred_start);
	if (shape_check_started(c)) {
		sbuf_addstr(out, ", was ");
		clock_of(out, c->start);
		sbuf_addf(out, " (%+.0f s)", shape_check_start_err_s(c));
	}
	sbuf_addstr(out, "; run predicted ");
	duration_add_hms(out, c->pred_run_s);
	sbuf_addf(out, " +-%.0f%%", c->rel_err * 100);
	if (shape_check_ended(c)) {
		sbuf_addstr(out, ", took ");
		duration_add_hms(out, (double)(c->end - c->start));
		sbuf_addf(out, " (%+.0f%%)", shape_check_run_err(c) * 100);
	} else if (shape_check_started(c) && now >= c->start) {
		sbuf_addstr(out, ", running for ");
		duration_add_hms(out, (double)(now - c->start));
	}
}

json_t *shape_check_json(const struct shape_check *c)
{
	json_t *o = json_pack("{s:i, s:i, s:I, s:f, s:f}", "nodes", (int)c->nodes, "ranks_per_node",
			      (int)c->ranks_per_node, "predicted_start", (json_int_t)c->pred_start,
			      "predicted_run_s", c->pred_run_s, "rel_err", c->rel_err);

	json_object_set_new(o, "start", shape_check_started(c) ? json_integer(c->start) : json_null());
	json_object_set_new(o, "start_err_s", shape_check_started(c)
						      ? json_real(shape_check_start_err_s(c))
						      : json_null());
	json_object_set_new(o, "run_s", shape_check_ended(c) ? json_real((double)(c->end - c->start))
							     : json_null());
	json_object_set_new(o, "run_err", shape_check_ended(c) ? json_real(shape_check_run_err(c))
							       : json_null());
	return o;
}

void shape_check_summarize(const struct shape_check *v, size_t n, struct shape_check_summary *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (!shape_check_started(&v[i]))
			continue;
		out->started++;
		out->mean_abs_start_s += fabs(shape_check_start_err_s(&v[i]));
		if (!shape_check_ended(&v[i]))
			continue;
		out->ended++;
		out->mean_abs_run_err += fabs(shape_check_run_err(&v[i]));
		out->mean_run_err += shape_check_run_err(&v[i]);
	}
	if (out->started)
		out->mean_abs_start_s /= (double)out->started;
	if (out->ended) {
		out->mean_abs_run_err /= (double)out->ended;
		out->mean_run_err /= (double)out->ended;
	}
}
