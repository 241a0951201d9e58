/* probe_pci.c - which PCI devices are GPUs and which are NICs, and where
 * each sits: its bridges, its CPUs and its NUMA node.
 *
 * Shell (hwloc's raw PCI and OS-device view), a part of probe.c's
 * conversion: probe.c calls probe_pci_devices(), which uses the shared
 * helpers of probe_conv.c and calls nothing of probe.c.
 */
#include "topology/probe_pci.h"      // defines: probe_pci_devices
#include "topology/probe_conv.h"     // defines: struct probe_conv, probe_conv_*
#include "topology/topo.h"           // defines: struct node_topo, struct topo_gpu, struct topo_nic
#include "common/sbuf.h"             // defines: x* allocators
#include "common/strfmt.h" // defines: strfmt

#include <hwloc.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_VENDOR_AMD    0x1002
#define MAX_BRIDGE_DEPTH  64

/* Bridges get an index in t->bridges the first time a device below them
 * is seen; hwloc's userdata pointer remembers it (1-based, 0 = none). */
static int bridge_index(struct probe_conv *c, hwloc_obj_t b, int depth)
{
	struct node_topo *t = c->t;
	struct topo_bridge *tb;
	int parent = -1;

	if (b->userdata)
		return (int)(intptr_t)b->userdata - 1;
	if (depth > MAX_BRIDGE_DEPTH) {
		probe_conv_fail(c, "pci bridges nested deeper than %d", MAX_BRIDGE_DEPTH);
		return -1;
	}
	if (b->parent && b->parent->type == HWLOC_OBJ_BRIDGE)
		parent = bridge_index(c, b->parent, depth + 1);
	t->bridges = xrealloc(t->bridges, (t->n_bridges + 1) * sizeof(*t->bridges));
	tb = &t->bridges[t->n_bridges];
	memset(tb, 0, sizeof(*tb));
	tb->parent = parent;
	tb->host = b->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
	if (!tb->host) {
		const struct hwloc_pcidev_attr_s *p = &b->attr->bridge.upstream.pci;

		/* encode-ok: a bus id's widths, the size of busid */
		snprintf(tb->busid, sizeof(tb->busid), "%04x:%02x:%02x.%01x",
			 (unsigned)p->domain, p->bus, p->dev, p->func);
	}
	b->userdata = (void *)(intptr_t)(t->n_bridges + 1);
	return (int)t->n_bridges++;
}

static void conv_pci(struct probe_conv *c, hwloc_obj_t o, struct topo_pci *p)
{
	const struct hwloc_pcidev_attr_s *a = &o->attr->pcidev;
	int chain[MAX_BRIDGE_DEPTH + 1];
	size_t n = 0;
	hwloc_obj_t up, local;

	p->domain = a->domain;
	p->bus = a->bus;
	p->dev = a->dev;
	p->func = a->func;
	/* encode-ok: a bus id's widths, the size of busid */
	snprintf(p->busid, sizeof(p->busid), "%04x:%02x:%02x.%01x",
		 p->domain, p->bus, p->dev, p->func);
	p->vendor = a->vendor_id;
	p->device = a->device_id;
	p->class_id = a->class_id;
	p->link_gbps = a->linkspeed;
	for (up = o->parent; up && up->type == HWLOC_OBJ_BRIDGE; up = up->parent) {
		if (n > MAX_BRIDGE_DEPTH) {
			probe_conv_fail(c, "pci bridges nested deeper than %d", MAX_BRIDGE_DEPTH);
			return;
		}
		chain[n++] = bridge_index(c, up, 0);
	}
	p->bridges = xmalloc((n ? n : 1) * sizeof(*p->bridges));
	for (size_t i = 0; i < n; i++)
		p->bridges[i] = chain[n - 1 - i];
	p->n_bridges = n;
	local = hwloc_get_non_io_ancestor_obj(c->topo, o);
	if (local) {
		probe_conv_cpuset(c, local->cpuset, &p->cpuset);
		probe_conv_nodeset(c, local->nodeset, &p->nodeset);
	}
}

