/* jsonb.h - a JSON document built whole, or not at all.
 *
 * jansson's encoders fail quietly: json_pack and json_string return NULL
 * for a string that is not UTF-8 (or out of memory), and
 * json_object_set_new / json_array_append_new then return -1 and leave
 * the member out, so a record silently loses a field, an array entry or,
 * dumped, a whole document.  These helpers make each such failure drop
 * the document being built, so whoever writes it finds NULL and says
 * what it was writing (jsonb_dumps), and carry bytes from outside (a
 * program's arguments, an environment value, a path) escaped instead of
 * losing them.  tests/lint-encode.sh finds the unchecked calls these
 * replace. */
#ifndef HPT_JSONB_H
#define HPT_JSONB_H

#include <jansson.h>
#include <stddef.h>

struct sbuf;

/* Sets (*obj)[key] to v, taking v's reference.  When v is NULL, key is
 * not UTF-8 or the set fails, drops *obj and sets it NULL: one failed
 * member leaves no half document.  A NULL *obj stays NULL (v is
 * dropped), so a chain of calls needs one check at its end.  *obj must
 * be a reference the caller owns (not one json_object_get lent it).
 * Returns 0, or -1 when *obj is (now) NULL. */
int jsonb_set(json_t **obj, const char *key, json_t *v);
/* The same for an array: appends v to *arr, or drops *arr. */
int jsonb_append(json_t **arr, json_t *v);

/* s, or, when s is not UTF-8 (a file name, an argument or an
 * environment value is bytes), the text sbuf_add_printable makes of it
 * (bytes not UTF-8 as \xHH) in tmp: what a record can carry. */
const char *jsonb_utf8(const char *s, struct sbuf *tmp);
/* A JSON string of s as jsonb_utf8 carries it (null for a NULL s): NULL
 * only when out of memory, never for bytes that are not UTF-8. */
json_t *jsonb_text(const char *s);

/* doc's text (free() it), as json_dumps with flags.  NULL when doc is
 * NULL or cannot be encoded, with "cannot write WHAT: a string in it is
 * not UTF-8, or out of memory" in err: a record is whole or not written. */
char *jsonb_dumps(const json_t *doc, size_t flags, const char *what, struct sbuf *err);

/* The text of a document built of jsonb_text strings and numbers only,
 * where NULL can only mean out of memory: that exits with the internal
 * error status, as xmalloc does, instead of handing on a stand-in. */
char *jsonb_xdumps(const json_t *doc, size_t flags);

#endif
