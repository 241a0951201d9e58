/* container_podman.c - podman's PID file and podman rm for the supervisor:
 * see container_podman.h.  Shell. */
#include "launcher/container/container_podman.h" // defines: container_podman_pid, container_podman_remove
#include "launcher/container/container_proc.h"   // defines: container_proc_run
#include "common/fileio.h"                       // defines: fileio_read_flags
#include "common/sbuf.h"                         // defines: struct sbuf

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t container_podman_pid(const char *pidfile)
{
	struct sbuf out = SBUF_INIT, ignored = SBUF_INIT;
	long pid = 0;

	/* a pid is a few digits: 31 bytes bound whatever sits there */
	if (!fileio_read_flags(pidfile, 31, FILEIO_NOFOLLOW, &out, &ignored) && out.len)
		pid = strtol(out.buf, NULL, 10);
	sbuf_release(&out);
	sbuf_release(&ignored);
	return pid > 0 && pid < INT_MAX ? (pid_t)pid : 0;
}

int container_podman_remove(const char *name)
{
	char *const argv[] = { "podman", "rm", "--force", "--time", "0", "--ignore",
			       (char *)name, NULL };

	return container_proc_run(argv, -1, false) ? -1 : 0;
}
