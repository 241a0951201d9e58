/* spec_value.c - convert one YAML node into one typed spec field: the
 * setter of each field type (spec_schema.h).  Core: every "expected ...,
 * got ..." message of the spec comes from here; the scalar parsers and
 * formatters it uses are spec_scalar.c. */
#include "common/spec/spec.h"        // defines: struct job_env, struct job_argv
#include "common/spec/spec_schema.h" // defines: struct spec_field, spec_value_set
#include "common/spec/spec_scalar.h" // defines: spec_parse_*, spec_quote_got
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/suggest.h"     // defines: suggest_best
#include "common/spec/ynode.h"    // defines: struct ynode

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MAX_ENV 256
#define SPEC_MAX_ARGS 4096
#define SPEC_MAX_VALUE 4096
#define SPEC_MAX_ITEMS 256

static int expected(struct sbuf *why, const char *what, const struct ynode *n)
{
	sbuf_addf(why, "expected %s, got ", what);
	if (n && n->kind == YNODE_SCALAR && n->quoted && !ynode_is_null(n))
		sbuf_addstr(why, "the string ");
	spec_quote_got(n, why);
	return -1;
}

static bool is_plain(const struct ynode *n)
{
	return n && n->kind == YNODE_SCALAR && !n->quoted;
}

static int set_int(const struct spec_field *f, const struct ynode *n, int64_t *dst,
		   struct sbuf *why)
{
	struct sbuf what = SBUF_INIT;
	bool overflow = false;
	int64_t v;
	int rc = 0;

	if (f->type == SPEC_AUTO_INT)
		sbuf_addstr(&what, "auto or ");
	sbuf_addf(&what, "an integer %lld..%lld", (long long)f->imin, (long long)f->imax);
	if (f->type == SPEC_AUTO_INT && n && n->kind == YNODE_SCALAR && !strcmp(n->str, "auto"))
		*dst = 0;
	else if (!is_plain(n) || ynode_is_null(n) || spec_parse_int(n->str, &v, &overflow))
		rc = expected(why, what.buf, n);
	else if (v < f->imin || v > f->imax)
		rc = expected(why, what.buf, n);
	else
		*dst = v;
	if (rc && overflow)
		sbuf_addstr(why, " (integer overflow)");
	sbuf_release(&what);
	return rc;
}

/* N, or MIN-MAX with both in range and MIN <= MAX: MAX at dst, MIN at
 * the field's off_min (dst is always the job's member at off). */
static int set_range(const struct spec_field *f, const struct ynode *n, int64_t *dst,
		     struct sbuf *why)
{
	int64_t *min = (int64_t *)((char *)dst - f->off + f->off_min);
	struct sbuf what = SBUF_INIT, a = SBUF_INIT;
	bool overflow = false;
	const char *dash;
	int64_t lo = 0, hi = 0;
	int rc = 0;

	sbuf_addf(&what, "an integer %lld..%lld or a range MIN-MAX of them", (long long)f->imin,
		  (long long)f->imax);
	if (!is_plain(n) || ynode_is_null(n)) {
		rc = expected(why, what.buf, n);
		goto out;
	}
	dash = n->str[0] ? strchr(n->str + 1, '-') : NULL;
	if (!dash) {
		rc = spec_parse_int(n->str, &lo, &overflow);
		hi = lo;
	} else {
		sbuf_add(&a, n->str, (size_t)(dash - n->str));
		rc = spec_parse_int(a.buf, &lo, &overflow) ||
		     spec_parse_int(dash + 1, &hi, &overflow);
	}
	if (rc || lo < f->imin || hi > f->imax || lo > f->imax || hi < f->imin) {
		rc = expected(why, what.buf, n);
		if (overflow)
			sbuf_addstr(why, " (integer overflow)");
	} else if (lo > hi) {
		rc = expected(why, "a range MIN-MAX with MIN <= MAX", n);
	} else {
		*min = lo;
		*dst = hi;
	}
out:
	sbuf_release(&what);
	sbuf_release(&a);
	return rc;
}

static int set_num(const struct spec_field *f, const struct ynode *n, double *dst,
		   struct sbuf *why)
{
	struct sbuf what = SBUF_INIT;
	double v = 0;
	int rc = 0;

	sbuf_addf(&what, "a number in %c", f->flags & F_MIN_EXCL ? '(' : '[');
	spec_format_num(f->dmin, &what);
	sbuf_addstr(&what, ", ");
	spec_format_num(f->dmax, &what);
	sbuf_addch(&what, f->flags & F_MAX_EXCL ? ')' : ']');
	if (f->flags & F_NULLABLE)
		sbuf_addstr(&what, " or null");
	if ((f->flags & F_NULLABLE) && ynode_is_null(n))
		*dst = 0;
	else if (!is_plain(n) || ynode_is_null(n) || spec_parse_num(n->str, &v) ||
	    v < f->dmin || v > f->dmax || ((f->flags & F_MIN_EXCL) && v == f->dmin) ||
	    ((f->flags & F_MAX_EXCL) && v == f->dmax))
		rc = expected(why, what.buf, n);
	else
		*dst = v;
	sbuf_release(&what);
	return rc;
}

