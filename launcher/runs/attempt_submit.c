/* attempt_submit.c - an attempt into its run directory and to Slurm.
 * Shell: job.sbatch and submit.json (launcher/runs/rundir), the job
 * through libslurm (launcher/slurm/slurm); see attempt.h. */
#include "launcher/runs/attempt.h"  // defines: struct attempt, attempt_submit, attempt_record
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/software.h"        // defines: software_record_add
#include "common/bug.h"  // defines: BUG, BUG_NOTE
#include "common/exitcode.h"        // defines: enum hpt_exit
#include "common/isotime.h"         // defines: isotime_format
#include "common/jsonb.h"           // defines: jsonb_set, jsonb_text, jsonb_dumps
#include "common/version.h"         // defines: hpt_version
#include "launcher/runs/program_module.h" // defines: program_module_publish
#include "launcher/runs/rundir.h"   // defines: struct rundir, rundir_write, rundir_abandon
#include "launcher/slurm/slurm.h"   // defines: hpt_slurm_submit, hpt_slurm_cluster_name

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int attempt_record_check(const struct attempt *a, const struct rundir *rd, struct sbuf *err)
{
	const char *named[][2] = {
		{ "the run directory", rd->dir }, { "the container image", a->job.container.image },
		{ "the code directory", a->job.code.dir }, { "the exclude list", a->exclude },
	};

	for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++) {
		if (!named[i][1] || sbuf_is_utf8(named[i][1]))
			continue;
		sbuf_addf(err, "%s '", named[i][0]);
		sbuf_add_printable(err, named[i][1]);
		sbuf_addstr(err, "' is not UTF-8 (its bytes shown as \\xHH): " RUNFILE_SUBMIT
			    " must name it exactly; rename it");
		return HPT_EXIT_NO_INPUT;
	}
	return 0;
}

static json_t *record_of(const struct attempt *a, const struct rundir *rd, uint32_t job_id,
			 int64_t task, const char *sweep, const char *cluster)
{
	json_t *rec;
	struct passwd *pw = getpwuid(getuid());
	char when[ISOTIME_SIZE], host[256] = "";

	isotime_format(time(NULL), when);
	gethostname(host, sizeof(host) - 1);
	/* the user's and host's names only inform: carried escaped when not
	 * UTF-8; the paths a reader follows were checked (attempt_record_check) */
	rec = json_pack("{s:I, s:o, s:s, s:o, s:I, s:o, s:s, s:s, s:s, s:s, s:i, s:s?, s:i}",
			 "job_id", (json_int_t)job_id, "cluster", jsonb_text(cluster), "submitted_at",
			 when, "user", jsonb_text(pw ? pw->pw_name : ""), "uid", (json_int_t)getuid(),
			 "host", jsonb_text(host), "name", a->job.name,
			 "sha256", a->sha256, "run", rd->run, "dir", rd->dir,
			 "attempt", rd->attempt, "exclude", a->exclude, "preflight_resubmits",
			 a->resubmits);
	/* The image's content as submitted: rerun and a reader of the
	 * record can tell when the image at that path has changed since. */
	if (a->job.container.image)
		jsonb_set(&rec, "container",
			  json_pack("{s:s, s:s?, s:s}", "image", a->job.container.image, "digest",
				    a->job.container.digest, "runtime",
				    container_runtime_names[a->job.container.runtime]));
	if (a->plan)
		jsonb_set(&rec, "plan", json_incref(a->plan));
	/* The code's content as submitted; its files are in code.json. */
	if (a->job.code.digest)
		jsonb_set(&rec, "code", json_pack("{s:s, s:s?}", "digest", a->job.code.digest, "dir",
						   a->job.code.dir));
	if (task >= 0) {
		jsonb_set(&rec, "array_task_id", json_integer(task));
		jsonb_set(&rec, "sweep", json_string(sweep));
	}
	return rec; /* NULL: a string not UTF-8 left no half record */
}

int attempt_write_records(const struct attempt *a, const struct rundir *rd, struct sbuf *err)
{
	char *doc;
	int rc;

	if (software_record_add(rd->dir,
				json_pack("{s:s, s:O?}", "hpctrain", hpt_version, "venv", a->venv),
				err))
		return -1;
	if (!a->code)
		return 0;
	/* sorted keys, ASCII: the same snapshot gives the same bytes */
	doc = jsonb_dumps(a->code, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_ENSURE_ASCII,
			  RUNFILE_CODE, err);
	if (!doc)
		return -1;
	rc = rundir_write(rd, RUNFILE_CODE, doc, strlen(doc), err);
	free(doc);
	return rc;
}

int attempt_record(const struct attempt *a, const struct rundir *rd, uint32_t job_id,
		   int64_t task, const char *sweep, const char *cluster, json_t **record,
		   struct sbuf *err)
{
	struct sbuf text = SBUF_INIT;
	char *doc;
	int rc = 0;

	*record = record_of(a, rd, job_id, task, sweep, cluster);
	doc = jsonb_dumps(*record, JSON_INDENT(2) | JSON_ENSURE_ASCII, RUNFILE_SUBMIT, err);
	if (doc) {
		sbuf_addstr(&text, doc);
		sbuf_addch(&text, '\n');
		free(doc);
	}
	if (!doc || rundir_write(rd, RUNFILE_SUBMIT, text.buf, text.len, err)) {
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
	struct hpt_slurm_submit_result res = { 0, NULL };
	struct sbuf cluster = SBUF_INIT, text = SBUF_INIT;
	int status;

	*record = NULL;
	if (a->renders != 1) {
		/* the exclude list arrives before the one render, or the
		 * script and the options could disagree */
		BUG_NOTE(err, "an attempt rendered %u times", a->renders);
		status = HPT_EXIT_INTERNAL;
		goto out_abandon;
	}
	/* a record that could not be written is refused before Slurm has the job */
	if ((status = attempt_record_check(a, rd, err)))
		goto out_abandon;
	if (rundir_write(rd, RUNFILE_SCRIPT, a->script.buf, a->script.len, err) ||
	    attempt_write_records(a, rd, err)) {
		status = HPT_EXIT_IO;
		goto out_abandon;
	}
	if (program_module_publish(rd->dir, &text)) {
		sbuf_addf(warn, "warning: %s: import hpctrain will find only an installed copy\n",
			  text.buf);
		sbuf_reset(&text);
	}
	status = hpt_slurm_submit(&a->opts, a->script.buf, rd->dir, &res, err);
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
	hpt_slurm_submit_result_release(&res);
	sbuf_release(&cluster);
	sbuf_release(&text);
	return status;
}
