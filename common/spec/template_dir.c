/* template_dir.c - find and list job templates on the search path.
 * Shell: reads the environment, the program's own path and directories. */
#include "common/spec/template_dir.h" // defines: template_dir_find, template_dir_list
#include "common/fileio.h"       // defines: fileio_read, fileio_exists, fileio_self_exe
#include "common/sbuf.h"         // defines: struct sbuf

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where `make install` put the templates (DATADIR/hpctrain/templates);
 * the Makefile sets it for this file alone. */
#ifndef HPT_TEMPLATE_DIR
#define HPT_TEMPLATE_DIR "/usr/local/share/hpctrain/templates"
#endif

/* Appends every directory to search, each NUL-terminated, to dirs:
 * HPCTRAIN_TEMPLATE_PATH, then beside the binary (installed, or the
 * source tree it was built in), then the configured install directory,
 * which a packager's BINDIR and DATADIR may have put elsewhere. */
static size_t search_dirs(struct sbuf *dirs)
{
	const char *env = getenv("HPCTRAIN_TEMPLATE_PATH");
	char exe[PATH_MAX];
	size_t count = 0;

	for (const char *p = env; p && *p;) {
		size_t len = strcspn(p, ":");

		if (len) {
			sbuf_add(dirs, p, len);
			sbuf_addch(dirs, '\0');
			count++;
		}
		p += len + (p[len] == ':');
	}
	if (!fileio_self_exe(exe, sizeof(exe))) {
		char *bindir = dirname(exe);

		sbuf_addf(dirs, "%s/../share/hpctrain/templates", bindir);
		sbuf_addch(dirs, '\0');
		sbuf_addf(dirs, "%s/../templates", bindir);
		sbuf_addch(dirs, '\0');
		count += 2;
	}
	sbuf_addstr(dirs, HPT_TEMPLATE_DIR);
	sbuf_addch(dirs, '\0');
	return count + 1;
}

int template_dir_is_name(const char *arg)
{
	size_t n = strlen(arg);

	return n && !strchr(arg, '/') && strcmp(arg, "-") &&
	       (n < 5 || strcmp(arg + n - 5, ".yaml")) && !fileio_exists(arg);
}

int template_dir_find(const char *name, struct sbuf *out)
{
	struct sbuf dirs = SBUF_INIT;
	size_t count = search_dirs(&dirs);
	const char *d = dirs.buf;
	int rc = -1;

	if (!template_dir_is_name(name) || !strcmp(name, ".") || !strcmp(name, ".."))
		goto out;
	for (size_t i = 0; i < count; i++, d += strlen(d) + 1) {
		sbuf_reset(out);
		sbuf_addf(out, "%s/%s.yaml", d, name);
		if (fileio_exists(out->buf)) {
			rc = 0;
			break;
		}
	}
out:
	if (rc)
		sbuf_reset(out);
	sbuf_release(&dirs);
	return rc;
}

static char *read_summary(const char *path, const char *name)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *summary = xstrdup("");
	size_t nlen = strlen(name);

	if (!fileio_read(path, 4096, &text, &err) && !strncmp(text.buf, "# ", 2)) {
		const char *s = text.buf + 2;

		if (!strncmp(s, name, nlen) && s[nlen] == ':')
			s += nlen + 1 + (s[nlen + 1] == ' ');
		free(summary);
		summary = xstrndup(s, strcspn(s, "\n"));
	}
	sbuf_release(&text);
	sbuf_release(&err);
	return summary;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct template_entry *)a)->name,
		      ((const struct template_entry *)b)->name);
}

static int listed(const struct template_list *list, const char *name, size_t len)
{
	for (size_t i = 0; i < list->n; i++)
		if (strlen(list->v[i].name) == len && !strncmp(list->v[i].name, name, len))
			return 1;
	return 0;
}

void template_dir_list(struct template_list *list)
{
	struct sbuf dirs = SBUF_INIT;
	size_t count = search_dirs(&dirs);
	const char *d = dirs.buf;

	list->v = NULL;
	list->n = 0;
	for (size_t i = 0; i < count; i++, d += strlen(d) + 1) {
		DIR *dir = opendir(d);
		struct dirent *de;

		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			size_t len = strlen(de->d_name);
			struct template_entry *e;

			if (len <= 5 || strcmp(de->d_name + len - 5, ".yaml") || de->d_name[0] == '.' ||
			    listed(list, de->d_name, len - 5))
				continue;
			list->v = xrealloc(list->v, (list->n + 1) * sizeof(*list->v));
			e = &list->v[list->n++];
			e->name = xstrndup(de->d_name, len - 5);
			e->path = xasprintf("%s/%s", d, de->d_name);
			e->summary = read_summary(e->path, e->name);
		}
		closedir(dir);
	}
	if (list->n)
		qsort(list->v, list->n, sizeof(*list->v), entry_cmp);
	sbuf_release(&dirs);
}

void template_list_release(struct template_list *list)
{
	for (size_t i = 0; i < list->n; i++) {
		free(list->v[i].name);
		free(list->v[i].path);
		free(list->v[i].summary);
	}
	free(list->v);
	list->v = NULL;
	list->n = 0;
}
