/* plan_shapes.c - a job's candidate shapes weighed: see plan_shapes.h.
 * Shell: loads and renders the spec at each shape (launcher/runs/attempt),
 * asks Slurm (hpt_slurm_will_run), fits the past runs (launcher/shape). */
#include "launcher/job/plan_shapes.h"   // defines: struct plan_shapes_request, plan_shapes_weigh
#include "common/say.h" // defines: say
#include "common/diag.h"       // defines: struct diag_list, diag_format
#include "common/exitcode.h"   // defines: enum hpt_exit
#include "common/sbuf.h"       // defines: struct sbuf, xasprintf
#include "common/spec/specfile.h" // defines: struct specfile_overrides, specfile_overrides_add
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text
#include "launcher/runs/attempt.h" // defines: struct attempt, attempt_prepare

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_MAX_NODES 16

/* The spec (text, read once: it may be stdin) with one shape's nodes
 * and ranks per node set, after the user's --set flags, as --set sets
 * them. */
int plan_shapes_load(const struct plan_shapes_request *r, const struct shape_candidate *c, struct job *job,
		     struct diag_list *dl)
{
	struct specfile_overrides o = SPECFILE_OVERRIDES_INIT;
	char *n = xasprintf("resources.nodes=%u", c->nodes);
	char *rpn = xasprintf("resources.ranks_per_node=%u", c->ranks_per_node);
	int status = 0;

	for (size_t i = 0; i < r->nsets && !status; i++)
		status = specfile_overrides_add(&o, r->sets[i].arg);
	if (!status)
		status = specfile_overrides_add(&o, n) || specfile_overrides_add(&o, rpn);
	if (!status && spec_load(r->where, r->text, r->len, o.v, o.n, job, dl))
		status = HPT_EXIT_BAD_SPEC;
	else if (status)
		status = HPT_EXIT_INTERNAL;
	specfile_overrides_release(&o);
	free(n);
	free(rpn);
	return status;
}

/* When Slurm would start the shape: c->start, or c->why.  A status only
 * for a controller that cannot be reached. */
static int ask_slurm(const struct plan_shapes_request *r, struct shape_candidate *c)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct hpt_slurm_will_run w;
	struct sbuf err = SBUF_INIT;
	struct attempt at;
	char cwd[PATH_MAX];
	int status;

	attempt_init(&at);
	at.exclude = r->exclude ? xstrdup(r->exclude) : NULL;
	status = plan_shapes_load(r, c, &at.job, &dl);
	if (!status)
		status = attempt_prepare(&at, r->exe, &dl);
	if (status) {
		struct sbuf why = SBUF_INIT;

		for (size_t i = 0; i < dl.n && !why.len; i++)
			if (dl.v[i].severity == DIAG_ERROR)
				diag_format(&dl.v[i], &why);
		c->why = xasprintf("the spec is invalid at this shape: %s",
				   why.len ? why.buf : "it does not render");
		sbuf_release(&why);
		status = 0;
	} else if (!getcwd(cwd, sizeof(cwd))) {
		c->why = xasprintf("cannot find the current directory: %s", strerror(errno));
	} else if ((status = hpt_slurm_will_run(&at.opts, cwd, &w, &err)) == HPT_EXIT_REJECTED) {
		c->why = xstrdup(err.buf);
		status = 0;
	} else if (!status) {
		c->runnable = true;
		c->start = w.start;
		hpt_slurm_will_run_release(&w);
	}
	if (status)
		say("%s", err.buf);
	attempt_release(&at);
	diag_list_release(&dl);
	sbuf_release(&err);
	return status;
}

/* The shapes to weigh: --shapes, else 1..N nodes at the spec's ranks per
 * node, N from --max-nodes or the partition (at most 16).  A shape
 * larger than the partition is kept, not runnable, saying why. */
static void candidates(const struct plan_shapes_request *r, const struct job *job,
		       struct shape_candidate **v, size_t *n)
{
	const struct hpt_slurm_partition *part = r->part;
	unsigned top = r->max_nodes ? r->max_nodes
				    : part->total_nodes < DEFAULT_MAX_NODES ? part->total_nodes
									 : DEFAULT_MAX_NODES;

