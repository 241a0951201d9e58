/* doctor_lost.c - `hpctrain doctor --lost RUN` (doctor_lost.h): the
 * batch script runs it when its training step failed.  Shell: reads the
 * ranks' records, asks the controller, writes RUN/lost.json and the
 * ledger, and decides on the resubmission. */
#include "launcher/doctor/doctor_lost.h"          // defines: doctor_lost_run
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/say.h"                       // defines: say, say_lines
#include "common/fileio.h"                    // defines: fileio_write_atomic
#include "common/sbuf.h"                      // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"                 // defines: struct job
#include "launcher/doctor/doctor_inplace.h"   // defines: doctor_inplace
#include "common/jsonb.h" // defines: jsonb_append, jsonb_text, jsonb_dumps
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_plan, doctor_preflight_enough_left
#include "launcher/doctor/doctor_record.h"    // defines: doctor_record_ledger
#include "launcher/doctor/doctor_slow.h"      // defines: doctor_slow_record
#include "launcher/doctor/lost.h"             // defines: lost_program_failure, lost_record_nodes, lost_has_node
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
	json_t *list = json_array(), *doc;
	char *path = xasprintf("%s/" RUNFILE_LOST, run), *text;

	for (size_t i = 0; i < k; i++)
		jsonb_append(&list, jsonb_text(nodes[i]));
	doc = json_pack("{s:b, s:o, s:o}", "ok", 0, "nodes", list, "why", jsonb_text(why));
	text = jsonb_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS, path, &err);
	if (!text || fileio_write_atomic(path, text, strlen(text), 0600, 0, &err))
		say("warning: %s not written: %s", path, err.buf);
	free(text);
	free(path);
	json_decref(doc);
	sbuf_release(&err);
}

/* Appends to why "node2 is down (Slurm: DOWN*: Not responding)", the
 * controller's reason saying whether it stopped answering or was taken
 * away, and returns true when the controller holds node as failed;
 * false otherwise, with a warning when it cannot say. */
static bool node_down(const char *node, struct sbuf *why)
{
	struct sbuf state = SBUF_INIT, err = SBUF_INIT;
	int failed = hpt_slurm_node_failed(node, &state, &err);

	if (failed == 1) {
		sbuf_addstr(why, why->len ? "; " : "");
		sbuf_add_printable(why, node);
		sbuf_addstr(why, " is down (Slurm: ");
		sbuf_add_printable(why, state.buf);
		sbuf_addch(why, ')');
	} else if (failed)
		say("warning: %s", err.buf);
	sbuf_release(&state);
	sbuf_release(&err);
	return failed == 1;
}

/* Fills nodes[0..k) with the nodes of the ranks' records that the
 * controller holds as DOWN or FAIL: a node that stopped answering killed
 * no rank (sbatch --no-kill kept the job, Slurm ended the step), and one
 * a person or a health check took away says so there too.  Returns k. */
static size_t failed_nodes(json_t *const *ranks, size_t n, const char **nodes, struct sbuf *why)
{
	const char **seen = xcalloc(n + 1, sizeof(*seen));
	const char *self = getenv("SLURMD_NODENAME");
	size_t m = lost_record_nodes(ranks, n, seen), k = 0;
	struct sbuf err = SBUF_INIT;

	if (m && hpt_slurm_init(&err)) {
		say("warning: %s", err.buf);
		m = 0;
	}
	for (size_t i = 0; i < m; i++) {
		/* the node running this answers, whatever the controller says */
		if (self && !strcmp(seen[i], self))
			continue;
		if (node_down(seen[i], why))
			nodes[k++] = seen[i];
	}
	free(seen);
	sbuf_release(&err);
	return k;
}

/* Not here: the resubmission through the queue without the k nodes in
 * nodes, while preflight.max_resubmits allows and enough nodes are
 * left; msg holds why not here, if anything.  0: resubmit; 1: not. */
static int through_queue(const char *run, const struct job *job, const char *const *nodes,
			 size_t k, struct sbuf *again, struct sbuf *exclude, struct sbuf *msg)
{
	int status;

	if (msg->len)
		sbuf_addstr(msg, "; resubmitting through the queue instead\n");
	status = doctor_preflight_plan(run, job->preflight.max_resubmits, nodes, k, again, exclude,
				       msg) ? 1 : 0;
	if (!status && !doctor_preflight_enough_left(job, exclude->buf, msg))
		status = 1;
	return status;
}

/* The preflight of attempt run failed the k nodes in nodes (doctor put
 * them in the ledger and in run's preflight.json, why saying what
 * failed): a new attempt in this allocation without them, as for a
 * lost node, else the resubmission. */
