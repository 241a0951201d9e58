/* sweep_submit.c - a planned sweep into runs and array jobs
 * (sweep_submit.h).  Shell: directories, links, records, libslurm. */
#include "launcher/runs/sweep_submit.h"  // defines: sweep_submit, sweep_submit_limit
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/bug.h"  // defines: BUG, BUG_NOTE
#include "common/diag.h"                 // defines: struct diag_list
#include "common/exitcode.h"             // defines: enum hpt_exit
#include "common/fileio.h"               // defines: fileio_write_atomic, fileio_check_owned
#include "common/fileremove.h"           // defines: fileremove_one
#include "common/isotime.h"              // defines: isotime_format
#include "common/jsonb.h"                // defines: jsonb_set, jsonb_append
#include "common/sbuf.h"                 // defines: struct sbuf
#include "common/strfmt.h"               // defines: strfmt
#include "launcher/runs/progress.h"      // defines: progress_load
#include "launcher/runs/program_module.h" // defines: program_module_publish
#include "launcher/runs/rundir.h"        // defines: rundir_create, rundir_write
#include "launcher/runs/rundir_publish.h" // defines: rundir_publish_*
#include "launcher/runs/runref.h"        // defines: runref_sweep_points
#include "launcher/runs/sweep_plan.h"    // defines: struct sweep_plan, sweep_plan_record
#include "launcher/runs/sweep_record.h"  // defines: sweep_record_load, sweep_record_save
#include "launcher/slurm/slurm.h"        // defines: hpt_slurm_submit, hpt_slurm_job

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int sweep_submit_limit(struct sweep_plan *pl, struct sbuf *err)
{
	uint32_t size;
	int status = hpt_slurm_max_array_size(&size, err);

	if (status)
		return status;
	if (!size) {
		sbuf_addstr(err, "this cluster disables job arrays (MaxArraySize=0), and a sweep "
			    "runs as arrays: submit its points one by one with --set");
		return HPT_EXIT_REJECTED;
	}
	pl->max_tasks = size;
	return 0;
}

/* The array's directory: a link per task to its run, and array.sbatch. */
static int fill_array_dir(const struct sweep_plan *pl, const struct sweep_plan_array *a,
			  const char *parent, struct sbuf *err)
{
	char *path;
	int rc;

	for (size_t t = 0; t < a->n; t++) {
		const struct sweep_plan_point *pt = &pl->p[a->points[t]];
		char *link = xasprintf(RUNFILE_TASK_LINK, a->dir, (long long)t);
		char *target = xasprintf("../../%s", sweep_plan_relative(pt->rd.dir, parent));

		rc = symlink(target, link);
		if (rc)
			sbuf_addf(err, "cannot link %s: %s", link, strerror(errno));
		free(link);
		free(target);
		if (rc)
			return -1;
	}
	path = xasprintf("%s/array.sbatch", a->dir);
	rc = fileio_write_atomic(path, a->script.buf, a->script.len, RUNDIR_FILE_MODE, 1, err);
	free(path);
	return rc;
}

/* OUTPUT/NAME/sweep-HASH12.arrays/N, published whole: filled in a
 * temporary beside N (same depth, so the task links' ../../ hold), then
 * given the first free N by rundir_publish_numbered (mkdir claims N, so
 * two submissions of one sweep never share a directory; rename fills it
 * in one step).  Under parent's lock, so temporaries found are orphans of
 * killed submits. */
