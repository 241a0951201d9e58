/* template.c - bind template params, substitute ${p}, apply --set overrides.
 * Core: rewrites a struct ynode tree; see template.h for the language. */
#include "common/spec/template.h"    // defines: template_resolve
#include "common/diag.h"        // defines: diag_add
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/spec/spec.h"        // defines: struct spec_override
#include "common/spec/spec_scalar.h" // defines: spec_parse_int, spec_parse_num, spec_parse_bool, spec_format_num, spec_quote_got
#include "common/suggest.h"     // defines: suggest_best
#include "common/spec/ynode.h"    // defines: struct ynode

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum param_type { PARAM_INT, PARAM_NUMBER, PARAM_BOOL, PARAM_STRING, PARAM_ENUM };
static const char *const param_type_names[] = { "int", "number", "bool", "string", "enum", NULL };

struct param {
	const char *name;
	enum param_type type;
	const struct ynode *decl;
	const struct ynode *values; /* enum: a list of scalars */
	bool has_min, has_max;
	double min, max;
	struct ynode *value;        /* owned copy; NULL while unset */
};

struct params {
	struct param *v;
	size_t n;
};

static struct ynode *copy_scalar(const struct ynode *n, const char *where, int line, int col)
{
	return ynode_new_scalar(where, line, col, n->str, n->len, n->quoted);
}

static void zero_positions(struct ynode *n)
{
	n->line = n->col = 0;
	for (size_t i = 0; i < n->nkids; i++)
		zero_positions(n->kids[i]);
}

static struct param *param_find(struct params *ps, const char *name)
{
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].name, name))
			return &ps->v[i];
	return NULL;
}

static void param_suggest(struct params *ps, const char *name, struct sbuf *out)
{
	const char **names = xmalloc((ps->n + 1) * sizeof(*names));
	const char *best;

	for (size_t i = 0; i < ps->n; i++)
		names[i] = ps->v[i].name;
	best = suggest_best(name, names, ps->n);
	if (best)
		sbuf_addf(out, "; did you mean \"%s\"?", best);
	free(names);
}

/* Checks value against p's type; returns NULL or why it does not fit. */
static const char *param_check(const struct param *p, const struct ynode *v, struct sbuf *why)
{
	int64_t i;
	double d;
	bool b, of;

	if (ynode_is_null(v))
		return p->type == PARAM_STRING ? NULL : "null is only allowed for string parameters";
	if (v->kind != YNODE_SCALAR)
		return "a parameter value must be a scalar";
	switch (p->type) {
	case PARAM_INT:
		if (v->quoted || spec_parse_int(v->str, &i, &of))
			return "expected an integer";
		d = (double)i;
		break;
	case PARAM_NUMBER:
		if (v->quoted || spec_parse_num(v->str, &d))
			return "expected a number";
		break;
	case PARAM_BOOL:
		if (v->quoted || spec_parse_bool(v->str, &b))
			return "expected true or false";
		return NULL;
	case PARAM_STRING:
		return NULL;
	case PARAM_ENUM:
		for (size_t k = 0; p->values && k < p->values->nkids; k++)
			if (!strcmp(p->values->kids[k]->str, v->str))
				return NULL;
		sbuf_addstr(why, "expected one of");
		for (size_t k = 0; p->values && k < p->values->nkids; k++)
			sbuf_addf(why, "%s %s", k ? "," : "", p->values->kids[k]->str);
		return why->buf;
	}
	if ((p->has_min && d < p->min) || (p->has_max && d > p->max)) {
		sbuf_addstr(why, "out of range ");
		if (p->has_min)
			spec_format_num(p->min, why);
		sbuf_addstr(why, "..");
		if (p->has_max)
			spec_format_num(p->max, why);
		return why->buf;
	}
	return NULL;
}

