/* probe_internal.h - what probe.c shares with probe_live.c: opening a
 * topology and converting it, nothing more.  The conversion's own parts
 * are declared in probe_conv.h and probe_pci.h.  Shell (hwloc types). */
#ifndef HPT_PROBE_INTERNAL_H
#define HPT_PROBE_INTERNAL_H

#include <hwloc.h>
#include <stdbool.h>

struct diag_list;
struct node_topo;

/* hwloc_topology_init() with hpctrain's flags: disallowed CPUs kept (and
 * marked), every I/O object kept (path classes count bridges). */
int probe_open(hwloc_topology_t *topo, const char *where, struct diag_list *err);

/* Loads topo and converts it into *out.  topo is destroyed, unless keep
 * is not NULL and the conversion succeeded: then it is handed to *keep. */
int probe_convert(hwloc_topology_t topo, const char *where, bool live,
		  struct node_topo *out, hwloc_topology_t *keep, struct diag_list *err);

#endif
