/* doctor_inplace.c - a failed training step started again inside its
 * allocation (doctor_inplace.h).  Shell: the run's files, Slurm's
 * environment, the clock. */
#include "launcher/doctor/doctor_inplace.h"   // defines: doctor_inplace
#include "common/jsonb.h"   // defines: jsonb_set, jsonb_text
#include "common/fileio.h"                    // defines: fileio_read, fileio_exists
#include "common/runfile.h"                   // defines: RUNFILE_*
#include "common/sbuf.h"                      // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"                 // defines: struct job
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_failures, doctor_preflight_exclude
#include "launcher/runs/program_module.h"     // defines: program_module_publish
#include "launcher/runs/progress.h"           // defines: progress_load, struct run_progress
#include "launcher/runs/resize.h"             // defines: resize_next
#include "launcher/runs/rundir.h"             // defines: rundir_new_attempt, rundir_resume, rundir_write
#include "launcher/slurm/slurm.h"             // defines: hpt_slurm_hostlist, hpt_slurm_hostlist_names
#include "launcher/supervise/liveness.h"      // defines: liveness_load_dir

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static double now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* The submit.json of attempt a of run (R itself for 1), or NULL. */
static json_t *attempt_record(const char *run, int a)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *path = a == 1 ? xasprintf("%s/" RUNFILE_SUBMIT, run)
			    : xasprintf("%s/" RUNFILE_ATTEMPTS "/%d/" RUNFILE_SUBMIT, run, a);
	json_t *doc = fileio_read(path, 1 << 20, &text, &err) ? NULL : json_loads(text.buf, 0, NULL);

	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	return doc;
}

/* How many attempts of run job job_id started again for why. */
static int restarts_for(const char *run, int attempts, const char *job_id, const char *why)
{
	int count = 0;

	for (int a = 2; a <= attempts; a++) {
		json_t *doc = attempt_record(run, a), *in;
		char id[32];

		in = json_object_get(doc, "in_allocation");
		/* encode-ok: a long long fits in 32 bytes */
		snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(json_object_get(doc, "job_id")));
		if (in && !strcmp(id, job_id) &&
		    !strcmp(json_string_value(json_object_get(in, "why")) ?: "", why))
			count++;
		json_decref(doc);
	}
	return count;
}

/* Whether a step that lost no node starts again for why: a crash at
 * start-up once a job, a program's failure supervise.max_restarts times
 * a job; msg says why not. */
static bool restart_allowed(const struct job *job, const char *run, int attempts,
			    const char *job_id, const char *why, struct sbuf *msg)
{
	bool crash = !strcmp(why, INPLACE_CRASH);
	long long bound = crash ? 1 : (long long)job->supervise.max_restarts;
	int done = restarts_for(run, attempts, job_id, why);

	if (done < bound)
		return true;
	if (crash)
		sbuf_addstr(msg, "the step was started again once already after a crash at start-up");
	else
		sbuf_addf(msg, "the step was started again %d time%s after a program's failure; not "
			  "again (supervise.max_restarts is %lld)", done, done == 1 ? "" : "s", bound);
	return false;
}

/* The figures doctor knows when the old step has ended: when its first
 * rank ended (the failure seen: a rank killed; when Slurm killed the
 * whole step, supervisors too, no record says so and it is the step's
 * end), when srun returned (the step ended), and the last step the old
 * attempt logged (the new attempt's first step, in its metrics, tells
 * the steps lost). */
static json_t *figures(const char *dir, double ended)
{
	char *ranks = xasprintf("%s/ranks", dir);
	size_t n = 0;
	json_t **v = liveness_load_dir(ranks, &n), *o;
	struct run_progress p;
	double first = 0;

	for (size_t i = 0; i < n; i++) {
		const char *state = json_string_value(json_object_get(v[i], "state"));
		double t = json_number_value(json_object_get(v[i], "updated"));

		if (state && strcmp(state, "running") && t > 0 && (!first || t < first))
			first = t;
		json_decref(v[i]);
	}
	free(v);
	free(ranks);
	o = json_pack("{s:f, s:f}", "failed_at", first ? first : ended, "step_ended_at", ended);
	progress_load(dir, &p);
	json_object_set_new(o, "last_step", p.step_seen ? json_integer(p.step) : json_null());
	return o;
}

/* The allocation's nodes left once exclude is out, counted into *left,
 * and those it leaves out, as a hostlist, into step_exclude. */
static int allocation_left(const char *alloc, const char *exclude, int64_t *left,
			   struct sbuf *step_exclude)
{
	char **names;
	size_t n;
	const char **out;
	size_t k = 0;

	if (hpt_slurm_hostlist_names(alloc, &names, &n))
		return -1;
	out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (*exclude && hpt_slurm_hostlist_has(exclude, names[i]) == 1)
			out[k++] = names[i];
	*left = (int64_t)(n - k);
	if (k && hpt_slurm_hostlist(NULL, out, k, step_exclude))
		k = (size_t)-1;
	free(out);
	hpt_slurm_node_names_free(names, n);
	return k == (size_t)-1 ? -1 : 0;
}

