/* code_diff.c - two runs' code snapshots compared file by file.  Shell:
 * reads the snapshots' files; see code_diff.h. */
#include "launcher/job/code_diff.h" // defines: code_diff
#include "common/fileio.h"          // defines: fileio_read_flags, FILEIO_NOFOLLOW
#include "common/linediff.h"        // defines: linediff_unified, linediff_is_text
#include "common/sbuf.h"            // defines: struct sbuf, xasprintf
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* What a side shows of its tree: digest, source dir and git state. */
static json_t *side(const json_t *code)
{
	json_t *git = json_object_get(code, "git");

	if (!code)
		return json_null();
	return json_pack("{s:s?, s:s?, s:O}", "digest", str(code, "digest"), "dir",
			 str(code, "dir"), "git", git ? git : json_null());
}

static bool is_safe_path(const char *p)
{
	size_t n;

	if (!p || !*p || *p == '/')
		return false;
	for (; *p; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (n == 2 && !strncmp(p, "..", 2))
			return false;
	}
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* One version of path from a snapshot into text; NULL, or why not. */
static const char *read_version(const json_t *code, const char *path, struct sbuf *text)
{
	struct sbuf err = SBUF_INIT;
	char *file = xasprintf("%s/%s", str(code, "snapshot"), path);
	int rc = fileio_read_flags(file, LINEDIFF_MAX_BYTES, FILEIO_NOFOLLOW, text, &err);

	free(file);
	sbuf_release(&err);
	return rc ? "cannot read it from the snapshot" : NULL;
}

/* "snapshot missing: DIR" for the first side whose stored tree is gone
 * (a snapshot removed by hand, or a run copied from elsewhere). */
static json_t *missing_snapshot(const json_t *a, const json_t *b)
{
	const json_t *gone = !is_dir(str(a, "snapshot")) ? a : !is_dir(str(b, "snapshot")) ? b : NULL;
	const char *dir = gone ? str(gone, "snapshot") : NULL;

	return gone ? json_sprintf("snapshot missing: %s", dir ? dir : "(none named)") : NULL;
}

/* The content of one changed file: counts and a unified diff, or a note.
 * Text that is not UTF-8 cannot go into JSON: it counts as binary. */
static void add_content(json_t **entry, const json_t *a, const json_t *b, const char *path)
{
	struct sbuf ta = SBUF_INIT, tb = SBUF_INIT, diff = SBUF_INIT;
	json_t *gone = missing_snapshot(a, b);
	const char *why = gone ? NULL : read_version(a, path, &ta);
	struct linediff_stat st;

	if (!gone && !why)
		why = read_version(b, path, &tb);
	if (gone) {
		jsonb_set(entry, "note", gone);
	} else if (why) {
		jsonb_set(entry, "note", json_string(why));
	} else if (!linediff_is_text(ta.buf, ta.len) || !linediff_is_text(tb.buf, tb.len) ||
		   !sbuf_is_utf8(ta.buf) || !sbuf_is_utf8(tb.buf)) {
		jsonb_set(entry, "note", json_string("binary files differ"));
	} else {
		char *la = xasprintf("a/%s", path), *lb = xasprintf("b/%s", path);

		linediff_unified(ta.buf, ta.len, tb.buf, tb.len, la, lb, &diff, &st);
		jsonb_set(entry, "removed", json_integer((json_int_t)st.removed));
		jsonb_set(entry, "added", json_integer((json_int_t)st.added));
		jsonb_set(entry, "diff", json_stringn(diff.buf, diff.len));
		free(la);
		free(lb);
	}
	sbuf_release(&ta);
	sbuf_release(&tb);
	sbuf_release(&diff);
}

/* What differs between two records of the same path, or NULL. */
static const char *what_changed(const json_t *fa, const json_t *fb)
{
	const char *la = str(fa, "link"), *lb = str(fb, "link");

	if (!la != !lb)
		return "type";
	if (la)
		return strcmp(la, lb) ? "link" : NULL;
	if (!json_equal(json_object_get(fa, "sha256"), json_object_get(fb, "sha256")))
		return "content";
	if (!json_equal(json_object_get(fa, "mode"), json_object_get(fb, "mode")))
		return "mode";
	return NULL;
}

static json_t *changed_entry(const json_t *a, const json_t *b, const json_t *fa,
			     const json_t *fb, const char *what)
{
	const char *path = str(fa, "path");
	json_t *e = json_pack("{s:s, s:s}", "path", path, "what", what);

	if (!is_safe_path(path))
		jsonb_set(&e, "note", json_string("unsafe path, not read"));
	else if (!strcmp(what, "content"))
		add_content(&e, a, b, path);
	else if (!strcmp(what, "mode"))
		jsonb_set(&e, "note",
				    json_sprintf("mode %llo -> %llo",
						 (unsigned long long)json_integer_value(json_object_get(fa, "mode")),
						 (unsigned long long)json_integer_value(json_object_get(fb, "mode"))));
	else if (!strcmp(what, "link"))
		jsonb_set(&e, "note", json_sprintf("link %s -> %s", str(fa, "link"), str(fb, "link")));
	return e;
}

/* Walks the two sorted file lists as a merge: O(files).  The three lists
 * replace section's empty ones (in their places); one that could not be
 * built drops *section. */
static void compare_files(const json_t *a, const json_t *b, json_t **section)
{
	const json_t *va = json_object_get(a, "files"), *vb = json_object_get(b, "files");
	json_t *added = json_array(), *removed = json_array(), *changed = json_array();
	size_t i = 0, k = 0, na = json_array_size(va), nb = json_array_size(vb);

	while (i < na || k < nb) {
		const json_t *fa = json_array_get(va, i), *fb = json_array_get(vb, k);
		const char *pa = str(fa, "path"), *pb = str(fb, "path"), *what;
		int c = !pa ? 1 : !pb ? -1 : strcmp(pa, pb);

		if (!pa && !pb) {
			i++, k++; /* a record without a path names nothing */
		} else if (c < 0) {
			jsonb_append(&removed, json_string(pa));
			i++;
		} else if (c > 0) {
			jsonb_append(&added, json_string(pb));
			k++;
		} else {
			what = what_changed(fa, fb);
			if (what)
				jsonb_append(&changed, changed_entry(a, b, fa, fb, what));
			i++, k++;
		}
	}
	jsonb_set(section, "added", added);
	jsonb_set(section, "removed", removed);
	jsonb_set(section, "changed", changed);
}

json_t *code_diff(const json_t *a, const json_t *b)
{
	json_t *section;

	if (!a && !b)
		return json_null();
	if (a && b && json_equal(json_object_get(a, "digest"), json_object_get(b, "digest")) &&
	    json_equal(json_object_get(a, "files"), json_object_get(b, "files")))
		return json_null();
	section = json_pack("{s:o, s:o, s:[], s:[], s:[]}", "a", side(a), "b", side(b), "added",
			    "removed", "changed");
	if (!a || !b) {
		jsonb_set(&section, "note",
			  json_sprintf("no code recorded for the %s run", a ? "second" : "first"));
		return section;
	}
	compare_files(a, b, &section);
	return section; /* NULL: a part could not be encoded, none is left out */
}
