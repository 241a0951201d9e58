/* doctor_container.c - doctor's container cell on this node (see
 * doctor_container.h): the runtime and the image found as launch finds
 * them, then a probe started through the rank's own command line and
 * killed at the deadline.  Shell: PATH, /dev, the environment, fork and
 * exec; the grading is doctor_container_grade.c's. */
#include "launcher/doctor/doctor_container.h"   // defines: doctor_container_check, doctor_container_grade
#include "common/sbuf.h"                        // defines: struct sbuf, xasprintf, xrealloc
#include "common/spec/spec.h"                   // defines: struct job, struct job_argv
#include "launcher/container/container_argv.h"  // defines: container_argv_release
#include "launcher/container/container_wrap.h"  // defines: container_wrap, struct container_run
#include "common/monoclock.h"  // defines: monoclock_s

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE_OUTPUT_MAX (64 * 1024)

extern char **environ;

static void want_add(struct job_argv *w, char *s)
{
	w->v = xrealloc(w->v, (w->n + 2) * sizeof(*w->v));
	w->v[w->n++] = s;
	w->v[w->n] = NULL;
}

static bool exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* The node's devices a rank would use, as the host has them: the
 * granted GPUs (device minors "0,1") with the driver's control nodes,
 * and every InfiniBand verbs/CM node.  Without a grant, every
 * /dev/nvidiaN: the job would see them all. */
static void want_devices(const char *granted, struct job_argv *w)
{
	static const char *const ctl[] = { "/dev/nvidiactl", "/dev/nvidia-uvm" };
	struct dirent **ents = NULL;
	int k;

	if (granted && *granted) {
		for (const char *p = granted; *p;) {
			size_t n = strcspn(p, ",");
			char *dev = xasprintf("/dev/nvidia%.*s", (int)n, p);

			if (n && strspn(p, "0123456789") == n && exists(dev))
				want_add(w, dev);
			else
				free(dev);
			p += n + (p[n] == ',');
		}
	} else if ((k = scandir("/dev", &ents, NULL, alphasort)) > 0) {
		for (int i = 0; i < k; i++) {
			const char *d = ents[i]->d_name;

			if (!strncmp(d, "nvidia", 6) && d[6] && strspn(d + 6, "0123456789") ==
			    strlen(d + 6))
				want_add(w, xasprintf("/dev/%s", d));
			free(ents[i]);
		}
		free(ents);
	}
	for (size_t i = 0; i < sizeof(ctl) / sizeof(*ctl); i++)
		if (w->n && exists(ctl[i]))
			want_add(w, xstrdup(ctl[i]));
	ents = NULL;
	if ((k = scandir("/dev/infiniband", &ents, NULL, alphasort)) > 0) {
		for (int i = 0; i < k; i++) {
			if (ents[i]->d_name[0] != '.')
				want_add(w, xasprintf("/dev/infiniband/%s", ents[i]->d_name));
			free(ents[i]);
		}
		free(ents);
	}
}

/* PMIx as a client inside finds it: the server's variables (PMIX_RANK,
 * PMIX_NAMESPACE, PMIX_SERVER_URI*) and its rendezvous directories
 * (PMIX_SERVER_TMPDIR, PMIX_SYSTEM_TMPDIR: sockets and the shared-memory
 * store).  Nothing when this task was not started by a PMIx server. */
