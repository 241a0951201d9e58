/* container_proc.h - a helper program run to its end, quietly: the
 * runtimes' own tools (squashfuse, fusermount, podman rm, mksquashfs).
 * Shell: fork, exec, wait. */
#ifndef HPT_CONTAINER_PROC_H
#define HPT_CONTAINER_PROC_H

#include <stdbool.h>

/* Runs argv (searched in PATH) with stdin and stdout on /dev/null and
 * stderr into errfd (-1: /dev/null as well), and waits for it: its exit
 * status, 128 + the signal that killed it, 127 when it could not be
 * started, or -1 when it could not be forked or waited for.  A program
 * that stays as a daemon (squashfuse) must hold none of the caller's
 * output open, or a launcher waiting for the end of a step's output
 * would wait for it.  With immune set, the signals a step's processes
 * may all be sent (HUP, INT, TERM, USR1, USR2: scancel, a preemption
 * signal to the whole step) are ignored in the program, which exec
 * keeps and libfuse respects (it installs its handlers only over
 * SIG_DFL). */
int container_proc_run(char *const *argv, int errfd, bool immune);

#endif
