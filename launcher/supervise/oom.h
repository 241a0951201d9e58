/* oom.h - whether the kernel's OOM killer ended a program, told from a
 * kill by a person, Slurm or another process: the oom_kill count of the
 * memory cgroups around it, before and after.
 *
 * Slurm's task/cgroup puts a step's tasks on a node, supervisor and
 * program, in one memory cgroup; a program may also have one of its
 * own.  So two are watched: the supervisor's own (read again at the
 * end, as something may have moved it) and the program's, as last seen
 * while it ran.  cgroup v2 counts in memory.events, v1 in
 * memory.oom_control; both name it oom_kill.
 *
 * Core (pure): oom_cgroup_paths, oom_kill_count.  Shell: oom_watch_*.
 */
#ifndef HPT_OOM_H
#define HPT_OOM_H

#include <stddef.h>
#include <sys/types.h>

#define OOM_PATH_MAX 4096

/* From a /proc/PID/cgroup text: the memory controller's path under a
 * cgroup v1 hierarchy ("4:memory:/slurm/uid_0/job_7" gives
 * "/slurm/uid_0/job_7") into v1, and the unified hierarchy's ("0::/x")
 * into v2; "" for one the text does not have.  Pure. */
void oom_cgroup_paths(const char *proc_cgroup, char *v1, char *v2, size_t len);

/* The oom_kill count in a memory.events or memory.oom_control text, or
 * -1 when it has none.  Pure. */
long long oom_kill_count(const char *text);

struct oom_watch {
	struct {
		char file[OOM_PATH_MAX]; /* its memory.events or memory.oom_control; "" unknown */
		long long base;          /* oom_kill when first read */
	} cg[2];                         /* [0] the supervisor's own, [1] the program's */
};

/* Reads the supervisor's own cgroup and program's, and their counts. */
void oom_watch_start(struct oom_watch *w, pid_t program);

/* The program's cgroup again, while it runs: a new one is watched from
 * its count now. */
void oom_watch_note(struct oom_watch *w, pid_t program);

/* OOM kills counted since the start in the watched cgroups (and in the
 * supervisor's own, when it is another now), or 0. */
long long oom_watch_kills(const struct oom_watch *w);

#endif
