/* runref.c - resolve what a user names: a run, a sweep or a Slurm job.
 * Shell: see runref.h for the forms and their order. */
#include "launcher/runs/runref.h"       // defines: runref_resolve
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/exitcode.h"       // defines: HPT_EXIT_NO_INPUT, HPT_EXIT_USAGE
#include "common/fileio.h"         // defines: fileio_exists
#include "common/jsonfile.h"       // defines: jsonfile_load
#include "common/sbuf.h"           // defines: struct sbuf, xasprintf
#include "common/spec/specfile.h"  // defines: SPECFILE_RUN_SPEC
#include "launcher/runs/sweep_record.h" // defines: sweep_record_load, sweep_record_is_name
#include "launcher/slurm/slurm.h"  // defines: hpt_slurm_job, hpt_slurm_array_task
#include "common/strfmt.h" // defines: strfmt_label

#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEX "0123456789abcdef"

const char *runref_output_dir(void)
{
	const char *d = getenv("HPCTRAIN_OUTPUT_DIR");

	return d && *d ? d : "runs";
}

void runref_release(struct runref *r)
{
	if (!r)
		return;
	rundir_release(&r->rd);
	free(r->sweep);
	free(r->note);
	r->sweep = r->note = NULL;
}

void runref_job_text(unsigned long job_id, int64_t task, char *buf, size_t len)
{
	if (task >= 0)
		strfmt_label(buf, len, "%lu_%lld", job_id, (long long)task);
	else
		strfmt_label(buf, len, "%lu", job_id);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static char *absolute(const char *path)
{
	char *real = realpath(path, NULL);

	return real ? real : xstrdup(path);
}

/* 1234 or 1234_5: digits, at most a Slurm id (32 bits). */
static int parse_job(const char *s, unsigned long *id, int64_t *task)
{
	size_t n = strspn(s, "0123456789");
	char *end;

	if (!n || n > 10)
		return -1;
	*id = strtoul(s, &end, 10);
	*task = -1;
	if (*end == '_' && end[1] && strspn(end + 1, "0123456789") == strlen(end + 1) &&
	    strlen(end + 1) <= 9)
		*task = strtoll(end + 1, &end, 10);
	return *end || !*id || *id > UINT32_MAX ? -1 : 0;
}

int runref_open_run(const char *dir, struct runref *out, struct sbuf *err)
{
	struct sbuf ignored = SBUF_INIT;

	out->kind = RUNREF_RUN;
	if (rundir_open(dir, &out->rd, err))
		return HPT_EXIT_NO_INPUT;
	/* never submitted: job_id stays 0, for the caller to say so */
	rundir_job_id(&out->rd, &out->job_id, &out->task, &ignored);
	sbuf_release(&ignored);
	return 0;
}

/* A sweep record already read and checked (runs_all_swept): not again. */
static int swept_sweep(const char *path, struct runref *out)
{
	out->kind = RUNREF_SWEEP;
	out->sweep = absolute(path);
	return 0;
}

static int open_sweep(const char *path, struct runref *out, struct sbuf *err)
{
	json_t *doc;

	if (sweep_record_load(path, &doc, err))
		return HPT_EXIT_NO_INPUT;
	json_decref(doc);
	out->kind = RUNREF_SWEEP;
	out->sweep = absolute(path);
	return 0;
}

/* What OUTPUT/NAME holds: its runs (12-hex directories with a
 * resolved.yaml) and its sweep records, each matching prefix (or all). */
struct found {
	char **runs, **sweeps;
	size_t nruns, nsweeps;
};

static void found_release(struct found *f)
{
	for (size_t i = 0; i < f->nruns; i++)
		free(f->runs[i]);
	for (size_t i = 0; i < f->nsweeps; i++)
		free(f->sweeps[i]);
	free(f->runs);
	free(f->sweeps);
}

static void push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan(const char *dir, const char *prefix, struct found *f)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	memset(f, 0, sizeof(*f));
	while (d && (e = readdir(d))) {
		const char *n = e->d_name;
		char *path;

		if (sweep_record_is_name(n)) {
			if (!prefix || !strncmp(n, prefix, strlen(prefix)))
				push(&f->sweeps, &f->nsweeps, xasprintf("%s/%s", dir, n));
			continue;
		}
		if (strlen(n) != RUNDIR_HASH_LEN || strspn(n, HEX) != RUNDIR_HASH_LEN ||
		    (prefix && strncmp(n, prefix, strlen(prefix))))
			continue;
		path = xasprintf("%s/%s/" SPECFILE_RUN_SPEC, dir, n);
		if (fileio_exists(path))
			push(&f->runs, &f->nruns, xasprintf("%s/%s", dir, n));
		free(path);
	}
	if (d)
		closedir(d);
	if (f->nruns > 1)
		qsort(f->runs, f->nruns, sizeof(*f->runs), by_name);
	if (f->nsweeps > 1)
		qsort(f->sweeps, f->nsweeps, sizeof(*f->sweeps), by_name);
}

