/* report_attempts.c - a run's attempts as one timeline, and their ends,
 * for `hpctrain report` (report_attempts.h).  Shell: lists directories
 * and reads files; report_data and report_timeline make the timeline. */
#include "launcher/job/report_attempts.h" // defines: struct report_attempts
#include "launcher/job/report_out.h"      // defines: report_out_read
#include "common/diag.h"                  // defines: struct diag_list
#include "common/exitcode.h"              // defines: HPT_EXIT_NO_INPUT
#include "common/fileio.h"                // defines: fileio_exists
#include "common/runfile.h"               // defines: RUNFILE_*
#include "common/say.h"                   // defines: say
#include "common/sbuf.h"                  // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"             // defines: struct job, job_release
#include "common/spec/specfile.h"         // defines: specfile_load_run, SPECFILE_RUN_SPEC
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text
#include "launcher/report/report_data.h"  // defines: struct report_run, report_run_attempt
#include "launcher/report/report_timeline.h" // defines: report_timeline_json
#include "launcher/runs/attempt_restart.h" // defines: attempt_restart_load
#include "launcher/runs/attempt_size.h"   // defines: attempt_size_load
#include "launcher/runs/rundir.h"         // defines: struct rundir

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Attempts beyond this are surely not a run's (rundir.c's bound). */
#define MAX_ATTEMPT 100000

static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool report_attempts_named(const char *arg, const struct rundir *rd)
{
	return rd->attempt >= 2 && same_dir(arg, rd->dir) && !same_dir(arg, rd->run);
}

static void push(struct report_attempts *a, int attempt, char *dir)
{
	a->v = xrealloc(a->v, (a->n + 1) * sizeof(*a->v));
	memset(&a->v[a->n], 0, sizeof(*a->v));
	a->v[a->n].attempt = attempt;
	a->v[a->n++].dir = dir;
}

static int by_attempt(const void *x, const void *y)
{
	const struct report_attempt *p = x, *q = y;

	return (p->attempt > q->attempt) - (p->attempt < q->attempt);
}

/* RUN, then each RUN/attempts/N (N >= 2, no leading zero) that holds a
 * resolved.yaml, by N: readdir, as an abandoned attempt may leave a gap. */
static void list_attempts(const char *run, struct report_attempts *a)
{
	char *dir = xasprintf("%s/" RUNFILE_ATTEMPTS, run);
	DIR *d = opendir(dir);
	struct dirent *e;

	push(a, 1, xstrdup(run));
	while (d && (e = readdir(d))) {
		char *end, *spec;
		long n = strtol(e->d_name, &end, 10);

		if (*end || e->d_name[0] < '1' || e->d_name[0] > '9' || n < 2 || n > MAX_ATTEMPT)
			continue;
		spec = xasprintf("%s/%ld/" SPECFILE_RUN_SPEC, dir, n);
		if (fileio_exists(spec))
			push(a, (int)n, xasprintf("%s/%ld", dir, n));
		free(spec);
	}
	if (d)
		closedir(d);
	free(dir);
	qsort(a->v + 1, a->n - 1, sizeof(*a->v), by_attempt);
}

/* The world size launch recorded for the latest attempt that has one,
 * else the latest attempt's spec's nodes x ranks_per_node. */
static int64_t recorded_ranks(const struct report_attempts *a)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct job job;
	int64_t nodes, world = 0;

	for (size_t i = a->n; i-- > 0 && !world;)
		if (attempt_size_load(a->v[i].dir, &nodes, &world))
			world = 0;
	if (!world && a->n) {
		if (!specfile_load_run(a->v[a->n - 1].dir, &job, &dl, &where, NULL))
			world = (int64_t)job.resources.nodes * job.resources.ranks_per_node;
		job_release(&job);
	}
	diag_list_release(&dl);
	sbuf_release(&where);
	return world > 0 ? world : 0;
}

/* Reads at's metrics.jsonl onto r, and its end.json.  A missing file
 * is no error here (the attempt never trained): its "cannot open"
 * message goes to missing, for the caller to say when no attempt had
 * one.  Any other failure (a FIFO, a read error) is said and fails. */
