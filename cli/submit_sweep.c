/* submit_sweep.c - submit a sweep: its points as Slurm array jobs.
 * Shell: see submit_sweep.h.  Each point is loaded exactly as `submit
 * --set KEY=VALUE` would load it, and becomes its own run; points whose
 * Slurm options are equal share one array (launcher/render_array.c). */
#include "cli/submit_sweep.h"      // defines: submit_sweep
#include "cli/json_print.h"        // defines: json_print
#include "cli/submit_report.h"     // defines: submit_exclude
#include "common/diag.h"           // defines: struct diag_list, diag_merge
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/fileio.h"         // defines: fileio_write_atomic
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/spec/spec.h"      // defines: spec_load, spec_hash
#include "common/spec/spec_scalar.h" // defines: spec_parse_int, spec_parse_num
#include "common/spec/specfile.h"  // defines: struct specfile_overrides
#include "common/spec/sweep.h"     // defines: struct sweep, sweep_point
#include "common/spec/ynode.h"     // defines: struct ynode
#include "common/version.h"        // defines: hpt_version
#include "launcher/runs/attempt.h"      // defines: struct attempt, attempt_prepare, attempt_record
#include "launcher/slurm/render.h"       // defines: render_array_options, render_array_script
#include "launcher/runs/progress.h"     // defines: progress_load
#include "launcher/runs/rundir.h"       // defines: rundir_create, rundir_write
#include "launcher/runs/runref.h"       // defines: runref_sweep_points
#include "launcher/slurm/slurm.h"        // defines: hpt_slurm_submit
#include "launcher/runs/sweep_record.h" // defines: sweep_record_save

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct point {
	struct attempt at;
	struct rundir rd;
	struct render_opts opts;
	size_t array, task; /* which array runs it, as which task */
	size_t index;       /* its number in the sweep */
	char *run;          /* rerun: the point's existing run, for a new attempt */
};

struct array {
	size_t *points; /* in task order */
	size_t n;
	char *dir;      /* the array's working directory, once made */
	unsigned long job_id;
	struct render_opts opts;
	struct sbuf script;
};

struct plan {
	const struct sweep_request *req; /* a rerun's has no spec, no sweep */
	struct point *p;
	size_t n;
	struct array *a;
	size_t na;
	char sha256[65], name[6 + RUNDIR_HASH_LEN + 1];
	int64_t max_parallel;
	size_t max_tasks; /* the cluster's MaxArraySize; 0: not known yet */
	bool split;       /* max_tasks cut a shape into several arrays */
	char *record;   /* OUTPUT/NAME/sweep-HASH12.json, once the runs exist */
};

static const char *key_of(const struct spec_override *o, struct sbuf *buf)
{
	sbuf_reset(buf);
	sbuf_add(buf, o->arg, strcspn(o->arg, "="));
	return buf->buf;
}

/* A --set of a key the sweep varies would be overridden at every point. */
static int check_sets(const struct sweep_request *req)
{
	struct sbuf key = SBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < req->sets->n && !rc; i++) {
		key_of(&req->sets->v[i], &key);
		for (size_t k = 0; k < req->sweep->naxes && !rc; k++)
			if (!strcmp(key.buf, req->sweep->axes[k].key)) {
				fprintf(stderr, "hpctrain submit: --set %s: the sweep varies %s; "
					"set it in one place\n", req->sets->v[i].arg, key.buf);
				rc = HPT_EXIT_USAGE;
			}
	}
	sbuf_release(&key);
	return rc;
}

/* Point i: the spec with --set, then the point's values; rendered. */
static int load_point(const struct sweep_request *req, size_t i, struct point *pt,
		      struct diag_list *dl)
{
	struct diag_list mine = DIAG_LIST_INIT;
	struct sweep_point sp;
	struct spec_override *all;
	size_t n = req->sets->n;
	int status;

	sweep_point(req->sweep, i, &sp);
	all = xcalloc(n + sp.n + 1, sizeof(*all));
	memcpy(all, req->sets->v, n * sizeof(*all));
	memcpy(all + n, sp.v, sp.n * sizeof(*all));
	attempt_init(&pt->at);
	status = spec_load(req->where, req->text, req->len, all, n + sp.n, &pt->at.job, &mine)
			 ? HPT_EXIT_BAD_SPEC : HPT_EXIT_OK;
	if (!status)
		status = attempt_prepare(&pt->at, req->hpctrain, &mine);
	diag_merge(dl, &mine);
	diag_list_release(&mine);
	free(all);
	sweep_point_release(&sp);
	return status;
}

