/* run_diff.c - two runs' records compared section by section.  Shell:
 * reads the records; the comparisons are flatdoc's and code_diff's.
 * See run_diff.h for the document. */
#include "launcher/job/run_diff.h"  // defines: run_diff
#include "common/diag.h"            // defines: struct diag_list, diag_format
#include "common/exitcode.h"        // defines: HPT_EXIT_*
#include "common/fileio.h"          // defines: fileio_read, fileio_open_regular, fileio_read_fd
#include "common/flatdoc.h"         // defines: struct flatdoc, flatdoc_compare
#include "common/jsonfile.h"        // defines: jsonfile_load
#include "common/metrics_line.h"    // defines: metrics_line_load
#include "common/runfile.h"         // defines: RUNFILE_*
#include "common/sbuf.h"            // defines: struct sbuf, xasprintf
#include "common/software.h"        // defines: SOFTWARE_RECORD_MAX
#include "common/spec/spec.h"       // defines: SPEC_STAGE_CODE
#include "common/spec/ynode.h"      // defines: ynode_parse, ynode_free
#include "common/spec/ynode_flat.h" // defines: ynode_flat_add
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text
#include "launcher/job/code_diff.h" // defines: code_diff

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JSON_RECORD_MAX (1u << 20)
#define CODE_RECORD_MAX (64u << 20) /* 100,000 files of about 200 bytes each, and room */
#define METRICS_TAIL (1u << 20)     /* the summary is among a run's last records */

/* What one run recorded. */
struct run_record {
	const char *dir;
	struct flatdoc spec;
	json_t *code, *submit, *nodes, *software, *summary;
};

static void run_record_release(struct run_record *r)
{
	flatdoc_release(&r->spec);
	json_decref(r->code);
	json_decref(r->submit);
	json_decref(r->nodes);
	json_decref(r->software);
	json_decref(r->summary);
}

static int load_spec(struct run_record *r, struct sbuf *err)
{
	char *path = xasprintf("%s/%s", r->dir, RUNFILE_SPEC);
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf text = SBUF_INIT;
	struct ynode *root = NULL;
	int status = HPT_EXIT_OK;

	if (fileio_read(path, YNODE_MAX_BYTES, &text, err)) {
		status = HPT_EXIT_NO_INPUT;
	} else if (ynode_parse(path, text.buf, text.len, &root, &dl)) {
		if (dl.n)
			diag_format(&dl.v[0], err);
		else
			sbuf_addf(err, "%s: not a YAML document", path);
		status = HPT_EXIT_BAD_SPEC;
	} else {
		ynode_flat_add(root, &r->spec);
	}
	ynode_free(root);
	diag_list_release(&dl);
	sbuf_release(&text);
	free(path);
	return status;
}

/* DIR/file as JSON, NULL (and no error) when there is none; a file that
 * is there but unreadable or no JSON is an error. */
static int load_json(const char *dir, const char *file, size_t max, json_t **out,
		     struct sbuf *err)
{
	char *path = xasprintf("%s/%s", dir, file);
	struct stat st;
	int status = HPT_EXIT_OK;

	*out = NULL;
	if (!lstat(path, &st) || errno != ENOENT) {
		*out = jsonfile_load(path, max, 0, err);
		if (!*out)
			status = HPT_EXIT_NO_INPUT;
	}
	free(path);
	return status;
}

/* The last summary record of DIR/metrics.jsonl, read from its tail;
 * NULL when there is none (a run that never finished). */