/* What submit gives an attempt beside its script, taken along: the
 * code snapshot's record of attempt dir from (launch checks the program
 * against it) and the Python module (program_module.h). */
static int take_along(const char *from, const struct rundir *rd, struct sbuf *err)
{
	struct sbuf text = SBUF_INIT, warn = SBUF_INIT;
	char *path = xasprintf("%s/" RUNFILE_CODE, from);
	int rc = 0;

	if (fileio_exists(path) && (fileio_read(path, 1 << 26, &text, err) ||
				    rundir_write(rd, RUNFILE_CODE, text.buf, text.len, err)))
		rc = -1;
	/* as submit: without it, import hpctrain finds only an installed copy */
	program_module_publish(rd->dir, &warn);
	free(path);
	sbuf_release(&text);
	sbuf_release(&warn);
	return rc;
}

/* The new attempt, its checkpoints the run's, and its record. */
static int new_attempt(const char *from, const char *run, const char *job_id, json_t *in,
		       struct rundir *rd, struct sbuf *msg)
{
	struct sbuf err = SBUF_INIT;
	json_t *rec = NULL;
	char *text = NULL;
	int rc = -1;

	if (rundir_new_attempt(run, rd, &err) || rundir_resume(rd, &err) ||
	    take_along(from, rd, &err)) {
		sbuf_addf(msg, "cannot start a new attempt: %s", err.buf);
		goto out;
	}
	json_object_set_new(in, "restarted_at", json_real(now()));
	rec = json_pack("{s:I, s:s, s:s, s:i, s:O, s:O}", "job_id",
			(json_int_t)strtoll(job_id, NULL, 10), "run", rd->run, "dir", rd->dir,
			"attempt", rd->attempt, "exclude", json_object_get(in, "exclude"),
			"in_allocation", in);
	text = rec ? json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
	if (!text || rundir_write(rd, RUNFILE_SUBMIT, text, strlen(text), &err)) {
		sbuf_addf(msg, "cannot record the new attempt: %s", text ? err.buf : "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(text);
	json_decref(rec);
	sbuf_release(&err);
	return rc;
}

int doctor_inplace(const char *dir, const struct job *job, const char *const *lost, size_t k,
		   const char *why, const char *detail, struct sbuf *answer, struct sbuf *msg)
{
	const char *job_id = getenv("SLURM_JOB_ID"), *alloc = getenv("SLURM_JOB_NODELIST");
	struct sbuf prev = SBUF_INIT, exclude = SBUF_INIT, step_exclude = SBUF_INIT, err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT, here = RUNDIR_INIT;
	double ended = now();
	int64_t left = 0, next = 0;
	json_t *in = NULL;
	int rc = -1, done;

	if (!job_id || !*job_id || !alloc || !*alloc || rundir_open(dir, &here, &err))
		goto out;
	done = doctor_preflight_failures(here.run);
	if (k && done > job->preflight.max_resubmits) {
		sbuf_addf(msg, "nodes failed their preflight or were lost %d times; not going on "
			  "(preflight.max_resubmits is %lld)", done,
			  (long long)job->preflight.max_resubmits);
		goto out;
	}
	if (!k && !restart_allowed(job, here.run, here.attempt, job_id, why, msg))
		goto out;
	doctor_preflight_exclude(dir, &prev);
	if (hpt_slurm_hostlist(prev.buf, lost, k, &exclude) ||
	    allocation_left(alloc, exclude.buf, &left, &step_exclude))
		goto out;
	if (resize_next(job->resources.nodes_min, job->resources.nodes, left, &next, &err)) {
		sbuf_addf(msg, "this allocation cannot go on: %s", err.buf);
		goto out;
	}
	in = figures(dir, ended);
	jsonb_set(&in, "why", jsonb_text(why));
	jsonb_set(&in, "detail", jsonb_text(detail));
	jsonb_set(&in, "from_attempt", json_integer(here.attempt));
	jsonb_set(&in, "exclude", jsonb_text(exclude.buf));
	jsonb_set(&in, "nodes", json_integer(next));
	if (new_attempt(dir, here.run, job_id, in, &rd, msg))
		goto out;
	sbuf_addf(answer, "%lld\n%s\n%s\n%lld\n", (long long)next, step_exclude.buf, rd.dir,
		  (long long)left);
	sbuf_addf(msg, "%s: training again in job %s, attempt %d, on %lld node%s%s%s", why, job_id,
		  rd.attempt, (long long)next, next == 1 ? "" : "s", step_exclude.len ? " without " : "",
		  step_exclude.buf);
	rc = 0;
out:
	json_decref(in);
	rundir_release(&rd);
	rundir_release(&here);
	sbuf_release(&prev);
	sbuf_release(&exclude);
	sbuf_release(&step_exclude);
	sbuf_release(&err);
	return rc;
}
