/* launch_container.c - a rank's program wrapped in its job's container
 * runtime by `hpctrain launch` (or, in a dry run, the command line it
 * would be, in the report), and podman's program found and removed for
 * its supervisor.  Shell; the command line is
 * launcher/container/container_wrap.h's. */
#include "launcher/launch/launch.h"           // defines: struct launch, launch_container_wrap
#include "common/say.h" // defines: say
#include "common/exitcode.h"      // defines: enum hpt_exit
#include "common/jsonb.h"         // defines: jsonb_set, jsonb_append, jsonb_text
#include "common/sbuf.h"          // defines: struct sbuf
#include "launcher/container/container_podman.h" // defines: container_podman_pid, container_podman_remove
#include "launcher/container/container_wrap.h"   // defines: container_wrap, container_wrap_preview

#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

pid_t launch_container_find(void *arg)
{
	const struct launch *l = arg;

	return container_podman_pid(l->wrapped.podman_pidfile);
}

void launch_container_end(void *arg)
{
	const struct launch *l = arg;

	container_podman_remove(l->wrapped.podman_name);
}

/* ch-run refuses to start without $USER, which batch steps may lack. */
static void ensure_user(void)
{
	struct passwd *pw;

	if (!getenv("USER") && (pw = getpwuid(getuid())))
		setenv("USER", pw->pw_name, 1);
}

/* Whether the plan's CPUs (cpus) or NUMA nodes are bound: as bound, or
 * in a dry run, as they would be (a live topology, a policy not none). */
static bool bound(const struct launch *l, bool cpus)
{
	if (!l->dry_run)
		return cpus ? l->bound.cpu_applied : l->bound.mem_applied;
	return l->hwloc_topo && (cpus ? l->policy.cpu != PLAN_CPU_NONE
				     : l->policy.memory != PLAN_MEMORY_NONE);
}

/* The program inside the job's container, after planning, so that a
 * runtime that resets affinity (podman) is given the plan's cpuset; in
 * a dry run, into l->preview, nothing started or mounted. */
int launch_container_wrap(struct launch *l, char **argv)
{
	const struct slice *s = &l->plan.slices[l->ri.local_rank];
	struct sbuf cpus = SBUF_INIT, mems = SBUF_INIT, err = SBUF_INIT;
	struct container_wrap_in in = { .job = &l->job, .run = l->run, .rank = l->ri.rank,
					.local_size = l->ri.local_size, .supervised = l->supervise,
					.argv = argv, .image = l->data.image };
	const char **dirs = xcalloc(l->data.n + 2, sizeof(*dirs));
	static const int status_of[] = { [CONTAINER_WRAP_NO_RUNTIME] = HPT_EXIT_NOTFOUND,
					 [CONTAINER_WRAP_NO_IMAGE] = HPT_EXIT_NO_INPUT,
					 [CONTAINER_WRAP_REFUSED] = HPT_EXIT_BAD_SPEC,
					 [CONTAINER_WRAP_IO] = HPT_EXIT_IO };
	int rc;

	if (bound(l, true)) {
		bitmap_format_list(&s->cpuset, &cpus);
		in.cpus = cpus.buf;
	}
	if (bound(l, false)) {
		bitmap_format_list(&s->nodeset, &mems);
		in.mems = mems.buf;
	}
	/* the cache, and the sources of entries read in place of a copy,
	 * at the paths HPCTRAIN_DATA_* name */
	if (l->data.cache)
		dirs[in.ndirs++] = l->data.cache;
	for (size_t i = 0; i < l->data.n; i++)
		if (l->data.v[i].path == l->data.v[i].src)
			dirs[in.ndirs++] = l->data.v[i].src;
	/* the code snapshot, where HPCTRAIN_CODE_DIR names it (a staged
	 * copy is in the cache, bound above) */
	in.code_dir = l->code_dir;
	if (l->code_dir && !l->code_staged)
		dirs[in.ndirs++] = l->code_dir;
	in.dirs = dirs;
	ensure_user();
	rc = l->dry_run ? container_wrap_preview(&in, &l->preview, &err)
			: container_wrap(&in, &l->wrapped, &err);
	free(dirs);
	if (rc)
		say("rank %u: %s", l->ri.rank, err.buf);
	sbuf_release(&cpus);
	sbuf_release(&mems);
	sbuf_release(&err);
	return rc ? status_of[rc] : HPT_EXIT_OK;
}

/* An argument vector as a JSON array: an argument is bytes, and one that
 * is not UTF-8 is carried escaped (jsonb_text), never left out. */
static json_t *argv_json(const struct job_argv *a)
{
	json_t *v = json_array();

	for (size_t i = 0; i < a->n; i++)
		jsonb_append(&v, jsonb_text(a->v[i]));
	return v;
}

void launch_container_report(const struct launch *l, json_t **doc)
{
	const struct job_argv *a = l->dry_run ? &l->preview.argv : &l->wrapped.argv;

	if (a->n)
		jsonb_set(doc, "container_argv", argv_json(a));
	if (l->preview.mount.n)
		jsonb_set(doc, "container_mount", argv_json(&l->preview.mount));
}
