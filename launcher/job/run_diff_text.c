/* run_diff_text.c - run_diff's document as text.  Core (pure); see
 * run_diff_text.h. */
#include "launcher/job/run_diff_text.h" // defines: run_diff_text
#include "common/sbuf.h"                // defines: struct sbuf, sbuf_add_printable

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void put_printable(struct sbuf *out, const char *s)
{
	sbuf_add_printable(out, s ? s : "");
}

static void header(struct sbuf *out, const char *name)
{
	sbuf_addf(out, "== %s ==\n", name);
}

/* "- KEY: A" and "+ KEY: B", each only when that side has a value. */
static void put_change(struct sbuf *out, const char *key, const json_t *c)
{
	static const char *const sides[] = { "a", "b" };

	for (size_t i = 0; i < 2; i++) {
		const char *v = str(c, sides[i]);

		if (!v)
			continue;
		sbuf_addf(out, "%c ", i ? '+' : '-');
		put_printable(out, key);
		sbuf_addstr(out, ": ");
		put_printable(out, v);
		sbuf_addch(out, '\n');
	}
}

/* A section of {"key"|"entry", "a", "b"} changes. */
static void put_changes(struct sbuf *out, const char *name, const json_t *list,
			const char *key_field)
{
	size_t i;
	json_t *c;

	if (!json_array_size(list))
		return;
	header(out, name);
	json_array_foreach(list, i, c)
		put_change(out, str(c, key_field), c);
}

/* "sha256:... (git 0123456789ab on main, dirty)" for one side's tree. */
static void put_tree(struct sbuf *out, const json_t *side)
{
	const json_t *git = json_object_get(side, "git");
	const char *commit = str(git, "commit"), *branch = str(git, "branch");

	if (json_is_null(side) || !side) {
		sbuf_addstr(out, "(none)");
		return;
	}
	put_printable(out, str(side, "digest"));
	if (commit) {
		sbuf_addf(out, " (git %.12s", commit);
		if (branch) {
			sbuf_addstr(out, " on ");
			put_printable(out, branch);
		}
		sbuf_addstr(out, json_is_true(json_object_get(git, "dirty")) ? ", dirty)" : ")");
	}
}

static void put_paths(struct sbuf *out, const char *mark, const json_t *list)
{
	size_t i;
	json_t *p;

	json_array_foreach(list, i, p) {
		sbuf_addf(out, "%s ", mark);
		put_printable(out, json_string_value(p));
		sbuf_addch(out, '\n');
	}
}

/* A changed file's line: "M path (+2 -1)", or its note; then, unless
 * stat, its unified diff. */
static void put_changed(struct sbuf *out, const json_t *e, bool stat)
{
	const char *note = str(e, "note"), *diff = str(e, "diff");

	sbuf_addstr(out, "M ");
	put_printable(out, str(e, "path"));
	if (note) {
		sbuf_addstr(out, ": ");
		put_printable(out, note);
	} else if (json_is_integer(json_object_get(e, "added"))) {
		sbuf_addf(out, " (+%lld -%lld)",
			  (long long)json_integer_value(json_object_get(e, "added")),
			  (long long)json_integer_value(json_object_get(e, "removed")));
	}
	sbuf_addch(out, '\n');
	if (stat || !diff)
		return;
	/* line by line, so that each stays a diff line; tabs are kept */
	for (const char *line = diff; *line;) {
		size_t n = strcspn(line, "\n");
		char *one = xstrndup(line, n), *seg = one;

		for (char *tab; (tab = strchr(seg, '\t')); seg = tab + 1) {
			*tab = '\0';
			put_printable(out, seg);
			sbuf_addch(out, '\t');
		}
		put_printable(out, seg);
		sbuf_addch(out, '\n');
		free(one);
		line += n + (line[n] == '\n');
	}
}

static void put_code(struct sbuf *out, const json_t *code, bool stat)
{
	const json_t *changed = json_object_get(code, "changed");
	size_t i;
	json_t *e;

	if (json_is_null(code) || !code)
		return;
	header(out, "code");
	sbuf_addstr(out, "- ");
	put_tree(out, json_object_get(code, "a"));
	sbuf_addstr(out, "\n+ ");
	put_tree(out, json_object_get(code, "b"));
	sbuf_addch(out, '\n');
	if (str(code, "note")) {
		put_printable(out, str(code, "note"));
		sbuf_addch(out, '\n');
	}
	if (stat)
		sbuf_addf(out, "%zu added, %zu removed, %zu changed\n",
			  json_array_size(json_object_get(code, "added")),
			  json_array_size(json_object_get(code, "removed")), json_array_size(changed));
	put_paths(out, "A", json_object_get(code, "added"));
	put_paths(out, "D", json_object_get(code, "removed"));
	json_array_foreach(changed, i, e)
		put_changed(out, e, stat);
}

static void put_image(struct sbuf *out, const json_t *image)
{
	if (json_is_null(image) || !image)
		return;
	header(out, "image");
	put_change(out, "container.digest", image);
}

/* The summaries side by side: key, a, b in columns. */
static void put_metrics(struct sbuf *out, const json_t *list)
{
	size_t i, wk = 3, wa = 1;
	json_t *c;

	if (!json_array_size(list))
		return;
	json_array_foreach(list, i, c) {
		size_t k = strlen(str(c, "key") ? str(c, "key") : "");
		size_t a = strlen(str(c, "a") ? str(c, "a") : "-");

		wk = k > wk ? k : wk;
		wa = a > wa ? a : wa;
	}
	header(out, "metrics");
	json_array_foreach(list, i, c) {
		struct sbuf line = SBUF_INIT;

		sbuf_addf(&line, "  %-*s  %-*s  %s", (int)wk, str(c, "key") ? str(c, "key") : "",
			  (int)wa, str(c, "a") ? str(c, "a") : "-", str(c, "b") ? str(c, "b") : "-");
		put_printable(out, line.buf);
		sbuf_addch(out, '\n');
		sbuf_release(&line);
	}
}

void run_diff_text(const json_t *doc, unsigned flags, struct sbuf *out)
{
	if (json_is_true(json_object_get(doc, "same")))
		return;
	sbuf_addstr(out, "a: ");
	put_printable(out, str(doc, "a"));
	sbuf_addstr(out, "\nb: ");
	put_printable(out, str(doc, "b"));
	sbuf_addch(out, '\n');
	put_changes(out, "spec", json_object_get(doc, "spec"), "key");
	put_code(out, json_object_get(doc, "code"), flags & RUN_DIFF_TEXT_STAT);
	put_changes(out, "venv", json_object_get(doc, "venv"), "key");
	put_image(out, json_object_get(doc, "image"));
	put_changes(out, "data", json_object_get(doc, "data"), "entry");
	put_changes(out, "versions", json_object_get(doc, "versions"), "key");
	put_changes(out, "shape", json_object_get(doc, "shape"), "key");
	put_changes(out, "kernels", json_object_get(doc, "kernels"), "key");
	put_metrics(out, json_object_get(doc, "metrics"));
}
