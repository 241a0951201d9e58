/* submit_report.c - what submit, rerun and a sweep say (submit_report.h).
 * Shell. */
#include "launcher/job/submit_report.h"         // defines: submit_report, submit_report_exclude, submit_report_idle
#include "common/json_print.h"            // defines: json_print
#include "common/sbuf.h"               // defines: struct sbuf
#include "common/say.h"                // defines: say_lines
#include "launcher/doctor/exclude.h"   // defines: exclude_build
#include "launcher/runs/attempt.h"     // defines: attempt_submit
#include "launcher/runs/rundir.h"      // defines: struct rundir
#include "launcher/slurm/slurm.h"      // defines: hpt_slurm_idle_nodes

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int submit_report_exclude(const char *user, int ledger, char **list, struct sbuf *err)
{
	struct sbuf hosts = SBUF_INIT, notes = SBUF_INIT;
	int status = exclude_build(user, ledger, &hosts, &notes, err);

	say_lines(notes.buf);
	*list = !status && hosts.len ? sbuf_detach(&hosts, NULL) : NULL;
	sbuf_release(&hosts);
	sbuf_release(&notes);
	return status;
}

int64_t submit_report_idle(const char *list)
{
	struct sbuf err = SBUF_INIT;
	int64_t n = hpt_slurm_idle_nodes(list, &err);

	sbuf_release(&err);
	return n;
}

int submit_report(struct attempt *at, struct rundir *rd, int json, struct sbuf *err)
{
	struct sbuf warn = SBUF_INIT;
	json_t *rec = NULL;
	int status = attempt_submit(at, rd, &rec, err, &warn);

	say_lines(warn.buf);
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