static int set_enum(const struct spec_field *f, const struct ynode *n, int *dst,
		    struct sbuf *why)
{
	struct sbuf what = SBUF_INIT;
	size_t count = 0;
	const char *best;

	for (; f->names[count]; count++)
		if (n && n->kind == YNODE_SCALAR && !strcmp(n->str, f->names[count])) {
			*dst = (int)count;
			return 0;
		}
	sbuf_addstr(&what, "one of ");
	for (size_t i = 0; i < count; i++)
		sbuf_addf(&what, "%s%s", i ? ", " : "", f->names[i]);
	expected(why, what.buf, n);
	sbuf_release(&what);
	best = n && n->kind == YNODE_SCALAR ? suggest_best(n->str, f->names, count) : NULL;
	if (best)
		sbuf_addf(why, "; did you mean \"%s\"?", best);
	return -1;
}

static int set_str(const struct spec_field *f, const struct ynode *n, char **dst,
		   struct sbuf *why)
{
	const char *bad;

	if (ynode_is_null(n) && (f->flags & F_NULLABLE)) {
		*dst = NULL;
		return 0;
	}
	if (!n || n->kind != YNODE_SCALAR || ynode_is_null(n))
		return expected(why, "a string", n);
	bad = f->check ? f->check(n->str) : NULL;
	if (bad) {
		spec_quote_got(n, why);
		sbuf_addf(why, " %s", bad);
		return -1;
	}
	*dst = xstrdup(n->str);
	return 0;
}

static bool is_env_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
	       strlen(s);
}

static int env_cmp(const void *a, const void *b)
{
	return strcmp(((const struct job_env_var *)a)->name, ((const struct job_env_var *)b)->name);
}

static int set_env(const struct ynode *n, struct job_env *env, struct sbuf *why,
		   const struct ynode **at)
{
	if (ynode_is_null(n))
		return 0;
	if (n->kind != YNODE_MAP)
		return expected(why, "a mapping of NAME: value", n);
	if (n->nkids / 2 > SPEC_MAX_ENV) {
		sbuf_addf(why, "more than %d variables", SPEC_MAX_ENV);
		return -1;
	}
	for (size_t i = 0; i < n->nkids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];

		*at = k;
		if (!is_env_name(k->str) || k->len > 256) {
			sbuf_addf(why, "%s is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)",
				  k->str);
			return -1;
		}
		if (v->kind != YNODE_SCALAR || (ynode_is_null(v) && !v->quoted)) {
			*at = v;
			sbuf_addf(why, "%s: ", k->str);
			return expected(why, "a string value (quote \"\" for an empty one)", v);
		}
		if (v->len > SPEC_MAX_VALUE) {
			sbuf_addf(why, "%s: value longer than %d bytes", k->str, SPEC_MAX_VALUE);
			return -1;
		}
	}
	env->v = xcalloc(n->nkids / 2, sizeof(*env->v));
	for (size_t i = 0; i < n->nkids; i += 2) {
		env->v[env->n].name = xstrdup(n->kids[i]->str);
		env->v[env->n++].value = xstrdup(n->kids[i + 1]->str);
	}
	qsort(env->v, env->n, sizeof(*env->v), env_cmp);
	return 0;
}

static void argv_push(struct job_argv *a, const char *s, size_t len)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = xstrndup(s, len);
	a->v[a->n] = NULL;
}


/* Moves *p to its next blank-separated word and sets *len to the word's
 * length; false at the end.  A string given for a list (--set KEY="a b")
 * is read as its words. */
static bool next_word(const char **p, size_t *len)
{
	*p += strspn(*p, " \t\n");
	*len = strcspn(*p, " \t\n");
	return *len > 0;
}

/* A string command is split on blanks, with no shell syntax at all: a
 * spec never reaches a shell.  Arguments with spaces need the list form. */
static int set_argv(const struct ynode *n, struct job_argv *a, struct sbuf *why,
		    const struct ynode **at)
{
	const char *what = "a list of strings, a string, or null";

	if (ynode_is_null(n))
		return 0;
	if (n->kind == YNODE_SCALAR) {
		size_t len;

		for (const char *p = n->str; next_word(&p, &len); p += len)
			argv_push(a, p, len);
	} else if (n->kind == YNODE_SEQ) {
		if (n->nkids > SPEC_MAX_ARGS) {
			sbuf_addf(why, "more than %d arguments", SPEC_MAX_ARGS);
			return -1;
		}
		for (size_t i = 0; i < n->nkids; i++) {
			const struct ynode *k = n->kids[i];

			if (k->kind != YNODE_SCALAR || ynode_is_null(k)) {
				*at = k;
				sbuf_addf(why, "argument %zu: ", i + 1);
				return expected(why, "a string", k);
			}
			argv_push(a, k->str, k->len);
		}
	} else {
		return expected(why, what, n);
	}
	if (!a->n) {
		sbuf_addstr(why, "the command is empty; use null to run the bundled trainer");
		return -1;
	}
	if (!*a->v[0]) {
		sbuf_addstr(why, "the program name is empty");
		return -1;
	}
	return 0;
}

