/* submit_sweep.c - submit a sweep, or rerun one, and report it.
 * Shell: see submit_sweep.h.  Each point is loaded exactly as `submit
 * --set KEY=VALUE` would load it and becomes its own run; the plan
 * (launcher/runs/sweep_plan.c) groups the points into array jobs and
 * launcher/runs/sweep_submit.c makes the runs and submits them; this
 * file orders the steps and prints. */
#include "launcher/job/submit_sweep.h"            // defines: submit_sweep, submit_sweep_rerun
#include "common/say.h"                 // defines: say, say_lines
#include "common/json_print.h"              // defines: json_print
#include "launcher/job/submit_report.h"           // defines: submit_report_exclude
#include "common/diag.h"                 // defines: struct diag_list, diag_merge
#include "common/exitcode.h"             // defines: enum hpt_exit
#include "common/sbuf.h"                 // defines: struct sbuf
#include "common/spec/spec.h"            // defines: spec_load
#include "launcher/job/job_prepare.h"              // defines: job_prepare, job_prepare_run
#include "common/spec/specfile.h"        // defines: struct specfile_overrides
#include "common/spec/sweep.h"           // defines: struct sweep, sweep_point
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append
#include "launcher/runs/attempt.h"       // defines: attempt_resolve, attempt_render
#include "launcher/runs/sweep_plan.h"    // defines: struct sweep_plan, sweep_plan_arrays
#include "launcher/runs/sweep_record.h"  // defines: sweep_record_load
#include "launcher/runs/sweep_submit.h"  // defines: sweep_submit, sweep_submit_limit
#include "launcher/slurm/render.h"       // defines: render_opts_find
#include "launcher/slurm/slurm.h"        // defines: hpt_slurm_init, hpt_slurm_cluster_name

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A --set of a key the sweep varies would be overridden at every point. */
static int check_sets(const struct sweep_request *req)
{
	struct sbuf key = SBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < req->sets->n && !rc; i++) {
		const char *arg = req->sets->v[i].arg;

		sbuf_reset(&key);
		sbuf_add(&key, arg, strcspn(arg, "="));
		for (size_t k = 0; k < req->sweep->naxes && !rc; k++)
			if (!strcmp(key.buf, req->sweep->axes[k].key)) {
				say("--set %s: the sweep varies %s; "
					"set it in one place", arg, key.buf);
				rc = HPT_EXIT_USAGE;
			}
	}
	sbuf_release(&key);
	return rc;
}

/* Point i: the spec with --set, then the point's values; resolved. */
static int load_point(const struct sweep_request *req, size_t i,
		      struct sweep_plan_point *pt, struct diag_list *dl)
{
	struct job_prepare_request r = { .where = req->where, .text = req->text,
					 .len = req->len,
					 .flags = req->dry_run ? 0 : JOB_PREPARE_STORE_CODE };
	struct diag_list mine = DIAG_LIST_INIT;
	struct sweep_point sp;
	struct spec_override *all;
	size_t n = req->sets->n;
	int status;

	sweep_point(req->sweep, i, &sp);
	all = xcalloc(n + sp.n + 1, sizeof(*all));
	memcpy(all, req->sets->v, n * sizeof(*all));
	memcpy(all + n, sp.v, sp.n * sizeof(*all));
	r.sets = all;
	r.nsets = n + sp.n;
	attempt_init(&pt->at);
	pt->index = i;
	status = job_prepare(&r, &pt->at, &mine);
	diag_merge(dl, &mine);
	diag_list_release(&mine);
	free(all);
	sweep_point_release(&sp);
	return status;
}

/* Every point rendered once, with the one exclude list. */
static int render_points(struct sweep_plan *pl, const char *exclude, const char *hpctrain,
			 struct diag_list *dl)
{
	int status = 0;

	for (size_t i = 0; i < pl->n; i++) {
		struct sweep_plan_point *pt = &pl->p[i];
		int s;

		free(pt->at.exclude);
		pt->at.exclude = exclude ? xstrdup(exclude) : NULL;
		s = attempt_render(&pt->at, hpctrain, dl);
		status = status ? status : s;
	}
	return status;
}

