/* submit_report.c - submit an attempt and report it (submit, rerun).
 * Shell: see submit_report.h. */
#include "cli/submit_report.h" // defines: submit_report
#include "cli/json_print.h"    // defines: json_print
#include "launcher/attempt.h"  // defines: attempt_submit
#include "launcher/rundir.h"   // defines: struct rundir
#include "common/sbuf.h"       // defines: struct sbuf

#include <jansson.h>
#include <stdio.h>

int submit_report(struct attempt *at, struct rundir *rd, int json, struct sbuf *err)
{
	struct sbuf warn = SBUF_INIT;
	json_t *rec = NULL;
	int status = attempt_submit(at, rd, &rec, err, &warn);

	fputs(warn.buf, stderr);
	/* A record means the job exists, even when recording it failed:
	 * the user needs its id either way. */
	if (rec && json) {
		int printed = json_print(json_incref(rec));

		status = status ? status : printed;
	} else if (rec) {
		printf("submitted job %lld: %s\n",
		       (long long)json_integer_value(json_object_get(rec, "job_id")), rd->dir);
	}
	json_decref(rec);
	sbuf_release(&warn);
	return status;
}
