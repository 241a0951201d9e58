/* probe.c - hwloc (live machine or saved XML) -> struct node_topo: the
 * loading and exporting, and the CPU side (packages, NUMA nodes, cores,
 * caches, CPU flags); probe_pci.c classifies the PCI devices, and
 * probe_conv.c holds the helpers both use.  Calls go one way: probe.c ->
 * probe_pci.c -> probe_conv.c, and probe.c -> probe_conv.c.
 *
 * Shell.  In topology/, hwloc.h is included only by probe*.c and the
 * headers they share (probe_internal.h, probe_conv.h); elsewhere only by
 * launcher/rank/bind.c, which binds a rank.  Everything downstream of
 * the probe (plan, path classes, rendering) is pure and sees only
 * struct node_topo.
 */
#include "topology/probe.h" // defines: probe_load, probe_load_xml_buffer, probe_export_xml
#include "topology/probe_internal.h" // defines: probe_open, probe_convert
#include "topology/probe_conv.h" // defines: struct probe_conv, probe_conv_*
#include "topology/probe_pci.h" // defines: probe_pci_devices
#include "topology/topo.h"  // defines: struct node_topo, topo_init, topo_release
#include "topology/cpufeat.h" // defines: cpufeat_common_flags
#include "common/diag.h"       // defines: struct diag_list, diag_add
#include "common/fileio.h"     // defines: fileio_read, fileio_write_atomic
#include "common/sbuf.h"       // defines: x* allocators

#include <hwloc.h>
#include <hwloc/export.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CPUINFO_MAX       (64u << 20) /* bytes; ~2.5 KB per CPU */
#define PROBE_XML_MAX     (256u << 20) /* bytes; a DGX with every PCI device is ~1 MB */

static int cmp_package(const void *a, const void *b)
{
	const struct topo_package *x = a, *y = b;

	return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

static int cmp_numa(const void *a, const void *b)
{
	const struct topo_numa *x = a, *y = b;

	return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

static void conv_packages_numa(struct probe_conv *c)
{
	struct node_topo *t = c->t;
	int np = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_PACKAGE);
	int nn = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_NUMANODE);

	t->packages = xcalloc(np > 0 ? (size_t)np : 1, sizeof(*t->packages));
	for (int i = 0; i < np; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE, (unsigned)i);
		struct topo_package *p = &t->packages[t->n_packages++];

		p->os_index = o->os_index;
		p->model = probe_conv_info_dup(o, "CPUModel");
		probe_conv_cpuset(c, o->cpuset, &p->cpuset);
	}
	qsort(t->packages, t->n_packages, sizeof(*t->packages), cmp_package);

	t->numa = xcalloc(nn > 0 ? (size_t)nn : 1, sizeof(*t->numa));
	for (int i = 0; i < nn; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		struct topo_numa *n = &t->numa[t->n_numa++];

		if (o->os_index > BITMAP_MAX_BIT)
			probe_conv_fail(c, "numa node id %u is larger than %u", o->os_index,
					BITMAP_MAX_BIT);
		n->os_index = o->os_index;
		n->memory = o->attr ? o->attr->numanode.local_memory : 0;
		probe_conv_cpuset(c, o->cpuset, &n->cpuset);
		n->package = -1;
		for (size_t p = 0; p < t->n_packages; p++)
			if (!bitmap_is_empty(&n->cpuset) &&
			    bitmap_is_subset(&n->cpuset, &t->packages[p].cpuset))
				n->package = (int)p;
	}
	qsort(t->numa, t->n_numa, sizeof(*t->numa), cmp_numa);
	for (size_t i = 1; i < t->n_numa; i++)
		if (t->numa[i].os_index == t->numa[i - 1].os_index)
			probe_conv_fail(c, "two numa nodes have os index %u", t->numa[i].os_index);
}

/* Index of the first entry (package or NUMA node) whose set holds pu. */
static int find_holder_numa(const struct node_topo *t, int pu)
{
	for (size_t i = 0; i < t->n_numa; i++)
		if (bitmap_test(&t->numa[i].cpuset, (unsigned)pu))
			return (int)i;
	return -1;
}

