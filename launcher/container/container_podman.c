/* container_podman.c - podman inspect and podman rm for the supervisor:
 * see container_podman.h.  Shell. */
#include "launcher/container/container_podman.h" // defines: container_podman_pid, container_podman_remove

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv with stdin and stderr on /dev/null, its stdout (the first
 * len-1 bytes) into out when out is not NULL; its exit status, or -1. */
static int run_capture(char *const *argv, char *out, size_t len)
{
	int p[2], st;
	size_t n = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		dup2(p[1], 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		char buf[256];
		ssize_t r = read(p[0], buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r && out && n + 1 < len; i++)
			out[n++] = buf[i];
	}
	close(p[0]);
	if (out && len)
		out[n] = '\0';
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t container_podman_pid(const char *name)
{
	char *const argv[] = { "podman", "inspect", "--format", "{{.State.Pid}}", (char *)name, NULL };
	char out[64];
	long pid;

	if (run_capture(argv, out, sizeof(out)))
		return 0;
	pid = strtol(out, NULL, 10);
	return pid > 0 ? (pid_t)pid : 0;
}

int container_podman_remove(const char *name)
{
	char *const argv[] = { "podman", "rm", "--force", "--time", "0", "--ignore",
			       (char *)name, NULL };

	return run_capture(argv, NULL, 0) ? -1 : 0;
}
