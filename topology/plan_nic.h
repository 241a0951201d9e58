/* plan_nic.h - NIC choice for a plan's slices (used by plan.c).
 * Pure core.  Exported so tests can drive it on hand-made slices. */
#ifndef HPT_PLAN_NIC_H
#define HPT_PLAN_NIC_H

#include "topology/plan.h" // defines: struct plan, enum plan_nic_policy

/* Fills nics, n_nics, nic_class and why of every slice in p from each
 * slice's gpu (or, when -1, its nodeset).  Candidates are the node's
 * OpenFabrics devices, or all its NICs when it has none.  Never fails. */
void plan_nic_assign(const struct node_topo *t, enum plan_nic_policy policy, struct plan *p);

#endif