/* Two points that resolve to one job would share one run. */
static int check_distinct(const struct plan *pl, struct diag_list *dl)
{
	for (size_t i = 0; i < pl->n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pl->p[i].at.sha256, pl->p[j].at.sha256)) {
				struct sbuf a = SBUF_INIT, b = SBUF_INIT;

				sweep_point_label(pl->req->sweep, j, &a);
				sweep_point_label(pl->req->sweep, i, &b);
				diag_add(dl, DIAG_ERROR, pl->req->where, 0, 0, "sweep",
					 "points %zu (%s) and %zu (%s) resolve to the same job: the "
					 "swept keys change nothing there", j, a.buf, i, b.buf);
				sbuf_release(&a);
				sbuf_release(&b);
				return HPT_EXIT_BAD_SPEC;
			}
	return 0;
}

/* Points with equal Slurm options go to one array, in point order,
 * and to another once it holds max_tasks. */
static int group(struct plan *pl, struct diag_list *dl)
{
	struct sbuf *keys = xcalloc(pl->n + 1, sizeof(*keys));
	int status = 0;

	for (size_t i = 0; i < pl->n && !status; i++) {
		struct point *pt = &pl->p[i];
		size_t k;

		render_opts_release(&pt->opts);
		if (render_sbatch_options(&pt->at.job, pt->at.exclude, &pt->opts, dl)) {
			status = HPT_EXIT_BAD_SPEC;
			break;
		}
		render_opts_key(&pt->opts, &keys[i]);
		for (k = 0; k < pl->na; k++) {
			if (strcmp(keys[pl->a[k].points[0]].buf, keys[i].buf))
				continue;
			if (!pl->max_tasks || pl->a[k].n < pl->max_tasks)
				break;
			pl->split = true;
		}
		if (k == pl->na) {
			pl->a = xrealloc(pl->a, (pl->na + 1) * sizeof(*pl->a));
			memset(&pl->a[pl->na++], 0, sizeof(*pl->a));
		}
		pl->a[k].points = xrealloc(pl->a[k].points, (pl->a[k].n + 1) * sizeof(size_t));
		pt->array = k;
		pt->task = pl->a[k].n;
		pl->a[k].points[pl->a[k].n++] = i;
	}
	for (size_t i = 0; i < pl->n; i++)
		sbuf_release(&keys[i]);
	free(keys);
	return status;
}

/* The sweep's identity: its points' hashes, in order. */
static void sweep_identity(struct plan *pl)
{
	struct sbuf all = SBUF_INIT;

	sbuf_addstr(&all, "hpctrain sweep\n");
	for (size_t i = 0; i < pl->n; i++)
		sbuf_addf(&all, "%s\n", pl->p[i].at.sha256);
	spec_hash(all.buf, all.len, pl->sha256);
	snprintf(pl->name, sizeof(pl->name), "sweep-%.*s", RUNDIR_HASH_LEN, pl->sha256);
	sbuf_release(&all);
}

static int render_arrays(struct plan *pl)
{
	for (size_t k = 0; k < pl->na; k++) {
		struct array *a = &pl->a[k];

		render_array_options(&pl->p[a->points[0]].opts, a->n, pl->max_parallel, &a->opts);
		sbuf_init(&a->script);
		if (render_array_script(&a->opts, pl->name, hpt_version, &a->script))
			return HPT_EXIT_INTERNAL;
	}
	return 0;
}

static void arrays_release(struct plan *pl)
{
	for (size_t k = 0; k < pl->na; k++) {
		free(pl->a[k].points);
		free(pl->a[k].dir);
		render_opts_release(&pl->a[k].opts);
		sbuf_release(&pl->a[k].script);
	}
	free(pl->a);
	pl->a = NULL;
	pl->na = 0;
}

/* Groups the points and renders their arrays (again, after --exclude
 * and the ledger changed every point's options alike). */
static int plan_arrays(struct plan *pl, struct diag_list *dl)
{
	int status;

	arrays_release(pl);
	pl->split = false;
	status = group(pl, dl);
	return status ? status : render_arrays(pl);
}

/* The cluster's MaxArraySize bounds an array's tasks: a shape with more
 * points becomes several arrays, each under the same --max-parallel cap.
 * HPT_EXIT_REJECTED where the cluster has no arrays at all. */
static int array_limit(struct plan *pl, struct sbuf *err)
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

