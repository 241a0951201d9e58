/* jsonb.c - a JSON document built whole, or not at all (jsonb.h). */
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text, jsonb_dumps
#include "common/exitcode.h" // defines: HPT_EXIT_INTERNAL
#include "common/sbuf.h"  // defines: struct sbuf, sbuf_is_utf8, sbuf_add_printable

#include <stdio.h>
#include <stdlib.h>

int jsonb_set(json_t **obj, const char *key, json_t *v)
{
	/* json_object_set_new drops v itself when it fails */
	if (*obj && v && !json_object_set_new(*obj, key, v))
		return 0;
	if (!*obj || !v)
		json_decref(v);
	json_decref(*obj);
	*obj = NULL;
	return -1;
}

int jsonb_append(json_t **arr, json_t *v)
{
	if (*arr && v && !json_array_append_new(*arr, v))
		return 0;
	if (!*arr || !v)
		json_decref(v);
	json_decref(*arr);
	*arr = NULL;
	return -1;
}

const char *jsonb_utf8(const char *s, struct sbuf *tmp)
{
	if (sbuf_is_utf8(s))
		return s;
	sbuf_reset(tmp);
	sbuf_add_printable(tmp, s);
	return tmp->buf;
}

json_t *jsonb_text(const char *s)
{
	struct sbuf tmp = SBUF_INIT;
	json_t *v = s ? json_string(jsonb_utf8(s, &tmp)) : json_null();

	sbuf_release(&tmp);
	return v;
}

char *jsonb_xdumps(const json_t *doc, size_t flags)
{
	char *text = doc ? json_dumps(doc, flags) : NULL;

	if (!text) {
		fputs("hpctrain: out of memory encoding JSON\n", stderr);
		exit(HPT_EXIT_INTERNAL);
	}
	return text;
}

char *jsonb_dumps(const json_t *doc, size_t flags, const char *what, struct sbuf *err)
{
	char *text = doc ? json_dumps(doc, flags) : NULL;

	if (!text)
		sbuf_addf(err, "cannot write %s: a string in it is not UTF-8, or out of memory",
			  what);
	return text;
}
