/* report_sweep.c - `hpctrain report` of a sweep (report_sweep.h).
 * Shell: reads the record and each point's run, prints the summary and
 * has report_out.c draw the charts that launcher/report/report_points
 * builds: the final metrics against each axis, the scaling against ranks,
 * and every point's training loss. */
#include "launcher/job/report_sweep.h"      // defines: report_sweep
#include "common/say.h" // defines: say
#include "common/runfile.h" // defines: RUNFILE_*
#include "launcher/job/report_out.h"        // defines: struct report_out, report_out_*
#include "common/diag.h"           // defines: struct diag_list
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/fileio.h"         // defines: fileio_exists
#include "common/sbuf.h"           // defines: struct sbuf, sbuf_add_number
#include "common/spec/spec.h"      // defines: struct job, job_release
#include "common/spec/specfile.h"  // defines: specfile_load_run
#include "launcher/report/chart.h"  // defines: struct chart, chart_init
#include "launcher/report/report_data.h"   // defines: struct report_run, report_throughput
#include "launcher/report/report_points.h" // defines: struct report_point, report_points_*
#include "launcher/runs/runref.h"       // defines: runref_sweep_points
#include "launcher/shape/shape_history.h" // defines: shape_history_point
#include "launcher/shape/shape_model.h"   // defines: shape_model_fit, shape_model_step_s
#include "common/strfmt.h" // defines: strfmt_label
#include "common/jsonb.h" // defines: jsonb_text

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chart of metric (0: test accuracy, 1: test loss) against axis. */
static void sweep_final(struct report_out *o, const struct report_point *p, size_t n,
			json_t *axis, int metric)
{
	struct report_points_axis a;

	report_points_final(&a, p, n, axis, metric, o->width, o->height);
	report_out_emit(o, &a.chart, a.file, "no point has finished");
	report_points_axis_release(&a);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The shape at r ranks along the sweep's points: all on one count of
 * nodes (more ranks a node), or all with one count of ranks a node (more
 * nodes); 0 when the points go neither way, or r does not fit. */
static int shape_at(const struct shape_point *pt, size_t m, int64_t r, unsigned *nodes,
		    unsigned *rpn)
{
	bool same_nodes = true, same_rpn = true;

	for (size_t i = 1; i < m; i++) {
		same_nodes &= pt[i].nodes == pt[0].nodes;
		same_rpn &= pt[i].ranks_per_node == pt[0].ranks_per_node;
	}
	if (same_nodes && r % pt[0].nodes == 0) {
		*nodes = pt[0].nodes;
		*rpn = (unsigned)(r / pt[0].nodes);
		return 1;
	}
	if (same_rpn && r % pt[0].ranks_per_node == 0) {
		*nodes = (unsigned)(r / pt[0].ranks_per_node);
		*rpn = pt[0].ranks_per_node;
		return 1;
	}
	return 0;
}

/* The model hpctrain plan fits (launcher/shape/shape_model.h) through a
 * sweep's measured points, onto the throughput chart as a curve from the
 * fewest ranks to twice the most, its terms in report.md.  Only where
 * the points differ in ranks alone (one measured series) and all along
 * nodes or all along ranks a node: the model holds the program and its
 * batch per rank fixed.  The throughput of a step of t at n ranks is
 * n b / t, b the samples of one rank's step, taken from the points
 * themselves (the median of S t / n). */
static void scaling_fit(struct report_out *o, struct chart *tc, const struct report_point *p,
			size_t n)
{
	struct shape_point *pt = xcalloc(n ? n : 1, sizeof(*pt));
	double *b = xcalloc(n ? n : 1, sizeof(*b)), *x, *y, batch;
	struct shape_fit f;
	size_t m = 0, k = 0;
	int64_t lo = 0, hi = 0;

	for (size_t i = 0; i < n; i++) {
		double s = report_throughput(&p[i].r, p[i].ranks);

		if (!p[i].loaded || p[i].ranks <= 0 || p[i].nodes <= 0 ||
		    p[i].ranks % p[i].nodes || !isfinite(s) ||
		    shape_history_point(&p[i].r, (unsigned)p[i].nodes,
					(unsigned)(p[i].ranks / p[i].nodes), &pt[m]))
			continue;
		b[m] = s * pt[m].step_s / (double)p[i].ranks;
		lo = lo && lo < p[i].ranks ? lo : p[i].ranks;
		hi = hi > p[i].ranks ? hi : p[i].ranks;
		m++;
	}
	/* one measured series and its linear line: the points differ in
	 * ranks alone */
	if (tc->nseries != 2 || !tc->series[1].dashed || m < 2 || shape_model_fit(pt, m, &f)) {
		free(pt);
		free(b);
		return;
	}
	qsort(b, m, sizeof(*b), by_value);
	batch = b[m / 2];
	x = xcalloc((size_t)(2 * hi - lo + 1), sizeof(*x));
	y = xcalloc((size_t)(2 * hi - lo + 1), sizeof(*y));
	for (int64_t r = lo; r <= 2 * hi; r++) {
		unsigned nodes, rpn;

		if (!shape_at(pt, m, r, &nodes, &rpn))
			continue;
		x[k] = (double)r;
		y[k++] = (double)r * batch / shape_model_step_s(&f, nodes, rpn, NULL);
	}
	if (k > 1) {
		chart_add(tc, "fitted (hpctrain plan's model)", x, y, k)->dashed = true;
		sbuf_addf(&o->md, "Fitted to %u points (hpctrain plan's model): a step takes %.2f ms "
			  "of compute + %.2f ms x 2(R-1)/R of allreduce within a node of R ranks + "
			  "%.2f ms x 2(N-1)/N between N nodes, +-%.0f%%.\n\n", f.runs,
			  f.compute_s * 1e3, f.node_s * 1e3, f.net_s * 1e3, f.rel_err * 100);
	}
	free(pt);
	free(b);
	free(x);
	free(y);
}

/* Throughput and efficiency against total ranks, when points differ in
 * it. */
static void sweep_scaling(struct report_out *o, const struct report_point *p, size_t n)
{
	struct chart tc, ec;
	int64_t ranks;
	char why[96];

	if (report_points_scaling(p, n, o->width, o->height, &tc, &ec, &ranks)) {
		strfmt_label(why, sizeof(why), "every point runs %lld ranks", (long long)ranks);
		report_out_skip(o, "scaling", "throughput against ranks", why);
		return;
	}
	scaling_fit(o, &tc, p, n);
	report_out_emit(o, &tc, "scaling", "no point has finished");
	report_out_emit(o, &ec, "efficiency", "no point has finished");
}

static void sweep_loss(struct report_out *o, const struct report_point *p, size_t n)
{
	struct chart c;

	chart_init(&c, "training loss of each point", "step", "loss", o->width, o->height);
	for (size_t i = 0; i < n; i++) {
		char *v = report_points_label(p[i].params, NULL, false);
		char *label = xasprintf("%zu %s", i, v);

		if (p[i].loaded)
			report_out_step_series(&p[i].r, &c, label,
					       offsetof(struct report_step, loss));
		free(label);
		free(v);
	}
	report_out_emit(o, &c, "loss", "no point has logged a step");
}

/* The point's ranks: the summary's, else its resolved.yaml's nodes x
 * ranks_per_node; 0 when neither can be read.  Its nodes: resolved.yaml's,
 * else 0. */
static int64_t point_ranks(const char *dir, const struct report_run *r, int64_t *nodes)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	struct job job;
	int64_t ranks = 0;

	*nodes = 0;
	if (!specfile_load_run(dir, &job, &dl, &where, NULL)) {
		ranks = job.resources.nodes * job.resources.ranks_per_node;
		*nodes = job.resources.nodes;
	}
	job_release(&job);
	diag_list_release(&dl);
	sbuf_release(&where);
	return r->ranks > 0 ? r->ranks : ranks;
}