static void plan_release(struct plan *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		attempt_release(&pl->p[i].at);
		rundir_release(&pl->p[i].rd);
		render_opts_release(&pl->p[i].opts);
		free(pl->p[i].run);
	}
	arrays_release(pl);
	free(pl->p);
	free(pl->record);
}

/* A swept value as JSON: a number or bool when YAML reads it so. */
static json_t *value_json(const struct ynode *v)
{
	int64_t i;
	double d;
	bool b, of;

	if (!v->quoted && !spec_parse_int(v->str, &i, &of))
		return json_integer(i);
	if (!v->quoted && !spec_parse_num(v->str, &d))
		return json_real(d);
	if (!v->quoted && !spec_parse_bool(v->str, &b))
		return json_boolean(b);
	return json_string(v->str);
}

static json_t *point_params(const struct sweep *sw, size_t i)
{
	json_t *o = json_object();

	for (size_t k = 0; k < sw->naxes; k++)
		json_object_set_new(o, sw->axes[k].key, value_json(sweep_value(sw, i, k)));
	return o;
}

static const char *relative_to(const char *path, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(path, base, n) && path[n] == '/' ? path + n + 1 : path;
}

/* The record's points (with their runs, once made) and axes. */
static json_t *record_doc(const struct plan *pl, const char *parent)
{
	const struct sweep *sw = pl->req->sweep;
	json_t *axes = json_array(), *points = json_array();

	for (size_t k = 0; k < sw->naxes; k++) {
		json_t *vals = json_array();

		for (size_t j = 0; j < sw->axes[k].n; j++)
			json_array_append_new(vals, value_json(sw->axes[k].values[j]));
		json_array_append_new(axes, json_pack("{s:s, s:o}", "key", sw->axes[k].key,
						      "values", vals));
	}
	for (size_t i = 0; i < pl->n; i++) {
		const struct point *pt = &pl->p[i];
		json_t *o = json_pack("{s:I, s:o, s:s#, s:s, s:I, s:I}", "index", (json_int_t)i,
				      "params", point_params(sw, i), "run", pt->at.sha256,
				      RUNDIR_HASH_LEN, "sha256", pt->at.sha256, "array",
				      (json_int_t)pt->array, "task", (json_int_t)pt->task);

		if (pt->rd.dir)
			json_object_set_new(o, "dir", json_string(relative_to(pt->rd.dir, parent)));
		json_array_append_new(points, o);
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:o, s:[]}", "sweep", pl->name,
			 "sha256", pl->sha256, "name", pl->p[0].at.job.name, "mode",
			 sweep_mode_names[sw->mode], "max_parallel", (json_int_t)sw->max_parallel,
			 "axes", axes, "points", points, "arrays");
}

