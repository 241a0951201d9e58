/* code_limit.c - the code's size limits and the message that refuses a
 * tree over them (see code_limit.h).  Pure core. */
#include "launcher/job/code_limit.h" // defines: code_limit_check
#include "launcher/job/code_list.h"  // defines: struct code_list
#include "common/sbuf.h"             // defines: struct sbuf, xcalloc

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct group {
	const char *name; /* points into a path; len bytes of it, or "." */
	size_t len;
	uint64_t files, bytes;
};

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct code_entry *)a)->path, ((const struct code_entry *)b)->path);
}

static int by_files(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->files != y->files ? (x->files < y->files ? 1 : -1) : strcmp(x->name, y->name);
}

static int by_bytes(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->bytes != y->bytes ? (x->bytes < y->bytes ? 1 : -1) : strcmp(x->name, y->name);
}

static void add_size(struct sbuf *out, uint64_t b)
{
	if (b >= (1u << 30))
		sbuf_addf(out, "%.1f GiB", (double)b / (1u << 30));
	else if (b >= (1u << 20))
		sbuf_addf(out, "%.1f MiB", (double)b / (1u << 20));
	else
		sbuf_addf(out, "%llu bytes", (unsigned long long)b);
}

/* One group per first component (the list sorted by path puts each
 * group's entries together, and "./" for the files at the top):
 * O(n log n) for the sort, whatever the tree's shape. */
static size_t group_by_top(const struct code_list *l, struct group *g)
{
	size_t ng = 0;
	struct group top = { ".", 1, 0, 0 };

	for (size_t i = 0; i < l->n; i++) {
		const char *p = l->v[i].path, *slash = strchr(p, '/');
		struct group *at;

		if (!slash) {
			at = &top;
		} else if (ng && g[ng - 1].len == (size_t)(slash - p) &&
			   !strncmp(g[ng - 1].name, p, g[ng - 1].len)) {
			at = &g[ng - 1];
		} else {
			at = &g[ng++];
			*at = (struct group){ p, (size_t)(slash - p), 0, 0 };
		}
		at->files++;
		at->bytes += l->v[i].size;
	}
	if (top.files)
		g[ng++] = top;
	return ng;
}

int code_limit_check(struct code_list *l, const char *dir, int64_t max_bytes, int64_t max_files,
		     struct sbuf *err)
{
	uint64_t bytes = 0;
	bool files_over;
	struct group *g;
	size_t ng;

	for (size_t i = 0; i < l->n; i++)
		bytes += l->v[i].size;
	files_over = (uint64_t)l->n > (uint64_t)max_files;
	if (!files_over && bytes <= (uint64_t)max_bytes)
		return 0;
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_path);
	g = xcalloc(l->n + 1, sizeof(*g));
	ng = group_by_top(l, g);
	qsort(g, ng, sizeof(*g), files_over ? by_files : by_bytes);
	sbuf_addf(err, "the code in %s is %zu files and ", dir, l->n);
	add_size(err, bytes);
	if (files_over)
		sbuf_addf(err, ", more than code.max_files (%lld) allows", (long long)max_files);
	else
		sbuf_addf(err, ", more than code.max_bytes (%lld) allows", (long long)max_bytes);
	sbuf_addstr(err, "; the largest subdirectories: ");
	for (size_t i = 0; i < ng && i < 3; i++) {
		sbuf_addf(err, "%s%.*s/ (%llu files, ", i ? ", " : "", (int)g[i].len, g[i].name,
			  (unsigned long long)g[i].files);
		add_size(err, g[i].bytes);
		sbuf_addch(err, ')');
	}
	sbuf_addf(err, "; leave files out (code.exclude, .hpctrainignore, .gitignore), point "
		  "code.dir at a smaller directory, or raise %s",
		  files_over ? "code.max_files" : "code.max_bytes");
	free(g);
	return -1;
}
