/* sweep.c - read a sweep (spec section and --sweep flags), enumerate points.
 * Core: see sweep.h. */
#include "common/spec/sweep.h"       // defines: struct sweep, sweep_parse
#include "common/diag.h"             // defines: diag_add
#include "common/sbuf.h"             // defines: struct sbuf, x* allocators, sbuf_clip
#include "common/spec/spec.h"        // defines: struct spec_override
#include "common/spec/spec_scalar.h" // defines: spec_parse_int
#include "common/spec/ynode.h"       // defines: struct ynode, ynode_parse

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *const sweep_mode_names[] = { "grid", "zip", NULL };

#define KEY_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

#define AT(n) DIAG_ERROR, (n)->where, (n)->line, (n)->col

/* Names of [A-Za-z0-9_-] joined by '.', as --set takes them. */
static bool key_is_path(const char *key)
{
	for (const char *seg = key;;) {
		size_t len = strspn(seg, KEY_CHARS);

		if (!len || (seg[len] && seg[len] != '.'))
			return false;
		if (!seg[len])
			return true;
		seg += len + 1;
	}
}

/* Keys every point must share: they name the runs and where they live. */
static bool key_is_shared(const char *key)
{
	static const char *const shared[] = { "name", "version", "output", "output.dir",
					      "params", NULL };

	for (size_t i = 0; shared[i]; i++)
		if (!strcmp(key, shared[i]))
			return true;
	return !strncmp(key, "sweep", 5) && (!key[5] || key[5] == '.');
}

static int check_key(const struct ynode *k, struct diag_list *dl)
{
	char clip[SBUF_CLIP_SIZE];

	if (!key_is_path(k->str)) {
		diag_add(dl, AT(k), "sweep", "\"%s\" is not a key path (names of [A-Za-z0-9_-] joined "
			 "by '.')", sbuf_clip(k->str, clip));
		return -1;
	}
	if (key_is_shared(k->str)) {
		diag_add(dl, AT(k), "sweep", "a sweep cannot vary %s: every point shares the job's "
			 "name, schema version and output directory", k->str);
		return -1;
	}
	return 0;
}

static int check_values(const struct ynode *k, const struct ynode *list, struct diag_list *dl)
{
	int rc = 0;

	if (list->kind != YNODE_SEQ) {
		diag_add(dl, AT(list), k->str, "expected a list of values to sweep over, got %s",
			 ynode_kind_name(list));
		return -1;
	}
	if (!list->nkids) {
		diag_add(dl, AT(list), k->str, "an empty list: a sweep axis needs at least one value");
		return -1;
	}
	for (size_t i = 0; i < list->nkids; i++)
		if (list->kids[i]->kind != YNODE_SCALAR) {
			diag_add(dl, AT(list->kids[i]), k->str, "a swept value must be a scalar, got %s",
				 ynode_kind_name(list->kids[i]));
			rc = -1;
		}
	return rc;
}

/* Adds (or, for a key already there, replaces) an axis. */
static void axis_put(struct sweep *s, const struct ynode *k, const struct ynode *list)
{
	struct sweep_axis *a = NULL;

	for (size_t i = 0; i < s->naxes && !a; i++)
		if (!strcmp(s->axes[i].key, k->str))
			a = &s->axes[i];
	if (!a) {
		s->axes = xrealloc(s->axes, (s->naxes + 1) * sizeof(*s->axes));
		a = &s->axes[s->naxes++];
		a->key = xstrdup(k->str);
	}
	a->key_at = k;
	a->values = (const struct ynode *const *)list->kids;
	a->n = list->nkids;
}

static void own_tree(struct sweep *s, struct ynode *t)
{
	s->trees = xrealloc(s->trees, (s->ntrees + 1) * sizeof(*s->trees));
	s->trees[s->ntrees++] = t;
}

static int parse_settings(struct sweep *s, const struct ynode *k, const struct ynode *v,
			  struct diag_list *dl)
{
	bool overflow;

	if (!strcmp(k->str, "mode")) {
		for (int m = 0; sweep_mode_names[m]; m++)
			if (v->kind == YNODE_SCALAR && !strcmp(v->str, sweep_mode_names[m])) {
				s->mode = m;
				return 0;
			}
		diag_add(dl, AT(v), "sweep.mode", "expected grid or zip");
		return -1;
	}
	if (v->kind != YNODE_SCALAR || v->quoted ||
	    spec_parse_int(v->str, &s->max_parallel, &overflow) || s->max_parallel < 0 ||
	    s->max_parallel > SWEEP_MAX_POINTS) {
		diag_add(dl, DIAG_ERROR, v->where, v->line, v->col, "sweep.max_parallel",
			 "expected an integer 0..%d (0: no cap)", SWEEP_MAX_POINTS);
		return -1;
	}
	return 0;
}

