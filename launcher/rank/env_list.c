/* env_list.c - an ordered list of NAME=value (see env_list.h).
 * Core: memory only. */
#include "launcher/rank/env_list.h" // defines: struct env_list, env_list_*
#include "common/sbuf.h"            // defines: x* allocators

#include <stdlib.h>
#include <string.h>

void env_list_set(struct env_list *l, const char *name, const char *value)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name)) {
			free(l->v[i].value);
			l->v[i].value = xstrdup(value);
			return;
		}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].name = xstrdup(name);
	l->v[l->n++].value = xstrdup(value);
}

const char *env_list_get(const struct env_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].value;
	return NULL;
}

void env_list_release(struct env_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
