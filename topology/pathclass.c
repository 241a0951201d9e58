/* pathclass.c - PIX/PXB/PHB/NODE/SYS from two devices' bridge chains.
 * Core (pure). */
#include "topology/pathclass.h" // defines: enum pathclass, pathclass_*
#include "topology/topo.h"      // defines: struct node_topo, struct topo_pci
#include "common/sbuf.h"           // defines: sbuf_addstr

enum pathclass pathclass_between(const struct node_topo *t,
				 const struct topo_pci *a,
				 const struct topo_pci *b)
{
	size_t k = 0;

	/* Chains run host bridge first, so the common prefix ends at the
	 * lowest common ancestor.  O(depth), depth < 10 on real machines. */
	while (k < a->n_bridges && k < b->n_bridges &&
	       a->bridges[k] == b->bridges[k])
		k++;
	if (k > 0) {
		int lca = a->bridges[k - 1];

		if (lca >= 0 && (size_t)lca < t->n_bridges && t->bridges[lca].host)
			return PATHCLASS_PHB;
		/* A switch is an upstream port with its downstream ports, so a
		 * path through one switch has one bridge below the LCA on each
		 * side; that is still "a single PCIe bridge" to nvidia-smi. */
		if (a->n_bridges - k <= 1 && b->n_bridges - k <= 1)
			return PATHCLASS_PIX;
		return PATHCLASS_PXB;
	}
	if (!bitmap_is_empty(&a->nodeset) && bitmap_equal(&a->nodeset, &b->nodeset))
		return PATHCLASS_NODE;
	return PATHCLASS_SYS;
}

const char *pathclass_name(enum pathclass c)
{
	static const char *const names[PATHCLASS_COUNT] = {
		"PIX", "PXB", "PHB", "NODE", "SYS",
	};

	return (unsigned)c < PATHCLASS_COUNT ? names[c] : "?";
}

void pathclass_legend(struct sbuf *out)
{
	sbuf_addstr(out,
		"Legend:\n"
		"\n"
		"  X    = Self\n"
		"  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
		"  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
		"  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
		"  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
		"  PIX  = Connection traversing at most a single PCIe bridge\n");
}
