/* code_git.c - git run as a program for a code tree (see code_git.h).
 * Shell: fork, exec, pipes, waitpid. */
#include "launcher/job/code_git.h" // defines: code_git_toplevel, code_git_ls_files, code_git_state
#include "common/sbuf.h"           // defines: struct sbuf, xasprintf

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GIT_OUT_MAX (256u << 20) /* ls-files of a tree at max_files of long names */

/* git -C top ARGS..., its stdout into out (at most GIT_OUT_MAX bytes),
 * stderr and stdin on /dev/null: its exit status, or -1 when it could
 * not be run.  The environment is made here, not inherited: a
 * GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE of the caller's would point
 * git at another repository, and a pager or a locale at other bytes. */
struct git_child {
	pid_t pid;
	int fd; /* git's stdout */
};

/* git -C top ARGS... started, stdin and stderr on /dev/null: 0, or -1
 * when it could not be.  The environment is made here, not inherited:
 * a GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE of the caller's would point
 * git at another repository, and a pager or a locale at other bytes. */
static int git_start(const char *top, const char *const *args, struct git_child *c)
{
	const char *path = getenv("PATH"), *home = getenv("HOME");
	char *env[5] = { NULL };
	const char *argv[16];
	size_t n = 0, e = 0;
	int fds[2], rc = -1, devnull;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = top;
	for (size_t i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	env[e++] = xasprintf("PATH=%s", path && *path ? path : "/usr/bin:/bin");
	if (home && *home)
		env[e++] = xasprintf("HOME=%s", home);
	env[e++] = xasprintf("LC_ALL=C");
	env[e++] = xasprintf("GIT_OPTIONAL_LOCKS=0"); /* status must not write the index */
	if (pipe2(fds, O_CLOEXEC))
		goto out;
	c->pid = fork();
	if (c->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		goto out;
	}
	if (c->pid == 0) {
		/* open-ok: a device, git's stdin and stderr */
		devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(fds[1], 1) < 0 ||
		    dup2(devnull, 2) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execvpe("git", (char *const *)argv, env);
		_exit(127);
	}
	close(fds[1]);
	c->fd = fds[0];
	rc = 0;
out:
	for (size_t i = 0; i < e; i++)
		free(env[i]);
	return rc;
}

/* A started git's stdout into out (reset first; at most GIT_OUT_MAX
 * bytes), then its exit status. */
static int git_finish(struct git_child *c, struct sbuf *out)
{
	char buf[65536];
	int status = -1;
	ssize_t r;

	sbuf_reset(out);
	while ((r = read(c->fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (out->len + (size_t)r > GIT_OUT_MAX)
			break; /* git then dies of SIGPIPE: a failure, said by the caller */
		sbuf_add(out, buf, (size_t)r);
	}
	close(c->fd);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* git -C top ARGS..., its stdout into out: its exit status, or -1 when
 * it could not be run. */
static int run_git(const char *top, const char *const *args, struct sbuf *out)
{
	struct git_child c;

	sbuf_reset(out);
	return git_start(top, args, &c) ? -1 : git_finish(&c, out);
}

static void chomp(struct sbuf *s)
{
	while (s->len && (s->buf[s->len - 1] == '\n' || s->buf[s->len - 1] == '\r'))
		s->buf[--s->len] = '\0';
}

static int toplevel_of(const char *dir, struct sbuf *top)
{
	static const char *const args[] = { "rev-parse", "--show-toplevel", NULL };

	if (run_git(dir, args, top) != 0 || !top->len)
		return -1;
	chomp(top);
	return top->buf[0] == '/' ? 0 : -1;
}

/* One command asks for the same directory's top three or four times
 * (the default code.dir, the program check, the scan, the git state),
 * each a git process (10-20 ms); the answer cannot change while one
 * command runs, so the last one is kept.  Process state in a shell, on
 * purpose: the commands are single-threaded. */
int code_git_toplevel(const char *dir, struct sbuf *top)
{
	static char *last_dir, *last_top;
	static int last_rc;

	sbuf_reset(top);
	if (!last_dir || strcmp(last_dir, dir)) {
		struct sbuf t = SBUF_INIT;

		last_rc = toplevel_of(dir, &t);
		free(last_dir);
		free(last_top);
		last_dir = xstrdup(dir);
		last_top = sbuf_detach(&t, NULL);
	}
	if (!last_rc)
		sbuf_addstr(top, last_top);
	return last_rc;
}

int code_git_ls_files(const char *top, struct sbuf *out, struct sbuf *err)
{
	static const char *const args[] = { "ls-files", "--cached", "--others",
					    "--exclude-standard", "-z", NULL };
	int st = run_git(top, args, out);

	if (st) {
		sbuf_addf(err, "git ls-files in %s failed (status %d)", top, st);
		return -1;
	}
	return 0;
}

/* The paths of `git status --porcelain=v1 -z`: "XY PATH\0", and a
 * rename's or copy's source as one more NUL-ended field, skipped. */
static json_t *changed_of(const struct sbuf *s)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i + 3 < s->len;) {
		const char *rec = s->buf + i;
		size_t n = strlen(rec);

		if (n > 3 && json_array_append_new(a, json_string(rec + 3))) {
			json_decref(a);
			return NULL;
		}
		i += n + 1;
		if (rec[0] == 'R' || rec[0] == 'C')
			i += strlen(s->buf + i) + 1;
	}
	return a;
}

static const char *const status_args[] = { "status", "--porcelain=v1", "-z",
					   "--untracked-files=all", NULL };

int code_git_state_start(const char *top, struct code_git_pending *p)
{
	struct git_child c;

	p->pid = -1;
	if (git_start(top, status_args, &c))
		return -1;
	p->pid = c.pid;
	p->fd = c.fd;
	return 0;
}

json_t *code_git_state_finish(const char *top, struct code_git_pending *p)
{
	static const char *const head[] = { "rev-parse", "--verify", "-q", "HEAD", NULL };
	static const char *const branch[] = { "symbolic-ref", "--short", "-q", "HEAD", NULL };
	struct git_child child = { p->pid, p->fd };
	struct sbuf c = SBUF_INIT, b = SBUF_INIT, s = SBUF_INIT;
	json_t *doc = NULL, *changed;

	if (p->pid < 0 || git_finish(&child, &s) != 0)
		goto out;
	changed = changed_of(&s);
	if (!changed)
		goto out;
	if (run_git(top, head, &c) != 0)
		sbuf_reset(&c);
	if (run_git(top, branch, &b) != 0)
		sbuf_reset(&b);
	chomp(&c);
	chomp(&b);
	doc = json_pack("{s:s?, s:s?, s:b, s:o}", "commit", c.len ? c.buf : NULL, "branch",
			b.len ? b.buf : NULL, "dirty", json_array_size(changed) > 0, "changed",
			changed);
out:
	p->pid = -1;
	sbuf_release(&c);
	sbuf_release(&b);
	sbuf_release(&s);
	return doc;
}

json_t *code_git_state(const char *top)
{
	struct code_git_pending p;

	code_git_state_start(top, &p);
	return code_git_state_finish(top, &p);
}