static int after_preflight(const char *run, const struct job *job, const char *const *nodes,
			   size_t k, const char *why, struct sbuf *again, struct sbuf *exclude)
{
	struct sbuf msg = SBUF_INIT;
	int status = DOCTOR_LOST_ANSWER;

	say("failed preflight: %s", why);
	if (doctor_inplace(run, job, nodes, k, INPLACE_PREFLIGHT, why, again, &msg))
		status = through_queue(run, job, nodes, k, again, exclude, &msg);
	say_lines(msg.buf);
	sbuf_release(&msg);
	return status;
}

/* A failed preflight (no rank ran), when run's says so: its status;
 * -1 when run's preflight failed no node. */
static int preflight_failed(const char *run, const struct job *job, struct sbuf *again,
			    struct sbuf *exclude)
{
	struct sbuf why = SBUF_INIT;
	char **nodes;
	size_t k = doctor_preflight_failed(run, &nodes, &why);
	int status = k ? after_preflight(run, job, (const char *const *)nodes, k, why.buf, again,
					 exclude) : -1;

	hpt_slurm_node_names_free(nodes, k);
	sbuf_release(&why);
	return status;
}

/* No node lost: the program's own failure, said in one line.  With
 * supervise.max_restarts, the step starts again in this allocation
 * from the last checkpoint, that many times a job at most. */
static int program_failure(const char *run, const struct job *job, json_t *const *ranks,
			   size_t n, struct sbuf *again)
{
	struct sbuf why = SBUF_INIT, msg = SBUF_INIT;
	size_t bad = lost_program_failure(ranks, n, &why);
	int status = 1;

	if (!bad)
		sbuf_addstr(&why, "no rank's record says how");
	if (!bad || !job->supervise.max_restarts) {
		say("the program's failure, not a node's: %s; every node still answers, so none "
		    "is recorded and the run is not resubmitted", why.buf);
	} else {
		say("the program's failure, not a node's: %s; every node still answers, so none "
		    "is recorded", why.buf);
		if (!doctor_inplace(run, job, NULL, 0, INPLACE_PROGRAM, why.buf, again, &msg))
			status = DOCTOR_LOST_ANSWER;
		say_lines(msg.buf);
	}
	/* the end: the job's status is the first failed rank's */
	if (status != DOCTOR_LOST_ANSWER && lost_first_status(ranks, n) > 0) {
		sbuf_addf(again, "status %d\n", lost_first_status(ranks, n));
		status = DOCTOR_LOST_ANSWER;
	}
	sbuf_release(&why);
	sbuf_release(&msg);
	return status;
}

int doctor_lost_run(const char *run, const struct job *job, struct sbuf *again,
		    struct sbuf *exclude)
{
	struct sbuf why = SBUF_INIT, warn = SBUF_INIT, msg = SBUF_INIT;
	char *dir = xasprintf("%s/ranks", run);
	size_t n = 0, k;
	json_t **ranks = liveness_load_dir(dir, &n);
	const char **nodes = xcalloc(n + 1, sizeof(*nodes));
	struct ledger_event *ev = xcalloc(n + 1, sizeof(*ev));
	int status = preflight_failed(run, job, again, exclude);

	if (status >= 0)
		goto out;
	status = 1;
	/* straggler.action: exclude: the slow nodes cool down too, so the
	 * resubmission (its exclude list is the ledger's) leaves them out */
	if (!doctor_slow_record(run, job, &warn) && warn.len)
		say("warning: %s", warn.buf);
	sbuf_reset(&warn);
	k = failed_nodes(ranks, n, nodes, &why);
	if (!k && lost_startup_crash(ranks, n, &why)) {
		say("the step crashed while starting, before its first step: %s", why.buf);
		if (!doctor_inplace(run, job, NULL, 0, INPLACE_CRASH, why.buf, again, &msg))
			status = DOCTOR_LOST_ANSWER;
		say_lines(msg.buf);
		goto out;
	}
	if (!k) {
		status = program_failure(run, job, ranks, n, again);
		goto out;
	}
	say("lost node: %s", why.buf);
	for (size_t i = 0; i < k; i++)
		ev[i] = (struct ledger_event){ .node = nodes[i], .failed = true,
					       .reason = why.buf, .score = -1 };
	if (doctor_record_ledger(ev, k, &warn))
		say("warning: %s", warn.buf);
	write_lost(run, nodes, k, why.buf);
	if (!doctor_inplace(run, job, nodes, k, INPLACE_LOST, why.buf, again, &msg)) {
		say_lines(msg.buf);
		status = DOCTOR_LOST_ANSWER;
		goto out;
	}
	status = through_queue(run, job, nodes, k, again, exclude, &msg);
	say_lines(msg.buf);
out:
	for (size_t i = 0; i < n; i++)
		json_decref(ranks[i]);
	free(ranks);
	free(nodes);
	free(ev);
	free(dir);
	sbuf_release(&why);
	sbuf_release(&warn);
	sbuf_release(&msg);
	return status;
}
