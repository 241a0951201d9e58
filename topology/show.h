/* show.h - text and JSON renderings of a node topology and of a plan.
 *
 * Core (pure): struct in, text (or a jansson value) out; `hpctrain topo`
 * only picks one and writes it.  Text output is deterministic, ends with a
 * newline, and never depends on the environment or the clock.
 * show.c holds the text renderers, show_json.c the JSON ones.
 */
#ifndef HPT_SHOW_H
#define HPT_SHOW_H

#include <jansson.h>

struct node_topo;
struct plan;
struct sbuf;

/* CPU features (those of cpufeat.h it has and lacks, or "unknown");
 * packages; NUMA nodes with cores, CPUs and memory; GPUs with index, PCI
 * id, model, NUMA node and OS devices; NICs with names, PCI id, NUMA node. */
void show_summary(const struct node_topo *t, struct sbuf *out);

/* The GPU x GPU and GPU x NIC matrix (NIC rows too) of `nvidia-smi topo
 * -m`: tab-separated, " X " on the diagonal, CPU and NUMA affinity
 * columns, then the legend and the NIC legend.  NVLink is not visible to
 * hwloc, so GPU pairs show their PCIe class. */
void show_matrix(const struct node_topo *t, struct sbuf *out);

/* Slurm gres.conf lines, one per GPU in PCI order:
 *   Name=gpu File=/dev/nvidia0 Cores=48-63
 * File is /dev/nvidiaN for NVIDIA GPUs (N counts NVIDIA GPUs in PCI
 * order, as the driver numbers its minors), /dev/dri/renderDN for others
 * when hwloc saw that node; Cores are hwloc logical core indices (what
 * Slurm expects) of the GPU's NUMA node(s).  A GPU with no known device
 * file gets a comment line instead. */
void show_gres_conf(const struct node_topo *t, struct sbuf *out);

/* The plan as a table: local rank, GPU, PCI id, NICs with class, CPUs,
 * NUMA nodes, why; a cpu_note goes on its own line under its rank. */
void show_plan_table(const struct node_topo *t, const struct plan *p, struct sbuf *out);

/* In show_json.c.  New references (json_decref() them); NULL only on
 * out-of-memory inside jansson.  Sets are Linux list strings ("0-3,8"),
 * NUMA nodes are os indices, path classes their names. */
json_t *show_json_topo(const struct node_topo *t);
json_t *show_json_plan(const struct node_topo *t, const struct plan *p);

#endif
