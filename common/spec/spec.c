/* spec.c - load a job spec: parse, resolve the template, validate, default.
 * Core: text in, struct job and diagnostics out.  Every problem in a file
 * is reported, not only the first, so one edit-validate cycle fixes all. */
#include "common/spec/spec.h"        // defines: struct job, spec_load, job_release
#include "common/diag.h"        // defines: diag_add
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/spec/spec_schema.h" // defines: spec_fields, spec_value_set
#include "common/spec/spec_scalar.h" // defines: spec_quote_got
#include "common/suggest.h"     // defines: suggest_best
#include "common/spec/template.h"    // defines: template_resolve
#include "common/spec/ynode.h"    // defines: ynode_parse, struct ynode

#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct walk {
	struct job *job;
	struct diag_list *dl;
	bool seen[128]; /* by field index */
	const struct ynode *root;
};

static void *field_ptr(struct job *job, const struct spec_field *f)
{
	return (char *)job + f->off;
}

static size_t field_index(const struct spec_field *f)
{
	return (size_t)(f - spec_fields);
}

/* Keys that may appear directly under prefix ("" for the top level). */
static size_t child_names(const char *prefix, const char **names)
{
	size_t plen = strlen(prefix), n = 0;

	for (size_t i = 0; i < spec_nfields; i++) {
		const char *p = spec_fields[i].path;

		if (plen && (strncmp(p, prefix, plen) || p[plen] != '.'))
			continue;
		p += plen ? plen + 1 : 0;
		if (!strchr(p, '.'))
			names[n++] = p;
	}
	return n;
}

static void unknown_key(struct walk *w, const char *prefix, const struct ynode *key)
{
	const char *names[128];
	size_t n = child_names(prefix, names);
	const char *best = suggest_best(key->str, names, n);
	struct sbuf msg = SBUF_INIT, shown = SBUF_INIT;

	spec_quote_got(key, &shown);
	sbuf_addf(&msg, "unknown key %s", shown.buf);
	if (best)
		sbuf_addf(&msg, "; did you mean \"%s\"?", best);
	else if (!*prefix && !strcmp(key->str, "template"))
		sbuf_addstr(&msg, "; use a template as the spec itself, or 'hpctrain template init'");
	diag_add(w->dl, DIAG_ERROR, key->where, key->line, key->col, prefix, "%s", msg.buf);
	sbuf_release(&msg);
	sbuf_release(&shown);
}

static void set_field(struct walk *w, const struct spec_field *f, const struct ynode *v)
{
	struct sbuf why = SBUF_INIT;
	const struct ynode *at = v;

	w->seen[field_index(f)] = true;
	if (v->reported)
		return;
	if (!strcmp(f->path, "version") && v->kind == YNODE_SCALAR && !v->quoted &&
	    strcmp(v->str, "1")) {
		diag_add(w->dl, DIAG_ERROR, v->where, v->line, v->col, f->path,
			 "unsupported schema version \"%s\"; this hpctrain reads version %d",
			 v->str, SPEC_VERSION);
	} else if (spec_value_set(f, v, field_ptr(w->job, f), &why, &at)) {
		diag_add(w->dl, DIAG_ERROR, at->where, at->line, at->col, f->path, "%s", why.buf);
	}
	sbuf_release(&why);
}

/* A section with an "enabled" key takes a bare value as that key. */
static const struct spec_field *section_switch(const char *section)
{
	struct sbuf path = SBUF_INIT;
	const struct spec_field *f;

	sbuf_addf(&path, "%s.enabled", section);
	f = spec_field_find(path.buf);
	sbuf_release(&path);
	return f;
}

static void walk_map(struct walk *w, const struct ynode *map, const char *prefix)
{
	struct sbuf path = SBUF_INIT;

	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct ynode *k = map->kids[i], *v = map->kids[i + 1];
		const struct spec_field *f;

		sbuf_reset(&path);
		sbuf_addf(&path, "%s%s%s", prefix, *prefix ? "." : "", k->str);
		f = spec_field_find(path.buf);
		if (!f) {
			unknown_key(w, prefix, k);
			continue;
		}
		if (f->type != SPEC_SECTION) {
			set_field(w, f, v);
			continue;
		}
		w->seen[field_index(f)] = true;
		if (ynode_is_null(v))
			continue; /* "train:" alone means all defaults */
		if (v->kind == YNODE_SCALAR && (f = section_switch(path.buf))) {
			set_field(w, f, v); /* "preflight: false" is preflight.enabled */
			continue;
		}
		if (v->kind != YNODE_MAP) {
			diag_add(w->dl, DIAG_ERROR, v->where, v->line, v->col, path.buf,
				 "expected a mapping of keys, got %s", ynode_kind_name(v));
			continue;
		}
		walk_map(w, v, path.buf);
	}
	sbuf_release(&path);
}