static void param_set(struct param *p, const struct ynode *v, struct diag_list *dl)
{
	struct sbuf why = SBUF_INIT, got = SBUF_INIT;
	const char *bad = param_check(p, v, &why);

	if (bad) {
		spec_quote_got(v, &got);
		diag_add(dl, DIAG_ERROR, v->where, v->line, v->col, "",
			 "parameter %s: %s, got %s", p->name, bad, got.buf);
	} else {
		ynode_free(p->value);
		p->value = copy_scalar(v, v->where, v->line, v->col);
	}
	sbuf_release(&why);
	sbuf_release(&got);
}

static enum param_type infer_type(const struct ynode *v)
{
	int64_t i;
	double d;
	bool b, of;

	if (v->kind != YNODE_SCALAR || v->quoted || ynode_is_null(v))
		return PARAM_STRING;
	if (!spec_parse_int(v->str, &i, &of))
		return PARAM_INT;
	if (!spec_parse_num(v->str, &d))
		return PARAM_NUMBER;
	if (!spec_parse_bool(v->str, &b))
		return PARAM_BOOL;
	return PARAM_STRING;
}

static void decl_error(struct diag_list *dl, const struct ynode *at, const char *name,
		       const char *msg)
{
	diag_add(dl, DIAG_ERROR, at->where, at->line, at->col, "", "params.%s: %s", name, msg);
}

static void decl_bound(struct param *p, const struct ynode *decl, const char *key,
		       bool *has, double *out, struct diag_list *dl)
{
	const struct ynode *v = ynode_get(decl, key);

	if (!v)
		return;
	if (p->type != PARAM_INT && p->type != PARAM_NUMBER)
		decl_error(dl, v, p->name, "min and max apply only to int and number parameters");
	else if (v->kind != YNODE_SCALAR || v->quoted || spec_parse_num(v->str, out))
		decl_error(dl, v, p->name, "min and max must be numbers");
	else
		*has = true;
}

static void decl_parse(struct param *p, const struct ynode *decl, struct diag_list *dl)
{
	static const char *const keys[] = { "type", "default", "min", "max", "values", "help", NULL };
	const struct ynode *type, *def;
	int k;

	if (decl->kind == YNODE_SCALAR) {
		p->type = infer_type(decl);
		param_set(p, decl, dl);
		return;
	}
	if (decl->kind != YNODE_MAP) {
		decl_error(dl, decl, p->name, "a parameter is a value or a mapping with type and default");
		return;
	}
	for (size_t i = 0; i < decl->nkids; i += 2) {
		const char *key = decl->kids[i]->str, *best;
		struct sbuf msg = SBUF_INIT;

		for (k = 0; keys[k] && strcmp(keys[k], key); k++)
			;
		if (keys[k])
			continue;
		sbuf_addf(&msg, "unknown key \"%s\"", key);
		best = suggest_best(key, keys, 6);
		if (best)
			sbuf_addf(&msg, "; did you mean \"%s\"?", best);
		decl_error(dl, decl->kids[i], p->name, msg.buf);
		sbuf_release(&msg);
	}
	type = ynode_get(decl, "type");
	def = ynode_get(decl, "default");
	p->type = def ? infer_type(def) : PARAM_STRING;
	if (type) {
		for (k = 0; param_type_names[k]; k++)
			if (type->kind == YNODE_SCALAR && !strcmp(type->str, param_type_names[k]))
				break;
		if (param_type_names[k])
			p->type = (enum param_type)k;
		else
			decl_error(dl, type, p->name, "type must be int, number, bool, string or enum");
	}
	p->values = ynode_get(decl, "values");
	if (p->type == PARAM_ENUM && (!p->values || p->values->kind != YNODE_SEQ ||
				      !p->values->nkids)) {
		decl_error(dl, decl, p->name, "an enum parameter needs a non-empty list of values");
		p->values = NULL;
	}
	for (size_t i = 0; p->values && i < p->values->nkids; i++)
		if (p->values->kids[i]->kind != YNODE_SCALAR) {
			decl_error(dl, p->values->kids[i], p->name, "enum values must be scalars");
			p->values = NULL;
		}
	decl_bound(p, decl, "min", &p->has_min, &p->min, dl);
	decl_bound(p, decl, "max", &p->has_max, &p->max, dl);
	if (def)
		param_set(p, def, dl);
}