/* One item of a SPEC_LIST, checked by f->check before it is kept. */
static int list_item(const struct spec_field *f, const char *s, size_t len, struct job_argv *a,
		     struct sbuf *why)
{
	char *item = xstrndup(s, len);
	const char *bad = f->check ? f->check(item) : NULL;

	if (bad) {
		sbuf_addf(why, "item %zu, \"", a->n + 1);
		sbuf_add_printable(why, SBUF_CLIP(item));
		sbuf_addf(why, "\", %s", bad);
		free(item);
		return -1;
	}
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = item;
	a->v[a->n] = NULL;
	return 0;
}

/* A list of checked words: a YAML list, or one string split on blanks
 * (so --set KEY="a b" works as it does for command), or null for none. */
static int set_list(const struct spec_field *f, const struct ynode *n, struct job_argv *a,
		    struct sbuf *why, const struct ynode **at)
{
	if (ynode_is_null(n))
		return 0;
	if (n->kind == YNODE_SCALAR) {
		size_t len;

		for (const char *p = n->str; next_word(&p, &len); p += len)
			if (list_item(f, p, len, a, why))
				return -1;
		return 0;
	}
	if (n->kind != YNODE_SEQ)
		return expected(why, "a list of strings, a string, or null", n);
	if (n->nkids > SPEC_MAX_ITEMS) {
		sbuf_addf(why, "more than %d items", SPEC_MAX_ITEMS);
		return -1;
	}
	for (size_t i = 0; i < n->nkids; i++) {
		const struct ynode *k = n->kids[i];

		*at = k;
		if (k->kind != YNODE_SCALAR || ynode_is_null(k)) {
			sbuf_addf(why, "item %zu: ", i + 1);
			return expected(why, "a string", k);
		}
		if (list_item(f, k->str, k->len, a, why))
			return -1;
	}
	return 0;
}

void spec_value_release(const struct spec_field *f, void *dst)
{
	switch (f->type) {
	case SPEC_STR:
		free(*(char **)dst);
		*(char **)dst = NULL;
		break;
	case SPEC_ENV: {
		struct job_env *env = dst;

		for (size_t i = 0; i < env->n; i++) {
			free(env->v[i].name);
			free(env->v[i].value);
		}
		free(env->v);
		env->v = NULL;
		env->n = 0;
		break;
	}
	case SPEC_ARGV:
	case SPEC_LIST: {
		struct job_argv *a = dst;

		for (size_t i = 0; i < a->n; i++)
			free(a->v[i]);
		free(a->v);
		a->v = NULL;
		a->n = 0;
		break;
	}
	case SPEC_STAGE:
		spec_stage_release(dst);
		break;
	default:
		break;
	}
}

int spec_value_set(const struct spec_field *f, const struct ynode *n, void *dst,
		   struct sbuf *why, const struct ynode **at)
{
	const struct ynode *ignored;
	int64_t v;

	if (!at)
		at = &ignored;
	*at = n;
	if (f->type != SPEC_SECTION)
		spec_value_release(f, dst);
	switch (f->type) {
	case SPEC_INT:
	case SPEC_AUTO_INT:
		return set_int(f, n, dst, why);
	case SPEC_RANGE:
		return set_range(f, n, dst, why);
	case SPEC_NUM:
		return set_num(f, n, dst, why);
	case SPEC_BOOL:
		if (is_plain(n) && !spec_parse_bool(n->str, dst))
			return 0;
		return expected(why, "true or false", n);
	case SPEC_ENUM:
		return set_enum(f, n, dst, why);
	case SPEC_STR:
		return set_str(f, n, dst, why);
	case SPEC_TIME:
		if (n && n->kind == YNODE_SCALAR && !spec_parse_time(n->str, &v) && v >= 60 &&
		    v <= 365 * 86400) {
			*(int64_t *)dst = v;
			return 0;
		}
		return expected(why, "a time limit of 1 minute to 365 days like 90, 1:30:00 or 2-00:00:00", n);
	case SPEC_MEM:
		if (ynode_is_null(n)) {
			*(int64_t *)dst = 0;
			return 0;
		}
		if (n->kind == YNODE_SCALAR && !spec_parse_mem(n->str, &v) && v >= 1 &&
		    v <= (INT64_C(1) << 30)) {
			*(int64_t *)dst = v;
			return 0;
		}
		return expected(why, "a size of 1M to 1024T like 4000M, 64G or 1T", n);
	case SPEC_ENV:
		return set_env(n, dst, why, at);
	case SPEC_ARGV:
		return set_argv(n, dst, why, at);
	case SPEC_LIST:
		return set_list(f, n, dst, why, at);
	case SPEC_STAGE:
		return spec_stage_set(n, dst, why, at);
	case SPEC_SECTION:
		break;
	}
	return -1;
}