/* What the charts need of the record, beyond what runref checks. */
static int check_record(const char *path, json_t *doc)
{
	const char *why = report_points_check_record(doc);

	if (!why)
		return 0;
	say("%s is not a sweep record (%s)", path, why);
	return HPT_EXIT_NO_INPUT;
}

static void point_line(const struct report_point *p, size_t i, struct sbuf *head)
{
	char *vals = json_dumps(p->params, JSON_COMPACT | JSON_REAL_PRECISION(6));

	if (p->loaded && p->r.summary) {
		/* "-" for a figure not logged or not finite, %g for a huge one */
		sbuf_addf(head, "  %zu %s: test accuracy ", i, vals ? vals : "");
		sbuf_add_number(head, p->r.test_accuracy, 4);
		sbuf_addstr(head, ", test loss ");
		sbuf_add_number(head, p->r.test_loss, 4);
		sbuf_addstr(head, ", ");
		sbuf_add_number(head, report_throughput(&p->r, p->ranks), 0);
		sbuf_addf(head, " samples/s global, %lld ranks\n", (long long)p->ranks);
	} else if (p->loaded)
		sbuf_addf(head, "  %zu %s: not finished (%zu logged steps, last %lld)\n", i,
			  vals ? vals : "", p->r.nsteps,
			  p->r.nsteps ? (long long)p->r.steps[p->r.nsteps - 1].step : 0LL);
	else
		sbuf_addf(head, "  %zu %s: not finished (no " RUNFILE_METRICS ")\n", i, vals ? vals : "");
	free(vals);
}