static int find_holder_package(const struct node_topo *t, int pu)
{
	for (size_t i = 0; i < t->n_packages; i++)
		if (bitmap_test(&t->packages[i].cpuset, (unsigned)pu))
			return (int)i;
	return -1;
}

static void add_core(struct probe_conv *c, hwloc_obj_t o, unsigned logical, int *l3map, int nl3)
{
	struct node_topo *t = c->t;
	struct topo_core *k = &t->cores[t->n_cores];
	hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(c->topo, HWLOC_OBJ_L3CACHE, o);
	int first;

	bitmap_init(&k->pus);
	probe_conv_cpuset(c, o->cpuset, &k->pus);
	first = bitmap_first(&k->pus);
	if (first < 0) {
		bitmap_release(&k->pus);
		return;
	}
	t->n_cores++;
	k->os_index = o->os_index;
	k->logical_index = logical;
	k->package = find_holder_package(t, first);
	k->numa = find_holder_numa(t, first);
	k->l3 = -1;
	if (l3 && (int)l3->logical_index < nl3) {
		if (l3map[l3->logical_index] < 0)
			l3map[l3->logical_index] = (int)t->n_l3++;
		k->l3 = l3map[l3->logical_index];
	}
}

static void conv_cores(struct probe_conv *c)
{
	struct node_topo *t = c->t;
	int ncores = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_CORE);
	int npus = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_PU);
	int nl3 = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_L3CACHE);
	int *l3map;
	unsigned logical = 0;

	if (npus <= 0) {
		probe_conv_fail(c, "the topology has no processing units");
		return;
	}
	for (int i = 0; i < npus; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PU, (unsigned)i);

		if (pu->os_index > BITMAP_MAX_BIT) {
			probe_conv_fail(c, "cpu id %u is larger than %u", pu->os_index, BITMAP_MAX_BIT);
			return;
		}
	}
	nl3 = nl3 > 0 ? nl3 : 0;
	l3map = xmalloc(((size_t)nl3 + 1) * sizeof(*l3map));
	for (int i = 0; i < nl3; i++)
		l3map[i] = -1;
	t->cores = xcalloc((size_t)(ncores > 0 ? ncores : 0) + (size_t)npus, sizeof(*t->cores));
	for (int i = 0; i < ncores; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_CORE, (unsigned)i);

		add_core(c, o, o->logical_index, l3map, nl3);
		logical = o->logical_index + 1;
	}
	/* Some XML files (and some VMs) have PUs without a Core: each such
	 * PU stands as a core of its own, so no CPU goes unplanned. */
	for (int i = 0; i < npus; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PU, (unsigned)i);

		if (!hwloc_get_ancestor_obj_by_type(c->topo, HWLOC_OBJ_CORE, pu))
			add_core(c, pu, logical++, l3map, nl3);
	}
	free(l3map);
	if (!t->n_cores)
		probe_conv_fail(c, "the topology has no cores");
}


static int convert(struct probe_conv *c)
{
	struct node_topo *t = c->t;
	hwloc_obj_t root = hwloc_get_root_obj(c->topo);

	t->hostname = probe_conv_info_dup(root, "HostName");
	t->cpu_flags = probe_conv_info_dup(root, PROBE_CPU_FLAGS_INFO);
	probe_conv_cpuset(c, root->cpuset, &t->cpuset);
	probe_conv_cpuset(c, hwloc_topology_get_allowed_cpuset(c->topo), &t->allowed);
	bitmap_and(&t->allowed, &t->allowed, &t->cpuset);
	probe_conv_nodeset(c, root->nodeset, &t->nodeset);
	if (!c->failed)
		conv_packages_numa(c);
	if (!c->failed)
		conv_cores(c);
	if (!c->failed)
		probe_pci_devices(c);
	if (c->failed)
		return -1;
	if (bitmap_is_empty(&t->allowed)) {
		probe_conv_fail(c, "no cpu of the topology is allowed");
		return -1;
	}
	return 0;
}