static json_t *load_summary(const char *dir)
{
	char *path = xasprintf("%s/%s", dir, RUNFILE_METRICS);
	struct sbuf err = SBUF_INIT, tail = SBUF_INIT;
	int fd = fileio_open_regular(path, 0, &err);
	json_t *summary = NULL;
	struct stat st;
	size_t bad = 0, from = 0;

	if (fd >= 0 && !fstat(fd, &st) && st.st_size > (off_t)METRICS_TAIL) {
		from = 1; /* the first line read is cut */
		if (lseek(fd, st.st_size - (off_t)METRICS_TAIL, SEEK_SET) < 0)
			from = 2;
	}
	if (fd >= 0 && from < 2 && !fileio_read_fd(fd, path, METRICS_TAIL, &tail, &err)) {
		char *line = tail.buf, *end = tail.buf + tail.len;

		if (from) {
			char *cut = memchr(line, '\n', tail.len);

			line = cut ? cut + 1 : end;
		}
		while (line < end) {
			char *nl = memchr(line, '\n', (size_t)(end - line));
			size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
			json_t *o = n ? metrics_line_load(line, n, &bad) : NULL;
			const char *ev = json_string_value(json_object_get(o, "event"));

			if (ev && !strcmp(ev, "summary")) {
				json_decref(summary);
				summary = json_incref(o);
			}
			json_decref(o);
			line += n + 1;
		}
	}
	if (fd >= 0)
		close(fd);
	json_object_del(summary, "event");
	sbuf_release(&tail);
	sbuf_release(&err);
	free(path);
	return summary;
}

static int run_record_load(const char *dir, struct run_record *r, struct sbuf *err)
{
	int status;

	memset(r, 0, sizeof(*r));
	r->dir = dir;
	status = load_spec(r, err);
	if (!status)
		status = load_json(dir, RUNFILE_CODE, CODE_RECORD_MAX, &r->code, err);
	if (!status)
		status = load_json(dir, RUNFILE_SUBMIT, JSON_RECORD_MAX, &r->submit, err);
	if (!status)
		status = load_json(dir, RUNFILE_NODES, JSON_RECORD_MAX, &r->nodes, err);
	if (!status)
		status = load_json(dir, RUNFILE_SOFTWARE, SOFTWARE_RECORD_MAX, &r->software, err);
	if (!status)
		r->summary = load_summary(dir);
	return status;
}

/* {"key", "a", "b"}, a or b null when absent. */
static json_t *change(const char *key, const char *a, const char *b)
{
	return json_pack("{s:s, s:s?, s:s?}", "key", key, "a", a, "b", b);
}

static void add_if_differs(json_t **list, const char *key, const char *a, const char *b)
{
	if (!a != !b || (a && strcmp(a, b)))
		jsonb_append(list, change(key, a, b));
}

/* A spec value as plain text: a quoted scalar's string, else as is. */
static char *unquoted(const char *value)
{
	json_t *s = value && *value == '"' ? json_loads(value, JSON_DECODE_ANY, NULL) : NULL;
	char *text = json_is_string(s) ? xstrdup(json_string_value(s))
					: value ? xstrdup(value) : NULL;

	json_decref(s);
	return text;
}

static const char *const pinned[] = { ".manifest", ".bytes", ".is_file", ".packed" };

/* The keys the image, data and code sections show instead of spec. */
static int shown_elsewhere(const char *key)
{
	size_t n = strlen(key);

	if (!strcmp(key, "container.digest") || !strcmp(key, "code.digest") ||
	    !strcmp(key, "environment.venv_digest"))
		return 1;
	if (strncmp(key, "data.stage[", 11))
		return 0;
	for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
		size_t k = strlen(pinned[i]);

		if (n > k && !strcmp(key + n - k, pinned[i]))
			return 1;
	}
	return 0;
}

static char *stage_field(const struct flatdoc *spec, size_t i, const char *field);

/* Whether entry i of data.stage is the code snapshot's, which submit
 * adds with the data staged (launcher/job/code_stage.h): named "code"
 * in a run with code (spec_load refuses one's own entry of that name
 * there).  The code section shows what differs in it. */
static bool is_code_entry(const struct flatdoc *spec, size_t i)
{
	const char *digest = flatdoc_get(spec, "code.digest");
	char *name = stage_field(spec, i, "name");
	bool yes = digest && strcmp(digest, "null") && name && !strcmp(name, SPEC_STAGE_CODE);

	free(name);
	return yes;
}