static void apply_defaults(struct job *job)
{
	for (size_t i = 0; i < spec_nfields; i++) {
		const struct spec_field *f = &spec_fields[i];
		struct diag_list ignored = DIAG_LIST_INIT;
		struct sbuf why = SBUF_INIT;
		struct ynode *def = NULL;

		if (!f->def)
			continue;
		/* Defaults are schema data: tests/unit/test_spec.c checks each
		 * one converts, so a failure here cannot come from user input. */
		ynode_parse("default", f->def, strlen(f->def), &def, &ignored);
		if (!def)
			def = ynode_new_scalar("default", 0, 0, "", 0, false);
		spec_value_set(f, def, field_ptr(job, f), &why, NULL);
		ynode_free(def);
		sbuf_release(&why);
		diag_list_release(&ignored);
	}
}

static void check_required(struct walk *w)
{
	for (size_t i = 0; i < spec_nfields; i++)
		if ((spec_fields[i].flags & F_REQUIRED) && !w->seen[i])
			diag_add(w->dl, DIAG_ERROR, w->root->where, w->root->line, w->root->col,
				 "", "missing required key \"%s\"", spec_fields[i].path);
}

static bool seen_path(const struct walk *w, const char *path)
{
	const struct spec_field *f = spec_field_find(path);

	return f && w->seen[field_index(f)];
}

/* container.stage makes the image one more data.stage entry, "image",
 * so the stage step, the pinning and launch treat it as any other.  A
 * resolved form already holds that entry: loading it again adds none. */
