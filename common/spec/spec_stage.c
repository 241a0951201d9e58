/* spec_stage.c - data.stage: the list of {name, src} entries a job copies
 * to node-local storage, with the fields validate and submit pin.
 * Core: one YAML node in, struct job_data's list out, or why not with the
 * node to blame.  The only spec field that is a list of mappings, so it
 * has its own setter rather than a row per sub-key in spec_schema.c. */
#include "common/spec/spec.h"        // defines: struct job_data, struct job_stage, spec_stage_find
#include "common/spec/spec_schema.h" // defines: spec_stage_set, spec_stage_release
#include "common/spec/spec_scalar.h" // defines: spec_parse_int, spec_parse_bool, spec_quote_got, spec_check_list_path
#include "common/sbuf.h"             // defines: struct sbuf, xstrdup
#include "common/suggest.h"          // defines: suggest_best
#include "common/spec/ynode.h"       // defines: struct ynode

#include <stdlib.h>
#include <string.h>

static const char *const stage_keys[] = { "name", "src", "manifest", "bytes", "is_file",
					   "packed" };
#define NKEYS (sizeof(stage_keys) / sizeof(stage_keys[0]))

/* A name becomes an environment variable's suffix (HPCTRAIN_DATA_NAME)
 * and the train.dataset reference stage:NAME, so it is kept to what
 * both read plainly. */
static const char *check_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64)
		return "must be 1 to 64 characters";
	if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n)
		return "may hold only lowercase letters, digits, '_' and '-'";
	return NULL;
}

static const char *check_manifest(const char *s)
{
	if (strncmp(s, "sha256:", 7) || strlen(s) != 71 || strspn(s + 7, "0123456789abcdef") != 64)
		return "must be sha256: and 64 lowercase hex digits";
	return NULL;
}

static int fail(struct sbuf *why, size_t item, const char *key, const char *fmt,
		const struct ynode *got)
{
	sbuf_addf(why, "item %zu", item + 1);
	if (key)
		sbuf_addf(why, ", %s", key);
	sbuf_addstr(why, ": ");
	if (got) {
		sbuf_addf(why, "%s, got ", fmt);
		spec_quote_got(got, why);
	} else {
		sbuf_addstr(why, fmt);
	}
	return -1;
}

static int set_string(const struct ynode *v, size_t item, const char *key,
		      const char *(*check)(const char *), char **dst, struct sbuf *why)
{
	const char *bad;

	if (v->kind != YNODE_SCALAR || ynode_is_null(v))
		return fail(why, item, key, "expected a string", v);
	if ((bad = check(v->str))) {
		sbuf_addf(why, "item %zu, %s: ", item + 1, key);
		spec_quote_got(v, why);
		sbuf_addf(why, " %s", bad);
		return -1;
	}
	free(*dst);
	*dst = xstrdup(v->str);
	return 0;
}

/* A source (or its pack) is bound into a container when it is read in
 * place, and named in the program's environment: one path, never a list
 * (spec_check_list_path). */
static const char *check_src(const char *s)
{
	return spec_check_list_path(s, true, true);
}

static int set_key(const struct ynode *k, const struct ynode *v, size_t item,
		   struct job_stage *e, struct sbuf *why)
{
	int64_t bytes;
	bool overflow = false;

	if (!strcmp(k->str, "name"))
		return set_string(v, item, "name", check_name, &e->name, why);
	if (!strcmp(k->str, "src"))
		return set_string(v, item, "src", check_src, &e->src, why);
	if (!strcmp(k->str, "manifest"))
		return set_string(v, item, "manifest", check_manifest, &e->manifest, why);
	if (!strcmp(k->str, "bytes")) {
		if (v->kind != YNODE_SCALAR || v->quoted ||
		    spec_parse_int(v->str, &bytes, &overflow) || bytes < 0)
			return fail(why, item, "bytes", "expected a byte count", v);
		e->bytes = (uint64_t)bytes;
		return 0;
	}
	if (!strcmp(k->str, "packed"))
		return set_string(v, item, "packed", check_src, &e->packed, why);
	if (v->kind == YNODE_SCALAR && !v->quoted && !spec_parse_bool(v->str, &e->is_file))
		return 0;
	return fail(why, item, "is_file", "expected true or false", v);
}

