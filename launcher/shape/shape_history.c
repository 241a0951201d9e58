/* shape_history.c - past runs of the same program as the model's points:
 * see shape_history.h.  Shell. */
#include "launcher/shape/shape_history.h" // defines: struct shape_history, shape_history_load
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/metrics_line.h"          // defines: metrics_line_say_capped
#include "common/diag.h"                  // defines: struct diag_list
#include "common/spec/spec.h"             // defines: struct job, job_release
#include "common/spec/specfile.h"         // defines: specfile_load_run
#include "common/fileio.h"                // defines: fileio_open_regular, FILEIO_NOFOLLOW
#include "common/jsonfile.h"              // defines: jsonfile_load
#include "launcher/report/report_data.h"  // defines: struct report_run, report_read
#include "launcher/runs/attempt_size.h"   // defines: attempt_size_load

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_argv(const struct job_argv *a, const struct job_argv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

/* The same program, run the same way (see shape_history.h). */
static bool same_program(const struct job *a, const struct job *b)
{
	if (!same_argv(&a->command, &b->command))
		return false;
	if (a->command.n)
		return true;
	return a->train.model == b->train.model && same_str(a->train.dataset, b->train.dataset) &&
	       a->train.precision == b->train.precision && a->train.device == b->train.device &&
	       a->train.batch_per_rank == b->train.batch_per_rank;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the field at off (step_ms or comm_ms, in ms: the
 * median in seconds; global_batch: as is) over steps [from, to); NAN
 * when a step lacks it. */
static double median_of(const struct report_run *r, size_t from, size_t to, size_t off,
			double scale)
{
	double *v = xcalloc(to > from ? to - from : 1, sizeof(*v)), m;
	size_t n = 0;

	for (size_t i = from; i < to; i++) {
		double x = *(const double *)((const char *)&r->steps[i] + off);

		if (isnan(x)) {
			free(v);
			return NAN;
		}
		v[n++] = x;
	}
	if (!n) {
		free(v);
		return NAN;
	}
	qsort(v, n, sizeof(*v), by_value);
	m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	free(v);
	return m * scale;
}

/* The median samples of one rank's step, samples_per_s x step time,
 * over steps [from, to); 0 when a step lacks either. */
static double median_samples(const struct report_run *r, size_t from, size_t to)
{
	double *v = xcalloc(to > from ? to - from : 1, sizeof(*v)), m = 0;
	size_t n = 0;

	for (size_t i = from; i < to; i++) {
		double x = r->steps[i].samples_per_s * r->steps[i].step_ms / 1000.0;

		if (isnan(x) || x <= 0)
			break;
		v[n++] = x;
	}
	if (n && n == to - from) {
		qsort(v, n, sizeof(*v), by_value);
		m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	free(v);
	return m;
}

/* The point of steps [from, to) of r, the first of them left out (the
 * warm-up after a start or a resize) when there are more. */
static int segment_point(const struct report_run *r, size_t from, size_t to, unsigned nodes,
			 unsigned ranks_per_node, struct shape_point *out)
{
	double g;

	from += to - from > 1;
	out->nodes = nodes;
	out->ranks_per_node = ranks_per_node;
	out->step_s = median_of(r, from, to, offsetof(struct report_step, step_ms), 1e-3);
	out->comm_s = median_of(r, from, to, offsetof(struct report_step, comm_ms), 1e-3);
	if (isnan(out->comm_s))
		out->comm_s = -1;
	g = median_of(r, from, to, offsetof(struct report_step, global_batch), 1);
	out->global_batch = isnan(g) || g <= 0 ? 0 : g;
	out->samples_per_step = median_samples(r, from, to);
	return isnan(out->step_s) || !nodes || !ranks_per_node ? -1 : 0;
}

int shape_history_point(const struct report_run *r, unsigned nodes, unsigned ranks_per_node,
			struct shape_point *out)
{
	return segment_point(r, 0, r->nsteps, nodes, ranks_per_node, out);
}

/* The shape a segment of world size w ran at, for a run whose spec
 * asked for nodes x ranks_per_node: the attempt's own record
 * (nodes.json, rec_nodes of rec_world ranks) when it is of that world
 * size; else the spec's when w is its size; else the spec's ranks a
 * node when they divide w (a requeue or resubmission on fewer nodes,
 * the usual shrink); else the spec's nodes when they divide w; else
 * one node.  0 w: the records did not say, the spec's. */
static void shape_of(unsigned w, int64_t rec_nodes, int64_t rec_world, const struct job *spec,
		     unsigned *nodes, unsigned *ranks_per_node)
{
	unsigned n = (unsigned)spec->resources.nodes, rpn = (unsigned)spec->resources.ranks_per_node;

	if (w && rec_nodes > 0 && rec_world == (int64_t)w && w % (unsigned)rec_nodes == 0)
		n = (unsigned)rec_nodes, rpn = w / n;
	else if (!w || w == n * rpn)
		;
	else if (rpn && w % rpn == 0)
		n = w / rpn;
	else if (n && w % n == 0)
		rpn = w / n;
	else
		n = 1, rpn = w;
	*nodes = n;
	*ranks_per_node = rpn;
}

/* Adds a point for each stretch of r's steps at one world size and
 * attempt (a requeue or resubmission may have run on fewer nodes than
 * the spec asked), each filed under the shape it ran at.  A stretch
 * of a single step is a warm-up alone: no point, unless it is all
 * the run logged. */
static void add_segments(struct shape_history *h, const struct report_run *r, const char *dir,
			 const struct job *past)
{
	int64_t rec_nodes = 0, rec_world = 0;

	attempt_size_load(dir, &rec_nodes, &rec_world);
	for (size_t from = 0, to; from < r->nsteps; from = to) {
		const struct report_step *s = &r->steps[from];
		unsigned nodes, rpn;

		for (to = from + 1; to < r->nsteps && r->steps[to].world_size == s->world_size &&
				    r->steps[to].attempt == s->attempt; to++)
			;
		if (to - from < 2 && r->nsteps > 1)
			continue;
		shape_of(s->world_size > 0 && s->world_size <= UINT_MAX ? (unsigned)s->world_size : 0,
			 rec_nodes, rec_world, past, &nodes, &rpn);
		h->v = xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
		if (!segment_point(r, from, to, nodes, rpn, &h->v[h->n]))
			h->n++;
	}
}

/* Opens dir's metrics.jsonl as report does: a regular file only, so a
 * FIFO or a device in its place is skipped, not read (it would hang
 * plan), and said in h->unread.  Ours only, as its directory
 * (add_run).  NULL when missing or refused. */
static FILE *open_metrics(struct shape_history *h, const char *dir)
{
	char *path = xasprintf("%s/" RUNFILE_METRICS, dir);
	struct sbuf err = SBUF_INIT;
	FILE *fp = NULL;
	int fd = -1;

	if (fileio_exists(path) && (fd = fileio_open_regular(path, FILEIO_OWNED, &err)) >= 0 &&
	    !(fp = fdopen(fd, "r"))) {
		sbuf_addf(&err, "cannot read %s: %s", path, strerror(errno));
		close(fd);
	}
	if (err.len) {
		sbuf_addf(&h->unread, "%s%s", h->unread.len ? "\n" : "", err.buf);
		h->nunread++;
	}
	sbuf_release(&err);
	free(path);
	return fp;
}

/* Whether dir is this user's own, as a run directory must be to be
 * fitted: another user's (or one others may write) could hold records
 * planted to steer the pick (one moved the fitted compute from 67.5 to
 * 45.5 ms).  Said in h->unread when not. */
static bool is_own_run(struct shape_history *h, const char *dir)
{
	struct sbuf err = SBUF_INIT;
	bool own = !fileio_check_owned(dir, &err);

	if (!own) {
		sbuf_addf(&h->unread, "%s%s", h->unread.len ? "\n" : "", err.buf);
		h->nunread++;
	}
	sbuf_release(&err);
	return own;
}

/* One run or attempt directory: its points, when it is ours, ran the
 * same program and logged steps. */
static void add_run(struct shape_history *h, const struct job *job, const char *dir)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct report_run r;
	struct job past;
	FILE *fp = NULL;

	memset(&past, 0, sizeof(past));
	report_run_init(&r);
	if (!is_own_run(h, dir) || specfile_load_run(dir, &past, &dl, &where, NULL))
		goto out;
	if (!same_program(job, &past)) {
		h->skipped++;
		goto out;
	}
	if (!(fp = open_metrics(h, dir)) || report_read(fp, &r))
		goto out;
	if (r.capped) {
		char *path = xasprintf("%s/" RUNFILE_METRICS, dir);

		if (h->capped.len)
			sbuf_addch(&h->capped, '\n');
		metrics_line_say_capped(path, &h->capped);
		free(path);
	}
	if (!r.nsteps)
		goto out;
	add_segments(h, &r, dir, &past);
	if (r.nepochs && r.epochs[0].epoch > 0 && r.epochs[0].step > 0 && !h->samples_per_epoch)
		h->samples_per_epoch = (double)r.epochs[0].step / (double)r.epochs[0].epoch *
				       (double)(past.resources.nodes * past.resources.ranks_per_node) *
				       (double)past.train.batch_per_rank;
	if (r.steps[r.nsteps - 1].step > h->steps)
		h->steps = r.steps[r.nsteps - 1].step;
out:
	if (fp)
		fclose(fp);
	report_run_release(&r);
	job_release(&past);
	diag_list_release(&dl);
	sbuf_release(&where);
}

/* Every run R of the job and its later attempts, R/attempts/N, given
 * to visit.  -1 when output.dir/<name> exists but cannot be read. */
static int each_run(const struct job *job, void (*visit)(void *, const char *), void *arg,
		    struct sbuf *err)
{
	char *base = xasprintf("%s/%s", job->output.dir, job->name);
	DIR *d = opendir(base), *ad;
	struct dirent *e, *ae;

	if (!d && errno != ENOENT) {
		sbuf_addf(err, "cannot read %s: %s", base, strerror(errno));
		free(base);
		return -1;
	}
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *run = xasprintf("%s/%s", base, e->d_name), *attempts;

		visit(arg, run);
		attempts = xasprintf("%s/attempts", run);
		ad = opendir(attempts);
		while (ad && (ae = readdir(ad))) {
			if (ae->d_name[0] == '.')
				continue;
			char *dir = xasprintf("%s/%s", attempts, ae->d_name);

			visit(arg, dir);
			free(dir);
		}
		if (ad)
			closedir(ad);
		free(attempts);
		free(run);
	}
	if (d)
		closedir(d);
	free(base);
	return 0;
}

struct history_walk {
	struct shape_history *h;
	const struct job *job;
};

static void visit_point(void *arg, const char *dir)
{
	struct history_walk *w = arg;

	add_run(w->h, w->job, dir);
}

static int by_shape(const void *a, const void *b)
{
	const struct shape_point *x = a, *y = b;

	if (x->nodes != y->nodes)
		return (x->nodes > y->nodes) - (x->nodes < y->nodes);
	return (x->ranks_per_node > y->ranks_per_node) - (x->ranks_per_node < y->ranks_per_node);
}

/* The points by shape (the directories' order is the file system's),
 * and what they are in words. */
static void describe(struct shape_history *h)
{
	if (h->n)
		qsort(h->v, h->n, sizeof(*h->v), by_shape);
	sbuf_reset(&h->shapes);
	for (size_t i = 0; i < h->n; i++) {
		unsigned count = 0;
		size_t j = i;

		if (i && !by_shape(&h->v[i - 1], &h->v[i]))
			continue; /* described at its first */
		while (j < h->n && !by_shape(&h->v[i], &h->v[j]))
			j++, count++;
		sbuf_addf(&h->shapes, "%s%ux%u (%u run%s)", h->shapes.len ? ", " : "", h->v[i].nodes,
			  h->v[i].ranks_per_node, count, count == 1 ? "" : "s");
	}
}

int shape_history_load(const struct job *job, struct shape_history *out, struct sbuf *err)
{
	struct history_walk w = { out, job };

	memset(out, 0, sizeof(*out));
	sbuf_init(&out->shapes);
	sbuf_init(&out->unread);
	sbuf_init(&out->capped);
	if (each_run(job, visit_point, &w, err))
		return -1;
	describe(out);
	return 0;
}

struct planned_walk {
	struct shape_planned *v;
	size_t n;
};

int shape_history_planned_run(const char *dir, struct shape_planned *out)
{
	struct sbuf err = SBUF_INIT;
	char *path = xasprintf("%s/" RUNFILE_SUBMIT, dir);
	json_t *doc = jsonfile_load(path, 1 << 20, FILEIO_NOFOLLOW, &err);
	json_int_t id = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (doc && !shape_check_from_json(json_object_get(doc, "plan"), &out->check) &&
	    !json_unpack(doc, "{s:I}", "job_id", &id) && id > 0) {
		out->dir = xstrdup(dir);
		out->job_id = (unsigned long)id;
		rc = 0;
	}
	json_decref(doc);
	free(path);
	sbuf_release(&err);
	return rc;
}

static void visit_planned(void *arg, const char *dir)
{
	struct planned_walk *w = arg;
	struct shape_planned one;

	if (shape_history_planned_run(dir, &one))
		return;
	w->v = xrealloc(w->v, (w->n + 1) * sizeof(*w->v));
	w->v[w->n++] = one;
}

int shape_history_planned(const struct job *job, struct shape_planned **v, size_t *n)
{
	struct planned_walk w = { NULL, 0 };
	struct sbuf err = SBUF_INIT;

	each_run(job, visit_planned, &w, &err);
	sbuf_release(&err);
	*v = w.v;
	*n = w.n;
	return 0;
}

void shape_history_planned_free(struct shape_planned *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].dir);
	free(v);
}

void shape_history_release(struct shape_history *h)
{
	free(h->v);
	h->v = NULL;
	h->n = 0;
	sbuf_release(&h->shapes);
	sbuf_release(&h->unread);
	sbuf_release(&h->capped);
}
