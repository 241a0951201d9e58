/* bind.c - CPU and memory binding through hwloc, before exec.
 * Shell. */
#include "launcher/rank/bind.h"   // defines: bind_apply
#include "common/sbuf.h"        // defines: xasprintf
#include "topology/bitmap.h" // defines: struct bitmap, bitmap_*
#include "topology/plan.h"   // defines: struct slice

#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

static hwloc_bitmap_t to_hwloc(const struct bitmap *b)
{
	hwloc_bitmap_t h = hwloc_bitmap_alloc();

	for (int i = bitmap_first(b); i >= 0; i = bitmap_next(b, i))
		hwloc_bitmap_set(h, (unsigned)i);
	return h;
}

static char *list_of(hwloc_const_bitmap_t h)
{
	char *s = NULL;

	hwloc_bitmap_list_asprintf(&s, h);
	return s ? s : xstrdup("?");
}

static void bind_cpus(hwloc_topology_t topo, const struct slice *s, struct bind_result *r)
{
	hwloc_bitmap_t want = to_hwloc(&s->cpuset);
	hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);

	if (!hwloc_bitmap_isincluded(want, allowed)) {
		char *w = list_of(want), *a = list_of(allowed);

		r->cpu_note = xasprintf("not applied: CPUs %s are not all available here (allowed: %s)", w, a);
		free(w);
		free(a);
	} else if (hwloc_set_cpubind(topo, want, HWLOC_CPUBIND_THREAD)) {
		r->cpu_note = xasprintf("hwloc_set_cpubind failed: %s", strerror(errno));
		r->cpu_failed = true;
	} else {
		r->cpu_applied = true;
	}
	hwloc_bitmap_free(want);
}

/* local is MPOL_BIND (strict); preferred is hwloc's non-strict BIND,
 * which Linux implements as MPOL_PREFERRED. */
static void bind_memory(hwloc_topology_t topo, const struct slice *s, struct bind_result *r)
{
	hwloc_bitmap_t want = to_hwloc(&s->nodeset);
	hwloc_const_bitmap_t nodes = hwloc_topology_get_allowed_nodeset(topo);
	int flags = HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET;

	if (s->memory == PLAN_MEMORY_LOCAL)
		flags |= HWLOC_MEMBIND_STRICT;
	if (hwloc_bitmap_iszero(want) || !hwloc_bitmap_isincluded(want, nodes)) {
		char *w = list_of(want), *a = list_of(nodes);

		r->mem_note = xasprintf("not applied: NUMA nodes %s are not all available here (allowed: %s)", w, a);
		free(w);
		free(a);
	} else if (hwloc_bitmap_isequal(want, nodes)) {
		/* One node, or all of them: the default policy already is this. */
		r->mem_applied = true;
		r->mem_note = xstrdup("default policy kept: the slice spans every NUMA node here");
	} else if (hwloc_set_membind(topo, want, HWLOC_MEMBIND_BIND, flags)) {
		r->mem_note = xasprintf("hwloc_set_membind failed: %s", strerror(errno));
	} else {
		r->mem_applied = true;
	}
	hwloc_bitmap_free(want);
}

void bind_apply(const struct slice *s, bool cpu_none, bool mem_none, void *hwloc_topo,
		struct bind_result *r)
{
	hwloc_topology_t topo = hwloc_topo;

	memset(r, 0, sizeof(*r));
	if (cpu_none)
		r->cpu_note = xstrdup("not applied: binding.cpu is none");
	if (mem_none || s->memory == PLAN_MEMORY_NONE)
		r->mem_note = xstrdup("not applied: binding.memory is none");
	if (r->cpu_note && r->mem_note)
		return;
	/* Without a topology at hand, load one without I/O devices: binding
	 * needs only CPUs and NUMA nodes. */
	if (!hwloc_topo && hwloc_topology_init(&topo)) {
		topo = NULL;
	} else if (!hwloc_topo && hwloc_topology_load(topo)) {
		hwloc_topology_destroy(topo);
		topo = NULL;
	}
	if (!topo) {
		if (!r->cpu_note) {
			r->cpu_note = xasprintf("cannot load this machine's topology: %s", strerror(errno));
			r->cpu_failed = true;
		}
		return;
	}
	if (!r->cpu_note)
		bind_cpus(topo, s, r);
	if (!r->mem_note)
		bind_memory(topo, s, r);
	if (!hwloc_topo)
		hwloc_topology_destroy(topo);
}

void bind_result_release(struct bind_result *r)
{
	free(r->cpu_note);
	free(r->mem_note);
	memset(r, 0, sizeof(*r));
}