/* The runs of the sweep record path's points, each appended to *v;
 * whether the record could be read. */
static bool add_points(const char *path, char ***v, size_t *n)
{
	struct sbuf err = SBUF_INIT;
	json_t *doc, *points;

	if (sweep_record_load(path, &doc, &err)) {
		sbuf_release(&err);
		return false;
	}
	points = json_object_get(doc, "points");
	*v = xrealloc(*v, (*n + json_array_size(points) + 1) * sizeof(**v));
	/* sweep_record_load checked that every point names its run */
	for (size_t i = 0; i < json_array_size(points); i++)
		(*v)[(*n)++] = xstrdup(json_string_value(json_object_get(json_array_get(points, i),
									  "run")));
	json_decref(doc);
	return true;
}

/* Whether every run of f is a point of one of its sweeps; *read counts
 * the records that could be read.  Each record is read once and its
 * runs sorted, then each run is looked up: O((runs + points) log
 * points).  Reading every record again for each run, as this did, took
 * 12 s for a sweep of 2,000 points. */
static bool runs_all_swept(const struct found *f, size_t *read)
{
	char **swept = NULL;
	size_t n = 0;
	bool all = true;

	*read = 0;
	for (size_t s = 0; s < f->nsweeps; s++)
		*read += add_points(f->sweeps[s], &swept, &n);
	if (n > 1)
		qsort(swept, n, sizeof(*swept), by_name);
	for (size_t r = 0; r < f->nruns && all; r++) {
		const char *base = strrchr(f->runs[r], '/') + 1;

		all = n && bsearch(&base, swept, n, sizeof(*swept), by_name);
	}
	for (size_t i = 0; i < n; i++)
		free(swept[i]);
	free(swept);
	return all;
}

/* One candidate line: what it is and when it was submitted.  An
 * unreadable record (a FIFO, torn JSON) only leaves its details out. */
static void describe(const char *path, bool sweep, struct sbuf *out)
{
	struct sbuf ignored = SBUF_INIT;
	json_t *doc = NULL;
	char *sub = sweep ? NULL : xasprintf("%s/" RUNFILE_SUBMIT, path);
	const char *when = NULL;

	if (sweep)
		sweep_record_load(path, &doc, &ignored);
	else
		doc = jsonfile_load(sub, 1 << 20, 0, &ignored);
	sbuf_release(&ignored);
	if (sweep) {
		json_t *arrays = json_object_get(doc, "arrays");

		size_t n = json_array_size(json_object_get(doc, "points"));

		sbuf_addf(out, "\n  %s  (sweep of %zu point%s", path, n, n == 1 ? "" : "s");
		when = json_string_value(json_object_get(
			json_array_get(arrays, json_array_size(arrays) - 1), "submitted_at"));
	} else {
		json_t *id = json_object_get(doc, "job_id");

		sbuf_addf(out, "\n  %s  (run", path);
		if (json_is_integer(id))
			sbuf_addf(out, ", job %lld", (long long)json_integer_value(id));
		when = json_string_value(json_object_get(doc, "submitted_at"));
	}
	sbuf_addf(out, when ? ", submitted %s)" : ")", when);
	json_decref(doc);
	free(sub);
}

