/* sweep_record.c - read and write a sweep's record (see sweep_record.h).
 * Shell. */
#include "launcher/runs/sweep_record.h" // defines: sweep_record_load, sweep_record_save
#include "common/fileio.h"         // defines: fileio_write_atomic
#include "common/jsonb.h"          // defines: jsonb_dumps
#include "common/jsonfile.h"       // defines: jsonfile_load
#include "common/sbuf.h"           // defines: struct sbuf, xasprintf
#include "launcher/runs/rundir.h"       // defines: RUNDIR_FILE_MODE, RUNDIR_HASH_LEN

#include <stdlib.h>
#include <string.h>

int sweep_record_is_name(const char *name)
{
	size_t n = strlen(name);

	return n == 6 + RUNDIR_HASH_LEN + 5 && !strncmp(name, "sweep-", 6) &&
	       strspn(name + 6, "0123456789abcdef") == RUNDIR_HASH_LEN &&
	       !strcmp(name + 6 + RUNDIR_HASH_LEN, ".json");
}

int sweep_record_load(const char *path, json_t **doc, struct sbuf *err)
{
	struct sbuf why = SBUF_INIT;
	json_t *points;

	*doc = jsonfile_load(path, 64 << 20, 0, &why);
	if (!*doc) {
		sbuf_addf(err, "cannot read the sweep record %s: %s", path, why.buf);
		sbuf_release(&why);
		return -1;
	}
	points = json_object_get(*doc, "points");
	for (size_t i = 0; json_is_array(points) && i < json_array_size(points); i++) {
		const char *run = json_string_value(json_object_get(json_array_get(points, i), "run"));

		if (!run || !*run || strstr(run, "..") || run[0] == '/')
			points = NULL;
	}
	if (!json_is_array(points) || !json_array_size(points)) {
		sbuf_addf(err, "%s is not a sweep record (no points, or a point without its run)",
			  path);
		json_decref(*doc);
		*doc = NULL;
		return -1;
	}
	return 0;
}

int sweep_record_save(const char *path, const json_t *doc, struct sbuf *err)
{
	/* 15 digits: 0.05 stays 0.05, not 0.050000000000000003 */
	char *text = jsonb_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15),
				 path, err);
	struct sbuf buf = SBUF_INIT;
	int rc;

	if (!text)
		return -1;
	sbuf_addf(&buf, "%s\n", text);
	free(text);
	rc = fileio_write_atomic(path, buf.buf, buf.len, RUNDIR_FILE_MODE, 0, err);
	sbuf_release(&buf);
	return rc;
}

char *sweep_record_run(const char *path, const json_t *point)
{
	const char *slash = strrchr(path, '/');
	const char *run = json_string_value(json_object_get(point, "run"));

	if (!slash)
		return xstrdup(run);
	return xasprintf("%.*s/%s", (int)(slash - path), path, run);
}