static void print_table(const struct plan *pl)
{
	const struct sweep *sw = pl->req->sweep;

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

static int dry_run(const struct plan *pl)
{
	if (pl->req->json) {
		json_t *doc = record_doc(pl, "");
		json_t *arrays = json_object_get(doc, "arrays");

		for (size_t k = 0; k < pl->na; k++)
			json_array_append_new(arrays, json_pack("{s:s, s:s}", "spec",
					      render_opts_find(&pl->a[k].opts, "array")->text,
					      "script", pl->a[k].script.buf));
		return json_print(doc);
	}
	print_table(pl);
	for (size_t k = 0; k < pl->na; k++)
		printf("\n# array %zu: %zu points\n%s", k, pl->a[k].n, pl->a[k].script.buf);
	return 0;
}

/* OUTPUT/NAME/sweep-HASH12.arrays/N: N claimed with mkdir, so two
 * submissions of one sweep never share a directory. */
static int make_array_dir(struct plan *pl, struct array *a, const char *parent, struct sbuf *err)
{
	char *base = xasprintf("%s/%s.arrays", parent, pl->name);
	int rc = -1;

	if (mkdir(base, RUNDIR_DIR_MODE) && errno != EEXIST) {
		sbuf_addf(err, "cannot create %s: %s", base, strerror(errno));
		goto out;
	}
	for (int n = 1; n < 100000 && rc; n++) {
		char *dir = xasprintf("%s/%d", base, n);

		if (!mkdir(dir, RUNDIR_DIR_MODE)) {
			a->dir = dir;
			rc = 0;
		} else {
			free(dir);
			if (errno != EEXIST) {
				sbuf_addf(err, "cannot create a directory in %s: %s", base,
					  strerror(errno));
				break;
			}
		}
	}
out:
	free(base);
	return rc;
}

/* The array's directory: a link per task to its run, and array.sbatch. */
static int fill_array_dir(struct plan *pl, struct array *a, const char *parent,
			  struct sbuf *err)
{
	char *path;
	int rc;

	for (size_t t = 0; t < a->n; t++) {
		const struct point *pt = &pl->p[a->points[t]];
		char *link = xasprintf("%s/%zu", a->dir, t);
		char *target = xasprintf("../../%s", relative_to(pt->rd.dir, parent));

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

static void abandon_array(struct plan *pl, struct array *a)
{
	for (size_t t = 0; t < a->n; t++) {
		char *link = a->dir ? xasprintf("%s/%zu", a->dir, t) : NULL;

		rundir_abandon(&pl->p[a->points[t]].rd);
		if (link)
			unlink(link);
		free(link);
	}
	if (a->dir) {
		char *path = xasprintf("%s/array.sbatch", a->dir);

		unlink(path);
		free(path);
		rmdir(a->dir);
	}
}

/* Makes the runs of array a, submits it, records each point's attempt. */
static int submit_array(struct plan *pl, struct array *a, const char *cluster,
			struct sbuf *err)
{
	struct hpt_slurm_submit_result res = { 0, NULL };
	const char *parent = NULL;
	int status = HPT_EXIT_IO;
	char *p;

	for (size_t t = 0; t < a->n; t++) {
		struct point *pt = &pl->p[a->points[t]];

		if ((pt->run ? rundir_new_attempt(pt->run, &pt->rd, err)
			     : rundir_create(pt->at.job.output.dir, pt->at.job.name, pt->at.sha256,
					     pt->at.resolved.buf, pt->at.resolved.len, &pt->rd, err)) ||
		    rundir_write(&pt->rd, "job.sbatch", pt->at.script.buf, pt->at.script.len, err))
			goto fail;
	}
	/* every point shares name and output.dir: one parent */
	p = strrchr(pl->p[a->points[0]].rd.run, '/');
	pl->record = pl->record ? pl->record
				: xasprintf("%.*s/%s.json", (int)(p - pl->p[a->points[0]].rd.run),
					    pl->p[a->points[0]].rd.run, pl->name);
	parent = pl->p[a->points[0]].rd.run;
	{
		char *dir = xstrndup(parent, (size_t)(p - parent));

		status = make_array_dir(pl, a, dir, err) || fill_array_dir(pl, a, dir, err)
				 ? HPT_EXIT_IO : 0;
		free(dir);
	}
	if (status)
		goto fail;
	status = hpt_slurm_submit(&a->opts, a->script.buf, a->dir, &res, err);
	if (status)
		goto fail;
	a->job_id = res.job_id;
	if (res.user_msg)
		fprintf(stderr, "slurm: %s\n", res.user_msg);
	hpt_slurm_submit_result_release(&res);
	for (size_t t = 0; t < a->n; t++) {
		struct point *pt = &pl->p[a->points[t]];
		json_t *rec = NULL;

		pt->rd.fresh = 0;
		if (attempt_record(&pt->at, &pt->rd, (uint32_t)a->job_id, (int64_t)t, pl->name,
				   cluster, &rec, err))
			status = HPT_EXIT_IO;
		json_decref(rec);
	}
	return status;
fail:
	abandon_array(pl, a);
	return status;
}

/* A rerun's record: the one on disk, its rerun points moved to their new
 * attempts and arrays (appended to by write_record). */
static json_t *rerun_doc(const struct plan *pl, const char *parent)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc = NULL, *points;

	if (sweep_record_load(pl->record, &doc, &err)) {
		fprintf(stderr, "hpctrain rerun: %s\n", err.buf);
		doc = json_pack("{s:s, s:[], s:[]}", "sweep", pl->name, "points", "arrays");
	}
	points = json_object_get(doc, "points");
	for (size_t i = 0; i < pl->n; i++) {
		const struct point *pt = &pl->p[i];
		json_t *o = json_array_get(points, pt->index);

		if (!o || !pt->rd.dir)
			continue;
		json_object_set_new(o, "dir", json_string(relative_to(pt->rd.dir, parent)));
		json_object_set_new(o, "array", json_integer((json_int_t)pt->array));
		json_object_set_new(o, "task", json_integer((json_int_t)pt->task));
	}
	if (!json_is_array(json_object_get(doc, "arrays")))
		json_object_set_new(doc, "arrays", json_array());
	sbuf_release(&err);
	return doc;
}

/* Appends this submission's arrays to the record (made or updated). */
static int write_record(struct plan *pl, struct sbuf *err)
{
	char *slash = strrchr(pl->record, '/');
	char *parent = xstrndup(pl->record, (size_t)(slash - pl->record));
	json_t *doc = pl->req->sweep ? record_doc(pl, parent) : rerun_doc(pl, parent);
	json_t *old = NULL, *arrays;
	struct sbuf ignored = SBUF_INIT;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	arrays = json_object_get(doc, "arrays");
	if (pl->req->sweep && !access(pl->record, F_OK) &&
	    !sweep_record_load(pl->record, &old, &ignored))
		json_array_extend(arrays, json_object_get(old, "arrays"));
	for (size_t k = 0; k < pl->na; k++) {
		json_t *pts = json_array();

		if (!pl->a[k].job_id)
			continue;
		for (size_t t = 0; t < pl->a[k].n; t++)
			json_array_append_new(
				pts, json_integer((json_int_t)pl->p[pl->a[k].points[t]].index));
		json_array_append_new(arrays, json_pack(
			"{s:I, s:s, s:o, s:s, s:s}", "job_id", (json_int_t)pl->a[k].job_id, "spec",
			render_opts_find(&pl->a[k].opts, "array")->text, "points", pts, "dir",
			relative_to(pl->a[k].dir, parent), "submitted_at", when));
	}
	rc = sweep_record_save(pl->record, doc, err);
	json_decref(doc);
	json_decref(old);
	free(parent);
	sbuf_release(&ignored);
	return rc;
}

static void report(const struct plan *pl, int status)
{
	size_t done = 0;

	for (size_t k = 0; k < pl->na; k++)
		done += pl->a[k].job_id != 0;
	if (!done)
		return;
	if (pl->req->json) {
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
			       render_opts_find(&pl->a[k].opts, "array")->text);
	printf("record: %s\n", pl->record);
}

static int submit_all(struct plan *pl)
{
	struct sbuf err = SBUF_INIT, cluster = SBUF_INIT, why = SBUF_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	int status;

	/* the ledger's nodes, said once, then the same list for every point */
	status = submit_exclude(&pl->p[0].at, pl->req->exclude, !pl->req->no_ledger,
				pl->req->hpctrain, &err);
	for (size_t i = 1; !status && i < pl->n; i++) {
		free(pl->p[i].at.exclude);
		pl->p[i].at.exclude = pl->p[0].at.exclude ? xstrdup(pl->p[0].at.exclude) : NULL;
		status = attempt_prepare(&pl->p[i].at, pl->req->hpctrain, &dl);
	}
	if (!status)
		status = array_limit(pl, &err);
	if (!status)
		status = plan_arrays(pl, &dl);
	if (!status && hpt_slurm_cluster_name(&cluster, &why))
		fprintf(stderr, "warning: %s\n", why.buf);
	for (size_t k = 0; !status && k < pl->na; k++)
		status = submit_array(pl, &pl->a[k], cluster.buf, &err);
	if (pl->record && write_record(pl, &err) && !status)
		status = HPT_EXIT_IO;
	report(pl, status);
	diag_report(stderr, &dl);
	if (status)
		fprintf(stderr, "hpctrain: %s\n", err.buf);
	diag_list_release(&dl);
	sbuf_release(&err);
	sbuf_release(&cluster);
	sbuf_release(&why);
	return status;
}

/* A dry run splits the arrays at the cluster's MaxArraySize where a
 * controller answers, and at Slurm's default where none does. */
static int dry_run_planned(struct plan *pl)
{
	struct sbuf err = SBUF_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	int status = hpt_slurm_init(&err);
	bool guessed = false;

	if (!status) {
		status = array_limit(pl, &err);
		hpt_slurm_fini();
	}
	if (status && status != HPT_EXIT_REJECTED) {
		pl->max_tasks = HPT_SLURM_DEFAULT_MAX_ARRAY_SIZE;
		guessed = true;
		status = 0;
	}
	if (!status)
		status = plan_arrays(pl, &dl);
	diag_report(stderr, &dl);
	if (!status && pl->split)
		fprintf(stderr, "hpctrain submit: %s: at most %zu tasks to an array (%s)\n",
			pl->name, pl->max_tasks, guessed ? "Slurm's default MaxArraySize: no "
			"controller answered" : "the cluster's MaxArraySize");
	if (status && err.len)
		fprintf(stderr, "hpctrain submit: %s\n", err.buf);
	if (!status)
		status = dry_run(pl);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}

/* Submits the planned arrays (dry_run: prints them) with Slurm at hand. */
static int submit_planned(struct plan *pl)
{
	struct sbuf err = SBUF_INIT;
	int status;

	if (pl->req->dry_run)
		return dry_run_planned(pl);
	status = hpt_slurm_init(&err);
	if (status) {
		fprintf(stderr, "hpctrain: %s\n", err.buf);
	} else {
		status = submit_all(pl);
		hpt_slurm_fini();
	}
	sbuf_release(&err);
	return status;
}

int submit_sweep(const struct sweep_request *req)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct plan pl = { .req = req };
	int status = check_sets(req);

	if (status)
		return status;
	pl.n = sweep_count(req->sweep);
	pl.p = xcalloc(pl.n, sizeof(*pl.p));
	for (size_t i = 0; i < pl.n; i++) {
		int s = load_point(req, i, &pl.p[i], &dl);

		pl.p[i].index = i;
		status = status ? status : s;
	}
	if (!status)
		status = check_distinct(&pl, &dl);
	if (!status) {
		sweep_identity(&pl);
		pl.max_parallel = req->sweep->max_parallel;
		status = plan_arrays(&pl, &dl);
	}
	diag_sort(&dl);
	diag_report(stderr, &dl);
	if (status)
		fprintf(stderr, "hpctrain submit: %s: a point of the sweep is invalid; nothing was "
			"submitted\n", req->where);
	if (!status)
		status = submit_planned(&pl);
	plan_release(&pl);
	diag_list_release(&dl);
	return status;
}

/* Whether a point's latest attempt should run again: it ended without
 * completing (or, with all, ended at all).  A job still queued or
 * running is left alone; one Slurm forgot counts as completed when its
 * metrics hold a summary. */
static bool wants_rerun(const struct runref *r, size_t i, int all)
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
		fprintf(stderr, "hpctrain rerun: point %zu is still %s; left alone\n", i, j.state);
	again = j.finished && (all || !j.completed);
	hpt_slurm_job_release(&j);
	return again;
}

