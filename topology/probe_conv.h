/* probe_conv.h - one conversion of an hwloc topology into struct
 * node_topo: its state, and the helpers (probe_conv.c) that both halves
 * of the conversion use, probe.c's CPU side and probe_pci.c's devices.
 * Shell (hwloc types).
 *
 * Calls go one way: probe.c -> probe_pci.c -> probe_conv.c, and probe.c
 * -> probe_conv.c; nothing here calls back. */
#ifndef HPT_PROBE_CONV_H
#define HPT_PROBE_CONV_H

#include <hwloc.h>
#include <stdbool.h>

struct bitmap;
struct diag_list;
struct node_topo;

/* One conversion of an hwloc topology into *t; the first failure is
 * reported to err and stops it. */
struct probe_conv {
	hwloc_topology_t topo;
	struct node_topo *t;
	struct diag_list *err;
	const char *where;
	bool live;
	bool failed;
};

/* Reports the conversion's first failure to c->err (later ones are
 * dropped) and sets c->failed. */
__attribute__((format(printf, 2, 3)))
void probe_conv_fail(struct probe_conv *c, const char *fmt, ...);
/* hwloc's CPU or NUMA set, clipped to what the machine has, into dst. */
void probe_conv_cpuset(struct probe_conv *c, hwloc_const_bitmap_t src, struct bitmap *dst);
void probe_conv_nodeset(struct probe_conv *c, hwloc_const_bitmap_t src, struct bitmap *dst);
/* A copy of o's info attribute name, or NULL. */
char *probe_conv_info_dup(hwloc_obj_t o, const char *name);

#endif
