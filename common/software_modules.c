/* software_modules.c - the loaded modules from LOADEDMODULES and
 * _LMFILES_: see software_modules.h.  Pure core. */
#include "common/software_modules.h" // defines: software_modules_json
#include "common/sbuf.h"             // defines: xstrndup

#include <stdlib.h>
#include <string.h>

/* The number of ':'-separated entries of s ("" has none). */
static size_t count(const char *s)
{
	size_t n = s && *s ? 1 : 0;

	for (; s && *s; s++)
		n += *s == ':';
	return n;
}

/* Entry i of s, malloc'd. */
static char *entry(const char *s, size_t i)
{
	const char *end;

	for (; i; i--)
		s = strchr(s, ':') + 1;
	end = strchr(s, ':');
	return end ? xstrndup(s, (size_t)(end - s)) : xstrdup(s);
}

json_t *software_modules_json(const char *loaded, const char *files)
{
	size_t n = count(loaded);
	bool have_files = count(files) == n;
	json_t *list = json_array();

	for (size_t i = 0; list && i < n; i++) {
		char *full = entry(loaded, i), *file = have_files ? entry(files, i) : NULL;
		char *slash = strrchr(full, '/');
		json_t *m;

		if (slash)
			*slash = '\0';
		m = json_pack("{s:s, s:s?, s:s?}", "name", full, "version", slash ? slash + 1 : NULL,
			      "file", file);
		if (!m || json_array_append_new(list, m)) {
			json_decref(list);
			list = NULL;
		}
		free(full);
		free(file);
	}
	return list;
}
