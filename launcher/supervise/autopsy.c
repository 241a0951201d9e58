/* autopsy.c - merge ranks' stacks into groups and name the odd ones out.
 * Pure core (see autopsy.h): no I/O. */
#include "launcher/supervise/autopsy.h" // defines: struct rank_stacks, autopsy_report
#include "common/sbuf.h"         // defines: struct sbuf, xstrdup

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void stack_thread_push(struct stack_thread *t, const char *func, const char *file, unsigned line,
		       const char *module)
{
	struct stack_frame *f;

	t->f = xrealloc(t->f, (t->n + 1) * sizeof(*t->f));
	f = &t->f[t->n++];
	f->func = dup_or_null(func);
	f->file = dup_or_null(file);
	f->line = line;
	f->module = dup_or_null(module);
	f->text = NULL;
}

void stack_thread_release(struct stack_thread *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->f[i].func);
		free(t->f[i].file);
		free(t->f[i].module);
		free(t->f[i].text);
	}
	free(t->f);
	t->f = NULL;
	t->n = 0;
}

static void threads_release(struct stack_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		stack_thread_release(&t[i]);
	free(t);
}

void rank_stacks_release(struct rank_stacks *r)
{
	free(r->host);
	free(r->exe);
	free(r->reason);
	free(r->error);
	threads_release(r->native, r->n_native);
	threads_release(r->python, r->n_python);
	memset(r, 0, sizeof(*r));
}

/* faulthandler ------------------------------------------------------- */

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

static int starts(const char *p, const char *e, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(e - p) >= n && !memcmp(p, prefix, n);
}

/* `  File "x.py", line 9 in f`: 0 on success. */
static int parse_frame(const char *p, const char *e, struct stack_thread *t)
{
	const char *q, *name, *name_end;
	char *file, *func;
	unsigned long line = 0;

	if (!starts(p, e, "  File \""))
		return -1;
	name = p + 8;
	for (q = name; q + 8 <= e && memcmp(q, "\", line ", 8); q++)
		;
	if (q + 8 > e)
		return -1;
	name_end = q;
	for (q += 8; q < e && *q >= '0' && *q <= '9'; q++)
		line = line * 10 + (unsigned long)(*q - '0');
	if (starts(q, e, ","))  /* a traceback's "line 9, in f" */
		q++;
	if (!starts(q, e, " in "))
		return -1;
	file = xstrndup(name, (size_t)(name_end - name));
	func = xstrndup(q + 4, (size_t)(e - q - 4));
	stack_thread_push(t, func, file, (unsigned)line, NULL);
	free(file);
	free(func);
	return 0;
}

/* The start of the last dump: its "Fatal Python error" line, else text. */
static const char *last_dump(const char *text, const char *end)
{
	const char *start = text;

	for (const char *p = text; p < end; p = line_end(p, end) + 1)
		if (starts(p, end, "Fatal Python error"))
			start = p;
	return start;
}

/* The last "Traceback (most recent call last):" in text as one thread,
 * innermost first: what a rank printed when it died of an exception (a
 * peer's abort closing gloo's connections) before its dump was asked
 * for.  Its frames are the ones it waited in.  Returns 0 or 1. */
static size_t parse_traceback(const char *text, const char *end, struct stack_thread **out)
{
	const char *start = NULL;
	struct stack_thread t = { .is_main = true };

	for (const char *p = text; p < end; p = line_end(p, end) + 1)
		if (starts(p, line_end(p, end), "Traceback (most recent call last):"))
			start = p;
	if (!start)
		return 0;
	for (const char *p = line_end(start, end) + 1; p < end; p = line_end(p, end) + 1) {
		const char *e = line_end(p, end);

		if (starts(p, e, "    ")) /* the source line, or 3.11's ^^^^ under it */
			continue;
		if (parse_frame(p, e, &t))
			break;
	}
	if (!t.n)
		return 0;
	for (size_t i = 0; i < t.n / 2; i++) { /* outermost first: turn it over */
		struct stack_frame f = t.f[i];

		t.f[i] = t.f[t.n - 1 - i];
		t.f[t.n - 1 - i] = f;
	}
	*out = xmalloc(sizeof(t));
	**out = t;
	return 1;
}