static void want_pmix(struct job_argv *w)
{
	static const char *const dirs[] = { "PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR" };

	for (char **e = environ; *e; e++) {
		size_t n = strcspn(*e, "=");

		if (!strncmp(*e, "PMIX_", 5) && strspn(*e, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n &&
		    (!strncmp(*e, "PMIX_SERVER_URI", 15) || !strncmp(*e, "PMIX_RANK=", 10) ||
		     !strncmp(*e, "PMIX_NAMESPACE=", 15)))
			want_add(w, xasprintf("env:%.*s", (int)n, *e));
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		const char *d = getenv(dirs[i]);
		struct stat st;
		bool dup = false;

		for (size_t j = 0; d && j < w->n; j++)
			dup |= !strcmp(w->v[j], d);
		if (d && *d == '/' && !dup && !stat(d, &st) && S_ISDIR(st.st_mode))
			want_add(w, xstrdup(d));
	}
}

/* Runs argv in a process group of its own, its stdout and stderr into
 * out (at most PROBE_OUTPUT_MAX bytes), until it exits or timeout_s
 * passes: then the group is killed.  The exit status (128 + signal
 * when killed by one), -1 when it could not start; *timed_out. */
static int run_probe(char *const *argv, double timeout_s, struct sbuf *out, bool *timed_out)
{
	double deadline = monoclock_s() + timeout_s;
	int fds[2], wst = 0;
	pid_t pid;
	char buf[4096];

	*timed_out = false;
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		int nul = open("/dev/null", O_RDONLY); /* open-ok: a device */
		if (nul >= 0)
			dup2(nul, 0);
		execvp(argv[0], argv);
		dprintf(2, "cannot start %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(fds[1]);
	for (;;) {
		double left = deadline - monoclock_s();
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		int r;
		ssize_t n;

		if (left <= 0) {
			*timed_out = true;
			break;
		}
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* every writer closed: the probe is ending */
		if (out->len < PROBE_OUTPUT_MAX)
			sbuf_add(out, buf, (size_t)n);
	}
	close(fds[0]);
	/* the pipe closed, yet a child of the probe may hold the group:
	 * wait out the rest of the deadline for the probe itself */
	while (!*timed_out) {
		pid_t w = waitpid(pid, &wst, WNOHANG);

		if (w == pid)
			break;
		if (monoclock_s() >= deadline)
			*timed_out = true;
		else
			nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	if (*timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	kill(-pid, SIGKILL); /* nothing of the probe outlives it */
	return WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
}

/* podman runs the program under conmon, not as a child of `podman run`:
 * killing podman at the deadline leaves the container running.  So the
 * probe's podman writes its container id to a fresh file (podman refuses
 * an existing one), which podman_remove hands to `podman rm -f`.  dir
 * is left "" when no directory could be made: then nothing is added. */
static void podman_cidfile(struct job_argv *cmd, char *dir, size_t n)
{
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	size_t at = 0;
	char *opt;

	dir[0] = '\0';
	if (strcmp(cmd->v[0], "podman"))
		return;
	while (at < cmd->n && strcmp(cmd->v[at], "run"))
		at++;
	if (at == cmd->n || (size_t)snprintf(dir, n, "%s/hpctrain-doctor.XXXXXX", tmp) >= n ||
	    !mkdtemp(dir)) {
		dir[0] = '\0';
		return;
	}
	opt = xasprintf("--cidfile=%s/cid", dir);
	cmd->v = xrealloc(cmd->v, (cmd->n + 2) * sizeof(*cmd->v));
	memmove(&cmd->v[at + 2], &cmd->v[at + 1], (cmd->n - at) * sizeof(*cmd->v));
	cmd->v[at + 1] = opt;
	cmd->n++;
}

/* `podman [--runtime R] rm -f --cidfile DIR/cid` for a probe killed at
 * the deadline; its failure is part of the cell's reason. */
static void podman_remove(const struct job_argv *cmd, const char *dir, struct doctor_cell *out)
{
	struct job_argv rm = { NULL, 0 };
	struct sbuf text = SBUF_INIT;
	bool timed_out;
	int rc;

	for (size_t i = 0; i < cmd->n && strcmp(cmd->v[i], "run"); i++)
		want_add(&rm, xstrdup(cmd->v[i]));
	want_add(&rm, xstrdup("rm"));
	want_add(&rm, xstrdup("-f"));
	want_add(&rm, xasprintf("--cidfile=%s/cid", dir));
	rc = run_probe(rm.v, 30, &text, &timed_out);
	if (rc)
		doctor_note(out, DOCTOR_FAIL, "podman rm of the probe's container failed%s: %.*s",
			    timed_out ? " (timed out)" : "", (int)strcspn(text.buf, "\n"), text.buf);
	container_argv_release(&rm);
	sbuf_release(&text);
}

void doctor_container_check(const struct job *job, const char *run, const char *granted,
			    double timeout_s, struct doctor_cell *out)
{
	struct job_argv want = { NULL, 0 }, probe = { NULL, 0 }, *cmd;
	struct container_run wrapped = CONTAINER_RUN_INIT;
	struct sbuf err = SBUF_INIT, text = SBUF_INIT;
	struct container_wrap_in in = { .job = job, .run = run, .local_size = 1 };
	struct doctor_container_run r = { .image = job ? job->container.image : NULL,
					  .timeout_s = timeout_s };
	const char *slash;
	struct passwd *pw;
	char cid_dir[64] = "";

	if (!job || !job->container.image) {
		doctor_note(out, DOCTOR_SKIP, "no container.image in the spec");
		return;
	}
	want_devices(granted, &want);
	want_pmix(&want);
	want_add(&probe, xstrdup("/bin/sh"));
	want_add(&probe, xstrdup("-c"));
	want_add(&probe, xstrdup(doctor_container_script));
	want_add(&probe, xstrdup("sh"));
	for (size_t i = 0; i < want.n; i++)
		want_add(&probe, xstrdup(want.v[i]));
	in.argv = probe.v;
	/* ch-run refuses to start without USER, as launch knows (cmd_launch.c) */
	if (!getenv("USER") && (pw = getpwuid(getuid())))
		setenv("USER", pw->pw_name, 1);
	cmd = &wrapped.argv;
	if (container_wrap(&in, &wrapped, &err)) {
		doctor_note(out, DOCTOR_FAIL, "%s", err.buf);
		goto out;
	}
	slash = strrchr(cmd->v[0], '/');
	r.runtime = slash ? slash + 1 : cmd->v[0];
	podman_cidfile(cmd, cid_dir, sizeof(cid_dir));
	r.status = run_probe(cmd->v, timeout_s, &text, &r.timed_out);
	if (r.status < 0 && !r.timed_out) {
		doctor_note(out, DOCTOR_FAIL, "cannot start %s: %s", cmd->v[0], strerror(errno));
		goto out;
	}
	if (r.timed_out && cid_dir[0])
		podman_remove(cmd, cid_dir, out);
	r.output = text.buf;
	r.want = (const char *const *)want.v;
	r.n_want = want.n;
	doctor_container_grade(&r, out);
out:
	container_argv_release(&want);
	container_argv_release(&probe);
	container_wrap_release(&wrapped);
	sbuf_release(&err);
	sbuf_release(&text);
	if (cid_dir[0]) {
		char *f = xasprintf("%s/cid", cid_dir);

		unlink(f);
		rmdir(cid_dir);
		free(f);
	}
}
