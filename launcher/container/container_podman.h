/* container_podman.h - the program podman runs, found and ended by the
 * name hpctrain gave its container.
 *
 * Shell (runs podman).  podman run starts the program under conmon, not
 * as the caller's child: its CPU time, stacks and lifetime are not the
 * supervisor's, and a container outlives a KILL of podman run.  The
 * supervisor reads the program's host PID here, from the file podman
 * run --pidfile wrote (a read, not a podman inspect of ~40 ms), and
 * removes the container here (podman rm -f) when it kills the program
 * and once at its end: podman run --rm leaves the removal to conmon,
 * which may not have finished when the client exits.
 */
#ifndef HPT_CONTAINER_PODMAN_H
#define HPT_CONTAINER_PODMAN_H

#include <sys/types.h>

/* The host PID of the program podman started, from its --pidfile, or 0
 * while the container does not run yet. */
pid_t container_podman_pid(const char *pidfile);

/* Removes container name, KILLing what runs in it at once (podman rm
 * --force --time 0 --ignore); quiet when there is none.  0 or -1. */
int container_podman_remove(const char *name);

#endif