size_t autopsy_parse_faulthandler(const char *text, size_t len, struct stack_thread **out)
{
	const char *end = text + len, *p;
	struct stack_thread *v = NULL, *cur = NULL;
	size_t n = 0, current = (size_t)-1, main = (size_t)-1;

	for (p = last_dump(text, end); p < end; p = line_end(p, end) + 1) {
		const char *e = line_end(p, end);
		int is_current = starts(p, e, "Current thread ");

		if (is_current || starts(p, e, "Thread 0x")) {
			v = xrealloc(v, (n + 1) * sizeof(*v));
			cur = &v[n];
			memset(cur, 0, sizeof(*cur));
			if (is_current)
				current = n;
			n++;
		} else if (cur && parse_frame(p, e, cur)) {
			cur = NULL; /* a blank line or "Extension modules:" ends a thread */
		}
		if (e == end)
			break;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].n && v[i].f[v[i].n - 1].func && !strcmp(v[i].f[v[i].n - 1].func, "<module>"))
			main = i;
	if (main == (size_t)-1)
		main = current;
	if (main != (size_t)-1)
		v[main].is_main = true;
	*out = v;
	if (!n && !memmem(text, len, "Fatal Python error", 18))
		return parse_traceback(text, end, out);
	return n;
}

/* grouping ----------------------------------------------------------- */

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* The program's own code: its executable, and for Python programs the
 * interpreter's library and compiled extension modules. */
static int is_program(const char *module, const char *exe)
{
	const char *b = base(module);

	if (!module)
		return 0;
	if (exe && !strcmp(module, exe))
		return 1;
	return !strncmp(b, "libpython", 9) || strstr(b, ".cpython-") || strstr(b, ".abi3.so");
}

/* A Python file of the program, not of the interpreter or a package. */
static int is_user_py(const char *file)
{
	return file && file[0] != '<' && !strstr(file, "/site-packages/") &&
	       !strstr(file, "/dist-packages/") && !strstr(file, "/lib/python3");
}

static const struct stack_thread *main_thread(const struct stack_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].is_main)
			return &t[i];
	return n ? &t[0] : NULL;
}

/* Where one rank stands, and the key its group is found by. */
struct place {
	const char *in;            /* F, or NULL */
	const struct stack_frame *from;
	size_t outer;              /* native frames [outer, n) are compared */
	size_t py_outer;           /* Python frames [py_outer, n) are compared */
	const struct stack_thread *nat, *py;
};

static void find_place(const struct rank_stacks *r, struct place *pl)
{
	const struct stack_thread *t = main_thread(r->native, r->n_native);
	size_t i = 0;

	memset(pl, 0, sizeof(*pl));
	pl->nat = t;
	pl->py = main_thread(r->python, r->n_python);
	if (t && t->n) {
		while (i < t->n && !is_program(t->f[i].module, r->exe))
			i++;
		if (i == t->n) { /* no frame of the program: compare all of it */
			pl->in = t->f[0].func;
			pl->outer = 0;
		} else {
			size_t k = i ? i - 1 : 0;

			/* A library without symbols between the program and the
			 * function it waits in (libtorch_python's bindings around
			 * c10d::Work::wait): name the innermost named one. */
			while (k > 0 && !t->f[k].func)
				k--;
			pl->in = t->f[k].func;
			pl->outer = i ? i - 1 : 0;
			pl->from = &t->f[i];
		}
	}
	if (pl->py && pl->py->n) {
		size_t u = 0;

		while (u < pl->py->n && !is_user_py(pl->py->f[u].file))
			u++;
		if (u == pl->py->n)
			u = 0;
		pl->from = &pl->py->f[u];
		pl->py_outer = u; /* F is in the key by name */
		if (u)
			pl->in = pl->py->f[u - 1].func;
		else if (!pl->in)
			pl->in = pl->py->f[0].func;
	}
}

