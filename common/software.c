/* software.c - an attempt's software record, merged into: see
 * software.h.  Shell. */
#include "common/software.h" // defines: software_record_add
#include "common/fileio.h"   // defines: fileio_write_atomic, fileio_exists, FILEIO_*
#include "common/jsonfile.h" // defines: jsonfile_load
#include "common/runfile.h"  // defines: RUNFILE_SOFTWARE
#include "common/sbuf.h"     // defines: struct sbuf, xasprintf

#include <stdlib.h>
#include <string.h>

int software_record_add(const char *dir, json_t *fields, struct sbuf *err)
{
	char *path = xasprintf("%s/" RUNFILE_SOFTWARE, dir), *doc = NULL;
	json_t *rec = NULL;
	int rc = -1;

	if (!json_is_object(fields)) {
		sbuf_addf(err, "cannot write %s (out of memory)", path);
		goto out;
	}
	rec = fileio_exists(path) ? jsonfile_load(path, SOFTWARE_RECORD_MAX,
						  FILEIO_NOFOLLOW | FILEIO_OWNED, err)
				  : json_object();
	if (rec && !json_is_object(rec)) {
		sbuf_addf(err, "%s is not a JSON object", path);
		goto out;
	}
	if (!rec)
		goto out;
	/* sorted keys, ASCII: the same software gives the same bytes */
	if (!json_object_update(rec, fields))
		doc = json_dumps(rec, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (!doc)
		sbuf_addf(err, "cannot write %s (out of memory)", path);
	else
		rc = fileio_write_atomic(path, doc, strlen(doc), 0600, 0, err);
out:
	json_decref(fields);
	json_decref(rec);
	free(doc);
	free(path);
	return rc;
}