static void strv_push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

static bool is_compute_osdev(hwloc_obj_t os)
{
	const char *type;

	if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
		return false;
	/* OpenCL also lists CPUs and FPGAs; only its GPUs are GPUs. */
	type = hwloc_obj_get_info_by_name(os, "OpenCLDeviceType");
	return !type || !strcmp(type, "GPU");
}

/* One physical GPU per PCI device, whatever OS devices sit below it.
 * Debian's hwloc has no CUDA/NVML plugin, so a bare PCI device must count:
 * NVIDIA or AMD display-class (03xx) devices are GPUs, except an AMD VGA
 * controller (0300) with no compute OS device - that is a server board's
 * display chip (e.g. the ATI ES1000 in 24em64t-2n6c2t-pci.xml), as are
 * ASPEED/Matrox BMC displays, which fail the vendor test.  NVSwitches
 * (NVIDIA class 0680) and bridges are not display-class. */
static bool is_gpu(hwloc_obj_t o, bool has_compute)
{
	const struct hwloc_pcidev_attr_s *a = &o->attr->pcidev;
	unsigned base = a->class_id >> 8;

	if (o->subtype && !strcmp(o->subtype, "NVSwitch"))
		return false;
	if (base == 0x06)
		return false;
	if (has_compute)
		return true;
	if (base != 0x03)
		return false;
	if (a->vendor_id == PCI_VENDOR_NVIDIA)
		return true;
	return a->vendor_id == PCI_VENDOR_AMD && a->class_id != 0x0300;
}

/* SR-IOV virtual functions share their physical function's port, so they
 * are not NICs of their own.  hwloc does not mark them: sysfs does (a
 * physfn link) on a live machine, and pci.ids names them "... Virtual
 * Function" in both live and saved topologies. */
static bool is_virtual_function(struct probe_conv *c, hwloc_obj_t o, const char *busid)
{
	const char *name = hwloc_obj_get_info_by_name(o, "PCIDevice");
	char path[96];

	if (name && strcasestr(name, "virtual function"))
		return true;
	if (!c->live)
		return false;
	/* a cut path would ask about another device */
	if (strfmt(path, sizeof(path), "/sys/bus/pci/devices/%s/physfn", busid))
		return false;
	return access(path, F_OK) == 0;
}

static void add_gpu(struct probe_conv *c, hwloc_obj_t o)
{
	struct node_topo *t = c->t;
	struct topo_gpu *g;
	hwloc_obj_t os, named = NULL;

	t->gpus = xrealloc(t->gpus, (t->n_gpus + 1) * sizeof(*t->gpus));
	g = &t->gpus[t->n_gpus++];
	memset(g, 0, sizeof(*g));
	conv_pci(c, o, &g->pci);
	for (os = o->io_first_child; os; os = os->next_sibling) {
		if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name)
			continue;
		strv_push(&g->osdevs, &g->n_osdevs, os->name);
		if (!named && hwloc_obj_get_info_by_name(os, "GPUModel"))
			named = os;
		for (unsigned i = 0; i < os->infos_count && !g->uuid; i++) {
			size_t len = strlen(os->infos[i].name);

			if (len >= 4 && !strcmp(os->infos[i].name + len - 4, "UUID"))
				g->uuid = xstrdup(os->infos[i].value);
		}
	}
	g->vendor = probe_conv_info_dup(named, "GPUVendor");
	if (!g->vendor)
		g->vendor = probe_conv_info_dup(o, "PCIVendor");
	if (!g->vendor)
		g->vendor = xasprintf("%04x", g->pci.vendor);
	g->model = probe_conv_info_dup(named, "GPUModel");
	if (!g->model)
		g->model = probe_conv_info_dup(o, "PCIDevice");
	if (!g->model)
		g->model = xasprintf("%04x:%04x", g->pci.vendor, g->pci.device);
	g->numa = topo_numa_by_os(t, (unsigned)(bitmap_first(&g->pci.nodeset)));
	if (bitmap_is_empty(&g->pci.nodeset))
		g->numa = -1;
}

