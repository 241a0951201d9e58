/* container_podman.c - podman's PID file and podman rm for the supervisor:
 * see container_podman.h.  Shell. */
#include "launcher/container/container_podman.h" // defines: container_podman_pid, container_podman_remove

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv with its standard streams on /dev/null: its exit status,
 * or -1. */
static int run_quiet(char *const *argv)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t container_podman_pid(const char *pidfile)
{
	char out[32];
	ssize_t n;
	long pid;
	int fd = open(pidfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return 0;
	n = read(fd, out, sizeof(out) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	out[n] = '\0';
	pid = strtol(out, NULL, 10);
	return pid > 0 && pid < INT_MAX ? (pid_t)pid : 0;
}

int container_podman_remove(const char *name)
{
	char *const argv[] = { "podman", "rm", "--force", "--time", "0", "--ignore",
			       (char *)name, NULL };

	return run_quiet(argv) ? -1 : 0;
}
