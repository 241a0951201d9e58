/* oom.c - the OOM killer's count around a supervised program (oom.h). */
#include "launcher/supervise/oom.h" // defines: oom_cgroup_paths, oom_kill_count, oom_watch_*
#include "common/fileio.h"          // defines: fileio_read
#include "common/sbuf.h"            // defines: struct sbuf

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_path(char *dst, size_t len, const char *p, size_t n)
{
	if (n >= len)
		n = 0; /* a path this long is no cgroup we can read */
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/* Whether the comma-separated controllers list names memory. */
static bool names_memory(const char *list, size_t n)
{
	for (const char *p = list, *end = list + n; p < end;) {
		size_t k = strcspn(p, ",:");

		if (k == 6 && !strncmp(p, "memory", 6))
			return true;
		p += k + 1;
	}
	return false;
}

void oom_cgroup_paths(const char *text, char *v1, char *v2, size_t len)
{
	v1[0] = v2[0] = '\0';
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");
		const char *c = memchr(p, ':', n), *path = c ? memchr(c + 1, ':', n - (size_t)(c + 1 - p)) : NULL;

		if (path) {
			size_t plen = n - (size_t)(path + 1 - p);

			if (path == c + 1 && !strncmp(p, "0:", 2))
				copy_path(v2, len, path + 1, plen);
			else if (names_memory(c + 1, (size_t)(path - c - 1)))
				copy_path(v1, len, path + 1, plen);
		}
		p += n + (p[n] == '\n');
	}
}

long long oom_kill_count(const char *text)
{
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");

		if (!strncmp(p, "oom_kill ", 9))
			return strtoll(p + 9, NULL, 10);
		p += n + (p[n] == '\n');
	}
	return -1;
}

/* The count in file, or -1. */
static long long read_count(const char *file)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	long long n = -1;

	if (file[0] && !fileio_read(file, 1 << 16, &text, &err))
		n = oom_kill_count(text.buf);
	sbuf_release(&text);
	sbuf_release(&err);
	return n;
}

/* The counting file of PID's memory cgroup (0: this process) into file,
 * "" when none can be read: v1's memory hierarchy first, then the
 * unified one, mounted at /sys/fs/cgroup or, beside v1, under it. */
static void counting_file(pid_t pid, char *file, size_t len)
{
	static const char *const v2_roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char proc[64], v1[OOM_PATH_MAX], v2[OOM_PATH_MAX];
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;

	file[0] = '\0';
	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(proc, sizeof(proc), pid ? "/proc/%d/cgroup" : "/proc/self/cgroup", (int)pid);
	if (fileio_read(proc, 1 << 16, &text, &err))
		goto out;
	oom_cgroup_paths(text.buf, v1, v2, sizeof(v1));
	if (v1[0] && snprintf(file, len, "/sys/fs/cgroup/memory%s/memory.oom_control",
			      strcmp(v1, "/") ? v1 : "") < (int)len && read_count(file) >= 0)
		goto out;
	for (size_t i = 0; v2[0] && i < sizeof(v2_roots) / sizeof(*v2_roots); i++)
		if (snprintf(file, len, "%s%s/memory.events", v2_roots[i],
			     strcmp(v2, "/") ? v2 : "") < (int)len && read_count(file) >= 0)
			goto out;
	file[0] = '\0';
out:
	sbuf_release(&text);
	sbuf_release(&err);
}

static void watch_file(struct oom_watch *w, int i, pid_t pid)
{
	char file[OOM_PATH_MAX];

	counting_file(pid, file, sizeof(file));
	if (!file[0] || !strcmp(file, w->cg[i].file))
		return;
	/* encode-ok: a file name into a buffer of the same size */
	snprintf(w->cg[i].file, sizeof(w->cg[i].file), "%s", file);
	w->cg[i].base = read_count(file);
}

void oom_watch_start(struct oom_watch *w, pid_t program)
{
	memset(w, 0, sizeof(*w));
	watch_file(w, 0, 0);
	watch_file(w, 1, program);
}

void oom_watch_note(struct oom_watch *w, pid_t program)
{
	watch_file(w, 1, program);
}

long long oom_watch_kills(const struct oom_watch *w)
{
	char own[OOM_PATH_MAX];
	long long kills = 0, n;

	for (int i = 0; i < 2; i++) {
		if (i && !strcmp(w->cg[1].file, w->cg[0].file))
			break;
		n = read_count(w->cg[i].file);
		if (n > w->cg[i].base && w->cg[i].base >= 0)
			kills += n - w->cg[i].base;
	}
	/* moved since the start: the new cgroup's kills, all of them */
	counting_file(0, own, sizeof(own));
	if (own[0] && strcmp(own, w->cg[0].file) && strcmp(own, w->cg[1].file) &&
	    (n = read_count(own)) > 0)
		kills += n;
	return kills;
}
