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
#include "common/jsonb.h" // defines: jsonb_text
#include "topology/topo.h"   // defines: struct node_topo

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

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
	/* encode-ok: a pid in a /proc path: at most 11 digits more */
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
	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!fileio_read(path, 1 << 16, &status, &err)) {
		got->have_cpus = status_list(status.buf, "Cpus_allowed_list", &got->cpus);
		got->have_mems = status_list(status.buf, "Mems_allowed_list", &got->mems);
		rc = 0;
	}
	/* encode-ok: a pid in a /proc path: at most 11 digits more */
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

/* The names of dir's entries, not starting with '.'; *n of them. */
static char **list_dir(const char *dir, size_t *n)
{
	struct dirent *e;
	char **names = NULL;
	DIR *d = opendir(dir);

	*n = 0;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			names = xrealloc(names, (*n + 1) * sizeof(*names));
			names[(*n)++] = xstrdup(e->d_name);
		}
	if (d)
		closedir(d);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* An HCA's user verbs device (uverbs0): the one entry of its device's
 * infiniband_verbs folder in sysfs; NULL when there is none. */
static char *uverbs_of(const char *sys_root, const char *hca)
{
	char *dir = xasprintf("%s/sys/class/infiniband/%s/device/infiniband_verbs", sys_root, hca);
	size_t n;
	char **names = list_dir(dir, &n), *dev = n ? xstrdup(names[0]) : NULL;

	free_names(names, n);
	free(dir);
	return dev;
}

void contract_inside_check_hcas(const struct node_topo *t, const char *nccl_ib_hca,
				const char *sys_root, const char *dev_dir, json_t *warnings)
{
	struct contract_hca_dev *devs = NULL;
	size_t n = 0, n_inside;
	char **inside;

	if (!nccl_ib_hca || !*nccl_ib_hca)
		return;
	for (size_t i = 0; i < t->n_nics; i++)
		for (size_t k = 0; k < t->nics[i].n_ofed; k++) {
			devs = xrealloc(devs, (n + 1) * sizeof(*devs));
			devs[n].hca = t->nics[i].ofed[k];
			devs[n++].uverbs = uverbs_of(sys_root, t->nics[i].ofed[k]);
		}
	inside = list_dir(dev_dir, &n_inside);
	contract_check_hca_devices(nccl_ib_hca, devs, n, (const char *const *)inside, n_inside,
				   warnings);
	for (size_t i = 0; i < n; i++)
		free((char *)devs[i].uverbs);
	free(devs);
	free_names(inside, n_inside);
}

/* pid's Cpus_allowed_list into b; false when it cannot be read. */
static bool read_cpus(pid_t pid, struct bitmap *b)
{
	struct sbuf status = SBUF_INIT, err = SBUF_INIT;
	char path[64];
	bool ok;

	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	ok = !fileio_read(path, 1 << 16, &status, &err) &&
	     status_list(status.buf, "Cpus_allowed_list", b);
	sbuf_release(&status);
	sbuf_release(&err);
	return ok;
}

/* sched_setaffinity succeeds with what the cgroup allows of the mask:
 * the program is re-pinned only when it now has the planned CPUs; 0, or
 * an errno (EPERM when its cgroup kept it on others). */
static int repin_checked(pid_t pid, const struct bitmap *cpus)
{
	struct bitmap now;
	int e = repin(pid, cpus);

	bitmap_init(&now);
	if (!e && read_cpus(pid, &now) && !bitmap_equal(&now, cpus))
		e = EPERM;
	bitmap_release(&now);
	return e;
}

/* The program's CPUs against the plan: re-pinned where they differ, with
 * a warning saying so, and what that put right marked fixed in c. */
static void check_cpus(const struct node_topo *t, const struct contract_plan *plan, pid_t pid,
		       struct contract_got *got, json_t *c)
{
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;
	int e = repin_checked(pid, &plan->slice->cpuset);
	char *msg;

	bitmap_format_list(&got->cpus, &a);
	bitmap_format_list(&plan->slice->cpuset, &b);
	msg = e ? xasprintf("the runtime set the program's CPUs to %s and it cannot be "
			    "re-pinned to the planned %s: %s", a.buf, b.buf, strerror(e))
		: xasprintf("the runtime set the program's CPUs to %s; re-pinned to the "
			    "planned %s", a.buf, b.buf);
	json_array_append_new(json_object_get(c, "warnings"), jsonb_text(msg)); /* only OOM fails */
	if (!e) {
		json_t *after;

		bitmap_copy(&got->cpus, &plan->slice->cpuset);
		after = contract_check(t, plan, got);
		contract_mark_fixed(c, after);
		json_decref(after);
	}
	json_object_set_new(c, "repinned", json_boolean(!e));
	free(msg);
	sbuf_release(&a);
	sbuf_release(&b);
}

json_t *contract_inside_check(const struct node_topo *t, const struct contract_plan *plan,
			      pid_t pid)
{
	struct contract_got got;
	struct sbuf env = SBUF_INIT;
	char ib[64];
	json_t *c = NULL;

	if (read_got(pid, &got, &env))
		goto out;
	c = contract_check(t, plan, &got);
	json_object_set_new(c, "repinned", json_false());
	if (plan->cpus_bound && got.have_cpus && !bitmap_equal(&got.cpus, &plan->slice->cpuset))
		check_cpus(t, plan, pid, &got, c);
	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(ib, sizeof(ib), "/proc/%d/root/dev/infiniband", (int)pid);
	contract_inside_check_hcas(t, got.nccl_ib_hca, "", ib, json_object_get(c, "warnings"));
	json_object_set_new(c, "pid", json_integer(pid));
out:
	contract_got_release(&got);
	sbuf_release(&env);
	return c;
}