	if (r->shapes) {
		*v = xcalloc(r->nshapes ? r->nshapes : 1, sizeof(**v));
		*n = r->nshapes;
		for (size_t i = 0; i < *n; i++) {
			(*v)[i].nodes = r->shapes[i].nodes;
			(*v)[i].ranks_per_node = r->shapes[i].ranks_per_node;
		}
	} else {
		*v = xcalloc(top ? top : 1, sizeof(**v));
		for (*n = 0; *n < top; (*n)++) {
			(*v)[*n].nodes = (unsigned)*n + 1;
			(*v)[*n].ranks_per_node = (unsigned)job->resources.ranks_per_node;
		}
	}
	for (size_t i = 0; i < *n; i++) {
		struct shape_candidate *c = &(*v)[i];

		if (c->nodes > part->total_nodes)
			c->why = xasprintf("the partition %s has %u node%s", part->name,
					   part->total_nodes, part->total_nodes == 1 ? "" : "s");
		else if (part->max_nodes && c->nodes > part->max_nodes)
			c->why = xasprintf("the partition %s takes at most %u nodes a job",
					   part->name, part->max_nodes);
	}
}

/* The work and the fit; a status after a line saying what is missing. */
static int model_of(const struct job *job, struct shape_history *h,
		    struct shape_work *w, struct shape_batch *b, struct shape_fit *f)
{
	struct sbuf err = SBUF_INIT;

	if (shape_history_load(job, h, &err)) {
		say("%s", err.buf);
		sbuf_release(&err);
		return HPT_EXIT_NO_INPUT;
	}
	for (const char *l = h->unread.buf; h->nunread && *l;) {
		size_t len = strcspn(l, "\n");

		say("skipped a past run: %.*s", (int)len, l);
		l += len + (l[len] == '\n');
	}
	for (const char *l = h->capped.buf; h->capped.len && *l;) {
		size_t len = strcspn(l, "\n");

		say("warning: %.*s", (int)len, l);
		l += len + (l[len] == '\n');
	}
	w->spec_ranks = (unsigned)(job->resources.nodes * job->resources.ranks_per_node);
	if (job->command.n) {
		/* train is the bundled trainer's: a user's program is known
		 * only by what its runs logged */
		w->fixed_steps = true;
		w->max_steps = h->steps;
	} else {
		w->max_steps = job->train.max_steps;
		w->epochs = job->train.epochs;
		w->batch_per_rank = job->train.batch_per_rank;
		w->samples_per_epoch = h->samples_per_epoch;
	}
	/* the bundled trainer takes train.batch_per_rank a rank: per rank */
	if (job->command.n)
		shape_batch_infer(h->v, h->n, b);
	if (shape_model_fit_global(h->v, h->n, b->global ? b->global_batch : 0, f)) {
		say("no past run of %s under %s/%s logged its steps%s; "
			"run it once at any shape (a few hundred steps will do), then plan", job->name, job->output.dir, job->name,
			h->skipped ? " the same way (runs of that name ran another program or "
				     "configuration)" : "");
		return HPT_EXIT_NO_INPUT;
	}
	if (w->max_steps <= 0 && w->samples_per_epoch <= 0) {
		say("%s sets no train.max_steps and no past run logged "
			"an epoch, so the work is unknown; set train.max_steps", job->name);
		return HPT_EXIT_NO_INPUT;
	}
	return 0;
}

int plan_shapes_weigh(const struct plan_shapes_request *r, const struct job *job, struct plan_shapes_result *out)
{
	int status;

	memset(out, 0, sizeof(*out));
	sbuf_init(&out->h.shapes);
	out->pick = out->fastest = -1;
	out->name = job->name;
	if ((status = model_of(job, &out->h, &out->w, &out->b, &out->f)))
		return status;
	candidates(r, job, &out->v, &out->n);
	for (size_t i = 0; i < out->n && !status; i++)
		if (!out->v[i].why)
			status = ask_slurm(r, &out->v[i]);
	if (status)
		return status;
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].runnable) {
			shape_predict(&out->v[i], &out->f, &out->w, 0);
			out->runnable += out->v[i].runnable;
		}
	out->pick = shape_pick(out->v, out->n, r->deadline);
	out->fastest = shape_pick(out->v, out->n, (struct shape_deadline){ .set = false });
	return 0;
}