static int make_array_dir(const struct sweep_plan *pl, struct sweep_plan_array *a,
			  const char *parent, struct sbuf *err)
{
	char *base = xasprintf("%s/%s.arrays", parent, pl->name), *tmp = NULL;
	int rc = -1, n, lock = rundir_publish_lock(parent, err);

	if (lock < 0)
		goto out;
	if (mkdir(base, RUNDIR_DIR_MODE) && errno != EEXIST) {
		sbuf_addf(err, "cannot create %s: %s", base, strerror(errno));
		goto out;
	}
	if (fileio_check_owned(base, err)) /* an existing one: ours, closed to others */
		goto out;
	rundir_publish_sweep(base);
	if (!(tmp = rundir_publish_tmp(base, "array", err)))
		goto out;
	a->dir = tmp;
	rc = fill_array_dir(pl, a, parent, err);
	a->dir = NULL;
	if (!rc && (n = rundir_publish_numbered(tmp, base, 1, 99999, err)) > 0)
		a->dir = xasprintf("%s/%d", base, n);
	else
		rundir_publish_discard(tmp);
	rc = a->dir ? 0 : -1;
out:
	rundir_publish_unlock(lock);
	free(tmp);
	free(base);
	return rc;
}

static void abandon_array(struct sweep_plan *pl, struct sweep_plan_array *a)
{
	struct sbuf ignored = SBUF_INIT; /* best effort, only the caller's (common/fileremove.h) */

	for (size_t t = 0; t < a->n; t++) {
		char *link = a->dir ? xasprintf("%s/%zu", a->dir, t) : NULL;

		rundir_abandon(&pl->p[a->points[t]].rd);
		if (link)
			fileremove_one(link, &ignored);
		free(link);
	}
	if (a->dir) {
		char *path = xasprintf("%s/array.sbatch", a->dir);

		fileremove_one(path, &ignored);
		free(path);
		fileremove_one(a->dir, &ignored);
	}
	sbuf_release(&ignored);
}

/* The Python module into a point's attempt, as attempt_submit does.  A
 * copy not made costs nothing here: launch then finds the installed one
 * (outside a container), and submit has said so for the first point. */
static void publish_module(const char *dir)
{
	struct sbuf err = SBUF_INIT;

	program_module_publish(dir, &err);
	sbuf_release(&err);
}

/* The runs of array a: a new attempt of each point's run, its script. */
static int make_runs(struct sweep_plan *pl, const struct sweep_plan_array *a, struct sbuf *err)
{
	for (size_t t = 0; t < a->n; t++) {
		struct sweep_plan_point *pt = &pl->p[a->points[t]];
		int status;

		if (pt->at.renders != 1) {
			BUG_NOTE(err, "a point rendered %u times", pt->at.renders);
			return HPT_EXIT_INTERNAL;
		}
		if (pt->run ? rundir_new_attempt(pt->run, &pt->rd, err)
			    : rundir_create(pt->at.job.output.dir, pt->at.job.name, pt->at.sha256,
					    pt->at.resolved.buf, pt->at.resolved.len, &pt->rd, err))
			return HPT_EXIT_IO;
		/* its submit.json can be written: asked before Slurm has the array */
		if ((status = attempt_record_check(&pt->at, &pt->rd, err)))
			return status;
		if (rundir_write(&pt->rd, RUNFILE_SCRIPT, pt->at.script.buf, pt->at.script.len, err) ||
		    attempt_write_records(&pt->at, &pt->rd, err))
			return HPT_EXIT_IO;
		publish_module(pt->rd.dir);
	}
	return 0;
}

/* Every point shares name and output.dir: the record sits beside their
 * runs, and so does each array's directory. */
static int make_array(struct sweep_plan *pl, struct sweep_plan_array *a, struct sbuf *err)
{
	const char *run = pl->p[a->points[0]].rd.run;
	char *parent = xstrndup(run, (size_t)(strrchr(run, '/') - run));
	int status = 0;

	if (!pl->record)
		pl->record = xasprintf("%s/%s.json", parent, pl->name);
	if (make_array_dir(pl, a, parent, err))
		status = HPT_EXIT_IO;
	free(parent);
	return status;
}

/* Makes the runs of array a, submits it, records each point's attempt. */
static int submit_array(struct sweep_plan *pl, struct sweep_plan_array *a, const char *cluster,
			struct sbuf *notes, struct sbuf *err)
{
	struct hpt_slurm_submit_result res = { 0, NULL };
	int status = make_runs(pl, a, err);

