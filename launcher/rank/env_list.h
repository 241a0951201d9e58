/* env_list.h - an ordered list of NAME=value, as a rank's environment is
 * planned (envplan.c fills it; cmd_launch.c applies it with setenv()).
 *
 * Core (pure): memory only.  Names are unique: setting an existing name
 * replaces its value in place, so the list keeps the order in which each
 * name was first set.
 */
#ifndef HPT_ENV_LIST_H
#define HPT_ENV_LIST_H

#include <stddef.h>

struct env_var {
	char *name;
	char *value;
};

/* v holds n variables, each name and value owned; { NULL, 0 } is empty. */
struct env_list {
	struct env_var *v;
	size_t n;
};

/* Sets name to a copy of value: in place when name is there, else last. */
void env_list_set(struct env_list *l, const char *name, const char *value);
/* The value of name, or NULL. */
const char *env_list_get(const struct env_list *l, const char *name);
/* Frees every variable; l becomes empty. */
void env_list_release(struct env_list *l);

#endif
