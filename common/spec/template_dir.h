/* template_dir.h - where job templates are found, by name.
 *
 * Search order: each directory of $HPCTRAIN_TEMPLATE_PATH (colon-
 * separated), then PREFIX/share/hpctrain/templates next to the installed
 * binary, then templates/ of the source tree the binary was built in.
 * The first directory holding NAME.yaml wins, like $PATH.  Shell.
 */
#ifndef HPT_TEMPLATE_DIR_H
#define HPT_TEMPLATE_DIR_H

#include <stddef.h>

struct sbuf;

struct template_entry {
	char *name;    /* file name without .yaml */
	char *path;
	char *summary; /* first comment line after "NAME: ", or "" */
};

struct template_list {
	struct template_entry *v;
	size_t n;
};

/* Puts NAME.yaml's path in out; -1 if no directory has it. */
int template_dir_find(const char *name, struct sbuf *out);

/* Every template, sorted by name, first directory winning. */
void template_dir_list(struct template_list *list);
void template_list_release(struct template_list *list);

/* True when arg looks like a template name rather than a path. */
int template_dir_is_name(const char *arg);

#endif
