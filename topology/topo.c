/* topo.c - lifecycle and small queries for struct node_topo.
 * Core (pure): memory only. */
#include "topology/topo.h" // defines: struct node_topo, topo_*

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void topo_init(struct node_topo *t)
{
	memset(t, 0, sizeof(*t));
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void pci_release(struct topo_pci *p)
{
	free(p->bridges);
	bitmap_release(&p->cpuset);
	bitmap_release(&p->nodeset);
}

void topo_release(struct node_topo *t)
{
	if (!t)
		return;
	free(t->source);
	free(t->hostname);
	free(t->cpu_flags);
	for (size_t i = 0; i < t->n_packages; i++) {
		free(t->packages[i].model);
		bitmap_release(&t->packages[i].cpuset);
	}
	free(t->packages);
	for (size_t i = 0; i < t->n_numa; i++)
		bitmap_release(&t->numa[i].cpuset);
	free(t->numa);
	for (size_t i = 0; i < t->n_cores; i++)
		bitmap_release(&t->cores[i].pus);
	free(t->cores);
	free(t->bridges);
	for (size_t i = 0; i < t->n_gpus; i++) {
		struct topo_gpu *g = &t->gpus[i];

		pci_release(&g->pci);
		free(g->vendor);
		free(g->model);
		free(g->uuid);
		strv_free(g->osdevs, g->n_osdevs);
	}
	free(t->gpus);
	for (size_t i = 0; i < t->n_nics; i++) {
		struct topo_nic *n = &t->nics[i];

		pci_release(&n->pci);
		free(n->vendor);
		free(n->model);
		strv_free(n->ofed, n->n_ofed);
		strv_free(n->net, n->n_net);
		for (size_t j = 0; j < n->n_attrs; j++) {
			free(n->attrs[j].name);
			free(n->attrs[j].value);
		}
		free(n->attrs);
	}
	free(t->nics);
	bitmap_release(&t->cpuset);
	bitmap_release(&t->allowed);
	bitmap_release(&t->nodeset);
	topo_init(t);
}

const char *topo_nic_name(const struct topo_nic *nic)
{
	if (nic->n_ofed)
		return nic->ofed[0];
	if (nic->n_net)
		return nic->net[0];
	return nic->pci.busid;
}

int topo_numa_by_os(const struct node_topo *t, unsigned os_index)
{
	for (size_t i = 0; i < t->n_numa; i++)
		if (t->numa[i].os_index == os_index)
			return (int)i;
	return -1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * UINT64_C(0x9e3779b97f4a7c15);
	return h ^ (h >> 29);
}

static uint64_t mix_pci(uint64_t h, const struct topo_pci *p)
{
	h = mix(h, (uint64_t)p->domain << 24 | p->bus << 16 | p->dev << 8 | p->func);
	h = mix(h, p->n_bridges);
	for (size_t i = 0; i < p->n_bridges; i++)
		h = mix(h, (uint64_t)p->bridges[i]);
	h = bitmap_hash(&p->cpuset, h);
	return bitmap_hash(&p->nodeset, h);
}

uint64_t topo_fingerprint(const struct node_topo *t)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	h = mix(h, t->n_packages);
	h = mix(h, t->n_numa);
	for (size_t i = 0; i < t->n_numa; i++) {
		h = mix(h, t->numa[i].os_index);
		h = bitmap_hash(&t->numa[i].cpuset, h);
	}
	h = mix(h, t->n_cores);
	for (size_t i = 0; i < t->n_cores; i++) {
		const struct topo_core *c = &t->cores[i];

		h = mix(h, (uint64_t)(uint32_t)c->package << 32 | (uint32_t)c->numa);
		h = mix(h, (uint64_t)(uint32_t)c->l3 << 32 | c->logical_index);
		h = bitmap_hash(&c->pus, h);
	}
	h = mix(h, t->n_bridges);
	for (size_t i = 0; i < t->n_bridges; i++)
		h = mix(h, (uint64_t)(uint32_t)t->bridges[i].parent << 1 | t->bridges[i].host);
	h = mix(h, t->n_gpus);
	for (size_t i = 0; i < t->n_gpus; i++)
		h = mix_pci(h, &t->gpus[i].pci);
	h = mix(h, t->n_nics);
	for (size_t i = 0; i < t->n_nics; i++) {
		h = mix_pci(h, &t->nics[i].pci);
		h = mix(h, t->nics[i].n_ofed);
	}
	return bitmap_hash(&t->allowed, h);
}

int topo_parse_busid(const char *s, unsigned *domain, unsigned *bus,
		     unsigned *dev, unsigned *func)
{
	unsigned d = 0, b, v, f;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &d, &b, &v, &f, &n) == 4 && !s[n])
		goto ok;
	d = 0;
	n = 0;
	if (sscanf(s, "%x:%x.%x%n", &b, &v, &f, &n) == 3 && !s[n])
		goto ok;
	return -1;
ok:
	if (b > 0xff || v > 0x1f || f > 7)
		return -1;
	*domain = d;
	*bus = b;
	*dev = v;
	*func = f;
	return 0;
}

void topo_local_cores(const struct node_topo *t, const struct topo_pci *pci,
		      struct bitmap *cores)
{
	bitmap_zero(cores);
	for (size_t i = 0; i < t->n_cores; i++) {
		int n = t->cores[i].numa;

		if (n >= 0 && bitmap_test(&pci->nodeset, t->numa[n].os_index))
			bitmap_set(cores, (unsigned)i);
	}
	if (bitmap_is_empty(cores))
		for (size_t i = 0; i < t->n_cores; i++)
			if (bitmap_intersects(&t->cores[i].pus, &pci->cpuset))
				bitmap_set(cores, (unsigned)i);
	if (bitmap_is_empty(cores) && t->n_cores)
		bitmap_set_range(cores, 0, (unsigned)t->n_cores - 1);
}
