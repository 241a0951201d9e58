/* sweep_plan.c - a sweep's points planned as array jobs (sweep_plan.h).
 * Core: attempts, options and JSON in, arrays and a record out. */
#include "launcher/runs/sweep_plan.h"  // defines: struct sweep_plan, sweep_plan_arrays
#include "common/diag.h"               // defines: diag_add
#include "common/exitcode.h"           // defines: enum hpt_exit
#include "common/jsonb.h"              // defines: jsonb_set, jsonb_append
#include "common/spec/spec.h"          // defines: spec_hash
#include "common/spec/spec_scalar.h"   // defines: spec_parse_int, spec_parse_num
#include "common/spec/sweep.h"         // defines: struct sweep, sweep_value
#include "common/spec/ynode.h"         // defines: struct ynode
#include "common/version.h"            // defines: hpt_version

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void arrays_release(struct sweep_plan *pl)
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

void sweep_plan_release(struct sweep_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		attempt_release(&pl->p[i].at);
		rundir_release(&pl->p[i].rd);
		free(pl->p[i].run);
	}
	arrays_release(pl);
	free(pl->p);
	free(pl->record);
	pl->p = NULL;
	pl->n = 0;
	pl->record = NULL;
}

int sweep_plan_check_distinct(const struct sweep_plan *pl, const char *where,
			      struct diag_list *dl)
{
	for (size_t i = 0; i < pl->n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pl->p[i].at.sha256, pl->p[j].at.sha256)) {
				struct sbuf a = SBUF_INIT, b = SBUF_INIT;

				sweep_point_label(pl->sweep, j, &a);
				sweep_point_label(pl->sweep, i, &b);
				diag_add(dl, DIAG_ERROR, where, 0, 0, "sweep",
					 "points %zu (%s) and %zu (%s) resolve to the same job: the "
					 "swept keys change nothing there", j, a.buf, i, b.buf);
				sbuf_release(&a);
				sbuf_release(&b);
				return HPT_EXIT_BAD_SPEC;
			}
	return 0;
}

void sweep_plan_identity(struct sweep_plan *pl)
{
	struct sbuf all = SBUF_INIT;

	sbuf_addstr(&all, "hpctrain sweep\n");
	for (size_t i = 0; i < pl->n; i++)
		sbuf_addf(&all, "%s\n", pl->p[i].at.sha256);
	spec_hash(all.buf, all.len, pl->sha256);
	/* encode-ok: 6 + RUNDIR_HASH_LEN, the size of name */
	snprintf(pl->name, sizeof(pl->name), "sweep-%.*s", RUNDIR_HASH_LEN, pl->sha256);
	sbuf_release(&all);
}

/* The array point i joins: the first of its shape with room, else a new one. */
static size_t array_for(struct sweep_plan *pl, struct sbuf *keys, size_t i)
{
	size_t k;

	for (k = 0; k < pl->na; k++) {
		if (strcmp(keys[pl->a[k].points[0]].buf, keys[i].buf))
			continue;
		if (!pl->max_tasks || pl->a[k].n < pl->max_tasks)
			return k;
		pl->split = true;
	}
	pl->a = xrealloc(pl->a, (pl->na + 1) * sizeof(*pl->a));
	memset(&pl->a[pl->na], 0, sizeof(*pl->a));
	return pl->na++;
}

/* Points with equal Slurm options go to one array, in point order,
 * and to another once it holds max_tasks. */
static int group(struct sweep_plan *pl)
{
	struct sbuf *keys = xcalloc(pl->n + 1, sizeof(*keys));
	int status = 0;

	for (size_t i = 0; i < pl->n; i++) {
		struct sweep_plan_point *pt = &pl->p[i];
		size_t k;

		if (!pt->at.renders || !pt->at.opts.n) {
			status = HPT_EXIT_INTERNAL; /* a point not rendered: a bug */
			break;
		}
		render_opts_key(&pt->at.opts, &keys[i]);
		k = array_for(pl, keys, i);
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

int sweep_plan_arrays(struct sweep_plan *pl)
{
	int status;

	arrays_release(pl);
	pl->split = false;
	status = group(pl);
	for (size_t k = 0; !status && k < pl->na; k++) {
		struct sweep_plan_array *a = &pl->a[k];

		render_array_options(&pl->p[a->points[0]].at.opts, a->n, pl->max_parallel, &a->opts);
		sbuf_init(&a->script);
		if (render_array_script(&a->opts, pl->name, hpt_version, &a->script))
			status = HPT_EXIT_INTERNAL;
	}
	return status;
}

const char *sweep_plan_relative(const char *path, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(path, base, n) && path[n] == '/' ? path + n + 1 : path;
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

static json_t *axes_json(const struct sweep *sw)
{
	json_t *axes = json_array();

	for (size_t k = 0; k < sw->naxes; k++) {
		json_t *vals = json_array();

		for (size_t j = 0; j < sw->axes[k].n; j++)
			jsonb_append(&vals, value_json(sw->axes[k].values[j]));
		jsonb_append(&axes, json_pack("{s:s, s:o}", "key", sw->axes[k].key, "values", vals));
	}
	return axes;
}

json_t *sweep_plan_record(const struct sweep_plan *pl, const char *parent)
{
	const struct sweep *sw = pl->sweep;
	json_t *points = json_array();

	for (size_t i = 0; i < pl->n; i++) {
		const struct sweep_plan_point *pt = &pl->p[i];
		json_t *o = json_pack("{s:I, s:o, s:s#, s:s, s:I, s:I}", "index", (json_int_t)i,
				      "params", point_params(sw, i), "run", pt->at.sha256,
				      RUNDIR_HASH_LEN, "sha256", pt->at.sha256, "array",
				      (json_int_t)pt->array, "task", (json_int_t)pt->task);

		if (pt->rd.dir)
			jsonb_set(&o, "dir", json_string(sweep_plan_relative(pt->rd.dir, parent)));
		jsonb_append(&points, o);
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:o, s:[]}", "sweep", pl->name,
			 "sha256", pl->sha256, "name", pl->p[0].at.job.name, "mode",
			 sweep_mode_names[sw->mode], "max_parallel", (json_int_t)sw->max_parallel,
			 "axes", axes_json(sw), "points", points, "arrays");
}