/* When the latest attempt of run was submitted ("2026-11-28T13:05:01Z",
 * which sorts as time does), "" when its record says not. */
static void submitted_at(const char *run, struct sbuf *out)
{
	struct rundir rd = RUNDIR_INIT;
	struct sbuf ignored = SBUF_INIT;
	char *sub;
	json_t *doc;

	if (rundir_open(run, &rd, &ignored)) {
		sbuf_release(&ignored);
		return;
	}
	sub = xasprintf("%s/" RUNFILE_SUBMIT, rd.dir);
	doc = jsonfile_load(sub, 1 << 20, 0, &ignored);
	sbuf_addstr(out, json_string_value(json_object_get(doc, "submitted_at")) ?: "");
	json_decref(doc);
	free(sub);
	rundir_release(&rd);
	sbuf_release(&ignored);
}

/* A bare NAME (no /HASH), not a directory the user named. */
static bool prefix_of_name(const char *arg, const char *dir, const char *prefix)
{
	return arg != dir && !prefix;
}

/* The newest of f's runs, with a note naming it and how to name another. */
static int open_newest(const char *arg, const struct found *f, struct runref *out,
		       struct sbuf *err)
{
	struct sbuf best = SBUF_INIT, when = SBUF_INIT;
	size_t newest = 0;
	int status;

	for (size_t i = 0; i < f->nruns; i++) {
		sbuf_reset(&when);
		submitted_at(f->runs[i], &when);
		if (!i || strcmp(when.buf, best.buf) > 0) {
			newest = i;
			sbuf_reset(&best);
			sbuf_addstr(&best, when.buf);
		}
	}
	status = runref_open_run(f->runs[newest], out, err);
	if (!status)
		out->note = xasprintf("%s names %zu runs; taking the newest, %s%s%s%s (name another "
				      "as %s/HASH)", arg, f->nruns, f->runs[newest],
				      best.len ? " (submitted " : "", best.buf, best.len ? ")" : "",
				      arg);
	sbuf_release(&best);
	sbuf_release(&when);
	return status;
}

static int pick(const char *arg, const char *dir, const char *prefix, struct runref *out,
		struct sbuf *err)
{
	struct found f;
	int status = HPT_EXIT_NO_INPUT;
	size_t read = 0;

	scan(dir, prefix, &f);
	if (f.nsweeps == 1 && runs_all_swept(&f, &read) && read)
		status = swept_sweep(f.sweeps[0], out);
	else if (f.nsweeps == 1 && !f.nruns)
		status = open_sweep(f.sweeps[0], out, err); /* unreadable: its error */
	else if (f.nruns == 1 && !f.nsweeps)
		status = runref_open_run(f.runs[0], out, err);
	else if (f.nruns > 1 && !f.nsweeps && prefix_of_name(arg, dir, prefix))
		status = open_newest(arg, &f, out, err);
	else if (!f.nruns && !f.nsweeps && arg == dir)
		sbuf_addf(err, "no run at %s (a run directory holds " RUNFILE_SPEC ")", arg);
	else if (!f.nruns && !f.nsweeps)
		sbuf_addf(err, "no run or sweep %s in %s", arg, dir);
	else {
		sbuf_addf(err, "%s names %zu run%s and %zu sweep%s; say which:", arg, f.nruns,
			  f.nruns == 1 ? "" : "s", f.nsweeps, f.nsweeps == 1 ? "" : "s");
		for (size_t i = 0; i < f.nsweeps; i++)
			describe(f.sweeps[i], true, err);
		for (size_t i = 0; i < f.nruns; i++)
			describe(f.runs[i], false, err);
		status = HPT_EXIT_USAGE;
	}
	found_release(&f);
	return status;
}

