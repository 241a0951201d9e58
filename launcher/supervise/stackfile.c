/* stackfile.c - ranks' stacks on disk: RUN/ranks/rank-N.stacks.json, and
 * RUN/autopsy.txt made from all of them.  Shell around launcher/autopsy. */
#include "launcher/supervise/stackfile.h" // defines: stackfile_write, stackfile_load_dir
#include "launcher/supervise/autopsy.h"   // defines: struct rank_stacks, autopsy_report
#include "common/fileio.h"         // defines: fileio_write_atomic
#include "common/jsonfile.h"       // defines: jsonfile_load
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/jsonb.h" // defines: jsonb_append, jsonb_text, jsonb_dumps

#include <glob.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* A frame's function, file and source line come from the program: bytes,
 * carried escaped (a source line not UTF-8 left a whole frame out, and a
 * file with no document at all). */
static json_t *str_or_null(const char *s)
{
	return jsonb_text(s);
}

static json_t *threads_json(const struct stack_thread *t, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *frames = json_array();

		for (size_t k = 0; k < t[i].n; k++) {
			const struct stack_frame *f = &t[i].f[k];

			jsonb_append(&frames, json_pack("{s:o, s:o, s:i, s:o, s:o}",
				"func", str_or_null(f->func), "file", str_or_null(f->file),
				"line", (int)f->line, "module", str_or_null(f->module),
				"text", str_or_null(f->text)));
		}
		jsonb_append(&a, json_pack("{s:I, s:b, s:o}", "tid", (json_int_t)t[i].tid, "main",
					   t[i].is_main, "frames", frames));
	}
	return a;
}

int stackfile_write(const char *path, const struct rank_stacks *r, struct sbuf *err)
{
	json_t *doc = json_pack("{s:i, s:b, s:o, s:I, s:o, s:o, s:o, s:o, s:o}", "rank", (int)r->rank,
				"complete", r->complete,
				"host", str_or_null(r->host), "pid", (json_int_t)r->pid,
				"exe", str_or_null(r->exe), "reason", str_or_null(r->reason),
				"error", str_or_null(r->error),
				"native", threads_json(r->native, r->n_native),
				"python", threads_json(r->python, r->n_python));
	char *text = jsonb_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER, path, err);
	int rc = text ? fileio_write_atomic(path, text, strlen(text), 0600, 0, err) : -1;

	free(text);
	json_decref(doc);
	return rc;
}

static char *get_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? xstrdup(s) : NULL;
}

static size_t threads_from(json_t *a, struct stack_thread **out)
{
	size_t n = json_array_size(a);
	struct stack_thread *t = n ? xcalloc(n, sizeof(*t)) : NULL;

	for (size_t i = 0; i < n; i++) {
		json_t *th = json_array_get(a, i), *frames = json_object_get(th, "frames");

		t[i].tid = (long)json_integer_value(json_object_get(th, "tid"));
		t[i].is_main = json_is_true(json_object_get(th, "main"));
		for (size_t k = 0; k < json_array_size(frames); k++) {
			json_t *f = json_array_get(frames, k);

			stack_thread_push(&t[i], json_string_value(json_object_get(f, "func")),
					  json_string_value(json_object_get(f, "file")),
					  (unsigned)json_integer_value(json_object_get(f, "line")),
					  json_string_value(json_object_get(f, "module")));
			t[i].f[t[i].n - 1].text = get_str(f, "text");
		}
	}
	*out = t;
	return n;
}

static int load_one(const char *path, struct rank_stacks *r, struct sbuf *err)
{
	struct sbuf why = SBUF_INIT;
	json_t *doc = jsonfile_load(path, STACKFILE_MAX_BYTES, 0, &why);

	if (!json_is_object(doc) || !json_is_integer(json_object_get(doc, "rank"))) {
		sbuf_addf(err, "%s: not a stacks file: %s", path, doc ? "no rank" : why.buf);
		json_decref(doc);
		sbuf_release(&why);
		return -1;
	}
	sbuf_release(&why);
	memset(r, 0, sizeof(*r));
	r->rank = (unsigned)json_integer_value(json_object_get(doc, "rank"));
	r->pid = (long)json_integer_value(json_object_get(doc, "pid"));
	r->host = get_str(doc, "host");
	r->exe = get_str(doc, "exe");
	r->reason = get_str(doc, "reason");
	r->error = get_str(doc, "error");
	r->complete = json_is_true(json_object_get(doc, "complete"));
	r->n_native = threads_from(json_object_get(doc, "native"), &r->native);
	r->n_python = threads_from(json_object_get(doc, "python"), &r->python);
	json_decref(doc);
	return 0;
}

int stackfile_load_dir(const char *dir, struct rank_stacks **out, size_t *n, struct sbuf *err)
{
	struct sbuf pat = SBUF_INIT;
	glob_t g;
	int rc = 0;

	*out = NULL;
	*n = 0;
	sbuf_addf(&pat, "%s/rank-*.stacks.json", dir);
	if (glob(pat.buf, 0, NULL, &g)) {
		sbuf_release(&pat);
		return 0;
	}
	*out = xcalloc(g.gl_pathc, sizeof(**out));
	for (size_t i = 0; i < g.gl_pathc && !rc; i++)
		if (!(rc = load_one(g.gl_pathv[i], &(*out)[*n], err)))
			(*n)++;
	globfree(&g);
	sbuf_release(&pat);
	return rc;
}

void stackfile_free(struct rank_stacks *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rank_stacks_release(&r[i]);
	free(r);
}

int stackfile_autopsy(const char *run, unsigned world, struct sbuf *text, struct sbuf *err)
{
	struct sbuf dir = SBUF_INIT, path = SBUF_INIT;
	struct rank_stacks *r;
	size_t n;
	int rc;

	sbuf_addf(&dir, "%s/ranks", run);
	rc = stackfile_load_dir(dir.buf, &r, &n, err);
	if (!rc && !n) {
		sbuf_addf(err, "no stacks in %s: no rank was found stalled or ignoring a signal",
			  dir.buf);
		rc = 1;
	}
	if (!rc) {
		autopsy_report(r, n, world, text);
		sbuf_addf(&path, "%s/autopsy.txt", run);
		rc = fileio_write_atomic(path.buf, text->buf, text->len, 0600, 0, err);
	}
	stackfile_free(r, n);
	sbuf_release(&dir);
	sbuf_release(&path);
	return rc;
}
