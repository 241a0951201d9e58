/* probe_internal.h - what probe.c shares with probe_live.c (opening and
 * converting a topology) and with probe_pci.c (the conversion's state and
 * its helpers), nothing more.  Shell (hwloc types). */
#ifndef HPT_PROBE_INTERNAL_H
#define HPT_PROBE_INTERNAL_H

#include <hwloc.h>
#include <stdbool.h>

struct bitmap;
struct diag_list;
struct node_topo;

/* One conversion of an hwloc topology into *t; the first failure is
 * reported to err and stops it. */
struct conv {
	hwloc_topology_t topo;
	struct node_topo *t;
	struct diag_list *err;
	const char *where;
	bool live;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
void probe_fail(struct conv *c, const char *fmt, ...);
/* hwloc's CPU or NUMA set, clipped to what the machine has, into dst. */
void probe_cpuset(struct conv *c, hwloc_const_bitmap_t src, struct bitmap *dst);
void probe_nodeset(struct conv *c, hwloc_const_bitmap_t src, struct bitmap *dst);
/* A copy of o's info attribute name, or NULL. */
char *probe_info_dup(hwloc_obj_t o, const char *name);

/* hwloc_topology_init() with hpctrain's flags: disallowed CPUs kept (and
 * marked), every I/O object kept (path classes count bridges). */
int probe_open(hwloc_topology_t *topo, const char *where, struct diag_list *err);

/* Loads topo and converts it into *out.  topo is destroyed, unless keep
 * is not NULL and the conversion succeeded: then it is handed to *keep. */
int probe_convert(hwloc_topology_t topo, const char *where, bool live,
		  struct node_topo *out, hwloc_topology_t *keep, struct diag_list *err);

#endif