/* The points to run again, each loaded from its run's resolved.yaml. */
static int rerun_points(struct plan *pl, const char *record, int all)
{
	struct sbuf err = SBUF_INIT;
	struct runref *v = NULL;
	json_t *doc = NULL;
	size_t n = 0;
	int status = runref_sweep_points(record, &doc, &v, &n, &err);

	if (status)
		fprintf(stderr, "hpctrain rerun: %s\n", err.buf);
	snprintf(pl->name, sizeof(pl->name), "%s",
		 json_string_value(json_object_get(doc, "sweep")) ?: "sweep");
	pl->max_parallel = json_integer_value(json_object_get(doc, "max_parallel"));
	pl->p = xcalloc(n + 1, sizeof(*pl->p));
	for (size_t i = 0; i < n && !status; i++) {
		struct point *pt = &pl->p[pl->n];

		if (!v[i].rd.dir) {
			fprintf(stderr, "hpctrain rerun: point %zu: its run is gone\n", i);
			status = HPT_EXIT_NO_INPUT;
		} else if (wants_rerun(&v[i], i, all)) {
			attempt_init(&pt->at);
			pt->index = i;
			pt->run = xstrdup(v[i].rd.run);
			pl->n++;
			status = submit_load_run(&v[i].rd, &pt->at, pl->req->hpctrain);
		}
	}
	runref_release_all(v, n);
	json_decref(doc);
	sbuf_release(&err);
	return status;
}

int rerun_sweep(const struct sweep_request *req, const char *record, int all)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct plan pl = { .req = req, .record = xstrdup(record) };
	struct sbuf err = SBUF_INIT;
	int status = hpt_slurm_init(&err);

	if (status) {
		fprintf(stderr, "hpctrain rerun: %s\n", err.buf);
		goto out;
	}
	status = rerun_points(&pl, record, all);
	if (!status && !pl.n)
		fprintf(stderr, "hpctrain rerun: nothing to rerun in %s: every point completed "
			"(--all runs them all again)\n", pl.name);
	if (!status && pl.n)
		status = plan_arrays(&pl, &dl);
	diag_report(stderr, &dl);
	if (!status && pl.n)
		status = submit_all(&pl);
	hpt_slurm_fini();
out:
	plan_release(&pl);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}
