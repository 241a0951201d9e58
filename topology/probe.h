/* probe.h - read a node's topology with hwloc into struct node_topo.
 *
 * Shell: touches hwloc, the filesystem and (live) sysfs.  Everything after
 * the probe works on struct node_topo, so a saved XML file plans exactly
 * like the live machine it was captured on.
 *
 * Errors come back as one DIAG_ERROR entry in the caller's diag_list, whose
 * "where" is the XML file name (or "live topology", or "xml buffer"), and
 * a return of -1; *out is then left released (safe to topo_release again).
 * Nothing here prints or exits.
 */
#ifndef HPT_PROBE_H
#define HPT_PROBE_H

#include <stddef.h>

struct node_topo;
struct diag_list;

/* The root info in which a live probe keeps the CPUs' /proc/cpuinfo
 * flags (hwloc XML has no place for them), so that an exported or cached
 * topology still knows them; struct node_topo's cpu_flags. */
#define PROBE_CPU_FLAGS_INFO "HPCTrainCPUFlags"

/* Loads the live machine (xml_path NULL), probed afresh, or a saved hwloc
 * XML file, I/O devices included, CPUs outside this process's cgroup kept
 * but marked not allowed.  Returns 0 or -1. */
int probe_load(const char *xml_path, struct node_topo *out, struct diag_list *err);

/* The live machine, as probe_load(NULL, ...), with two differences that
 * matter to a launcher starting many ranks per node: the probe is cached
 * per boot (see probe_live.c), so what changes while the machine runs
 * (NUMA memory sizes) is as it was at caching time; and when keep is not
 * NULL the hwloc topology stays open in *keep (release with
 * probe_keep_release()), so binding does not load it a second time. */
int probe_load_live(struct node_topo *out, void **keep, struct diag_list *err);
void probe_keep_release(void *keep);

/* The same from an XML document in memory (for fuzzing and tests); name
 * is what out->source and error messages will say.  Returns 0 or -1. */
int probe_load_xml_buffer(const char *buf, size_t len, const char *name,
			  struct node_topo *out, struct diag_list *err);

/* Writes the live machine (xml_path NULL, with its CPU flags) or a
 * re-export of xml_path (with whatever CPU flags it holds) as hwloc 2 XML
 * to out_path, for `hpctrain topo --export-xml F`.  Returns 0 or -1. */
int probe_export_xml(const char *xml_path, const char *out_path, struct diag_list *err);

#endif