	if (!status)
		status = make_array(pl, a, err);
	if (!status)
		status = hpt_slurm_submit(&a->opts, a->script.buf, a->dir, &res, err);
	if (status) {
		abandon_array(pl, a);
		return status;
	}
	a->job_id = res.job_id;
	if (res.user_msg)
		sbuf_addf(notes, "slurm: %s\n", res.user_msg);
	hpt_slurm_submit_result_release(&res);
	for (size_t t = 0; t < a->n; t++) {
		struct sweep_plan_point *pt = &pl->p[a->points[t]];
		json_t *rec = NULL;

		pt->rd.fresh = 0;
		if (attempt_record(&pt->at, &pt->rd, (uint32_t)a->job_id, (int64_t)t, pl->name,
				   cluster, &rec, err))
			status = HPT_EXIT_IO;
		json_decref(rec);
	}
	return status;
}

/* A rerun's record: the one on disk, its rerun points moved to their new
 * attempts and arrays (appended to by write_record). */
static json_t *rerun_doc(const struct sweep_plan *pl, const char *parent, struct sbuf *notes)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL, *points;

	if (sweep_record_load(pl->record, &doc, &err)) {
		sbuf_addf(notes, "%s\n", err.buf);
		doc = json_pack("{s:s, s:[], s:[]}", "sweep", pl->name, "points", "arrays");
	}
	points = json_object_get(doc, "points");
	for (size_t i = 0; i < pl->n; i++) {
		const struct sweep_plan_point *pt = &pl->p[i];
		json_t *o = json_array_get(points, pt->index);

		if (!o || !pt->rd.dir)
			continue;
		/* o is doc's: a value it did not take drops the whole document */
		if (json_object_set_new(o, "dir", json_string(sweep_plan_relative(pt->rd.dir, parent))) ||
		    json_object_set_new(o, "array", json_integer((json_int_t)pt->array)) ||
		    json_object_set_new(o, "task", json_integer((json_int_t)pt->task))) {
			json_decref(doc);
			doc = NULL;
			break;
		}
	}
	if (doc && !json_is_array(json_object_get(doc, "arrays")))
		jsonb_set(&doc, "arrays", json_array());
	sbuf_release(&err);
	return doc;
}

static json_t *arrays_json(const struct sweep_plan *pl, const char *parent)
{
	json_t *arrays = json_array();
	char when[ISOTIME_SIZE];

	isotime_format(time(NULL), when);
	for (size_t k = 0; k < pl->na; k++) {
		const struct sweep_plan_array *a = &pl->a[k];
		json_t *pts = json_array();

		if (!a->job_id)
			continue;
		for (size_t t = 0; t < a->n; t++)
			jsonb_append(&pts, json_integer((json_int_t)pl->p[a->points[t]].index));
		jsonb_append(&arrays, json_pack(
			"{s:I, s:s, s:o, s:s, s:s}", "job_id", (json_int_t)a->job_id, "spec",
			render_opts_find(&a->opts, RENDER_OPT_ARRAY)->text, "points", pts, "dir",
			sweep_plan_relative(a->dir, parent), "submitted_at", when));
	}
	return arrays;
}

/* Appends this submission's arrays to the record (made or updated). */
static int write_record(const struct sweep_plan *pl, struct sbuf *notes, struct sbuf *err)
{
	char *parent = xstrndup(pl->record, (size_t)(strrchr(pl->record, '/') - pl->record));
	/* read, add ours, write: under the runs' lock, or two submissions of
	 * one sweep at once each write the record without the other's arrays */
	int rc = -1, lock = rundir_publish_lock(parent, err);
	json_t *doc = NULL, *old = NULL, *arrays, *mine = NULL;
	struct sbuf ignored = SBUF_INIT;

	if (lock < 0)
		goto out;
	doc = pl->sweep ? sweep_plan_record(pl, parent) : rerun_doc(pl, parent, notes);
	arrays = json_object_get(doc, "arrays");
	mine = arrays_json(pl, parent);
	if (pl->sweep && !access(pl->record, F_OK) &&
	    !sweep_record_load(pl->record, &old, &ignored))
		json_array_extend(arrays, json_object_get(old, "arrays"));
	if (!mine || json_array_extend(arrays, mine)) { /* no record without its arrays */
		json_decref(doc);
		doc = NULL;
	}
	rc = sweep_record_save(pl->record, doc, err); /* says why for a NULL doc */
out:
	rundir_publish_unlock(lock);
	json_decref(doc);
	json_decref(old);
	json_decref(mine);
	free(parent);
	sbuf_release(&ignored);
	return rc;
}

