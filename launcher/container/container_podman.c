/* container_podman.c - podman's PID file and podman rm for the supervisor:
 * see container_podman.h.  Shell. */
#include "launcher/container/container_podman.h" // defines: container_podman_pid, container_podman_remove
#include "launcher/container/container_proc.h"   // defines: container_proc_run

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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

	return container_proc_run(argv, -1, false) ? -1 : 0;
}