static void print_table(const struct sweep_plan *pl)
{
	const struct sweep *sw = pl->sweep;

	printf("%s: %zu points (%s), %zu array job%s\n", pl->name, pl->n,
	       sweep_mode_names[sw->mode], pl->na, pl->na == 1 ? "" : "s");
	printf("%-6s %-6s %-5s %-13s %s\n", "POINT", "ARRAY", "TASK", "RUN", "VALUES");
	for (size_t i = 0; i < pl->n; i++) {
		struct sbuf label = SBUF_INIT;

		sweep_point_label(sw, i, &label);
		printf("%-6zu %-6zu %-5zu %-13.*s %s\n", i, pl->p[i].array, pl->p[i].task,
		       RUNDIR_HASH_LEN, pl->p[i].at.sha256, label.buf);
		sbuf_release(&label);
	}
}

static int print_plan(const struct sweep_plan *pl, int json)
{
	if (json) {
		json_t *doc = sweep_plan_record(pl, ""), *arrays = json_array();

		for (size_t k = 0; k < pl->na; k++)
			jsonb_append(&arrays, json_pack("{s:s, s:s}", "spec",
				     render_opts_find(&pl->a[k].opts, RENDER_OPT_ARRAY)->text,
				     "script", pl->a[k].script.buf));
		jsonb_set(&doc, "arrays", arrays); /* in the place of the record's empty one */
		return json_print(doc);
	}
	print_table(pl);
	for (size_t k = 0; k < pl->na; k++)
		printf("\n# array %zu: %zu points\n%s", k, pl->a[k].n, pl->a[k].script.buf);
	return 0;
}

static void report(const struct sweep_plan *pl, int json, int status)
{
	size_t done = 0;

	for (size_t k = 0; k < pl->na; k++)
		done += pl->a[k].job_id != 0;
	if (!done)
		return;
	if (json) {
		json_t *doc;
		struct sbuf err = SBUF_INIT;

		if (!sweep_record_load(pl->record, &doc, &err))
			json_print(doc);
		sbuf_release(&err);
		return;
	}
	printf("submitted %s: %zu points in %zu array job%s%s\n", pl->name, pl->n, done,
	       done == 1 ? "" : "s", status ? " (not all: see above)" : "");
	for (size_t k = 0; k < pl->na; k++)
		if (pl->a[k].job_id)
			printf("  job %lu: --array=%s\n", pl->a[k].job_id,
			       render_opts_find(&pl->a[k].opts, RENDER_OPT_ARRAY)->text);
	printf("record: %s\n", pl->record);
}

/* With Slurm at hand: the exclude list, one render per point, the
 * arrays under MaxArraySize, submitted and reported. */
static int submit_all(struct sweep_plan *pl, const struct sweep_request *req)
{
	struct sbuf err = SBUF_INIT, notes = SBUF_INIT, cluster = SBUF_INIT, why = SBUF_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	char *exclude = NULL;
	int status = submit_report_exclude(req->exclude, !req->no_ledger, &exclude, &err);

	if (!status && (status = render_points(pl, exclude, req->hpctrain, &dl)) && req->sweep) {
		diag_report(stderr, &dl);
		diag_list_release(&dl);
		say("%s: a point of the sweep is invalid; nothing was "
			"submitted", req->where);
	}
	if (!status)
		status = sweep_submit_limit(pl, &err);
	if (!status)
		status = sweep_plan_arrays(pl);
	if (!status && hpt_slurm_cluster_name(&cluster, &why))
		say("warning: %s", why.buf);
	if (!status)
		status = sweep_submit(pl, cluster.buf, &notes, &err);
	say_lines(notes.buf);
	report(pl, req->json, status);
	diag_report(stderr, &dl);
	if (status && err.len)
		say("%s", err.buf);
	free(exclude);
	diag_list_release(&dl);
	sbuf_release(&err);
	sbuf_release(&notes);
	sbuf_release(&cluster);
	sbuf_release(&why);
	return status;
}

/* MaxArraySize for a dry run: the cluster's where a controller answers,
 * else Slurm's default.  *guessed says which; HPT_EXIT_REJECTED where
 * the cluster has no arrays. */
