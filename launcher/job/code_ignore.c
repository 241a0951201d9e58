/* code_ignore.c - gitignore-style rules over a code tree's paths (see
 * code_ignore.h).  Pure core: fnmatch(3) on strings. */
#include "launcher/job/code_ignore.h" // defines: struct code_ignore, code_ignore_*
#include "common/sbuf.h"              // defines: xstrdup, xrealloc, xstrndup

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

void code_ignore_release(struct code_ignore *ig)
{
	if (!ig)
		return;
	for (size_t i = 0; i < ig->n; i++) {
		free(ig->v[i].pat);
		free(ig->v[i].base);
	}
	free(ig->v);
	memset(ig, 0, sizeof(*ig));
}

void code_ignore_add(struct code_ignore *ig, const char *line, const char *base)
{
	struct code_ignore_rule r = { 0 };
	size_t n = strlen(line);

	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	if (!n || line[0] == '#')
		return;
	if (line[0] == '!') {
		r.negate = true;
		line++;
		n--;
	} else if (line[0] == '\\' && (line[1] == '!' || line[1] == '#')) {
		line++;
		n--;
	}
	if (n && line[n - 1] == '/') {
		r.dir_only = true;
		n--;
	}
	if (n && line[0] == '/') {
		r.anchored = true;
		line++;
		n--;
	}
	if (!n)
		return;
	r.pat = xstrndup(line, n);
	if (strchr(r.pat, '/'))
		r.anchored = true;
	r.base = xstrdup(base);
	ig->v = xrealloc(ig->v, (ig->n + 1) * sizeof(*ig->v));
	ig->v[ig->n++] = r;
}

void code_ignore_add_text(struct code_ignore *ig, const char *text, size_t len,
			  const char *base)
{
	const char *end = text + len;

	while (text < end) {
		const char *nl = memchr(text, '\n', (size_t)(end - text));
		size_t n = nl ? (size_t)(nl - text) : (size_t)(end - text);
		char *line = xstrndup(text, n);

		code_ignore_add(ig, line, base);
		free(line);
		text += n + 1;
	}
}

/* fnmatch with FNM_PATHNAME unless the pattern has "**", which then
 * matches across '/' (as every '*' of it does: a looser match than
 * git's, which only ever leaves out more). */
static bool glob_matches(const char *pat, const char *s)
{
	int flags = strstr(pat, "**") ? 0 : FNM_PATHNAME;

	return !fnmatch(pat, s, flags);
}

static bool rule_matches(const struct code_ignore_rule *r, const char *path, bool is_dir)
{
	size_t blen = strlen(r->base);
	const char *last;

	if (r->dir_only && !is_dir)
		return false;
	if (blen) {
		if (strncmp(path, r->base, blen) || path[blen] != '/')
			return false;
		path += blen + 1;
	}
	if (r->anchored)
		return glob_matches(r->pat, path);
	last = strrchr(path, '/');
	return glob_matches(r->pat, last ? last + 1 : path);
}

static bool last_rule_ignores(const struct code_ignore *ig, const char *path, bool is_dir)
{
	for (size_t i = ig->n; i-- > 0;)
		if (rule_matches(&ig->v[i], path, is_dir))
			return !ig->v[i].negate;
	return false;
}

/* A path below an ignored directory is ignored whatever its own rules
 * say (git's rule too): each directory above it is asked first.
 * O(depth x rules): both small for a program's tree. */
bool code_ignore_is_ignored(const struct code_ignore *ig, const char *path, bool is_dir)
{
	char *dir = xstrdup(path);
	bool out = false;

	for (char *s = dir; !out && (s = strchr(s, '/')); s++) {
		*s = '\0';
		out = last_rule_ignores(ig, dir, true);
		*s = '/';
	}
	if (!out)
		out = last_rule_ignores(ig, path, is_dir);
	free(dir);
	return out;
}

bool code_ignore_is_included(char *const *globs, size_t n, const char *path)
{
	const char *last = strrchr(path, '/');

	if (!n)
		return true;
	for (size_t i = 0; i < n; i++) {
		const char *g = globs[i] + (globs[i][0] == '/');

		if (strchr(g, '/') ? glob_matches(g, path) : glob_matches(g, last ? last + 1 : path))
			return true;
	}
	return false;
}