static void params_parse(const struct ynode *root, struct params *ps, struct diag_list *dl)
{
	const struct ynode *decls = ynode_get(root, "params");

	if (!decls || ynode_is_null(decls))
		return;
	if (decls->kind != YNODE_MAP) {
		diag_add(dl, DIAG_ERROR, decls->where, decls->line, decls->col, "params",
			 "expected a mapping of parameter declarations, got %s",
			 ynode_kind_name(decls));
		return;
	}
	ps->v = xcalloc(decls->nkids / 2 + 1, sizeof(*ps->v));
	for (size_t i = 0; i < decls->nkids; i += 2) {
		struct param *p = &ps->v[ps->n++];
		const char *name = decls->kids[i]->str;

		p->name = name;
		p->decl = decls->kids[i + 1];
		if (!*name || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					   "0123456789_") != strlen(name) || isdigit((unsigned char)*name))
			decl_error(dl, decls->kids[i], name,
				   "parameter names are letters, digits and '_'");
		decl_parse(p, p->decl, dl);
	}
}

static void params_release(struct params *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		ynode_free(ps->v[i].value);
	free(ps->v);
}

/* Interpolates references inside a longer string; returns -1 on error. */
static int expand_text(struct ynode *n, struct params *ps, struct diag_list *dl)
{
	struct sbuf out = SBUF_INIT;
	const char *s = n->str;
	int rc = 0;

	while (*s) {
		const char *end;
		struct param *p;
		char *name;

		if (s[0] == '$' && s[1] == '$' && s[2] == '{') {
			sbuf_addstr(&out, "${");
			s += 3;
			continue;
		}
		if (s[0] != '$' || s[1] != '{') {
			sbuf_addch(&out, *s++);
			continue;
		}
		end = strchr(s + 2, '}');
		if (!end) {
			diag_add(dl, DIAG_ERROR, n->where, n->line, n->col, "",
				 "unterminated ${ in \"%s\" (write $${ for a literal ${)", n->str);
			rc = -1;
			break;
		}
		name = xstrndup(s + 2, (size_t)(end - s - 2));
		p = param_find(ps, name);
		if (!p || !p->value || ynode_is_null(p->value)) {
			struct sbuf msg = SBUF_INIT;

			if (!p) {
				sbuf_addf(&msg, "unknown parameter \"%s\" in ${%s}", name, name);
				param_suggest(ps, name, &msg);
				sbuf_addstr(&msg, " (write $${ for a literal ${)");
			} else if (!p->value) {
				sbuf_addf(&msg, "parameter \"%s\" has no default; set it with --set params.%s=VALUE",
					  name, name);
			} else {
				sbuf_addf(&msg, "parameter \"%s\" is null and cannot be part of a string", name);
			}
			diag_add(dl, DIAG_ERROR, n->where, n->line, n->col, "", "%s", msg.buf);
			sbuf_release(&msg);
			rc = -1;
		} else {
			sbuf_add(&out, p->value->str, p->value->len);
		}
		free(name);
		s = end + 1;
	}
	n->reported = rc != 0; /* spare the user a second error about it */
	if (!rc) {
		free(n->str);
		n->len = out.len;
		n->str = sbuf_detach(&out, NULL);
		n->quoted = true;
	}
	sbuf_release(&out);
	return rc;
}

/* Replaces a scalar that is exactly ${p} with p's typed value.  Quoting
 * does not make it a string: in a flow mapping, {nodes: "${n}"} is the
 * only way to write a reference, since } ends the mapping. */
