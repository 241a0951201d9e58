/* pathclass.h - how far apart two PCI devices are, in nvidia-smi's words.
 *
 * Core (pure).  The classes and their order are those of `nvidia-smi topo
 * -m` and of NCCL's PATH_* (best first), so a plan's "why" reads the same
 * as the tools an HPC user already knows.  Computed from the lowest common
 * ancestor of the two devices' bridge chains stored in struct node_topo.
 */
#ifndef HPT_PATHCLASS_H
#define HPT_PATHCLASS_H

struct node_topo;
struct topo_pci;
struct sbuf;

enum pathclass {
	PATHCLASS_PIX,  /* at most one PCIe bridge (or switch) on the path */
	PATHCLASS_PXB,  /* several PCIe bridges, below one host bridge */
	PATHCLASS_PHB,  /* through a PCIe host bridge */
	PATHCLASS_NODE, /* between host bridges within one NUMA node */
	PATHCLASS_SYS,  /* across the SMP interconnect between NUMA nodes */
};
#define PATHCLASS_COUNT 5

/* The class of the path between a and b (which may be the same device:
 * PIX).  Let L be the deepest bridge both sit below:
 * - L a PCI bridge, and each device at most one bridge below L: PIX
 *   (same bridge, or the two downstream ports of one switch);
 * - L a PCI bridge, deeper on either side: PXB;
 * - L a host bridge: PHB;
 * - no common bridge, equal non-empty NUMA localities: NODE;
 * - otherwise SYS. */
enum pathclass pathclass_between(const struct node_topo *t,
				 const struct topo_pci *a,
				 const struct topo_pci *b);

/* "PIX", "PXB", "PHB", "NODE", "SYS". */
const char *pathclass_name(enum pathclass c);

/* Appends the legend nvidia-smi prints under its matrix, plus X. */
void pathclass_legend(struct sbuf *out);

#endif
