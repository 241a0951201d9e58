/* code_ignore.h - which paths of a code tree are left out: lines of a
 * .gitignore or .hpctrainignore, code.exclude, and code.include.
 * Pure core (code_ignore.c): patterns and paths in, answers out; the
 * files are read by code_scan.c.
 *
 * A subset of gitignore(5), matched with fnmatch(3): blank lines and
 * lines starting with '#' are nothing; '!' negates; a trailing '/'
 * matches directories only; a pattern with a '/' before its end is
 * anchored at the directory of its file and matched against the path
 * below it (FNM_PATHNAME), one without is matched against the last
 * component at any depth; "**" matches across '/' (the pattern is then
 * matched without FNM_PATHNAME).  The last matching line wins, as in
 * git.  Not supported: escaped trailing blanks, and a negation that
 * re-includes a file inside an excluded directory (git cannot either). */
#ifndef HPT_CODE_IGNORE_H
#define HPT_CODE_IGNORE_H

#include <stdbool.h>
#include <stddef.h>

struct code_ignore_rule {
	char *pat;    /* without '!', leading '/' and trailing '/' */
	char *base;   /* directory of the file it came from, relative ("" for the top) */
	bool negate, dir_only, anchored;
};

struct code_ignore {
	struct code_ignore_rule *v;
	size_t n;
};

void code_ignore_release(struct code_ignore *ig);

/* One line of an ignore file found in directory base ("" for the
 * top); comments and blank lines add nothing. */
void code_ignore_add(struct code_ignore *ig, const char *line, const char *base);

/* Every line of text (len bytes; '\n' or "\r\n" ends a line). */
void code_ignore_add_text(struct code_ignore *ig, const char *text, size_t len,
			  const char *base);

/* Whether path (relative to the top; a directory when is_dir) is left
 * out: by the last rule that matches it, or because a directory above
 * it is. */
bool code_ignore_is_ignored(const struct code_ignore *ig, const char *path, bool is_dir);

/* Whether a file at path is kept by include globs (n == 0: every file
 * is): a glob with a '/' is matched against the whole path, one without
 * against its last component. */
bool code_ignore_is_included(char *const *globs, size_t n, const char *path);

#endif
