/* attempt.c - one attempt of a run: prepare (resolve, hash, render) and submit.
 * Shell: see attempt.h. */
#include "launcher/runs/attempt.h" // defines: struct attempt, attempt_prepare, attempt_submit
#include "common/diag.h"         // defines: struct diag_list
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/version.h"      // defines: hpt_version
#include "launcher/slurm/render.h"  // defines: render_batch_script, render_sbatch_options
#include "launcher/runs/rundir.h"  // defines: struct rundir, rundir_write, rundir_abandon
#include "launcher/slurm/slurm.h"   // defines: hpt_slurm_submit, hpt_slurm_cluster_name

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void attempt_init(struct attempt *a)
{
	memset(a, 0, sizeof(*a));
	sbuf_init(&a->resolved);
	sbuf_init(&a->script);
}

void attempt_release(struct attempt *a)
{
	if (!a)
		return;
	job_release(&a->job);
	free(a->exclude);
	a->exclude = NULL;
	sbuf_release(&a->resolved);
	sbuf_release(&a->script);
}

int attempt_self_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int attempt_prepare(struct attempt *a, const char *hpctrain, struct diag_list *dl)
{
	struct render_ctx ctx = { .hpctrain = hpctrain, .version = hpt_version, .sha256 = a->sha256,
				  .exclude = a->exclude };

	sbuf_reset(&a->resolved);
	sbuf_reset(&a->script);
	if (spec_emit_resolved(&a->job, &a->resolved))
		return HPT_EXIT_INTERNAL;
	spec_hash(a->resolved.buf, a->resolved.len, a->sha256);
	if (render_batch_script(&a->job, &ctx, &a->script, dl))
		return HPT_EXIT_BAD_SPEC;
	return HPT_EXIT_OK;
}

static json_t *record_of(const struct attempt *a, const struct rundir *rd, uint32_t job_id,
			 int64_t task, const char *sweep, const char *cluster)
{
	json_t *rec;

	struct passwd *pw = getpwuid(getuid());
	char when[32], host[256] = "";
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gethostname(host, sizeof(host) - 1);
	rec = json_pack("{s:I, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:i, s:s?, s:i}",
			 "job_id", (json_int_t)job_id, "cluster", cluster, "submitted_at", when,
			 "hpctrain_version", hpt_version, "user", pw ? pw->pw_name : "",
			 "uid", (json_int_t)getuid(), "host", host, "name", a->job.name,
			 "sha256", a->sha256, "run", rd->run, "dir", rd->dir,
			 "attempt", rd->attempt, "exclude", a->exclude, "preflight_resubmits",
			 a->resubmits);
	if (rec && task >= 0) {
		json_object_set_new(rec, "array_task_id", json_integer(task));
		json_object_set_new(rec, "sweep", json_string(sweep));
	}
	return rec;
}

int attempt_record(const struct attempt *a, const struct rundir *rd, uint32_t job_id,
		   int64_t task, const char *sweep, const char *cluster, json_t **record,
		   struct sbuf *err)
{
	struct sbuf text = SBUF_INIT;
	char *doc;
	int rc = 0;

	*record = record_of(a, rd, job_id, task, sweep, cluster);
	doc = *record ? json_dumps(*record, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
	if (doc) {
		sbuf_addstr(&text, doc);
		sbuf_addch(&text, '\n');
		free(doc);
	}
	if (!doc || rundir_write(rd, "submit.json", text.buf, text.len, err)) {
		sbuf_addf(err, "%sjob %u was submitted, but its record was not written",
			  err->len ? "; " : "", job_id);
		rc = -1;
	}
	sbuf_release(&text);
	return rc;
}

int attempt_submit(struct attempt *a, struct rundir *rd, json_t **record, struct sbuf *err,
		   struct sbuf *warn)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct render_opts opts = { NULL, 0 };
	struct hpt_slurm_submit_result res = { 0, NULL };
	struct sbuf cluster = SBUF_INIT, text = SBUF_INIT;
	int status;

	*record = NULL;
	if (rundir_write(rd, "job.sbatch", a->script.buf, a->script.len, err)) {
		status = HPT_EXIT_IO;
		goto out_abandon;
	}
	if (render_sbatch_options(&a->job, a->exclude, &opts, &dl)) {
		/* render_batch_script accepted the same job: a bug */
		sbuf_addstr(err, "BUG: render_sbatch_options failed after render_batch_script");
		status = HPT_EXIT_INTERNAL;
		goto out_abandon;
	}
	status = hpt_slurm_submit(&opts, a->script.buf, rd->dir, &res, err);
	if (status)
		goto out_abandon;
	rd->fresh = 0; /* Slurm has the job: the attempt stays, whatever happens next */
	if (res.user_msg)
		sbuf_addf(warn, "slurm: %s\n", res.user_msg);
	if (hpt_slurm_cluster_name(&cluster, &text)) {
		sbuf_addf(warn, "warning: %s\n", text.buf);
		sbuf_reset(&text);
	}
	if (attempt_record(a, rd, res.job_id, -1, NULL, cluster.buf, record, err))
		status = HPT_EXIT_IO;
	goto out;
out_abandon:
	rundir_abandon(rd);
out:
	render_opts_release(&opts);
	hpt_slurm_submit_result_release(&res);
	diag_list_release(&dl);
	sbuf_release(&cluster);
	sbuf_release(&text);
	return status;
}
