/* topo.h - struct node_topo, a plain description of one compute node.
 *
 * Core (pure).  probe.c fills it from hwloc (live or a saved XML); plan.c,
 * pathclass.c and show.c read it.  No hwloc type appears here, so the
 * planner and its tests never depend on how the node was discovered.
 *
 * Invariants (probe.c establishes them, everything else relies on them):
 * - packages[] and numa[] are sorted by os_index; cores[] by hwloc logical
 *   index (tree order: package, NUMA node, L3, core); gpus[] and nics[] by
 *   PCI bus id, numerically (domain, bus, device, function), which is the
 *   order CUDA_DEVICE_ORDER=PCI_BUS_ID and nvidia-smi use.
 * - Every index field (core.package, core.numa, gpu.numa, ...) is an index
 *   into the matching array of this struct, or -1 when unknown.
 * - CPU sets hold PU os indices (Linux CPU numbers), node sets hold NUMA os
 *   indices, as in hwloc; all are finite.  core.pus is never empty and the
 *   cores' PU sets are pairwise disjoint; their union is cpuset.
 * - allowed is a subset of cpuset (it is the cgroup/affinity restriction
 *   hwloc saw, or cpuset itself when nothing restricts).
 * - bridges[] lists every PCI bridge some GPU or NIC sits below, parents
 *   before children; a topo_pci's bridges[] runs from its host bridge (if
 *   any) down to its immediate parent.
 * - Every pointer is owned by the struct; topo_release() frees them all.
 */
#ifndef HPT_TOPO_H
#define HPT_TOPO_H

#include "topology/bitmap.h" // defines: struct bitmap

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "0000:07:00.0", or a 32-bit domain "00010000:07:00.0". */
#define TOPO_BUSID_LEN 24

struct topo_package {
	unsigned os_index;
	char *model;          /* CPUModel, or NULL */
	struct bitmap cpuset; /* its PUs */
};

struct topo_numa {
	unsigned os_index;
	uint64_t memory;      /* local memory in bytes (0 when unknown), as hwloc saw
			       * it when the node was probed: from probe_load_live()'s
			       * per-boot cache, the size at caching time */
	int package;          /* index into packages[], or -1 */
	struct bitmap cpuset; /* its PUs; empty for a CPU-less (e.g. HBM/CXL) node */
};

struct topo_core {
	unsigned os_index;      /* as the kernel numbers it; not unique across packages */
	unsigned logical_index; /* hwloc's "Core L#", which Slurm's Cores= uses */
	int package;            /* index into packages[], or -1 */
	int numa;               /* index into numa[] of the node holding its first PU, or -1 */
	int l3;                 /* core-complex id: 0..n_l3-1 for the L3 it shares, or -1 */
	struct bitmap pus;      /* its hardware threads; never empty */
};

struct topo_bridge {
	char busid[TOPO_BUSID_LEN]; /* upstream bus id; "" for a host bridge */
	bool host;                  /* a host bridge (root complex), not a PCI-PCI bridge */
	int parent;                 /* index into bridges[], or -1 */
};

/* Where a PCI device sits: enough for path classes and locality. */
struct topo_pci {
	char busid[TOPO_BUSID_LEN];
	unsigned domain, bus, dev, func;
	unsigned vendor, device, class_id; /* class_id: 0x0302 for a 3D controller */
	float link_gbps;                   /* PCIe link speed hwloc saw, GB/s; 0 unknown */
	int *bridges;                      /* ancestry, host bridge first */
	size_t n_bridges;
	struct bitmap cpuset;              /* locality: first non-I/O ancestor's PUs */
	struct bitmap nodeset;             /* ... and its NUMA nodes (os indices) */
};

struct topo_gpu {
	struct topo_pci pci;
	char *vendor;   /* "NVIDIA Corporation"; never NULL */
	char *model;    /* "NVIDIA A100-SXM4-40GB" or the pci.ids name; never NULL */
	char *uuid;     /* "GPU-..." when an OS device reported one, else NULL */
	char **osdevs;  /* every OS device name: cuda0, nvml0, opencl0d0, card1, renderD128 */
	size_t n_osdevs;
	int numa;       /* index into numa[] of its first local NUMA node, or -1 */
};

struct topo_attr {
	char *name;  /* "mlx5_0:Port1LID", "ib0:Address": OS device, colon, hwloc info name */
	char *value;
};

struct topo_nic {
	struct topo_pci pci;
	char *vendor;   /* never NULL */
	char *model;    /* never NULL */
	char **ofed;    /* OpenFabrics names: mlx5_0 */
	size_t n_ofed;
	char **net;     /* network interfaces: ib0, ibp12s0, eth0 */
	size_t n_net;
	struct topo_attr *attrs; /* port and link information, as hwloc gave it */
	size_t n_attrs;
	int numa;       /* index into numa[], or -1 */
};

struct node_topo {
	char *source;    /* "live" or the XML file name; never NULL after probe */
	char *hostname;  /* or NULL */
	char *cpu_flags; /* flags all its CPUs share, as /proc/cpuinfo names them
			  * (cpufeat.h parses them); NULL when unknown: an XML
			  * saved without them, or a CPU the kernel lists none for */
	struct topo_package *packages;
	size_t n_packages;
	struct topo_numa *numa;
	size_t n_numa;
	struct topo_core *cores;
	size_t n_cores;
	size_t n_l3;     /* core-complex ids run 0..n_l3-1 */
	struct topo_bridge *bridges;
	size_t n_bridges;
	struct topo_gpu *gpus;
	size_t n_gpus;
	struct topo_nic *nics;
	size_t n_nics;
	struct bitmap cpuset;  /* every PU */
	struct bitmap allowed; /* PUs this process may use */
	struct bitmap nodeset; /* every NUMA node */
};

void topo_init(struct node_topo *t);
/* Frees everything the struct owns; accepts NULL and a zeroed struct. */
void topo_release(struct node_topo *t);

/* The name a NIC goes by: its first OpenFabrics name (what NCCL_IB_HCA
 * wants), else its first interface name, else its bus id. */
const char *topo_nic_name(const struct topo_nic *nic);

/* Index into numa[] of the node with this os index, or -1. */
int topo_numa_by_os(const struct node_topo *t, unsigned os_index);

/* Sets cores (indices into t->cores) to the cores local to a device: those
 * of its NUMA node(s), else those sharing its locality cpuset, else (a
 * device with no locality at all) every core.  Never empty if the node
 * has cores. */
void topo_local_cores(const struct node_topo *t, const struct topo_pci *pci,
		      struct bitmap *cores);

/* A 64-bit fingerprint of everything plan.c reads (cores, NUMA nodes, GPU
 * and NIC placement, allowed set), so that a launcher facing thousands
 * of identical nodes plans once per distinct fingerprint.  Names, models
 * and memory sizes are left out: they do not change a plan.  A 64-bit
 * multiply-xorshift mix, not cryptographic: collisions between different
 * real nodes are ~2^-64 likely, not adversarially hard. */
uint64_t topo_fingerprint(const struct node_topo *t);

/* Parses "0000:07:00.0" (also "07:00.0", domain 0) into its four fields.
 * Returns 0, or -1 when malformed. */
int topo_parse_busid(const char *s, unsigned *domain, unsigned *bus,
		     unsigned *dev, unsigned *func);

#endif