/* The code entry's source is the snapshot's directory, named by the
 * code's digest: another digest, the code section says. */
static bool is_code_src(const struct run_record *a, const struct run_record *b, const char *key)
{
	size_t i;
	int end = 0;

	return sscanf(key, "data.stage[%zu].src%n", &i, &end) == 1 && !key[end] && end &&
	       is_code_entry(&a->spec, i) && is_code_entry(&b->spec, i);
}

static json_t *spec_section(const struct run_record *a, const struct run_record *b)
{
	struct flatdoc_change *v;
	json_t *list = json_array();
	size_t n;

	flatdoc_compare(&a->spec, &b->spec, shown_elsewhere, &v, &n);
	for (size_t i = 0; i < n; i++)
		if (!is_code_src(a, b, v[i].key))
			jsonb_append(&list, change(v[i].key, v[i].old_value, v[i].new_value));
	free(v);
	return list;
}

static json_t *image_section(const struct run_record *a, const struct run_record *b)
{
	char *da = unquoted(flatdoc_get(&a->spec, "container.digest"));
	char *db = unquoted(flatdoc_get(&b->spec, "container.digest"));
	json_t *o = json_null();

	/* "null" is how the spec says no image was pinned */
	if (da && !strcmp(da, "null"))
		free(da), da = NULL;
	if (db && !strcmp(db, "null"))
		free(db), db = NULL;
	if (!da != !db || (da && strcmp(da, db)))
		o = json_pack("{s:s?, s:s?}", "a", da, "b", db);
	free(da);
	free(db);
	return o;
}

/* Entry i's field of data.stage, unquoted; NULL past the last entry. */
static char *stage_field(const struct flatdoc *spec, size_t i, const char *field)
{
	char *key = xasprintf("data.stage[%zu].%s", i, field);
	char *v = unquoted(flatdoc_get(spec, key));

	free(key);
	return v;
}

/* What an entry's manifest shows: the manifest, or "(not pinned)" for
 * an entry validate and submit have not pinned (a run trained without
 * them). */
static char *manifest_text(const struct flatdoc *spec, size_t i)
{
	char *m = stage_field(spec, i, "manifest");

	return m ? m : xstrdup("(not pinned)");
}

/* The manifest text of the entry named name in spec (not the code
 * snapshot's), or NULL when spec has no such entry.  O(entries): a spec stages a few. */
static char *stage_manifest(const struct flatdoc *spec, const char *name)
{
	char *n, *manifest = NULL;

	for (size_t i = 0; !manifest && (n = stage_field(spec, i, "name")); i++) {
		if (!strcmp(n, name) && !is_code_entry(spec, i))
			manifest = manifest_text(spec, i);
		free(n);
	}
	return manifest;
}

/* Each entry of from that other lacks or whose manifest differs; an
 * entry both have is said once (reverse: b's pass, only b's own).  The
 * code snapshot's entry is the code section's. */
static void data_entries(const struct flatdoc *from, const struct flatdoc *other, bool reverse,
			 json_t **list)
{
	char *name;

	for (size_t i = 0; (name = stage_field(from, i, "name")); i++) {
		char *mine, *theirs;

		if (is_code_entry(from, i)) {
			free(name);
			continue;
		}
		mine = manifest_text(from, i);
		theirs = stage_manifest(other, name);

		if (!theirs || (!reverse && strcmp(mine, theirs)))
			jsonb_append(list, json_pack("{s:s, s:s?, s:s?}", "entry", name, "a",
						     reverse ? theirs : mine, "b", reverse ? mine : theirs));
		free(mine);
		free(theirs);
		free(name);
	}
}

static json_t *data_section(const struct run_record *a, const struct run_record *b)
{
	json_t *list = json_array();

	data_entries(&a->spec, &b->spec, false, &list);
	data_entries(&b->spec, &a->spec, true, &list);
	return list;
}