/* NAME, NAME/HASHPREFIX or NAME/sweep-HASHPREFIX in the output directory. */
static int resolve_name(const char *arg, struct runref *out, struct sbuf *err)
{
	const char *slash = strchr(arg, '/'), *rest = slash ? slash + 1 : NULL;
	size_t nlen = slash ? (size_t)(slash - arg) : strlen(arg);
	char *dir = xasprintf("%s/%.*s", runref_output_dir(), (int)nlen, arg);
	int status;

	if (!nlen || memchr(arg, '.', nlen) == arg || !is_dir(dir) ||
	    (rest && (!*rest || strchr(rest, '/')))) {
		sbuf_addf(err, "no run, sweep or job %s (not a run directory, a sweep record, a "
			  "job id, or a job name in %s/)", arg, runref_output_dir());
		status = HPT_EXIT_NO_INPUT;
	} else {
		status = pick(arg, dir, rest, out, err);
	}
	free(dir);
	return status;
}

int runref_resolve(const char *arg, struct runref *out, struct sbuf *err)
{
	char *p;
	bool has_run, named;

	memset(out, 0, sizeof(*out));
	out->task = -1;
	if (is_file(arg))
		return open_sweep(arg, out, err);
	p = xasprintf("%s/" SPECFILE_RUN_SPEC, arg);
	has_run = is_dir(arg) && fileio_exists(p);
	free(p);
	if (has_run)
		return runref_open_run(arg, out, err);
	if (!is_dir(arg) && !parse_job(arg, &out->job_id, &out->task)) {
		out->kind = RUNREF_JOB;
		return 0;
	}
	/* a bare name is looked up in the output directory first, so that a
	 * directory of that name here does not hide it */
	p = xasprintf("%s/%s", runref_output_dir(), arg);
	named = !strchr(arg, '/') && is_dir(p);
	free(p);
	if (!named && is_dir(arg)) /* a path to OUTPUT/NAME itself */
		return pick(arg, arg, NULL, out, err);
	return resolve_name(arg, out, err);
}

int runref_sweep_points(const char *record, json_t **doc, struct runref **v, size_t *n,
			struct sbuf *err)
{
	json_t *points;

	*v = NULL;
	*n = 0;
	if (sweep_record_load(record, doc, err))
		return HPT_EXIT_NO_INPUT;
	points = json_object_get(*doc, "points");
	*v = xcalloc(json_array_size(points) + 1, sizeof(**v));
	for (size_t i = 0; i < json_array_size(points); i++) {
		char *run = sweep_record_run(record, json_array_get(points, i));
		struct sbuf ignored = SBUF_INIT;

		(*v)[i].task = -1;
		runref_open_run(run, &(*v)[i], &ignored); /* a run gone: rd.dir stays NULL */
		sbuf_release(&ignored);
		free(run);
	}
	*n = json_array_size(points);
	return 0;
}

void runref_release_all(struct runref *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		runref_release(&v[i]);
	free(v);
}

/* The run a Slurm job works in: slurmctld knows its working directory. */
int runref_job_run(struct runref *r, struct sbuf *err)
{
	struct hpt_slurm_job j;
	unsigned long id = r->job_id;
	int64_t task = r->task;
	char *dir;
	int status;

	if (r->kind != RUNREF_JOB)
		return 0;
	status = task >= 0 ? hpt_slurm_array_task((uint32_t)id, task, &j, err)
			   : hpt_slurm_job((uint32_t)id, &j, err);
	if (status)
		return status;
	/* an array task runs in the run its index links to (render_array.c) */
	if (j.array_task >= 0)
		dir = xasprintf(RUNFILE_TASK_LINK, j.work_dir, (long long)j.array_task);
	else
		dir = xstrdup(j.work_dir);
	hpt_slurm_job_release(&j);
	status = runref_open_run(dir, r, err);
	if (status)
		sbuf_addf(err, " (the working directory of job %lu)", id);
	free(dir);
	return status;
}
