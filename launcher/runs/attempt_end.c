/* attempt_end.c - read an attempt's end.json (attempt_end.h). */
#include "launcher/runs/attempt_end.h" // defines: struct attempt_end, attempt_end_load
#include "common/jsonfile.h"           // defines: jsonfile_load
#include "common/runfile.h"            // defines: RUNFILE_END
#include "common/sbuf.h"               // defines: struct sbuf, xasprintf

#include <jansson.h>
#include <stdlib.h>

int attempt_end_load(const char *dir, struct attempt_end *out)
{
	char *path = xasprintf("%s/" RUNFILE_END, dir);
	struct sbuf err = SBUF_INIT;
	json_t *doc = jsonfile_load(path, 4096, 0, &err);
	json_t *st = json_object_get(doc, "exit_status"), *rq = json_object_get(doc, "requeued");
	int rc = -1;

	if (json_is_integer(st) && json_is_boolean(rq)) {
		out->exit_status = (int)json_integer_value(st);
		out->requeued = json_is_true(rq);
		out->job_id = json_integer_value(json_object_get(doc, "job_id"));
		out->restart = json_integer_value(json_object_get(doc, "restart"));
		rc = 0;
	}
	json_decref(doc);
	sbuf_release(&err);
	free(path);
	return rc;
}

bool attempt_end_completed(const struct attempt_end *e)
{
	return e->exit_status == 0 && !e->requeued;
}
