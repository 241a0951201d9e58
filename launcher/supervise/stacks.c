/* stacks.c - native stacks through libdwfl, Python stacks from faulthandler.
 * Shell (see stacks.h). */
#include "launcher/supervise/stacks.h"  // defines: stacks_capture_native
#include "launcher/supervise/autopsy.h" // defines: struct rank_stacks, stack_thread_push
#include "common/fileio.h"       // defines: fileio_open_regular
#include "common/sbuf.h"         // defines: xstrdup, xasprintf

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libstdc++'s demangler (abi::__cxa_demangle, extern "C"): the one the
 * C++ frames were mangled for, so it reads all of them, templates and
 * lambdas too; no header of its own reaches C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_FRAMES 128
#define MAX_THREADS 256

struct walk {
	Dwfl *dwfl;
	struct rank_stacks *r;
	pid_t pid;
};

/* _ZN4c10d4Work4waitENSt6chrono... becomes c10d::Work::wait(std::chrono::
 * duration<long, std::ratio<1l, 1000l> >); a C name, or one the demangler
 * refuses, stays as it is. */
static void demangle(char **func)
{
	int status = -1;
	char *d;

	if (!*func || strncmp(*func, "_Z", 2))
		return;
	d = __cxa_demangle(*func, NULL, NULL, &status);
	if (status || !d) {
		free(d);
		return;
	}
	free(*func);
	*func = d; /* malloc'd, as the frame's strings are */
}

static void add_frame(Dwfl *dwfl, Dwarf_Addr pc, struct stack_thread *t)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	const char *func = NULL, *file = NULL, *module = NULL;
	int line = 0;

	if (mod) {
		Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
		GElf_Off off;
		GElf_Sym sym;

		func = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
		module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	stack_thread_push(t, func, file, line > 0 ? (unsigned)line : 0, module);
	/* clock_nanosleep@GLIBC_2.2.5: the symbol version says nothing here. */
	if (t->f[t->n - 1].func)
		t->f[t->n - 1].func[strcspn(t->f[t->n - 1].func, "@")] = '\0';
	demangle(&t->f[t->n - 1].func);
}

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	struct stack_thread *t = &w->r->native[w->r->n_native - 1];
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A return address points after the call: look up the call itself. */
	add_frame(w->dwfl, activation ? pc : pc - 1, t);
	return t->n >= MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int thread_cb(Dwfl_Thread *thread, void *arg)
{
	struct walk *w = arg;
	struct rank_stacks *r = w->r;
	struct stack_thread *t;

	r->native = xrealloc(r->native, (r->n_native + 1) * sizeof(*r->native));
	t = &r->native[r->n_native++];
	memset(t, 0, sizeof(*t));
	t->tid = dwfl_thread_tid(thread);
	t->is_main = t->tid == w->pid;
	/* An unwind that stops early (no CFI past some frame) still gave
	 * the frames before it, which are the ones that matter. */
	dwfl_thread_getframes(thread, frame_cb, w);
	return r->n_native >= MAX_THREADS ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static char *exe_path(pid_t pid)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

int stacks_capture_native(pid_t pid, struct rank_stacks *r)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	struct walk w = { .r = r, .pid = pid };
	int rc = -1;

	free(r->exe);
	r->exe = exe_path(pid);
	w.dwfl = dwfl_begin(&cb);
	if (!w.dwfl)
		goto out;
	dwfl_report_begin(w.dwfl);
	if (dwfl_linux_proc_report(w.dwfl, pid) || dwfl_report_end(w.dwfl, NULL, NULL))
		goto out;
	if (dwfl_linux_proc_attach(w.dwfl, pid, false))
		goto out;
	rc = dwfl_getthreads(w.dwfl, thread_cb, &w) < 0 && !r->n_native ? -1 : 0;
out:
	if (rc && !r->error)
		r->error = xasprintf("cannot read the stacks of pid %d: %s", (int)pid,
				     dwfl_errmsg(-1) ? dwfl_errmsg(-1) : strerror(errno));
	if (w.dwfl)
		dwfl_end(w.dwfl);
	return rc;
}

int stacks_is_python(pid_t pid)
{
	char *exe = exe_path(pid);
	const char *b = exe ? strrchr(exe, '/') : NULL;
	int yes = b && !strncmp(b + 1, "python", 6);

	free(exe);
	return yes;
}

/* The text of line `line` of file, blanks around it stripped; NULL when
 * file is not a regular file we can read (a frame's file name is the
 * program's word: a FIFO there must not hang the autopsy). */
static char *source_line(const char *file, unsigned line)
{
	struct sbuf ignored = SBUF_INIT;
	int fd = fileio_open_regular(file, 0, &ignored);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	char buf[512];
	char *s = NULL;

	sbuf_release(&ignored);
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (unsigned i = 1; fgets(buf, sizeof(buf), f); i++) {
		size_t n = strlen(buf);

		if (n && buf[n - 1] != '\n' && !feof(f)) { /* a longer line: skip its rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (i == line) {
			char *p = buf;

			while (*p == ' ' || *p == '\t')
				p++;
			n = strcspn(p, "\r\n");
			while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
				n--;
			s = xstrndup(p, n);
			break;
		}
	}
	fclose(f);
	return s;
}

size_t stacks_add_python(struct rank_stacks *r, const char *text, size_t len, const char *root)
{
	r->n_python = autopsy_parse_faulthandler(text, len, &r->python);
	for (size_t i = 0; i < r->n_python; i++)
		for (size_t k = 0; k < r->python[i].n; k++) {
			struct stack_frame *f = &r->python[i].f[k];
			char *path;

			if (!f->file || f->file[0] == '<' || !f->line)
				continue;
			path = root && f->file[0] == '/' ? xasprintf("%s%s", root, f->file)
							 : xstrdup(f->file);
			f->text = source_line(path, f->line);
			free(path);
		}
	return r->n_python;
}
