/* doctor_lost.c - `hpctrain doctor --lost RUN` (doctor_lost.h): the
 * batch script runs it when its training step failed.  Shell: reads the
 * ranks' records, asks the controller, writes RUN/lost.json and the
 * ledger, runs rerun. */
#include "launcher/doctor/doctor_lost.h"                  // defines: doctor_lost_run, doctor_lost_enough_left
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/fileio.h"                    // defines: fileio_write_atomic
#include "common/sbuf.h"                      // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"                 // defines: struct job
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_plan, doctor_preflight_resubmit
#include "launcher/doctor/doctor_record.h"    // defines: doctor_record_ledger
#include "launcher/doctor/exclude.h"          // defines: exclude_nodes_left
#include "launcher/doctor/lost.h"             // defines: lost_nodes, lost_record_nodes, lost_has_node
#include "launcher/runs/resize.h"             // defines: resize_next
#include "launcher/slurm/slurm.h"             // defines: hpt_slurm_init, hpt_slurm_node_failed
#include "launcher/supervise/liveness.h"      // defines: liveness_load_dir

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RUN/lost.json: {"ok": false, "nodes": [...], "why": "..."}, counted
 * with failed preflights against preflight.max_resubmits. */
static void write_lost(const char *run, const char *const *nodes, size_t k, const char *why)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc = json_pack("{s:b, s:[], s:s}", "ok", 0, "nodes", "why", why);
	char *path = xasprintf("%s/" RUNFILE_LOST, run), *text;

	for (size_t i = 0; doc && i < k; i++)
		json_array_append_new(json_object_get(doc, "nodes"), json_string(nodes[i]));
	text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (!text || fileio_write_atomic(path, text, strlen(text), 0600, 0, &err))
		fprintf(stderr, "hpctrain doctor: warning: %s not written: %s\n", path,
			text ? err.buf : "out of memory");
	free(text);
	free(path);
	json_decref(doc);
	sbuf_release(&err);
}

/* Appends to why "node2 stopped answering (Slurm: DOWN*: Not
 * responding)" and returns true when the controller holds node as
 * failed; false otherwise, with a warning when it cannot say. */
static bool stopped_answering(const char *node, struct sbuf *why)
{
	struct sbuf state = SBUF_INIT, err = SBUF_INIT;
	int failed = hpt_slurm_node_failed(node, &state, &err);

	if (failed == 1) {
		sbuf_addstr(why, why->len ? "; " : "");
		sbuf_add_printable(why, node);
		sbuf_addstr(why, " stopped answering (Slurm: ");
		sbuf_add_printable(why, state.buf);
		sbuf_addch(why, ')');
	} else if (failed)
		fprintf(stderr, "hpctrain doctor: warning: %s\n", err.buf);
	sbuf_release(&state);
	sbuf_release(&err);
	return failed == 1;
}

/* Adds to nodes[0..k) the nodes of the ranks' records that the
 * controller holds as DOWN or FAIL: a node that stopped answering killed no
 * rank (sbatch --no-kill kept the job, Slurm ended the step).  Returns
 * the new k. */
static size_t add_failed_nodes(json_t *const *ranks, size_t n, const char **nodes, size_t k,
			       struct sbuf *why)
{
	const char **seen = xcalloc(n + 1, sizeof(*seen));
	const char *self = getenv("SLURMD_NODENAME");
	size_t m = lost_record_nodes(ranks, n, seen);
	struct sbuf err = SBUF_INIT;

	if (m && hpt_slurm_init(&err)) {
		fprintf(stderr, "hpctrain doctor: warning: %s\n", err.buf);
		m = 0;
	}
	for (size_t i = 0; i < m; i++) {
		/* the node running this answers, whatever the controller says */
		if (self && !strcmp(seen[i], self))
			continue;
		if (!lost_has_node(nodes, k, seen[i]) && stopped_answering(seen[i], why))
			nodes[k++] = seen[i];
	}
	free(seen);
	sbuf_release(&err);
	return k;
}

bool doctor_lost_enough_left(const struct job *job, const char *exclude)
{
	struct sbuf err = SBUF_INIT;
	int64_t left = -1, next;
	bool ok;

	if (!hpt_slurm_init(&err))
		left = exclude_nodes_left(exclude);
	sbuf_reset(&err);
	ok = !resize_next(job->resources.nodes_min, job->resources.nodes, left, &next, &err);
	if (ok)
		fprintf(stderr, "hpctrain doctor: the next attempt can have %lld node%s at most\n",
			(long long)next, next == 1 ? "" : "s");
	else
		fprintf(stderr, "hpctrain doctor: not resubmitting: %s\n", err.buf);
	sbuf_release(&err);
	return ok;
}

int doctor_lost_run(const char *run, const struct job *job)
{
	struct sbuf why = SBUF_INIT, warn = SBUF_INIT, again = SBUF_INIT, excl = SBUF_INIT,
		    msg = SBUF_INIT;
	char *dir = xasprintf("%s/ranks", run);
	size_t n = 0, k;
	json_t **ranks = liveness_load_dir(dir, &n);
	const char **nodes = xcalloc(n + 1, sizeof(*nodes));
	struct ledger_event *ev = xcalloc(n + 1, sizeof(*ev));
	int status = 1, rc;

	k = lost_nodes(ranks, n, nodes, &why);
	k = add_failed_nodes(ranks, n, nodes, k, &why);
	if (!k) {
		fprintf(stderr, "hpctrain doctor: the step failed with no rank killed as a lost node "
				"kills it and no node down: the program's own failure, not resubmitted\n");
		goto out;
	}
	fprintf(stderr, "hpctrain doctor: lost node: %s\n", why.buf);
	for (size_t i = 0; i < k; i++)
		ev[i] = (struct ledger_event){ .node = nodes[i], .failed = true,
					       .reason = why.buf, .score = -1 };
	if (doctor_record_ledger(ev, k, &warn))
		fprintf(stderr, "hpctrain doctor: warning: %s\n", warn.buf);
	write_lost(run, nodes, k, why.buf);
	if (doctor_preflight_plan(run, job->preflight.max_resubmits, nodes, k, &again, &excl,
				  &msg)) {
		fprintf(stderr, "hpctrain doctor: %s\n", msg.buf);
		goto out;
	}
	fprintf(stderr, "hpctrain doctor: %s\n", msg.buf);
	if (!doctor_lost_enough_left(job, excl.buf))
		goto out;
	if ((rc = doctor_preflight_resubmit(again.buf, excl.buf)))
		fprintf(stderr, "hpctrain doctor: the resubmission failed (status %d)\n", rc);
	else
		status = 0;
out:
	for (size_t i = 0; i < n; i++)
		json_decref(ranks[i]);
	free(ranks);
	free(nodes);
	free(ev);
	free(dir);
	sbuf_release(&why);
	sbuf_release(&warn);
	sbuf_release(&again);
	sbuf_release(&excl);
	sbuf_release(&msg);
	return status;
}