/* Each package whose version differs, a's names first, then b's own. */
static json_t *venv_section(const struct run_record *a, const struct run_record *b)
{
	json_t *pa = json_object_get(json_object_get(a->software, "venv"), "packages");
	json_t *pb = json_object_get(json_object_get(b->software, "venv"), "packages");
	json_t *list = json_array(), *v;
	const char *name;

	json_object_foreach(pa, name, v)
		add_if_differs(&list, name, json_string_value(v),
			       json_string_value(json_object_get(pb, name)));
	json_object_foreach(pb, name, v)
		if (!json_object_get(pa, name))
			add_if_differs(&list, name, NULL, json_string_value(v));
	return list;
}

/* The software record's value of key as text: a string as it is,
 * anything else (the kernels, a list) as compact JSON; NULL: absent. */
static char *software_text(const struct run_record *r, const char *key)
{
	json_t *v = json_object_get(r->software, key);

	if (!v || json_is_null(v))
		return NULL;
	return json_is_string(v) ? xstrdup(json_string_value(v))
				 : json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* A module's version, or its name when no version is known; "name" is
 * the module without its version (gcc of gcc/12.2). */
static const char *module_version(const json_t *modules, const char *name)
{
	size_t i;
	json_t *m;

	json_array_foreach(modules, i, m) {
		const char *n = json_string_value(json_object_get(m, "name"));
		const char *v = json_string_value(json_object_get(m, "version"));

		if (n && !strcmp(name, n))
			return v ? v : "(no version)";
	}
	return NULL;
}

static void module_changes(const json_t *from, const json_t *other, bool reverse, json_t **list)
{
	size_t i;
	json_t *m;

	json_array_foreach(from, i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *mine, *theirs;
		char *key;

		if (!name)
			continue;
		mine = module_version(from, name);
		theirs = module_version(other, name);
		if (reverse && theirs)
			continue;
		key = xasprintf("module %s", name);
		add_if_differs(list, key, reverse ? theirs : mine, reverse ? mine : theirs);
		free(key);
	}
}

/* Each of the software record's keys (NULL-ended) whose value differs. */
static void software_changes(const struct run_record *a, const struct run_record *b,
			     const char *const *keys, json_t **list)
{
	for (; *keys; keys++) {
		char *va = software_text(a, *keys), *vb = software_text(b, *keys);

		add_if_differs(list, *keys, va, vb);
		free(va);
		free(vb);
	}
}

/* hpctrain's version, the trainer's library, and the modules loaded at
 * job start: all from software.json. */
static json_t *versions_section(const struct run_record *a, const struct run_record *b)
{
	static const char *const keys[] = { "hpctrain", "onednn", NULL };
	json_t *list = json_array();

	software_changes(a, b, keys, &list);
	module_changes(json_object_get(a->software, "modules"),
		       json_object_get(b->software, "modules"), false, &list);
	module_changes(json_object_get(b->software, "modules"),
		       json_object_get(a->software, "modules"), true, &list);
	return list;
}

/* The instruction set and what the trainer's rank 0 said each layer
 * runs.  Results of the machine and of tuning by measurement, not
 * inputs: they never make two runs differ. */
static json_t *kernels_section(const struct run_record *a, const struct run_record *b)
{
	static const char *const keys[] = { "isa", "kernels", NULL };
	json_t *list = json_array();

	software_changes(a, b, keys, &list);
	return list;
}

/* A run's shape as text: nodes and world size as nodes.json says the
 * attempt got them, else as the spec asked (world size: the summary's
 * ranks, else nodes x ranks_per_node); the global batch is world size x
 * batch_per_rank. */
static void shape_of(const struct run_record *r, char *v[4])
{
	const char *nodes = flatdoc_get(&r->spec, "resources.nodes");
	const char *rpn = flatdoc_get(&r->spec, "resources.ranks_per_node");
	const char *bpr = flatdoc_get(&r->spec, "train.batch_per_rank");
	json_int_t got = json_integer_value(json_object_get(r->nodes, "nodes"));
	json_int_t world = json_integer_value(json_object_get(r->nodes, "world_size"));
	char *end = NULL;
	long long n = nodes ? strtoll(nodes, &end, 10) : 0;

	if (!world)
		world = json_integer_value(json_object_get(r->summary, "ranks"));
	if (!world && end && !*end && rpn)
		world = (json_int_t)(n * strtoll(rpn, NULL, 10));
	v[0] = got > 0 ? xasprintf("%lld", (long long)got) : unquoted(nodes);
	v[1] = unquoted(rpn);
	v[2] = world > 0 ? xasprintf("%lld", (long long)world) : NULL;
	v[3] = world > 0 && bpr ? xasprintf("%lld", (long long)world * strtoll(bpr, NULL, 10)) : NULL;
}

static json_t *shape_section(const struct run_record *a, const struct run_record *b)
{
	static const char *const keys[] = { "nodes", "ranks_per_node", "world_size", "global_batch" };
	char *va[4], *vb[4];
	json_t *list = json_array();

	shape_of(a, va);
	shape_of(b, vb);
	for (size_t i = 0; i < 4; i++) {
		add_if_differs(&list, keys[i], va[i], vb[i]);
		free(va[i]);
		free(vb[i]);
	}
	return list;
}

/* Every figure of both summaries, a's order first, side by side. */
static json_t *metrics_section(const struct run_record *a, const struct run_record *b)
{
	struct flatdoc fa = FLATDOC_INIT, fb = FLATDOC_INIT;
	json_t *list = json_array();

	if (a->summary)
		flatdoc_add_json(&fa, NULL, a->summary);
	if (b->summary)
		flatdoc_add_json(&fb, NULL, b->summary);
	for (size_t i = 0; i < fa.n; i++)
		jsonb_append(&list, change(fa.v[i].key, fa.v[i].value, flatdoc_get(&fb, fa.v[i].key)));
	for (size_t i = 0; i < fb.n; i++)
		if (!flatdoc_get(&fa, fb.v[i].key))
			jsonb_append(&list, change(fb.v[i].key, NULL, fb.v[i].value));
	flatdoc_release(&fa);
	flatdoc_release(&fb);
	return list;
}

static bool is_empty(const json_t *section)
{
	return json_is_null(section) || (json_is_array(section) && !json_array_size(section));
}

static json_t *document(const struct run_record *a, const struct run_record *b)
{
	static const char *const inputs[] = { "spec", "code", "venv", "image", "data", "versions",
					      "shape" };
	/* the run folders are the user's, and bytes: carried escaped */
	json_t *doc = json_pack("{s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
				"a", jsonb_text(a->dir), "b", jsonb_text(b->dir), "same", 1,
				"spec", spec_section(a, b), "code", code_diff(a->code, b->code),
				"venv", venv_section(a, b), "image", image_section(a, b),
				"data", data_section(a, b), "versions", versions_section(a, b),
				"shape", shape_section(a, b), "kernels", kernels_section(a, b),
				"metrics", metrics_section(a, b));

	for (size_t i = 0; doc && i < sizeof(inputs) / sizeof(inputs[0]); i++)
		if (!is_empty(json_object_get(doc, inputs[i])))
			jsonb_set(&doc, "same", json_false());
	return doc;
}

int run_diff(const char *dir_a, const char *dir_b, json_t **out, struct sbuf *err)
{
	struct run_record a, b;
	int status = run_record_load(dir_a, &a, err);

	memset(&b, 0, sizeof(b));
	if (!status)
		status = run_record_load(dir_b, &b, err);
	*out = status ? NULL : document(&a, &b);
	if (!status && !*out) {
		sbuf_addstr(err, "cannot build the comparison (out of memory, or a name that is "
				 "not UTF-8)");
		status = HPT_EXIT_INTERNAL;
	}
	run_record_release(&a);
	run_record_release(&b);
	return status;
}