static int dry_run_limit(struct sweep_plan *pl, bool *guessed, struct sbuf *err)
{
	int status = hpt_slurm_init(err);

	if (!status)
		status = sweep_submit_limit(pl, err);
	*guessed = status && status != HPT_EXIT_REJECTED;
	if (*guessed) {
		pl->max_tasks = HPT_SLURM_DEFAULT_MAX_ARRAY_SIZE;
		status = 0;
	}
	return status;
}

/* The plan as it would be submitted, with --exclude alone: the dry run
 * asks nothing of the ledger. */
static int dry_run(struct sweep_plan *pl, const struct sweep_request *req)
{
	struct sbuf err = SBUF_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	bool guessed = false;
	int status = render_points(pl, req->exclude, req->hpctrain, &dl);

	if (!status)
		status = dry_run_limit(pl, &guessed, &err);
	if (!status)
		status = sweep_plan_arrays(pl);
	diag_report(stderr, &dl);
	if (!status && pl->split)
		say("%s: at most %zu tasks to an array (%s)",
			pl->name, pl->max_tasks, guessed ? "Slurm's default MaxArraySize: no "
			"controller answered" : "the cluster's MaxArraySize");
	if (status && err.len)
		say("%s", err.buf);
	if (!status)
		status = print_plan(pl, req->json);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}

static int submit_planned(struct sweep_plan *pl, const struct sweep_request *req)
{
	struct sbuf err = SBUF_INIT;
	int status;

	if (req->dry_run)
		return dry_run(pl, req);
	status = hpt_slurm_init(&err);
	if (status)
		say("%s", err.buf);
	else
		status = submit_all(pl, req);
	sbuf_release(&err);
	return status;
}

int submit_sweep(const struct sweep_request *req)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sweep_plan pl = { .sweep = req->sweep, .max_parallel = req->sweep->max_parallel };
	int status = check_sets(req);

	if (status)
		return status;
	pl.n = sweep_count(req->sweep);
	pl.p = xcalloc(pl.n, sizeof(*pl.p));
	for (size_t i = 0; i < pl.n; i++) {
		int s = load_point(req, i, &pl.p[i], &dl);

		status = status ? status : s;
	}
	if (!status)
		status = sweep_plan_check_distinct(&pl, req->where, &dl);
	if (!status)
		sweep_plan_identity(&pl);
	diag_sort(&dl);
	diag_report(stderr, &dl);
	if (status)
		say("%s: a point of the sweep is invalid; nothing was "
			"submitted", req->where);
	if (!status)
		status = submit_planned(&pl, req);
	if (req->record)
		*req->record = pl.record && !req->dry_run ? xstrdup(pl.record) : NULL;
	sweep_plan_release(&pl);
	diag_list_release(&dl);
	return status;
}

/* A point's run as a new attempt, its pins checked (sweep_point_loader). */
static int load_run_point(const struct rundir *rd, void *arg, struct attempt *at, struct diag_list *dl)
{
	const struct sweep_request *req = arg;

	return job_prepare_run(rd, req->image_changed_ok, req->data_changed_ok, at, dl);
}

int submit_sweep_rerun(const struct sweep_request *req, const char *record, int all)
{
	struct sweep_point_loader loader = { .load = load_run_point, .arg = (void *)req };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sweep_plan pl = { .record = xstrdup(record) };
	struct sbuf err = SBUF_INIT, notes = SBUF_INIT;
	int status = hpt_slurm_init(&err);

	if (status) {
		say("%s", err.buf);
		goto out;
	}
	status = sweep_submit_rerun_points(&pl, record, all, &loader, &notes, &dl, &err);
	say_lines(notes.buf);
	diag_drop_warnings(&dl);
	diag_report(stderr, &dl);
	if (status && err.len)
		say("%s", err.buf);
	if (!status && !pl.n)
		say("nothing to rerun in %s: every point completed "
			"(--all runs them all again)", pl.name);
	if (!status && pl.n)
		status = submit_all(&pl, req);
out:
	sweep_plan_release(&pl);
	diag_list_release(&dl);
	sbuf_release(&err);
	sbuf_release(&notes);
	return status;
}
