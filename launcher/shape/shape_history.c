/* shape_history.c - past runs of the same program as the model's points:
 * see shape_history.h.  Shell. */
#include "launcher/shape/shape_history.h" // defines: struct shape_history, shape_history_load
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/diag.h"                  // defines: struct diag_list
#include "common/spec/spec.h"             // defines: struct job, job_release
#include "common/spec/specfile.h"         // defines: specfile_load_run
#include "common/fileio.h"                // defines: FILEIO_NOFOLLOW
#include "common/jsonfile.h"              // defines: jsonfile_load
#include "launcher/report/report_data.h"  // defines: struct report_run, report_read

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The median of the steps' field at off (step_ms or comm_ms), in
 * seconds, over every step but the first (its warm-up); NAN when a step
 * lacks it. */
static double median_ms(const struct report_run *r, size_t off)
{
	size_t first = r->nsteps > 1, n = 0;
	double *v = xcalloc(r->nsteps ? r->nsteps : 1, sizeof(*v)), m;

	for (size_t i = first; i < r->nsteps; i++) {
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
	return m / 1000.0;
}

int shape_history_point(const struct report_run *r, unsigned nodes, unsigned ranks_per_node,
			struct shape_point *out)
{
	out->nodes = nodes;
	out->ranks_per_node = ranks_per_node;
	out->step_s = median_ms(r, offsetof(struct report_step, step_ms));
	out->comm_s = median_ms(r, offsetof(struct report_step, comm_ms));
	if (isnan(out->comm_s))
		out->comm_s = -1;
	return isnan(out->step_s) || !nodes || !ranks_per_node ? -1 : 0;
}

/* One run or attempt directory: its point, when it ran the same program
 * and logged steps. */
static void add_run(struct shape_history *h, const struct job *job, const char *dir)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct report_run r;
	struct job past;
	char *metrics = xasprintf("%s/" RUNFILE_METRICS, dir);
	FILE *fp = NULL;
	bool ok;

	memset(&past, 0, sizeof(past));
	report_run_init(&r);
	if (specfile_load_run(dir, &past, &dl, &where, NULL))
		goto out;
	if (!same_program(job, &past)) {
		h->skipped++;
		goto out;
	}
	if (!(fp = fopen(metrics, "re")) || report_read(fp, &r) || !r.nsteps)
		goto out;
	h->v = xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
	ok = !shape_history_point(&r, (unsigned)past.resources.nodes,
				  (unsigned)past.resources.ranks_per_node, &h->v[h->n]);
	if (r.nepochs && r.epochs[0].epoch > 0 && r.epochs[0].step > 0 && !h->samples_per_epoch)
		h->samples_per_epoch = (double)r.epochs[0].step / (double)r.epochs[0].epoch *
				       (double)(past.resources.nodes * past.resources.ranks_per_node) *
				       (double)past.train.batch_per_rank;
	if (r.steps[r.nsteps - 1].step > h->steps)
		h->steps = r.steps[r.nsteps - 1].step;
	if (ok)
		h->n++;
out:
	if (fp)
		fclose(fp);
	report_run_release(&r);
	job_release(&past);
	diag_list_release(&dl);
	sbuf_release(&where);
	free(metrics);
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
}
