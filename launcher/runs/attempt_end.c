/* attempt_end.c - read an attempt's end.json (attempt_end.h). */
#include "launcher/runs/attempt_end.h" // defines: struct attempt_end, attempt_end_load
#include "common/jsonfile.h"           // defines: jsonfile_load
#include "common/runfile.h"            // defines: RUNFILE_END
#include "common/sbuf.h"               // defines: struct sbuf, xasprintf, xstrdup
#include "launcher/slurm/slurm.h"      // defines: struct hpt_slurm_job

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

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

int attempt_end_job(const char *dir, unsigned long job_id, struct hpt_slurm_job *out)
{
	struct attempt_end e;

	if (attempt_end_load(dir, &e) || (unsigned long)e.job_id != job_id)
		return -1;
	memset(out, 0, sizeof(*out));
	out->job_id = (uint32_t)job_id;
	out->state = xstrdup(e.requeued ? "REQUEUED" : e.exit_status ? "FAILED" : "COMPLETED");
	out->reason = xstrdup("from the run's record");
	out->name = xstrdup("");
	out->nodes = xstrdup("");
	out->partition = xstrdup("");
	out->work_dir = xstrdup(dir);
	out->array_pending = xstrdup("");
	out->array_task = -1;
	out->finished = !e.requeued;
	out->completed = attempt_end_completed(&e);
	out->exit_code = e.exit_status;
	out->restarts = (unsigned)e.restart;
	return 0;
}