static void place_key(const struct place *pl, struct sbuf *key)
{
	sbuf_addf(key, "%s\n", pl->in ? pl->in : "?");
	if (pl->py)
		for (size_t i = pl->py_outer; i < pl->py->n; i++)
			sbuf_addf(key, "py %s:%u %s\n", pl->py->f[i].file ? pl->py->f[i].file : "?",
				  pl->py->f[i].line, pl->py->f[i].func ? pl->py->f[i].func : "?");
	if (pl->nat && !(pl->py && pl->py->n))
		for (size_t i = pl->outer; i < pl->nat->n; i++)
			sbuf_addf(key, "%s:%u %s\n", pl->nat->f[i].file ? pl->nat->f[i].file : "",
				  pl->nat->f[i].line, pl->nat->f[i].func ? pl->nat->f[i].func : "?");
}

struct group {
	char *key;
	unsigned *ranks;
	size_t n;
	size_t first; /* index into the rank_stacks array of its first rank */
	struct place pl;
};

static int by_rank(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static int by_size(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return x->ranks[0] < y->ranks[0] ? -1 : x->ranks[0] > y->ranks[0];
}

static size_t make_groups(const struct rank_stacks *r, size_t n, struct group **out)
{
	struct group *g = NULL;
	size_t ng = 0;

	for (size_t i = 0; i < n; i++) {
		struct sbuf key = SBUF_INIT;
		struct place pl;
		size_t j;

		find_place(&r[i], &pl);
		place_key(&pl, &key);
		for (j = 0; j < ng && strcmp(g[j].key, key.buf); j++)
			;
		if (j == ng) {
			g = xrealloc(g, (ng + 1) * sizeof(*g));
			g[ng] = (struct group){ .key = sbuf_detach(&key, NULL), .first = i, .pl = pl };
			ng++;
		} else {
			sbuf_release(&key);
		}
		g[j].ranks = xrealloc(g[j].ranks, (g[j].n + 1) * sizeof(unsigned));
		g[j].ranks[g[j].n++] = r[i].rank;
	}
	for (size_t j = 0; j < ng; j++)
		qsort(g[j].ranks, g[j].n, sizeof(unsigned), by_rank);
	qsort(g, ng, sizeof(*g), by_size);
	*out = g;
	return ng;
}

/* report ------------------------------------------------------------- */

void autopsy_format_ranks(const unsigned *ranks, size_t n, struct sbuf *out)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
			j++;
		sbuf_addf(out, "%s%u", i ? "," : "", ranks[i]);
		if (j - i >= 2)
			sbuf_addf(out, "-%u", ranks[j]);
		else
			for (size_t k = i + 1; k <= j; k++)
				sbuf_addf(out, ",%u", ranks[k]);
		i = j + 1;
	}
}

/* A C++ function's name without its parameter list, which the full
 * stacks keep: "c10d::Work::wait(std::chrono::duration<long, ...>) const"
 * says c10d::Work::wait.  The list is the parenthesis matching the last
 * ')', so "operator()(int)" keeps its own "()". */
static void add_func_name(const char *f, struct sbuf *out)
{
	const char *close = strrchr(f, ')');
	size_t depth = 0;

	for (const char *p = close; p && p > f; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && !--depth) {
			sbuf_add(out, f, (size_t)(p - f));
			return;
		}
	}
	sbuf_addstr(out, f);
}

static void say_place(const struct group *g, struct sbuf *out)
{
	const struct stack_frame *f = g->pl.from;

	sbuf_addf(out, "%s ", g->n == 1 ? "rank" : "ranks");
	autopsy_format_ranks(g->ranks, g->n, out);
	sbuf_addstr(out, " in ");
	if (g->pl.in)
		add_func_name(g->pl.in, out);
	else
		sbuf_addstr(out, "an unknown function");
	if (f && f->file && f->line)
		sbuf_addf(out, " from %s:%u", base(f->file), f->line);
	else if (f && f->func)
		sbuf_addf(out, " from %s", f->func);
	if (f && f->text)
		sbuf_addf(out, " (%s)", f->text);
}

