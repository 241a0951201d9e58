/* bind.h - apply a slice's CPU and memory binding to this process.
 *
 * Shell: hwloc_set_cpubind() and hwloc_set_membind() on the calling
 * thread, whose affinity and memory policy survive execve(), so the
 * program starts bound.  A slice planned from a saved topology (launch
 * --topology) may name CPUs or NUMA nodes this machine lacks: such a part
 * is reported as not applied, with the reason, and left alone.
 */
#ifndef HPT_BIND_H
#define HPT_BIND_H

#include <stdbool.h>

struct slice;

struct bind_result {
	bool cpu_applied, mem_applied;
	char *cpu_note; /* why not applied, or what was done instead; NULL if nothing to say */
	char *mem_note;
	bool cpu_failed; /* the machine refused a binding it should have taken */
};

/* cpu_none / mem_none: the policy asks for no binding.  hwloc_topo is an
 * hwloc topology of this machine already loaded (probe_load_live()'s
 * keep), or NULL to load one. */
void bind_apply(const struct slice *s, bool cpu_none, bool mem_none, void *hwloc_topo,
		struct bind_result *r);
void bind_result_release(struct bind_result *r);

#endif