static int substitute_whole(struct ynode **slot, struct params *ps)
{
	struct ynode *n = *slot;
	size_t len = n->len;
	struct param *p;
	char *name;

	if (len < 4 || n->str[0] != '$' || n->str[1] != '{' || n->str[len - 1] != '}' ||
	    memchr(n->str + 2, '}', len - 3) || memchr(n->str + 2, '$', len - 3))
		return 1;
	name = xstrndup(n->str + 2, len - 3);
	p = param_find(ps, name);
	free(name);
	if (!p || !p->value)
		return 1; /* expand_text() reports it */
	*slot = copy_scalar(p->value, n->where, n->line, n->col);
	if (p->type == PARAM_STRING || p->type == PARAM_ENUM)
		(*slot)->quoted = !ynode_is_null(p->value);
	ynode_free(n);
	return 0;
}

static int substitute(struct ynode **slot, struct params *ps, struct diag_list *dl)
{
	struct ynode *n = *slot;
	int rc = 0;

	if (n->kind == YNODE_SCALAR) {
		if (!strstr(n->str, "${"))
			return 0;
		rc = substitute_whole(slot, ps);
		return rc > 0 ? expand_text(n, ps, dl) : rc;
	}
	/* In a mapping only values are substituted; keys are the schema's. */
	for (size_t i = n->kind == YNODE_MAP ? 1 : 0; i < n->nkids; i += n->kind == YNODE_MAP ? 2 : 1)
		rc |= substitute(&n->kids[i], ps, dl);
	return rc;
}

/* Unlinks key and its value from map and returns them as a one-pair
 * mapping the caller frees, or NULL when key is absent. */
static struct ynode *map_detach(struct ynode *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		struct ynode *pair;

		if (strcmp(map->kids[i]->str, key))
			continue;
		pair = ynode_new(YNODE_MAP, map->where, map->line, map->col);
		ynode_append(pair, map->kids[i]);
		ynode_append(pair, map->kids[i + 1]);
		memmove(&map->kids[i], &map->kids[i + 2], (map->nkids - i - 2) * sizeof(*map->kids));
		map->nkids -= 2;
		return pair;
	}
	return NULL;
}

/* Splits "a.b.c=value"; returns -1 with a message when malformed. */
static int split_override(const char *arg, struct sbuf *key, const char **value)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return -1;
	sbuf_add(key, arg, (size_t)(eq - arg));
	*value = eq + 1;
	for (const char *seg = key->buf; ; ) {
		size_t len = strspn(seg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");

		if (!len || (seg[len] && seg[len] != '.'))
			return -1;
		if (!seg[len])
			return 0;
		seg += len + 1;
	}
}

bool template_override_is_valid(const char *arg)
{
	struct sbuf key = SBUF_INIT;
	const char *value;
	bool ok = !split_override(arg, &key, &value);

	sbuf_release(&key);
	return ok;
}

static struct ynode *parse_override_value(const char *arg, const char *value, struct diag_list *dl)
{
	struct ynode *v = NULL;

	if (ynode_parse(arg, value, strlen(value), &v, dl))
		return NULL;
	if (!v)
		v = ynode_new_scalar(arg, 0, 0, "", 0, false);
	zero_positions(v);
	return v;
}

/* Sets key (dotted) to v in the tree, creating mappings on the way;
 * created nodes, and errors, are placed at at (or at the flag arg). */
static int set_path(struct ynode *root, const char *arg, const struct ynode *at, char *key,
		    struct ynode *v, struct diag_list *dl)
{
	const char *where = at ? at->where : arg;
	int line = at ? at->line : 0, col = at ? at->col : 0;

	struct ynode *node = root;
	char *seg = key;

