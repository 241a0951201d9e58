/* plan_calibrate.c - hpctrain plan --calibrate: see plan_calibrate.h.
 * Shell: a sweep built and submitted (launcher/job/submit_sweep.h), then watched
 * to its end (launcher/job/status_watch.h). */
#include "launcher/job/plan_calibrate.h" // defines: struct plan_calibration, plan_calibrate
#include "common/say.h" // defines: say
#include "launcher/job/status_watch.h"   // defines: status_watch
#include "launcher/job/submit_sweep.h"   // defines: struct sweep_request, submit_sweep
#include "common/diag.h"        // defines: struct diag_list, diag_report
#include "common/exitcode.h"    // defines: enum hpt_exit
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/spec/spec.h"     // defines: struct job, struct spec_override
#include "common/spec/specfile.h" // defines: struct specfile_overrides, specfile_overrides_add
#include "common/spec/sweep.h"    // defines: struct sweep, sweep_parse
#include "launcher/runs/runref.h" // defines: struct runref, runref_resolve

#include <stdio.h>
#include <stdlib.h>

int plan_calibrate(const struct plan_calibration *c, const struct job *job)
{
	const struct hpt_slurm_partition *part = c->part;
	const struct shape_candidate *shapes = c->shapes;
	const struct sbuf *where = c->where, *text = c->text;
	struct sbuf nodes = SBUF_INIT, rpn = SBUF_INIT, steps = SBUF_INIT, err = SBUF_INIT;
	struct specfile_overrides sets = SPECFILE_OVERRIDES_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	struct sweep sw = SWEEP_INIT;
	struct runref ref = RUNREF_INIT;
	char *record = NULL;
	const char *flags[2];
	unsigned top = c->max_nodes ? c->max_nodes : part->total_nodes < 16 ? part->total_nodes : 16;
	int status = 0;

	if (job->command.n) {
		say("--calibrate runs the bundled trainer; %s runs a "
			"program of its own: submit it at the shapes yourself, then plan", job->name);
		return HPT_EXIT_BAD_SPEC;
	}
	sbuf_addstr(&nodes, "resources.nodes=");
	sbuf_addstr(&rpn, "resources.ranks_per_node=");
	for (size_t i = 0; i < (shapes ? c->nshapes : top); i++) {
		unsigned n = shapes ? shapes[i].nodes : (unsigned)i + 1;
		unsigned r = shapes ? shapes[i].ranks_per_node : (unsigned)job->resources.ranks_per_node;

		if (n > part->total_nodes)
			continue;
		sbuf_addf(&nodes, "%s%u", nodes.buf[nodes.len - 1] == '=' ? "" : ",", n);
		sbuf_addf(&rpn, "%s%u", rpn.buf[rpn.len - 1] == '=' ? "" : ",", r);
	}
	flags[0] = nodes.buf;
	flags[1] = rpn.buf;
	sbuf_addf(&steps, "train.max_steps=%ld", c->steps);
	for (size_t i = 0; i < c->sets->n && !status; i++)
		status = specfile_overrides_add(&sets, c->sets->v[i].arg);
	if (!status && specfile_overrides_add(&sets, steps.buf))
		status = HPT_EXIT_INTERNAL;
	if (!status && sweep_parse(where->buf, text->buf, text->len, flags, 2, 1, 0, &sw, &dl))
		status = HPT_EXIT_BAD_SPEC;
	diag_report(stderr, &dl);
	if (!status) {
		struct sweep_request req = { .where = where->buf, .text = text->buf,
					     .len = text->len, .sets = &sets, .sweep = &sw,
					     .hpctrain = c->exe, .record = &record };

		status = submit_sweep(&req);
	}
	if (!status && !record)
		status = HPT_EXIT_FAILURE;
	if (!status && !(status = runref_resolve(record, &ref, &err)) &&
	    !(status = hpt_slurm_init(&err))) {
		status = status_watch(&ref, 0, 1);
		if (status == HPT_EXIT_FAILURE)
			say("--calibrate: not every run of %s completed; "
				"planning from those that logged steps", record);
		status = status == HPT_EXIT_FAILURE ? 0 : status;
	}
	if (status && err.len)
		say("%s", err.buf);
	runref_release(&ref);
	free(record);
	sweep_release(&sw);
	specfile_overrides_release(&sets);
	diag_list_release(&dl);
	sbuf_release(&nodes);
	sbuf_release(&rpn);
	sbuf_release(&steps);
	sbuf_release(&err);
	return status;
}

