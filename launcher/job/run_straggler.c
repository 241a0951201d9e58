/* run_straggler.c - a run's slow ranks for status and report
 * (run_straggler.h).  Shell. */
#include "launcher/job/run_straggler.h"       // defines: run_stragglers, run_stragglers_status
#include "launcher/job/report_out.h"          // defines: report_out_read
#include "launcher/report/report_data.h"      // defines: struct report_run, report_run_*
#include "launcher/report/report_straggler.h" // defines: report_stragglers, report_stragglers_format
#include "common/diag.h"                      // defines: struct diag_list
#include "common/sbuf.h"                      // defines: struct sbuf
#include "common/spec/spec.h"                 // defines: struct job, job_release
#include "common/spec/specfile.h"             // defines: specfile_load_run

json_t *run_stragglers(const char *dir, const struct report_run *r)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct job job;
	double threshold = 0; /* no spec: records only */
	int64_t steps = 1;
	json_t *a;

	if (!specfile_load_run(dir, &job, &dl, &where, NULL)) {
		threshold = job.straggler.threshold;
		steps = job.straggler.steps;
	}
	job_release(&job);
	diag_list_release(&dl);
	sbuf_release(&where);
	a = report_stragglers(r, threshold, steps);
	return a;
}

void run_stragglers_head(const char *dir, const struct report_run *r, struct sbuf *out)
{
	json_t *a = run_stragglers(dir, r);

	report_stragglers_format(a, "  ", out);
	json_decref(a);
}

json_t *run_stragglers_load(const char *dir)
{
	struct report_run r;
	struct sbuf err = SBUF_INIT;
	json_t *a;

	report_run_init(&r);
	a = report_out_read(dir, &r, &err) ? json_array() : run_stragglers(dir, &r);
	report_run_release(&r);
	sbuf_release(&err);
	return a;
}

void run_stragglers_status(const char *dir, struct sbuf *out)
{
	json_t *a = run_stragglers_load(dir);

	report_stragglers_format(a, "", out);
	json_decref(a);
}
