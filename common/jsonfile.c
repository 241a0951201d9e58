/* jsonfile.c - a JSON document from a regular file (see jsonfile.h).
 * Shell. */
#include "common/jsonfile.h" // defines: jsonfile_load
#include "common/fileio.h"   // defines: fileio_read_flags
#include "common/sbuf.h"     // defines: struct sbuf

json_t *jsonfile_load(const char *path, size_t max, unsigned flags, struct sbuf *err)
{
	struct sbuf text = SBUF_INIT;
	json_error_t jerr;
	json_t *doc = NULL;

	if (fileio_read_flags(path, max, flags, &text, err))
		goto out;
	if (text.len > max) {
		sbuf_addf(err, "%s is larger than %zu bytes", path, max);
		goto out;
	}
	doc = json_loadb(text.buf, text.len, 0, &jerr);
	if (!doc)
		sbuf_addf(err, "%s: line %d column %d: %s", path, jerr.line, jerr.column, jerr.text);
out:
	sbuf_release(&text);
	return doc;
}