static int unknown(const struct ynode *k, size_t item, struct sbuf *why)
{
	const char *best = suggest_best(k->str, stage_keys, NKEYS);

	sbuf_addf(why, "item %zu: unknown key ", item + 1);
	spec_quote_got(k, why);
	if (best)
		sbuf_addf(why, "; did you mean \"%s\"?", best);
	return -1;
}

/* One entry, a mapping; *at is moved to the node to blame. */
static int set_entry(const struct ynode *m, size_t item, struct job_stage *e, struct sbuf *why,
		     const struct ynode **at)
{
	bool pinned = false, pinned_part = false;
	const struct ynode *part = NULL;

	*at = m;
	if (m->kind != YNODE_MAP)
		return fail(why, item, NULL, "expected a mapping {name: NAME, src: PATH}", m);
	for (size_t i = 0; i + 1 < m->nkids; i += 2) {
		const struct ynode *k = m->kids[i], *v = m->kids[i + 1];
		size_t j = 0;

		for (; j < NKEYS && strcmp(k->str, stage_keys[j]); j++)
			;
		*at = j < NKEYS ? v : k;
		if (j == NKEYS)
			return unknown(k, item, why);
		if (set_key(k, v, item, e, why))
			return -1;
		pinned |= j == 2;
		if (j > 2 && !part) {
			part = k;
			pinned_part = true;
		}
	}
	*at = m;
	if (!e->name)
		return fail(why, item, NULL, "missing name", NULL);
	if (!e->src)
		return fail(why, item, NULL, "missing src", NULL);
	if (pinned_part && !pinned) {
		*at = part;
		return fail(why, item, part->str, "pinned only with manifest", NULL);
	}
	return 0;
}

int spec_stage_set(const struct ynode *n, struct job_data *d, struct sbuf *why,
		   const struct ynode **at)
{
	spec_stage_release(d);
	if (ynode_is_null(n))
		return 0;
	if (n->kind != YNODE_SEQ) {
		sbuf_addstr(why, "expected a list of {name: NAME, src: PATH}, got ");
		spec_quote_got(n, why);
		return -1;
	}
	if (n->nkids > SPEC_MAX_STAGE) {
		sbuf_addf(why, "more than %d entries", SPEC_MAX_STAGE);
		return -1;
	}
	d->stage = xcalloc(n->nkids ? n->nkids : 1, sizeof(*d->stage));
	/* O(n^2) over at most SPEC_MAX_STAGE names: no index */
	for (size_t i = 0; i < n->nkids; i++) {
		struct job_stage *e = &d->stage[d->nstage++];

		if (set_entry(n->kids[i], i, e, why, at))
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(d->stage[j].name, e->name)) {
				*at = ynode_get(n->kids[i], "name");
				fail(why, i, "name", "", NULL);
				sbuf_addf(why, "\"%s\" is item %zu's name too; names must differ",
					  e->name, j + 1);
				goto fail;
			}
	}
	return 0;
fail:
	spec_stage_release(d);
	return -1;
}

void spec_stage_release(struct job_data *d)
{
	for (size_t i = 0; i < d->nstage; i++) {
		free(d->stage[i].name);
		free(d->stage[i].src);
		free(d->stage[i].manifest);
		free(d->stage[i].packed);
	}
	free(d->stage);
	d->stage = NULL;
	d->nstage = 0;
}

const struct job_stage *spec_stage_find(const struct job_data *d, const char *name)
{
	for (size_t i = 0; i < d->nstage; i++)
		if (!strcmp(d->stage[i].name, name))
			return &d->stage[i];
	return NULL;
}

const char *spec_stage_dataset(const char *dataset)
{
	size_t n = strlen(SPEC_STAGE_PREFIX);

	return dataset && !strncmp(dataset, SPEC_STAGE_PREFIX, n) ? dataset + n : NULL;
}

const char *spec_stage_source(const struct job_stage *e)
{
	return e->packed ? e->packed : e->src;
}

const char *spec_stage_check_name(const char *name)
{
	return check_name(name);
}

char *spec_stage_env_name(const char *name)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_addstr(&sb, "HPCTRAIN_DATA_");
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		sbuf_addch(&sb, c);
	}
	return sbuf_detach(&sb, NULL);
}
