/* attempt_restart.c - an attempt started inside its job, for status
 * (attempt_restart.h). */
#include "launcher/runs/attempt_restart.h" // defines: attempt_restart_load, attempt_restart_format
#include "common/fileio.h"                 // defines: fileio_read
#include "common/runfile.h"                // defines: RUNFILE_SUBMIT, RUNFILE_METRICS
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf
#include "launcher/runs/rundir.h"          // defines: rundir_open

#include <stdlib.h>
#include <string.h>

/* The head of dir's metrics.jsonl (a recovery's first records are
 * there: no need to read a long run's file) and its rank 0's record,
 * into in's figures. */
static void load_figures(const char *dir, json_t *in)
{
	struct sbuf head = SBUF_INIT, rank = SBUF_INIT, err = SBUF_INIT;
	char *path = xasprintf("%s/" RUNFILE_METRICS, dir);
	json_t *rank0 = NULL;

	/* missing (no step yet) or unreadable: no figures from it */
	if (fileio_read(path, ATTEMPT_RESTART_HEAD_BYTES, &head, &err))
		sbuf_reset(&head);
	free(path);
	path = xasprintf("%s/ranks/rank-0.json", dir);
	if (!fileio_read(path, 1 << 20, &rank, &err))
		rank0 = json_loads(rank.buf, 0, NULL);
	attempt_restart_figures(in, head.buf, head.len, rank0);
	json_decref(rank0);
	free(path);
	sbuf_release(&head);
	sbuf_release(&rank);
	sbuf_release(&err);
}

json_t *attempt_restart_load(const char *dir)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *path = xasprintf("%s/" RUNFILE_SUBMIT, dir);
	json_t *doc = fileio_read(path, 1 << 20, &text, &err) ? NULL : json_loads(text.buf, 0, NULL);
	json_t *in = json_object_get(doc, "in_allocation");

	if (json_is_object(in)) {
		json_incref(in);
		json_object_set(in, "job_id", json_object_get(doc, "job_id"));
		load_figures(dir, in);
	} else {
		in = NULL;
	}
	json_decref(doc);
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	return in;
}

static double num(const json_t *in, const char *key)
{
	return json_number_value(json_object_get(in, key));
}

void attempt_restart_format(const json_t *in, int attempt, struct sbuf *out)
{
	const char *why = json_string_value(json_object_get(in, "why"));
	const char *detail = json_string_value(json_object_get(in, "detail"));

	sbuf_addf(out, "attempt %d, in job %lld after a ", attempt,
		  (long long)json_integer_value(json_object_get(in, "job_id")));
	sbuf_add_printable(out, why ? why : "failure");
	if (detail && *detail) {
		sbuf_addstr(out, ": ");
		sbuf_add_printable(out, detail);
	}
	if (num(in, "failed_at") > 0 && num(in, "restarted_at") > 0)
		sbuf_addf(out, "; the old step ended %.2f s after its first rank, the new attempt "
			  "was made %.2f s later", num(in, "step_ended_at") - num(in, "failed_at"),
			  num(in, "restarted_at") - num(in, "step_ended_at"));
	if (json_is_integer(json_object_get(in, "last_step")))
		sbuf_addf(out, "; attempt %lld's last step was %lld",
			  (long long)json_integer_value(json_object_get(in, "from_attempt")),
			  (long long)json_integer_value(json_object_get(in, "last_step")));
	if (json_is_number(json_object_get(in, "checkpoint_load_s")))
		sbuf_addf(out, "; the checkpoint loaded in %.2f s", num(in, "checkpoint_load_s"));
	if (json_is_number(json_object_get(in, "first_step_s")))
		sbuf_addf(out, "; the first step %.2f s after the new attempt was made",
			  num(in, "first_step_s"));
	if (json_is_integer(json_object_get(in, "lost_steps")))
		sbuf_addf(out, "; %lld step%s lost",
			  (long long)json_integer_value(json_object_get(in, "lost_steps")),
			  json_integer_value(json_object_get(in, "lost_steps")) == 1 ? "" : "s");
}

/* The first record of event ev with an integer key in text[0..len), a
 * line of JSON each (a cut last line, or one that is no object, is
 * skipped), or NULL. */
static json_t *first_record(const char *text, size_t len, const char *ev, const char *key)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		json_t *o;

		if (!nl)
			break; /* cut: the head of a longer file */
		o = json_loadb(p, (size_t)(nl - p), 0, NULL);
		p = nl + 1;
		if (json_is_object(o) &&
		    !strcmp(json_string_value(json_object_get(o, "event")) ?: "", ev) &&
		    json_is_integer(json_object_get(o, key)))
			return o;
		json_decref(o);
	}
	return NULL;
}

void attempt_restart_figures(json_t *in, const char *head, size_t len, const json_t *rank0)
{
	json_t *resume = first_record(head, len, "resume", "checkpoint_step");
	json_t *step = first_record(head, len, "step", "step");
	json_t *last = json_object_get(in, "last_step");
	double at = json_number_value(json_object_get(rank0, "first_heartbeat"));
	json_int_t from;

	if (json_is_number(json_object_get(resume, "load_s")))
		json_object_set(in, "checkpoint_load_s", json_object_get(resume, "load_s"));
	if (step)
		json_object_set(in, "first_step", json_object_get(step, "step"));
	if (at > 0) {
		json_object_set_new(in, "first_step_at", json_real(at));
		if (num(in, "restarted_at") > 0)
			json_object_set_new(in, "first_step_s", json_real(at - num(in, "restarted_at")));
	}
	/* the checkpoint resumed from: the resume record's, else the step
	 * before the first one logged */
	if (resume || step) {
		from = resume ? json_integer_value(json_object_get(resume, "checkpoint_step"))
			      : json_integer_value(json_object_get(step, "step")) - 1;
		if (json_is_integer(last))
			json_object_set_new(in, "lost_steps",
					    json_integer(json_integer_value(last) > from
							 ? json_integer_value(last) - from : 0));
	}
	json_decref(resume);
	json_decref(step);
}

int attempt_restart_describe(const char *dir, struct sbuf *out)
{
	struct sbuf err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	json_t *in = attempt_restart_load(dir);
	int rc = -1;

	if (in && !rundir_open(dir, &rd, &err)) {
		attempt_restart_format(in, rd.attempt, out);
		rc = 0;
	}
	json_decref(in);
	rundir_release(&rd);
	sbuf_release(&err);
	return rc;
}