static void say_frames(const struct stack_thread *t, struct sbuf *out)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct stack_frame *f = &t->f[i];

		sbuf_addf(out, "    #%-2zu %s", i, f->func ? f->func : "??");
		if (f->file)
			sbuf_addf(out, " at %s:%u", f->file, f->line);
		if (f->module)
			sbuf_addf(out, " [%s]", base(f->module));
		if (f->text)
			sbuf_addf(out, ": %s", f->text);
		sbuf_addch(out, '\n');
	}
}

static void say_group(const struct group *g, const struct rank_stacks *r, struct sbuf *out)
{
	sbuf_addf(out, "\n== %s ", g->n == 1 ? "rank" : "ranks");
	autopsy_format_ranks(g->ranks, g->n, out);
	sbuf_addf(out, " (shown: rank %u, pid %ld on %s; %s)\n", r->rank, r->pid,
		  r->host ? r->host : "?", r->reason ? r->reason : "no reason given");
	if (r->error)
		sbuf_addf(out, "  native stacks: %s\n", r->error);
	for (size_t i = 0; i < r->n_python; i++) {
		sbuf_addf(out, "  python thread %zu%s:\n", i, r->python[i].is_main ? " (main)" : "");
		say_frames(&r->python[i], out);
	}
	for (size_t i = 0; i < r->n_native; i++) {
		sbuf_addf(out, "  thread %ld%s:\n", r->native[i].tid,
			  r->native[i].is_main ? " (main)" : "");
		say_frames(&r->native[i], out);
	}
}

static void say_missing(const struct rank_stacks *r, size_t n, unsigned world, struct sbuf *out)
{
	unsigned *missing = NULL;
	size_t nm = 0;

	for (unsigned k = 0; k < world; k++) {
		size_t i = 0;

		while (i < n && r[i].rank != k)
			i++;
		if (i == n) {
			missing = xrealloc(missing, (nm + 1) * sizeof(*missing));
			missing[nm++] = k;
		}
	}
	if (nm) {
		sbuf_addf(out, "no stacks from %s ", nm == 1 ? "rank" : "ranks");
		autopsy_format_ranks(missing, nm, out);
		sbuf_addch(out, '\n');
	}
	free(missing);
}

void autopsy_report(const struct rank_stacks *r, size_t n, unsigned world, struct sbuf *out)
{
	struct group *g;
	size_t ng = make_groups(r, n, &g);

	sbuf_addf(out, "hpctrain autopsy: %zu %s, %zu %s of stacks\n", n, n == 1 ? "rank" : "ranks",
		  ng, ng == 1 ? "group" : "groups");
	for (size_t j = 0; j < ng; j++) {
		say_place(&g[j], out);
		sbuf_addch(out, '\n');
	}
	/* Outliers exist only where one group is strictly the largest. */
	if (ng > 1 && g[0].n > g[1].n) {
		unsigned *odd = NULL;
		size_t no = 0;

		for (size_t j = 1; j < ng; j++)
			for (size_t k = 0; k < g[j].n; k++) {
				odd = xrealloc(odd, (no + 1) * sizeof(*odd));
				odd[no++] = g[j].ranks[k];
			}
		qsort(odd, no, sizeof(*odd), by_rank);
		sbuf_addf(out, "outlier%s: %s ", no == 1 ? "" : "s", no == 1 ? "rank" : "ranks");
		autopsy_format_ranks(odd, no, out);
		sbuf_addch(out, '\n');
		free(odd);
	}
	say_missing(r, n, world, out);
	for (size_t j = 0; j < ng; j++)
		say_group(&g[j], &r[g[j].first], out);
	for (size_t j = 0; j < ng; j++) {
		free(g[j].key);
		free(g[j].ranks);
	}
	free(g);
}
