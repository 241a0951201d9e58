/* attempt_restart.c - an attempt started inside its job, for status
 * (attempt_restart.h). */
#include "launcher/runs/attempt_restart.h" // defines: attempt_restart_load, attempt_restart_format
#include "common/fileio.h"                 // defines: fileio_read
#include "common/runfile.h"                // defines: RUNFILE_SUBMIT
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf
#include "launcher/runs/rundir.h"          // defines: rundir_open

#include <stdlib.h>

json_t *attempt_restart_load(const char *dir)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *path = xasprintf("%s/" RUNFILE_SUBMIT, dir);
	json_t *doc = fileio_read(path, 1 << 20, &text, &err) ? NULL : json_loads(text.buf, 0, NULL);
	json_t *in = json_object_get(doc, "in_allocation");

	if (json_is_object(in)) {
		json_incref(in);
		json_object_set(in, "job_id", json_object_get(doc, "job_id"));
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