	for (;;) {
		char *dot = strchr(seg, '.');
		struct ynode *kid;
		size_t i;

		if (dot)
			*dot = '\0';
		for (i = 0; i + 1 < node->nkids && strcmp(node->kids[i]->str, seg); i += 2)
			;
		if (i + 1 >= node->nkids) {
			ynode_append(node, ynode_new_scalar(where, line, col, seg, strlen(seg), false));
			ynode_append(node, ynode_new(YNODE_MAP, where, line, col));
		}
		if (!dot) {
			ynode_free(node->kids[i + 1]);
			node->kids[i + 1] = v;
			return 0;
		}
		kid = node->kids[i + 1];
		if (ynode_is_null(kid)) {
			ynode_free(kid);
			kid = node->kids[i + 1] = ynode_new(YNODE_MAP, where, line, col);
		}
		if (kid->kind != YNODE_MAP) {
			diag_add(dl, DIAG_ERROR, where, line, col, "",
				 "cannot set a key inside \"%s\", which is %s in the spec", seg,
				 ynode_kind_name(kid));
			ynode_free(v);
			return -1;
		}
		node = kid;
		seg = dot + 1;
	}
}

static int apply_override(struct ynode *root, struct params *ps,
			  const struct spec_override *set, struct diag_list *dl)
{
	const char *arg = set->where ? set->where : set->arg;
	const struct ynode *at = set->key_at;
	struct sbuf key = SBUF_INIT;
	const char *value;
	struct ynode *v;
	int rc = -1;

	if (split_override(set->arg, &key, &value)) {
		diag_add(dl, DIAG_ERROR, arg, 0, 0, "", "expected " TEMPLATE_OVERRIDE_FORM);
		goto out;
	}
	v = set->value ? copy_scalar(set->value, set->value->where, set->value->line,
				      set->value->col)
		       : parse_override_value(arg, value, dl);
	if (!v)
		goto out;
	if (!strncmp(key.buf, "params.", 7)) {
		struct param *p = param_find(ps, key.buf + 7);

		if (p) {
			param_set(p, v, dl);
			rc = 0;
		} else {
			struct sbuf msg = SBUF_INIT;

			sbuf_addf(&msg, "unknown parameter \"%s\"", key.buf + 7);
			param_suggest(ps, key.buf + 7, &msg);
			diag_add(dl, DIAG_ERROR, at ? at->where : arg, at ? at->line : 0,
				 at ? at->col : 0, "", "%s", msg.buf);
			sbuf_release(&msg);
		}
		ynode_free(v);
		goto out;
	}
	rc = set_path(root, arg, at, key.buf, v, dl);
out:
	sbuf_release(&key);
	return rc;
}

int template_resolve(struct ynode **root, const struct spec_override *sets, size_t nsets,
		     struct diag_list *dl)
{
	struct params ps = { NULL, 0 };
	struct ynode *decls;
	int rc = 0;

	if (!*root || ynode_is_null(*root)) {
		ynode_free(*root);
		*root = ynode_new(YNODE_MAP, "--set", 0, 0);
	}
	if ((*root)->kind != YNODE_MAP) {
		diag_add(dl, DIAG_ERROR, (*root)->where, (*root)->line, (*root)->col, "",
			 "a job spec is a mapping of keys, not %s", ynode_kind_name(*root));
		return -1;
	}
	/* Detached, not freed: the params point into the declarations. */
	decls = map_detach(*root, "params");
	/* A sweep describes a set of jobs, not one of them (sweep.h). */
	ynode_free(map_detach(*root, "sweep"));
	params_parse(decls, &ps, dl);
	/* Parameter overrides first: references must see the final values. */
	for (size_t i = 0; i < nsets; i++)
		if (!strncmp(sets[i].arg, "params.", 7))
			rc |= apply_override(*root, &ps, &sets[i], dl);
	rc |= substitute(root, &ps, dl);
	for (size_t i = 0; i < nsets; i++)
		if (strncmp(sets[i].arg, "params.", 7))
			rc |= apply_override(*root, &ps, &sets[i], dl);
	params_release(&ps);
	ynode_free(decls);
	return rc ? -1 : 0;
}