static int read_attempt(struct report_attempt *at, struct report_run *r, struct sbuf *missing)
{
	char *path = xasprintf("%s/" RUNFILE_METRICS, at->dir);
	struct sbuf err = SBUF_INIT;
	int status = 0;

	report_run_attempt(r, at->attempt);
	if (!fileio_exists(path)) {
		sbuf_reset(missing);
		report_out_read(at->dir, r, missing); /* its "cannot open" message */
	} else if (report_out_read(at->dir, r, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	} else {
		at->metrics = true;
	}
	at->ended = !attempt_end_load(at->dir, &at->end);
	free(path);
	sbuf_release(&err);
	return status;
}

int report_attempts_load(const struct rundir *rd, bool all, struct report_run *r,
			 struct report_attempts *a)
{
	struct sbuf missing = SBUF_INIT;
	bool any = false;
	int status = 0;

	memset(a, 0, sizeof(*a));
	report_run_init(r);
	if (all)
		list_attempts(rd->run, a);
	else
		push(a, rd->attempt, xstrdup(rd->dir));
	for (size_t i = 0; i < a->n && !status; i++) {
		status = read_attempt(&a->v[i], r, &missing);
		any |= a->v[i].metrics;
	}
	if (!status && !any) {
		/* none trained: the latest's message, as when it alone was read */
		say("%s", missing.buf);
		status = HPT_EXIT_NO_INPUT;
	}
	a->ranks = recorded_ranks(a);
	sbuf_release(&missing);
	return status;
}

void report_attempts_release(struct report_attempts *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].dir);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static const char *end_word(const struct attempt_end *e)
{
	return e->requeued ? "requeued" : e->exit_status ? "failed" : "completed";
}

void report_attempts_format(const struct report_attempts *a, struct sbuf *out)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct report_attempt *at = &a->v[i];

		if (!at->ended && a->n == 1)
			continue;
		sbuf_addf(out, "  attempt %d", at->attempt);
		if (!at->ended) {
			sbuf_addstr(out, at->metrics ? ": no recorded end (running, or killed)\n"
						     : ": no recorded end, no metrics (it never trained)\n");
			continue;
		}
		sbuf_addf(out, " (job %lld): %s, exit %d", at->end.job_id, end_word(&at->end),
			  at->end.exit_status);
		if (at->end.restart > 0)
			sbuf_addf(out, ", after %lld requeue%s", at->end.restart,
				  at->end.restart == 1 ? "" : "s");
		sbuf_addstr(out, " (from the run's record)\n");
	}
}

static json_t *end_json(const struct report_attempt *at)
{
	if (!at->ended)
		return json_null();
	return json_pack("{s:I, s:i, s:b, s:I, s:s, s:s}", "job_id", (json_int_t)at->end.job_id,
			 "exit_status", at->end.exit_status, "requeued", at->end.requeued,
			 "restart", (json_int_t)at->end.restart, "state", end_word(&at->end),
			 "source", "run record");
}

void report_attempts_json(json_t **doc, const struct report_attempts *a,
			  const struct report_run *r)
{
	json_t *ends = json_array();

	for (size_t i = 0; i < a->n; i++) {
		json_t *in = attempt_restart_load(a->v[i].dir);

		/* in_allocation: an attempt started inside its job, why and its figures */
		jsonb_append(&ends, json_pack("{s:i, s:o, s:b, s:o, s:o}", "attempt",
					      a->v[i].attempt, "dir", jsonb_text(a->v[i].dir),
					      "metrics", a->v[i].metrics, "end", end_json(&a->v[i]),
					      "in_allocation", in ? in : json_null()));
	}
	jsonb_set(doc, "attempts", json_integer((json_int_t)a->n));
	jsonb_set(doc, "resizes", json_integer((json_int_t)report_timeline_count(
					    &r->timeline, REPORT_EVENT_RESIZE)));
	jsonb_set(doc, "events", report_timeline_json(&r->timeline));
	jsonb_set(doc, "attempt_ends", ends);
}