/* The file's sweep: section. */
static int parse_section(struct sweep *s, const struct ynode *sec, struct diag_list *dl)
{
	int rc = 0;

	if (ynode_is_null(sec))
		return 0;
	if (sec->kind != YNODE_MAP) {
		diag_add(dl, AT(sec), "sweep", "expected a mapping of keys to lists, got %s",
			 ynode_kind_name(sec));
		return -1;
	}
	for (size_t i = 0; i + 1 < sec->nkids; i += 2) {
		const struct ynode *k = sec->kids[i], *v = sec->kids[i + 1];

		if (!strcmp(k->str, "mode") || !strcmp(k->str, "max_parallel"))
			rc |= parse_settings(s, k, v, dl);
		else if (check_key(k, dl) || check_values(k, v, dl))
			rc = -1;
		else
			axis_put(s, k, v);
	}
	return rc;
}

/* Whether a flag's bare list has an empty value: ",1", "1,,2", "1,"
 * (YAML's flow list would drop a trailing comma without a word). */
static bool has_empty_value(const char *list)
{
	size_t n = strlen(list);

	return !n || *list == ',' || list[n - 1] == ',' || strstr(list, ",,");
}

/* The --sweep flag before flag number i that sweeps key, or NULL. */
static const char *earlier_flag(const struct sweep *s, size_t i, const char *key, size_t len)
{
	for (size_t j = 0; j < i; j++) {
		const char *arg = s->flags[j] + strlen("--sweep ");

		if (strlen(arg) > len && arg[len] == '=' && !strncmp(arg, key, len))
			return s->flags[j];
	}
	return NULL;
}

/* One --sweep KEY=V1,V2 (or KEY=[V1, V2]): a tree { KEY: [V1, V2] }
 * whose nodes are named by the flag.  0; SWEEP_BAD_FLAG when the flag is
 * malformed (no '=', an empty key or value, a list YAML cannot read, a
 * key that is no key path, a key another flag swept already: the later
 * would silently win); -1 when it is well formed but the spec's rules
 * refuse it (a key every point shares, a value that is no scalar). */
static int parse_flag(struct sweep *s, const char *arg, struct diag_list *dl)
{
	const char *eq = strchr(arg, '='), *name, *dup;
	struct ynode *list = NULL, *pair, *k;
	struct sbuf text = SBUF_INIT;
	char clip[SBUF_CLIP_SIZE];
	int rc = -1;

	s->flags = xrealloc(s->flags, (s->nflags + 1) * sizeof(*s->flags));
	name = s->flags[s->nflags++] = xasprintf("--sweep %s", arg);
	if (!eq || eq == arg) {
		diag_add(dl, DIAG_ERROR, name, 0, 0, "", "expected KEY=V1,V2,... or KEY=[V1, V2]");
		return SWEEP_BAD_FLAG;
	}
	if (eq[1] != '[' && has_empty_value(eq + 1)) {
		diag_add(dl, DIAG_ERROR, name, 0, 0, "", "an empty value: expected KEY=V1,V2,... with "
			 "no empty item (quote one inside KEY=[V1, \"\"])");
		return SWEEP_BAD_FLAG;
	}
	if ((dup = earlier_flag(s, s->nflags - 1, arg, (size_t)(eq - arg)))) {
		diag_add(dl, DIAG_ERROR, name, 0, 0, "", "%.*s is swept twice, also by %s: give one "
			 "--sweep per key", (int)(eq - arg > 60 ? 60 : eq - arg), arg,
			 sbuf_clip(dup, clip));
		return SWEEP_BAD_FLAG;
	}
	/* a bare V1,V2 is a YAML flow list without its brackets */
	if (eq[1] == '[')
		sbuf_addstr(&text, eq + 1);
	else
		sbuf_addf(&text, "[%s]", eq + 1);
	rc = SWEEP_BAD_FLAG;
	if (ynode_parse(name, text.buf, text.len, &list, dl))
		goto out;
	if (!list)
		list = ynode_new(YNODE_SEQ, name, 0, 0);
	pair = ynode_new(YNODE_MAP, name, 0, 0);
	k = ynode_new_scalar(name, 0, 0, arg, (size_t)(eq - arg), false);
	ynode_append(pair, k);
	ynode_append(pair, list);
	own_tree(s, pair);
	/* the flag is the position: the parser's columns count the brackets */
	list->line = list->col = 0;
	for (size_t i = 0; i < list->nkids; i++)
		list->kids[i]->line = list->kids[i]->col = 0;
	if (!key_is_path(k->str) || list->kind != YNODE_SEQ || !list->nkids) {
		/* malformed ("a b=1", "a=[]", "a={x: 1}"): rc stays SWEEP_BAD_FLAG */
		if (check_key(k, dl) == 0)
			check_values(k, list, dl);
		goto out;
	}
	rc = -1;
	if ((check_key(k, dl) | check_values(k, list, dl)) == 0) {
		axis_put(s, k, list);
		rc = 0;
	}
out:
	sbuf_release(&text);
	return rc;
}