static void add_stage_image(struct walk *w)
{
	struct job *j = w->job;
	const struct job_stage *had = spec_stage_find(&j->data, SPEC_STAGE_IMAGE);
	const char *where = w->root->where;
	int line = w->root->line, col = w->root->col;
	struct job_stage *e;

	if (!j->container.image) {
		diag_add(w->dl, DIAG_ERROR, where, line, col, "container.stage",
			 "stages container.image, which is null");
		return;
	}
	if (j->container.image[0] != '/') {
		diag_add(w->dl, DIAG_ERROR, where, line, col, "container.stage",
			 "stages an image file or directory; the reference \"%s\" is pulled by "
			 "the runtime", j->container.image);
		return;
	}
	if (had) {
		if (strcmp(had->src, j->container.image))
			diag_add(w->dl, DIAG_ERROR, where, line, col, "data.stage",
				 "the name \"%s\" is the container image's when container.stage "
				 "is true; name this entry otherwise", SPEC_STAGE_IMAGE);
		return;
	}
	j->data.stage = xrealloc(j->data.stage, (j->data.nstage + 1) * sizeof(*j->data.stage));
	e = &j->data.stage[j->data.nstage++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(SPEC_STAGE_IMAGE);
	e->src = xstrdup(j->container.image);
}

/* The entry "code" is submit's for the code snapshot
 * (launcher/job/code_stage.h): a resolved form holds it, naming the
 * snapshot of its code.digest; with the code on, an entry of one's own
 * under that name would pass for it. */
static void check_stage_code(struct walk *w)
{
	const struct job *j = w->job;
	const struct job_stage *had = spec_stage_find(&j->data, SPEC_STAGE_CODE);

	if (had && spec_code_is_on(j) && !spec_code_is_stage_entry(j, had))
		diag_add(w->dl, DIAG_ERROR, w->root->where, w->root->line, w->root->col,
			 "data.stage", "the name \"%s\" is the code snapshot's when the code is "
			 "on; name this entry otherwise", SPEC_STAGE_CODE);
}

/* data.stage against the rest: the image entry, the code entry, and a
 * train.dataset that names an entry. */
static void check_stage(struct walk *w)
{
	struct job *j = w->job;
	const char *name = spec_stage_dataset(j->train.dataset);

	if (j->container.stage)
		add_stage_image(w);
	check_stage_code(w);
	if (name && !j->command.n && !spec_stage_find(&j->data, name))
		diag_add(w->dl, DIAG_ERROR, w->root->where, w->root->line, w->root->col,
			 "train.dataset", "%s names no data.stage entry", j->train.dataset);
}

/* Checks that involve more than one key.  Positions point at the root,
 * since the keys may come from defaults. */
static void check_combinations(struct walk *w)
{
	const struct job *j = w->job;
	const char *where = w->root->where;
	int line = w->root->line, col = w->root->col;

	if (j->preempt.lead_s >= j->resources.time_s)
		diag_add(w->dl, DIAG_ERROR, where, line, col, "preempt.lead_s",
			 "the warning (%lld s) must be shorter than resources.time (%lld s)",
			 (long long)j->preempt.lead_s, (long long)j->resources.time_s);
	if (j->resources.gpus_per_node && j->binding.gpu == BIND_GPU_NONE)
		diag_add(w->dl, DIAG_WARNING, where, line, col, "binding.gpu",
			 "%lld GPUs per node are requested but binding.gpu is none",
			 (long long)j->resources.gpus_per_node);
	if (j->resources.cpus_per_rank &&
	    j->resources.cpus_per_rank * j->resources.ranks_per_node > 65536)
		diag_add(w->dl, DIAG_ERROR, where, line, col, "resources.cpus_per_rank",
			 "%lld ranks of %lld cores exceed any node",
			 (long long)j->resources.ranks_per_node, (long long)j->resources.cpus_per_rank);
	/* a spare stands in for a training node: more of them than
	 * nodes could never all be used */
	if (j->resources.spares > j->resources.nodes)
		diag_add(w->dl, DIAG_ERROR, where, line, col, "resources.spares",
			 "%lld spares for at most %lld training nodes: at most one spare a node",
			 (long long)j->resources.spares, (long long)j->resources.nodes);
	if (j->supervise.stall_timeout_s >= j->resources.time_s)
		diag_add(w->dl, DIAG_WARNING, where, line, col, "supervise.stall_timeout_s",
			 "%lld s is not shorter than resources.time (%lld s): a stall is never reported",
			 (long long)j->supervise.stall_timeout_s, (long long)j->resources.time_s);
	if (!j->container.image && (j->container.mounts.n || j->container.workdir ||
				    j->container.digest || j->container.writable))
		diag_add(w->dl, DIAG_WARNING, where, line, col, "container",
			 "ignored because container.image is null");
	/* The batch script starts the trainer as "$HPT" train: a host path,
	 * which a container sees only when its image holds it too. */
	if (j->container.image && !j->command.n)
		diag_add(w->dl, DIAG_WARNING, where, line, col, "container.image",
			 "the bundled trainer is started inside the image by its path on the "
			 "host, so the image must hold hpctrain there; or set command");
	if (j->command.n && seen_path(w, "train"))
		diag_add(w->dl, DIAG_WARNING, where, line, col, "train",
			 "ignored because command is set");
	check_stage(w);
}

int spec_load(const char *where, const char *text, size_t len,
	      const struct spec_override *sets, size_t nsets,
	      struct job *job, struct diag_list *dl)
{
	size_t errors_before = diag_count(dl, DIAG_ERROR);
	struct walk w = { .job = job, .dl = dl };
	struct ynode *root = NULL;

	memset(job, 0, sizeof(*job));
	apply_defaults(job);
	if (ynode_parse(where, text, len, &root, dl))
		return -1;
	if (!root && !nsets) {
		diag_add(dl, DIAG_ERROR, where, 1, 1, "", "empty job spec");
		return -1;
	}
	template_resolve(&root, sets, nsets, dl);
	if (root->kind == YNODE_MAP) {
		w.root = root;
		walk_map(&w, root, "");
		check_required(&w);
		if (diag_count(dl, DIAG_ERROR) == errors_before)
			check_combinations(&w);
	}
	ynode_free(root);
	diag_sort(dl);
	return diag_count(dl, DIAG_ERROR) > errors_before ? -1 : 0;
}

void job_release(struct job *job)
{
	if (!job)
		return;
	for (size_t i = 0; i < spec_nfields; i++)
		if (spec_fields[i].type != SPEC_SECTION)
			spec_value_release(&spec_fields[i], field_ptr(job, &spec_fields[i]));
	memset(job, 0, sizeof(*job));
}

int spec_preempt_signum(enum preempt_signal s)
{
	static const int signum[] = { [PREEMPT_USR2] = SIGUSR2, [PREEMPT_TERM] = SIGTERM,
				      [PREEMPT_INT] = SIGINT };

	return (unsigned)s < sizeof(signum) / sizeof(signum[0]) ? signum[s] : 0;
}