static void add_nic(struct probe_conv *c, hwloc_obj_t o)
{
	struct node_topo *t = c->t;
	struct topo_nic *n;
	hwloc_obj_t os;

	t->nics = xrealloc(t->nics, (t->n_nics + 1) * sizeof(*t->nics));
	n = &t->nics[t->n_nics++];
	memset(n, 0, sizeof(*n));
	conv_pci(c, o, &n->pci);
	for (os = o->io_first_child; os; os = os->next_sibling) {
		if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name)
			continue;
		if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			strv_push(&n->ofed, &n->n_ofed, os->name);
		else if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK)
			strv_push(&n->net, &n->n_net, os->name);
		else
			continue;
		for (unsigned i = 0; i < os->infos_count; i++) {
			struct topo_attr *at;

			n->attrs = xrealloc(n->attrs, (n->n_attrs + 1) * sizeof(*n->attrs));
			at = &n->attrs[n->n_attrs++];
			at->name = xasprintf("%s:%s", os->name, os->infos[i].name);
			at->value = xstrdup(os->infos[i].value ? os->infos[i].value : "");
		}
	}
	n->vendor = probe_conv_info_dup(o, "PCIVendor");
	if (!n->vendor)
		n->vendor = xasprintf("%04x", n->pci.vendor);
	n->model = probe_conv_info_dup(o, "PCIDevice");
	if (!n->model)
		n->model = xasprintf("%04x:%04x", n->pci.vendor, n->pci.device);
	n->numa = bitmap_is_empty(&n->pci.nodeset) ? -1 :
		  topo_numa_by_os(t, (unsigned)bitmap_first(&n->pci.nodeset));
}

static void find_devices(struct probe_conv *c)
{
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_pcidev(c->topo, o)) && !c->failed) {
		bool compute = false, net = false;
		char busid[TOPO_BUSID_LEN];
		hwloc_obj_t os;

		for (os = o->io_first_child; os; os = os->next_sibling) {
			if (os->type != HWLOC_OBJ_OS_DEVICE)
				continue;
			compute |= is_compute_osdev(os);
			net |= os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
			       os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
		}
		/* encode-ok: a bus id's widths, the size of busid */
		snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%01x",
			 (unsigned)o->attr->pcidev.domain, o->attr->pcidev.bus,
			 o->attr->pcidev.dev, o->attr->pcidev.func);
		if (is_gpu(o, compute))
			add_gpu(c, o);
		else if (net && !is_virtual_function(c, o, busid))
			add_nic(c, o);
	}
}

static int cmp_pci(const struct topo_pci *x, const struct topo_pci *y)
{
	uint64_t a = (uint64_t)x->domain << 24 | x->bus << 16 | x->dev << 8 | x->func;
	uint64_t b = (uint64_t)y->domain << 24 | y->bus << 16 | y->dev << 8 | y->func;

	return (a > b) - (a < b);
}

static int cmp_gpu(const void *a, const void *b)
{
	return cmp_pci(&((const struct topo_gpu *)a)->pci, &((const struct topo_gpu *)b)->pci);
}

static int cmp_nic(const void *a, const void *b)
{
	return cmp_pci(&((const struct topo_nic *)a)->pci, &((const struct topo_nic *)b)->pci);
}

/* GPUs and NICs in PCI bus order, so rank i's GPU is the same on every
 * node of one kind, whatever order hwloc found them in. */
void probe_pci_devices(struct probe_conv *c)
{
	struct node_topo *t = c->t;

	find_devices(c);
	if (c->failed)
		return;
	if (t->n_gpus)
		qsort(t->gpus, t->n_gpus, sizeof(*t->gpus), cmp_gpu);
	if (t->n_nics)
		qsort(t->nics, t->n_nics, sizeof(*t->nics), cmp_nic);
}