/* Opens and configures a topology; the caller then names its source. */
int probe_open(hwloc_topology_t *topo, const char *where, struct diag_list *err)
{
	if (hwloc_topology_init(topo)) {
		diag_add(err, DIAG_ERROR, where, 0, 0, "", "cannot initialise hwloc: %s",
			 strerror(errno));
		return -1;
	}
	/* Keep CPUs outside our cgroup (marked not allowed) so the summary
	 * shows the whole node and the plan can say what it left out; keep
	 * every bridge, since path classes count them. */
	if (hwloc_topology_set_flags(*topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) ||
	    hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_ALL)) {
		diag_add(err, DIAG_ERROR, where, 0, 0, "", "cannot configure hwloc: %s",
			 strerror(errno));
		hwloc_topology_destroy(*topo);
		return -1;
	}
	return 0;
}

/* hwloc XML carries no CPU flags, so the live probe adds them to the root
 * as an info: a topology exported or cached from here keeps them, and one
 * loaded anywhere reports them.  A root that has them already (a cache
 * file) keeps its own.  Without a readable flags line they stay unknown. */
static void add_cpu_flags(hwloc_topology_t topo)
{
	hwloc_obj_t root = hwloc_get_root_obj(topo);
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *flags = NULL;

	if (hwloc_obj_get_info_by_name(root, PROBE_CPU_FLAGS_INFO))
		return;
	if (!fileio_read("/proc/cpuinfo", CPUINFO_MAX, &text, &err))
		flags = cpufeat_common_flags(text.buf);
	if (flags)
		hwloc_obj_add_info(root, PROBE_CPU_FLAGS_INFO, flags);
	free(flags);
	sbuf_release(&text);
	sbuf_release(&err);
}

int probe_convert(hwloc_topology_t topo, const char *where, bool live,
		  struct node_topo *out, hwloc_topology_t *keep, struct diag_list *err)
{
	struct probe_conv c = { topo, out, err, where, live, false };
	int rc;

	topo_init(out);
	if (hwloc_topology_load(topo)) {
		diag_add(err, DIAG_ERROR, where, 0, 0, "",
			 live ? "cannot read the topology: %s"
			      : "not a valid hwloc XML topology: %s",
			 strerror(errno));
		hwloc_topology_destroy(topo);
		return -1;
	}
	if (live)
		add_cpu_flags(topo);
	out->source = xstrdup(live ? "live" : where);
	rc = convert(&c);
	if (rc)
		topo_release(out);
	if (keep && !rc)
		*keep = topo;
	else
		hwloc_topology_destroy(topo);
	return rc;
}

/* A saved topology's text into text: a regular file only (hwloc's own
 * fopen would block on a FIFO forever), PROBE_XML_MAX bytes at most. */
static int read_xml(const char *path, struct sbuf *text, struct diag_list *err)
{
	struct sbuf why = SBUF_INIT;
	int rc = fileio_read(path, PROBE_XML_MAX, text, &why);

	if (!rc && text->len > PROBE_XML_MAX) {
		sbuf_addf(&why, "%s is larger than %u MiB", path, PROBE_XML_MAX >> 20);
		rc = -1;
	}
	if (rc) {
		/* "cannot open F: why" as F's diagnostic "cannot open: why" */
		const char *at = strstr(why.buf, path);

		if (at && at > why.buf && at[strlen(path)] == ':')
			diag_add(err, DIAG_ERROR, path, 0, 0, "", "%.*s%s", (int)(at - why.buf - 1),
				 why.buf, at + strlen(path));
		else
			diag_add(err, DIAG_ERROR, path, 0, 0, "", "%s", why.buf);
	}
	sbuf_release(&why);
	return rc;
}

