/* report_manifest.c - the charts report wrote in its output directory
 * (see report_manifest.h).  Shell: lstat, fileremove and one JSON file. */
#include "launcher/report/report_manifest.h" // defines: struct report_manifest, report_manifest_*
#include "common/fileio.h" // defines: fileio_read_flags, fileio_write_atomic, FILEIO_*
#include "common/fileremove.h" // defines: fileremove_one
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf
#include "common/jsonb.h" // defines: jsonb_append

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A manifest lists a handful of charts: anything larger is not one. */
#define MANIFEST_MAX_BYTES (1 << 20)

void report_manifest_release(struct report_manifest *m)
{
	if (!m)
		return;
	free(m->dir);
	json_decref(m->files);
	m->dir = NULL;
	m->files = NULL;
}

static json_int_t mtime_ns(const struct stat *st)
{
	return (json_int_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static bool is_plain_name(const char *name)
{
	return name && *name && *name != '.' && !strchr(name, '/');
}

/* Whether entry e still describes DIR/name: our regular file, same
 * inode, size and modification time. */
static bool unchanged(const struct report_manifest *m, json_t *e)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	char *path = xasprintf("%s/%s", m->dir, name);
	struct stat st;
	bool same = !lstat(path, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    (json_int_t)st.st_ino == json_integer_value(json_object_get(e, "ino")) &&
		    (json_int_t)st.st_size == json_integer_value(json_object_get(e, "size")) &&
		    mtime_ns(&st) == json_integer_value(json_object_get(e, "mtime_ns"));

	free(path);
	return same;
}

/* The index of name's entry, or -1. */
static long find(const struct report_manifest *m, const char *name)
{
	for (size_t i = 0; i < json_array_size(m->files); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(m->files, i), "name")),
			    name))
			return (long)i;
	return -1;
}

/* The valid entries of doc's "files", one per name. */
static void take_entries(struct report_manifest *m, json_t *doc)
{
	json_t *files = json_object_get(doc, "files"), *e;
	size_t i;

	json_array_foreach(files, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));

		if (is_plain_name(name) && json_is_integer(json_object_get(e, "ino")) &&
		    json_is_integer(json_object_get(e, "size")) &&
		    json_is_integer(json_object_get(e, "mtime_ns")) && find(m, name) < 0)
			json_array_append(m->files, e);
	}
}

void report_manifest_load(struct report_manifest *m, const char *dir)
{
	char *path = xasprintf("%s/" REPORT_MANIFEST_NAME, dir);
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	json_t *doc;

	m->dir = xstrdup(dir);
	m->files = json_array();
	/* Another user's manifest (a shared -o directory) says nothing
	 * about what this user's report wrote. */
	if (!fileio_read_flags(path, MANIFEST_MAX_BYTES, FILEIO_NOFOLLOW | FILEIO_OWNED, &text,
			       &err) &&
	    text.len <= MANIFEST_MAX_BYTES && (doc = json_loadb(text.buf, text.len, 0, NULL))) {
		take_entries(m, doc);
		json_decref(doc);
	}
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
}

int report_manifest_add(struct report_manifest *m, const char *name)
{
	char *path = xasprintf("%s/%s", m->dir, name);
	long i = find(m, name);
	struct stat st;
	int rc = -1;

	if (i >= 0)
		json_array_remove(m->files, (size_t)i);
	if (is_plain_name(name) && !lstat(path, &st) && S_ISREG(st.st_mode)) {
		/* one entry it cannot hold drops the list: the manifest is not saved */
		rc = jsonb_append(&m->files, json_pack("{s:s, s:I, s:I, s:I}", "name", name, "ino",
						       (json_int_t)st.st_ino, "size",
						       (json_int_t)st.st_size, "mtime_ns",
						       mtime_ns(&st)));
	}
	free(path);
	return rc;
}

bool report_manifest_remove(struct report_manifest *m, const char *name)
{
	long i = find(m, name);
	bool removed = false;

	if (i < 0)
		return false;
	if (unchanged(m, json_array_get(m->files, (size_t)i))) {
		char *path = xasprintf("%s/%s", m->dir, name);
		struct sbuf ignored = SBUF_INIT; /* another user's chart stays */

		removed = !fileremove_one(path, &ignored) && !ignored.len;
		sbuf_release(&ignored);
		free(path);
	}
	json_array_remove(m->files, (size_t)i);
	return removed;
}

int report_manifest_save(struct report_manifest *m, struct sbuf *err)
{
	json_t *kept = json_array(), *e, *doc;
	char *path = xasprintf("%s/" REPORT_MANIFEST_NAME, m->dir), *text;
	size_t i;
	int rc = -1;

	json_array_foreach(m->files, i, e)
		if (unchanged(m, e))
			json_array_append(kept, e);
	/* a list an entry could not join (report_manifest_add) is no list */
	doc = m->files ? json_pack("{s:s, s:o}", "written_by", "hpctrain report", "files", kept)
		       : (json_decref(kept), NULL);
	text = jsonb_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER, path, err);
	if (text)
		rc = fileio_write_atomic(path, text, strlen(text), 0600, 0, err);
	free(text);
	json_decref(doc);
	free(path);
	return rc;
}
