/* flatdoc.c - flat (dotted key, value text) documents and their
 * comparison.  Core (pure); see flatdoc.h. */
#include "common/flatdoc.h" // defines: struct flatdoc, flatdoc_*
#include "common/sbuf.h"    // defines: xrealloc, xstrdup, xasprintf

#include <stdlib.h>
#include <string.h>

void flatdoc_release(struct flatdoc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].key);
		free(d->v[i].value);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->alloc = 0;
}

static struct flatdoc_pair *find(const struct flatdoc *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].key, key))
			return &d->v[i];
	return NULL;
}

void flatdoc_set(struct flatdoc *d, const char *key, const char *value)
{
	struct flatdoc_pair *p = find(d, key);

	if (p) {
		free(p->value);
		p->value = xstrdup(value);
		return;
	}
	if (d->n == d->alloc) {
		d->alloc = d->alloc ? 2 * d->alloc : 16;
		d->v = xrealloc(d->v, d->alloc * sizeof(*d->v));
	}
	d->v[d->n].key = xstrdup(key);
	d->v[d->n].value = xstrdup(value);
	d->n++;
}

const char *flatdoc_get(const struct flatdoc *d, const char *key)
{
	const struct flatdoc_pair *p = find(d, key);

	return p ? p->value : NULL;
}

static char *member_key(const char *prefix, const char *member)
{
	return prefix && *prefix ? xasprintf("%s.%s", prefix, member) : xstrdup(member);
}

void flatdoc_add_json(struct flatdoc *d, const char *prefix, const json_t *json)
{
	const char *member;
	json_t *kid;
	size_t i;
	char *text;

	if (json_is_object(json) && json_object_size(json)) {
		json_object_foreach((json_t *)json, member, kid) {
			char *key = member_key(prefix, member);

			flatdoc_add_json(d, key, kid);
			free(key);
		}
		return;
	}
	if (json_is_array(json) && json_array_size(json)) {
		json_array_foreach(json, i, kid) {
			char *key = xasprintf("%s[%zu]", prefix ? prefix : "", i);

			flatdoc_add_json(d, key, kid);
			free(key);
		}
		return;
	}
	text = json_dumps(json, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(9));
	flatdoc_set(d, prefix ? prefix : "", text ? text : "null");
	free(text);
}

static void add_change(struct flatdoc_change **out, size_t *n, const char *key, const char *a,
		       const char *b)
{
	*out = xrealloc(*out, (*n + 1) * sizeof(**out));
	(*out)[(*n)++] = (struct flatdoc_change){ key, a, b };
}

void flatdoc_compare(const struct flatdoc *a, const struct flatdoc *b,
		     int (*skip)(const char *key), struct flatdoc_change **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < a->n; i++) {
		const char *key = a->v[i].key, *other = flatdoc_get(b, key);

		if (skip && skip(key))
			continue;
		if (!other || strcmp(other, a->v[i].value))
			add_change(out, n, key, a->v[i].value, other);
	}
	for (size_t i = 0; i < b->n; i++) {
		const char *key = b->v[i].key;

		if ((skip && skip(key)) || find(a, key))
			continue;
		add_change(out, n, key, NULL, b->v[i].value);
	}
}