int probe_load(const char *xml_path, struct node_topo *out, struct diag_list *err)
{
	struct sbuf text = SBUF_INIT;
	hwloc_topology_t topo;
	int rc;

	topo_init(out);
	if (!xml_path) {
		/* afresh, not from probe_load_live()'s cache: what it shows
		 * (memory sizes) is the machine as it is now */
		if (probe_open(&topo, "live topology", err))
			return -1;
		return probe_convert(topo, "live topology", true, out, NULL, err);
	}
	rc = read_xml(xml_path, &text, err) ? -1
		: probe_load_xml_buffer(text.buf, text.len, xml_path, out, err);
	sbuf_release(&text);
	return rc;
}

int probe_load_xml_buffer(const char *buf, size_t len, const char *name,
			  struct node_topo *out, struct diag_list *err)
{
	const char *where = name ? name : "xml buffer";
	hwloc_topology_t topo;
	char *copy;
	int rc;

	topo_init(out);
	/* hwloc wants the length including a terminating NUL, and reads up to
	 * it: copy so a buffer without one (a fuzzer's) cannot be overrun. */
	if (len >= INT32_MAX) {
		diag_add(err, DIAG_ERROR, where, 0, 0, "", "xml document too large");
		return -1;
	}
	copy = xmalloc(len + 1);
	memcpy(copy, buf, len);
	copy[len] = '\0';
	if (probe_open(&topo, where, err)) {
		free(copy);
		return -1;
	}
	if (hwloc_topology_set_xmlbuffer(topo, copy, (int)len + 1)) {
		diag_add(err, DIAG_ERROR, where, 0, 0, "", "cannot read as hwloc XML: %s",
			 strerror(errno));
		hwloc_topology_destroy(topo);
		free(copy);
		return -1;
	}
	rc = probe_convert(topo, where, false, out, NULL, err);
	free(copy);
	return rc;
}

/* topo as hwloc XML into out_path ("-": standard output, as hwloc's own
 * export does), through fileio_write_atomic: never a predictable name,
 * never through a link.  Mode 0644: a topology is meant to be copied to
 * a login node and planned from. */
static int write_xml(hwloc_topology_t topo, const char *out_path, struct diag_list *err)
{
	struct sbuf why = SBUF_INIT;
	char *buf = NULL;
	int len = 0, rc = -1;

	if (hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0) || len < 1) {
		diag_add(err, DIAG_ERROR, out_path, 0, 0, "", "cannot write the topology: %s",
			 strerror(errno));
		return -1;
	}
	if (!strcmp(out_path, "-")) /* len counts the ending NUL */
		rc = fwrite(buf, 1, (size_t)len - 1, stdout) == (size_t)len - 1 && !fflush(stdout)
			? 0 : -1;
	else
		rc = fileio_write_atomic(out_path, buf, (size_t)len - 1, 0644, 0, &why);
	if (rc)
		diag_add(err, DIAG_ERROR, "", 0, 0, "", "%s",
			 why.len ? why.buf : "cannot write the topology to standard output");
	hwloc_free_xmlbuffer(topo, buf);
	sbuf_release(&why);
	return rc;
}

int probe_export_xml(const char *xml_path, const char *out_path, struct diag_list *err)
{
	const char *where = xml_path ? xml_path : "live topology";
	struct sbuf text = SBUF_INIT;
	hwloc_topology_t topo;
	int rc = -1;

	if (xml_path && read_xml(xml_path, &text, err))
		goto out;
	if (probe_open(&topo, where, err))
		goto out;
	/* hwloc wants the length with the NUL that sbuf keeps after the text */
	if ((xml_path && hwloc_topology_set_xmlbuffer(topo, text.buf, (int)text.len + 1)) ||
	    hwloc_topology_load(topo)) {
		diag_add(err, DIAG_ERROR, where, 0, 0, "", "cannot read the topology: %s",
			 strerror(errno));
		hwloc_topology_destroy(topo);
		goto out;
	}
	if (!xml_path)
		add_cpu_flags(topo);
	rc = write_xml(topo, out_path, err);
	hwloc_topology_destroy(topo);
out:
	sbuf_release(&text);
	return rc;
}
