/* plan_history.c - what happened to each planned run: see
 * plan_history.h.  Shell: Slurm, then the attempt's end.json. */
#include "launcher/job/plan_history.h"  // defines: struct plan_history_end, plan_history_times
#include "common/exitcode.h"            // defines: HPT_EXIT_NO_INPUT
#include "common/say.h"                 // defines: say
#include "common/sbuf.h"                // defines: struct sbuf, sbuf_addf
#include "launcher/runs/attempt_end.h"  // defines: attempt_end_job
#include "launcher/slurm/slurm.h"       // defines: hpt_slurm_init, hpt_slurm_job
#include "common/strfmt.h" // defines: strfmt_label

#include <stdio.h>
#include <string.h>

/* One job as Slurm, or else its record, tells it; a status only for
 * a controller that does not answer. */
static int one_job(struct shape_planned *p, struct plan_history_end *e, struct sbuf *err)
{
	struct hpt_slurm_job j;
	int rc = hpt_slurm_job((uint32_t)p->job_id, &j, err);

	memset(e, 0, sizeof(*e));
	if (rc == HPT_EXIT_NO_INPUT) {
		sbuf_reset(err);
		e->forgotten = true;
		/* the run's own record, when it is this job's; its times are
		 * Slurm's alone, so start and end stay unknown */
		if (attempt_end_job(p->dir, p->job_id, &j))
			return 0;
		e->from_record = true;
	} else if (rc) {
		return rc;
	} else {
		p->check.start = j.start_time;
		p->check.end = j.finished ? j.end_time : 0;
	}
	if (j.finished || e->from_record) {
		strfmt_label(e->state, sizeof(e->state), "%s", j.state ? j.state : "");
		e->exit_code = j.exit_code;
	}
	hpt_slurm_job_release(&j);
	return 0;
}

int plan_history_times(struct shape_planned *v, size_t n, struct plan_history_end *ends,
		       size_t *forgotten)
{
	struct sbuf err = SBUF_INIT;
	int status = hpt_slurm_init(&err);

	*forgotten = 0;
	for (size_t i = 0; i < n && !status; i++) {
		status = one_job(&v[i], &ends[i], &err);
		*forgotten += ends[i].forgotten;
	}
	if (status)
		say("%s", err.buf);
	sbuf_release(&err);
	return status;
}

void plan_history_format(const struct plan_history_end *e, struct sbuf *out)
{
	if (e->state[0])
		sbuf_addf(out, "; ended %s (exit %d)%s", e->state, e->exit_code,
			  e->from_record ? ", from the record: Slurm forgot the job" : "");
	else if (e->forgotten)
		sbuf_addstr(out, "; forgotten by Slurm, with no record of its end");
}
