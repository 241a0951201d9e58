/* contract_inside.c - the launch contract read from the program itself,
 * once a container runtime has started it: its CPUs and NUMA memory
 * (/proc/PID/status), its environment (/proc/PID/environ), and whether
 * the InfiniBand devices NCCL is told to use are there inside
 * (/proc/PID/root/dev/infiniband).  A runtime may reset the binding
 * launch applied (podman's --cpuset-cpus, crun#1315); the program is
 * re-pinned to the plan where the kernel lets us (sched_setaffinity on
 * each of its threads: within its cgroup's cpuset), else warned of.
 * Shell; the comparison is contract_check's (contract.c). */
#include "launcher/rank/contract.h" // defines: contract_inside_check, contract_check, contract_got_read_ifnames
#include "topology/plan.h"   // defines: struct slice
#include "common/fileio.h" // defines: fileio_read
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "NAME:\tLIST" of a /proc/PID/status text into b; true when found. */
static bool status_list(const char *status, const char *name, struct bitmap *b)
{
	char *key = xasprintf("\n%s:", name), *line;
	const char *p = strstr(status, key);
	bool ok = false;

	if (p) {
		line = xstrdup(p + strlen(key));
		line[strcspn(line, "\n")] = '\0';
		ok = !bitmap_parse_list(b, line + strspn(line, " \t"));
		free(line);
	}
	free(key);
	return ok;
}

/* VAR's value in a NUL-separated environ text, or NULL. */
static const char *environ_get(const struct sbuf *env, const char *var)
{
	size_t n = strlen(var);

	for (size_t i = 0; i < env->len; i += strlen(env->buf + i) + 1)
		if (!strncmp(env->buf + i, var, n) && env->buf[i + n] == '=')
			return env->buf + i + n + 1;
	return NULL;
}

/* sched_setaffinity on every thread of pid: 0, or an errno. */
static int repin(pid_t pid, const struct bitmap *cpus)
{
	char path[64];
	cpu_set_t set;
	struct dirent *e;
	DIR *d;
	int bit, rc = 0;

	CPU_ZERO(&set);
	bitmap_foreach(bit, cpus)
		if (bit < CPU_SETSIZE)
			CPU_SET(bit, &set);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    sched_setaffinity((pid_t)atoi(e->d_name), sizeof(set), &set) && !rc)
			rc = errno;
	closedir(d);
	return rc;
}

static int read_got(pid_t pid, struct contract_got *got, struct sbuf *env)
{
	struct sbuf status = SBUF_INIT, err = SBUF_INIT;
	char path[64];
	int rc = -1;

	memset(got, 0, sizeof(*got));
	bitmap_init(&got->cpus);
	bitmap_init(&got->mems);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!fileio_read(path, 1 << 16, &status, &err)) {
		got->have_cpus = status_list(status.buf, "Cpus_allowed_list", &got->cpus);
		got->have_mems = status_list(status.buf, "Mems_allowed_list", &got->mems);
		rc = 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	sbuf_reset(&err);
	if (!fileio_read(path, 1 << 22, env, &err)) {
		got->cuda_visible_devices = environ_get(env, "CUDA_VISIBLE_DEVICES");
		got->nccl_ib_hca = environ_get(env, "NCCL_IB_HCA");
		got->nccl_socket_ifname = environ_get(env, "NCCL_SOCKET_IFNAME");
		got->ucx_net_devices = environ_get(env, "UCX_NET_DEVICES");
	}
	contract_got_read_ifnames(got);
	sbuf_release(&status);
	sbuf_release(&err);
	return rc;
}

json_t *contract_inside_check(const struct node_topo *t, const struct contract_plan *plan,
			      pid_t pid)
{
	struct contract_got got;
	struct sbuf env = SBUF_INIT, a = SBUF_INIT, b = SBUF_INIT;
	char ib[64];
	struct stat st;
	json_t *c, *w;
	bool repinned = false;

	if (read_got(pid, &got, &env)) {
		c = NULL;
		goto out;
	}
	if (plan->cpus_bound && got.have_cpus && !bitmap_equal(&got.cpus, &plan->slice->cpuset)) {
		int e = repin(pid, &plan->slice->cpuset);
		char *msg;

		bitmap_format_list(&got.cpus, &a);
		bitmap_format_list(&plan->slice->cpuset, &b);
		c = contract_check(t, plan, &got);
		w = json_object_get(c, "warnings");
		msg = e ? xasprintf("the runtime set the program's CPUs to %s and it cannot be "
				    "re-pinned to the planned %s: %s", a.buf, b.buf, strerror(e))
			: xasprintf("the runtime set the program's CPUs to %s; re-pinned to the "
				    "planned %s", a.buf, b.buf);

		repinned = !e;
		json_array_append_new(w, json_string(msg));
		free(msg);
	} else {
		c = contract_check(t, plan, &got);
		w = json_object_get(c, "warnings");
	}
	snprintf(ib, sizeof(ib), "/proc/%d/root/dev/infiniband", (int)pid);
	if (plan->slice->n_nics && got.nccl_ib_hca && *got.nccl_ib_hca && stat(ib, &st))
		json_array_append_new(w, json_string("NCCL_IB_HCA names HCAs, but the program has no "
						     "/dev/infiniband inside: NCCL would fall back "
						     "to sockets"));
	json_object_set_new(c, "pid", json_integer(pid));
	json_object_set_new(c, "repinned", json_boolean(repinned));
out:
	contract_got_release(&got);
	sbuf_release(&env);
	sbuf_release(&a);
	sbuf_release(&b);
	return c;
}