void plan_shapes_release(struct plan_shapes_result *p)
{
	shape_candidates_free(p->v, p->n);
	p->v = NULL;
	p->n = 0;
	shape_history_release(&p->h);
}

/* One candidate's prediction into o (which it returns). */
static json_t *candidate_json(const struct shape_candidate *c, json_t *o)
{
	if (!c->runnable) {
		jsonb_set(&o, "why", jsonb_text(c->why ? c->why : ""));
		return o;
	}
	jsonb_set(&o, "start", json_integer((json_int_t)c->start));
	jsonb_set(&o, "steps", json_integer((json_int_t)c->steps));
	jsonb_set(&o, "run_s", json_real(c->run_s));
	jsonb_set(&o, "rel_err", json_real(c->rel_err));
	jsonb_set(&o, "finish", json_integer((json_int_t)c->finish));
	jsonb_set(&o, "node_hours", json_real(c->node_hours));
	return o;
}

static json_t *model_json(const struct shape_fit *f, const struct shape_history *h)
{
	return json_pack("{s:f, s:f, s:f, s:b, s:b, s:b, s:f, s:i, s:s, s:o}", "compute_s",
			 f->compute_s, "node_s", f->node_s, "net_s", f->net_s, "node_known",
			 f->node_known, "net_known", f->net_known, "together", f->together,
			 "rel_err", f->rel_err, "runs", (int)f->runs,
			 "shapes", h->shapes.buf, "global_batch",
			 f->global_batch > 0 ? json_real(f->global_batch) : json_null());
}

json_t *plan_shapes_json(const struct plan_shapes_result *p, struct shape_deadline deadline)
{
	const struct shape_work *w = &p->w;
	const struct shape_fit *f = &p->f;
	const struct shape_history *h = &p->h;
	const struct shape_candidate *v = p->v;
	size_t n = p->n;
	long pick = p->pick;
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct shape_candidate *c = &v[i];
		json_t *o = json_pack("{s:i, s:i, s:b}", "nodes", (int)c->nodes, "ranks_per_node",
				      (int)c->ranks_per_node, "runnable", c->runnable);

		jsonb_append(&a, candidate_json(c, o));
	}
	json_t *o = json_pack("{s:s, s:{s:I, s:I, s:f, s:I}, s:o, s:o, s:o, s:o}",
			      "name", p->name, "work", "max_steps", (json_int_t)w->max_steps, "epochs",
			      (json_int_t)w->epochs, "samples_per_epoch", w->samples_per_epoch,
			      "batch_per_rank", (json_int_t)w->batch_per_rank, "model", model_json(f, h),
			      "candidates", a,
			      "pick", pick >= 0 ? json_integer(pick) : json_null(), "deadline",
			      deadline.set ? json_integer((json_int_t)deadline.at) : json_null());

	if (w->fixed_steps) {
		/* a user's program: which batch it holds, and from what */
		struct sbuf says = SBUF_INIT;

		shape_batch_describe(&p->b, &says);
		jsonb_set(&o, "batch", json_pack("{s:b, s:s}", "global", p->b.global, "says",
						 says.buf));
		sbuf_release(&says);
	}
	return o;
}


json_t *plan_shapes_pick_json(const struct plan_shapes_result *p)
{
	const struct shape_candidate *c = &p->v[p->pick];
	json_t *o = json_pack("{s:i, s:i, s:o}", "nodes", (int)c->nodes, "ranks_per_node",
			      (int)c->ranks_per_node, "model", model_json(&p->f, &p->h));

	return candidate_json(c, o);
}