int sweep_submit(struct sweep_plan *pl, const char *cluster, struct sbuf *notes,
		 struct sbuf *err)
{
	int status = 0;

	for (size_t k = 0; !status && k < pl->na; k++)
		status = submit_array(pl, &pl->a[k], cluster, notes, err);
	if (pl->record && write_record(pl, notes, err) && !status)
		status = HPT_EXIT_IO;
	return status;
}

/* Whether a point's latest attempt should run again: it ended without
 * completing (or, with all, ended at all).  A job still queued or
 * running is left alone; one Slurm forgot counts as completed when its
 * metrics hold a summary. */
static bool wants_rerun(const struct runref *r, size_t i, bool all, struct sbuf *notes)
{
	struct hpt_slurm_job j;
	struct sbuf err = SBUF_INIT;
	struct run_progress prog;
	int status;
	bool again;

	if (!r->job_id)
		return true;
	status = r->task >= 0 ? hpt_slurm_array_task((uint32_t)r->job_id, r->task, &j, &err)
			      : hpt_slurm_job((uint32_t)r->job_id, &j, &err);
	sbuf_release(&err);
	if (status) {
		progress_load(r->rd.dir, &prog);
		return all || !prog.summary_seen;
	}
	if (!j.finished)
		sbuf_addf(notes, "point %zu is still %s; left alone\n", i, j.state);
	again = j.finished && (all || !j.completed);
	hpt_slurm_job_release(&j);
	return again;
}

/* Point i of the record, loaded from its run for a new attempt. */
static int load_rerun_point(struct sweep_plan *pl, const struct runref *r, size_t i,
			    const struct sweep_point_loader *loader, struct diag_list *dl)
{
	struct sweep_plan_point *pt = &pl->p[pl->n++];

	attempt_init(&pt->at);
	pt->index = i;
	pt->run = xstrdup(r->rd.run);
	return loader->load(&r->rd, loader->arg, &pt->at, dl);
}

int sweep_submit_rerun_points(struct sweep_plan *pl, const char *record, bool all,
			      const struct sweep_point_loader *loader, struct sbuf *notes,
			      struct diag_list *dl, struct sbuf *err)
{
	struct runref *v = NULL;
	json_t *doc = NULL;
	size_t n = 0;
	int status = runref_sweep_points(record, &doc, &v, &n, err);

	/* a name hpctrain writes fits; a longer one is not cut into another */
	if (!status && strfmt(pl->name, sizeof(pl->name), "%s",
			      json_string_value(json_object_get(doc, "sweep")) ?: "sweep")) {
		sbuf_addf(err, "%s: its sweep name is longer than one hpctrain writes", record);
		status = HPT_EXIT_NO_INPUT;
	}
	pl->max_parallel = json_integer_value(json_object_get(doc, "max_parallel"));
	pl->p = xcalloc(n + 1, sizeof(*pl->p));
	for (size_t i = 0; i < n && !status; i++) {
		if (!v[i].rd.dir) {
			sbuf_addf(err, "point %zu: its run is gone", i);
			status = HPT_EXIT_NO_INPUT;
		} else if (wants_rerun(&v[i], i, all, notes)) {
			status = load_rerun_point(pl, &v[i], i, loader, dl);
		}
	}
	runref_release_all(v, n);
	json_decref(doc);
	return status;
}
