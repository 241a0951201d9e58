/* plan.h - share one node's GPUs, NICs, cores and memory among its ranks.
 *
 * Core (pure): struct node_topo and a request in, one struct slice per
 * local rank out; no hwloc, no getenv, no I/O.  Every rank of a node runs
 * the same computation on the same input and gets the same plan, so
 * binding needs no communication between ranks.
 *
 * The rules:
 * - GPUs in PCI bus id order (or the order of visible_gpus, which is how
 *   CUDA numbers devices after CUDA_VISIBLE_DEVICES); local rank r of R
 *   gets visible GPU floor(r * G / R).  R > G with R % G != 0 is an error
 *   (some GPUs would carry more ranks than others: a silent slowdown of
 *   the whole job); R < G is allowed and leaves GPUs idle.
 * - A GPU's NICs are those with the best path class to it, shared fairly
 *   among the GPUs for which the same NICs are best: m NICs for k GPUs
 *   gives each GPU m/k NICs when m >= k, else GPUs share NIC floor(i*m/k).
 *   OpenFabrics devices are preferred; a node without any uses its
 *   network interfaces.  nic=single keeps the first NIC of that share.
 * - cpu=exclusive: the allowed cores of the GPU's NUMA node(s) are split
 *   evenly, whole cores (hyperthreads follow their core), disjointly,
 *   among the ranks of all GPUs homed there; leftovers of an uneven
 *   division stay unused.  A GPU whose NUMA node has too few allowed cores
 *   falls back to the nearest free allowed cores (same package first) and
 *   says so in cpu_note.  Without GPUs, ranks are spread over NUMA nodes
 *   (else packages) in contiguous blocks, with R < D giving each rank a
 *   contiguous block of whole NUMA nodes.  More ranks than allowed cores
 *   is an error.
 * - cpu=node: all allowed cores of the home NUMA node(s), shared, by design.
 * - cpu=core-complex: whole L3 groups of the home: floor(K/n) complexes
 *   per rank when K >= n ranks, else ranks share complex floor(i*K/n).
 * - cpu=none: the whole allowed set.
 * - nodeset: the NUMA nodes of the slice's CPUs; memory says how the
 *   binder applies it (bind, prefer, or leave memory alone).
 */
#ifndef HPT_PLAN_H
#define HPT_PLAN_H

#include "topology/bitmap.h"    // defines: struct bitmap
#include "topology/pathclass.h" // defines: enum pathclass
#include "topology/topo.h"      // defines: struct node_topo, TOPO_BUSID_LEN

#include <stddef.h>

struct diag_list;
struct sbuf;

enum plan_gpu_policy { PLAN_GPU_AUTO, PLAN_GPU_NONE };
enum plan_cpu_policy { PLAN_CPU_EXCLUSIVE, PLAN_CPU_NODE, PLAN_CPU_CORE_COMPLEX, PLAN_CPU_NONE };
enum plan_nic_policy { PLAN_NIC_RAIL, PLAN_NIC_SINGLE, PLAN_NIC_NONE };
enum plan_memory_policy { PLAN_MEMORY_LOCAL, PLAN_MEMORY_PREFERRED, PLAN_MEMORY_NONE };

struct plan_policy {
	enum plan_gpu_policy gpu;
	enum plan_cpu_policy cpu;
	enum plan_nic_policy nic;
	enum plan_memory_policy memory;
};

/* The job spec's defaults: binding: {gpu: auto, cpu: exclusive, nic: rail, memory: local} */
#define PLAN_POLICY_INIT { PLAN_GPU_AUTO, PLAN_CPU_EXCLUSIVE, PLAN_NIC_RAIL, PLAN_MEMORY_LOCAL }

/* More local ranks than this is surely a typo, and keeps sizes bounded. */
#define PLAN_MAX_RANKS 4096

struct plan_request {
	unsigned ranks;               /* local ranks on this node, 1..PLAN_MAX_RANKS */
	struct plan_policy policy;
	const struct bitmap *allowed; /* NULL: the node's allowed set; else also
				       * narrowed to this (e.g. sched_getaffinity) */
	const int *visible_gpus;      /* NULL: every GPU; else indices into
				       * topo->gpus (CUDA_VISIBLE_DEVICES read as
				       * PCI-ordered indices), in device order */
	size_t n_visible_gpus;        /* 0 with visible_gpus != NULL: no GPU */
};

struct slice {
	unsigned local_rank;
	int gpu;                     /* index into topo->gpus, or -1 */
	int gpu_ordinal;             /* device number the rank will see: the GPU's
				      * position among the visible ones, or -1 */
	char busid[TOPO_BUSID_LEN];  /* the GPU's, or "" */
	int *nics;                   /* indices into topo->nics */
	size_t n_nics;
	enum pathclass nic_class;    /* of nics[] to the GPU (to the rank's NUMA
				      * nodes without a GPU: NODE or SYS) */
	struct bitmap cpuset;        /* PU os indices; never empty */
	struct bitmap nodeset;       /* NUMA os indices under cpuset */
	enum plan_memory_policy memory;
	char *why;                   /* one line on the NIC choice; never NULL */
	char *cpu_note;              /* why the CPUs are not the home NUMA node's, or NULL */
};

struct plan {
	struct slice *slices;  /* one per local rank, in rank order */
	size_t n;
	struct plan_policy policy;
	size_t n_gpus;         /* GPUs the plan could use (visible ones) */
};

void plan_init(struct plan *p);
/* Frees the slices; accepts NULL and a zeroed struct. */
void plan_release(struct plan *p);

/* Computes the plan.  Returns 0, or -1 with one DIAG_ERROR (where
 * "plan", key path naming the offending input: "ranks", "cpu", "gpu",
 * "allowed", "visible_gpus") and *out released.  Deterministic: equal
 * inputs give equal plans, whatever ran before.
 * Cost: O(R x cores + G x NICs x depth), both small (< 10^6) per node. */
int plan_slices(const struct node_topo *t, const struct plan_request *req,
		struct plan *out, struct diag_list *err);

/* In plan_policy.c.  Sets one field from its spec/CLI spelling: key "gpu" (auto|none), "cpu"
 * (exclusive|node|core-complex|none), "nic" (rail|single|none), "memory"
 * (local|preferred|none).  Returns 0, or -1 for an unknown key or value. */
int plan_policy_set(struct plan_policy *p, const char *key, const char *value);
/* "gpu=auto cpu=exclusive nic=rail memory=local" */
void plan_policy_format(const struct plan_policy *p, struct sbuf *out);
/* "auto", "exclusive", "core-complex", ...; "?" for an out-of-range value. */
const char *plan_policy_gpu_name(enum plan_gpu_policy v);
const char *plan_policy_cpu_name(enum plan_cpu_policy v);
const char *plan_policy_nic_name(enum plan_nic_policy v);
const char *plan_policy_memory_name(enum plan_memory_policy v);

#endif