static int check_sizes(const struct sweep *s, struct diag_list *dl)
{
	char clip[SBUF_CLIP_SIZE];
	size_t total = 1;

	for (size_t k = 0; k < s->naxes; k++) {
		const struct sweep_axis *a = &s->axes[k];

		if (s->mode == SWEEP_ZIP && a->n != s->axes[0].n) {
			diag_add(dl, DIAG_ERROR, a->key_at->where, a->key_at->line, a->key_at->col,
				 a->key, "zip pairs lists of one length: this one has %zu values, "
				 "%s has %zu", a->n, sbuf_clip(s->axes[0].key, clip), s->axes[0].n);
			return -1;
		}
		total = s->mode == SWEEP_ZIP ? a->n : total * a->n;
		if (total > SWEEP_MAX_POINTS) {
			diag_add(dl, DIAG_ERROR, a->key_at->where, a->key_at->line, a->key_at->col,
				 a->key, "the sweep has more than %d points", SWEEP_MAX_POINTS);
			return -1;
		}
	}
	return 0;
}

int sweep_parse(const char *where, const char *text, size_t len, const char *const *flags,
		size_t nflags, int zip, int64_t max_parallel, struct sweep *out,
		struct diag_list *dl)
{
	struct ynode *root = NULL;
	bool malformed = false, refused = false;

	memset(out, 0, sizeof(*out));
	if (ynode_parse(where, text, len, &root, dl))
		return -1;
	if (root) {
		own_tree(out, root);
		if (root->kind == YNODE_MAP && ynode_get(root, "sweep"))
			refused = parse_section(out, ynode_get(root, "sweep"), dl) != 0;
	}
	for (size_t i = 0; i < nflags; i++) {
		int rc = parse_flag(out, flags[i], dl);

		malformed |= rc == SWEEP_BAD_FLAG;
		refused |= rc != 0;
	}
	if (zip)
		out->mode = SWEEP_ZIP;
	if (max_parallel >= 0)
		out->max_parallel = max_parallel;
	/* a malformed flag first: the command line is wrong whatever the spec says */
	if (malformed)
		return SWEEP_BAD_FLAG;
	if (refused)
		return -1;
	return out->naxes ? check_sizes(out, dl) : 0;
}

void sweep_release(struct sweep *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->naxes; i++)
		free(s->axes[i].key);
	for (size_t i = 0; i < s->ntrees; i++)
		ynode_free(s->trees[i]);
	for (size_t i = 0; i < s->nflags; i++)
		free(s->flags[i]);
	free(s->axes);
	free(s->trees);
	free(s->flags);
	memset(s, 0, sizeof(*s));
}

size_t sweep_count(const struct sweep *s)
{
	size_t n = s->naxes ? 1 : 0;

	for (size_t k = 0; k < s->naxes; k++)
		n = s->mode == SWEEP_ZIP ? s->axes[k].n : n * s->axes[k].n;
	return n;
}

const struct ynode *sweep_value(const struct sweep *s, size_t i, size_t k)
{
	size_t inner = 1;

	if (s->mode == SWEEP_ZIP)
		return s->axes[k].values[i];
	for (size_t j = k + 1; j < s->naxes; j++)
		inner *= s->axes[j].n;
	return s->axes[k].values[(i / inner) % s->axes[k].n];
}

void sweep_point(const struct sweep *s, size_t i, struct sweep_point *out)
{
	out->n = s->naxes;
	out->v = xcalloc(s->naxes + 1, sizeof(*out->v));
	for (size_t k = 0; k < s->naxes; k++) {
		const struct ynode *v = sweep_value(s, i, k);

		out->v[k].arg = xasprintf("%s=%s", s->axes[k].key, v->str);
		out->v[k].where = s->axes[k].key_at->where;
		out->v[k].value = v;
		out->v[k].key_at = s->axes[k].key_at;
	}
}

void sweep_point_release(struct sweep_point *p)
{
	for (size_t k = 0; k < p->n; k++)
		free((char *)p->v[k].arg);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* "train.optimizer.lr" -> "lr": a key as labels show it. */
static const char *short_key(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? dot + 1 : key;
}

void sweep_point_label(const struct sweep *s, size_t i, struct sbuf *out)
{
	for (size_t k = 0; k < s->naxes; k++)
		sbuf_addf(out, "%s%s=%s", k ? " " : "", short_key(s->axes[k].key),
			  sweep_value(s, i, k)->str);
}

void sweep_params_label(const json_t *params, bool (*skip)(const char *key, const void *arg),
			const void *arg, struct sbuf *out)
{
	size_t start = out->len;
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)params, key, v) {
		char *text;

		if (skip && skip(key, arg))
			continue;
		text = json_is_string(v) ? xstrdup(json_string_value(v))
					 : json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
		sbuf_addf(out, "%s%s=%s", out->len > start ? " " : "", short_key(key),
			  text ? text : "?");
		free(text);
	}
}
