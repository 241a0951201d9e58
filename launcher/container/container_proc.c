/* container_proc.c - a helper program run to its end, quietly: see
 * container_proc.h.  Shell. */
#include "launcher/container/container_proc.h" // defines: container_proc_run

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int container_proc_run(char *const *argv, int errfd, bool immune)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2 };
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_RDWR); /* open-ok: a device */

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(errfd >= 0 ? errfd : null, 2);
		}
		for (size_t i = 0; immune && i < sizeof(sigs) / sizeof(*sigs); i++)
			signal(sigs[i], SIG_IGN);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