static json_t *point_json(const struct report_point *p, size_t i, const struct runref *ref)
{
	bool done = p->loaded && p->r.summary;

	return json_pack("{s:I, s:O, s:o, s:b, s:I, s:o, s:o, s:o, s:I}", "index", (json_int_t)i,
			 "params", p->params, "run", ref->rd.dir ? json_string(ref->rd.dir) : json_null(),
			 "finished", done, "logged_steps", (json_int_t)(p->loaded ? p->r.nsteps : 0),
			 "test_accuracy", report_out_num(report_points_final_metric(p, 0)),
			 "test_loss", report_out_num(report_points_final_metric(p, 1)),
			 "samples_per_s",
			 report_out_num(done ? report_throughput(&p->r, p->ranks) : NAN),
			 "ranks", (json_int_t)p->ranks);
}

static void load_points(struct report_point *p, const struct runref *v, size_t n, json_t *doc)
{
	for (size_t i = 0; i < n; i++) {
		p[i].params = json_object_get(json_array_get(json_object_get(doc, "points"), i),
					      "params");
		char *metrics = v[i].rd.dir ? xasprintf("%s/" RUNFILE_METRICS, v[i].rd.dir) : NULL;

		/* a run not started has no metrics.jsonl: not finished, not an error */
		if (metrics && fileio_exists(metrics))
			p[i].loaded = !report_out_load_run(v[i].rd.dir, &p[i].r);
		if (v[i].rd.dir)
			p[i].ranks = point_ranks(v[i].rd.dir, &p[i].r, &p[i].nodes);
		free(metrics);
	}
}

int report_sweep(const char *path, struct report_out *o)
{
	struct sbuf err = SBUF_INIT, head = SBUF_INIT;
	struct runref *v = NULL;
	json_t *doc = NULL, *axes, *pts = json_array();
	struct report_point *p = NULL;
	char *dir = NULL;
	size_t n = 0;
	int status = runref_sweep_points(path, &doc, &v, &n, &err);

	if (status)
		say("%s", err.buf);
	else
		status = check_record(path, doc);
	if (status)
		goto out;
	p = xcalloc(n + 1, sizeof(*p));
	load_points(p, v, n, doc);
	sbuf_addf(&head, "%s: %zu points\n", path, n);
	for (size_t i = 0; i < n; i++) {
		point_line(&p[i], i, &head);
		json_array_append_new(pts, point_json(&p[i], i, &v[i]));
	}
	if (!o->json)
		fputs(head.buf, stdout);
	if (!o->dir) {
		/* sweep-HASH12.json -> sweep-HASH12-report, beside it */
		size_t len = strlen(path);

		len -= len > 5 && !strcmp(path + len - 5, ".json") ? 5 : 0;
		dir = xasprintf("%.*s-report", (int)len, path);
		o->dir = dir;
	}
	status = report_out_make_dir(o);
	axes = json_object_get(doc, "axes");
	for (size_t k = 0; !status && k < json_array_size(axes); k++) {
		sweep_final(o, p, n, json_array_get(axes, k), 0);
		sweep_final(o, p, n, json_array_get(axes, k), 1);
	}
	if (!status) {
		sweep_scaling(o, p, n);
		sweep_loss(o, p, n);
		status = report_out_write_md(o, head.buf);
		status = o->status ? o->status : status;
		if (o->json) {
			int rc = report_out_print_json(o, json_pack("{s:o, s:O}", "sweep", jsonb_text(path),
								    "points", pts));

			status = status ? status : rc;
		}
	}
out:
	for (size_t i = 0; p && i < n; i++)
		if (p[i].loaded)
			report_run_release(&p[i].r);
	free(p);
	free(dir);
	runref_release_all(v, n);
	json_decref(doc);
	json_decref(pts);
	sbuf_release(&err);
	sbuf_release(&head);
	return status;
}
