/* plan_nic.c - which NICs each slice of a plan uses, and why.
 * Pure core: reads struct node_topo and the slices' GPUs and node sets;
 * split from plan.c, which decides GPUs and cores.  Rules in plan.h. */
#include "topology/plan_nic.h"  // defines: plan_nic_assign
#include "topology/pathclass.h" // defines: pathclass_between, pathclass_name
#include "common/sbuf.h"           // defines: struct sbuf, x* allocators

#include <stdbool.h>
#include <stdlib.h>

/* The NICs a rank may use: OpenFabrics devices when the node has any
 * (what NCCL and UCX use for RDMA), else every network interface. */
static bool nic_candidate(const struct node_topo *t, size_t i, bool ofed_only)
{
	return !ofed_only || t->nics[i].n_ofed;
}

struct nic_pick {
	enum pathclass cls;
	struct bitmap set;   /* NIC indices at class cls */
	int who;             /* GPU index, or rank */
};

static void pick_best(const struct node_topo *t, struct nic_pick *p, const struct slice *s,
		      bool ofed_only)
{
	p->cls = PATHCLASS_SYS;
	bitmap_init(&p->set);
	for (size_t i = 0; i < t->n_nics; i++) {
		enum pathclass k;

		if (!nic_candidate(t, i, ofed_only))
			continue;
		if (s->gpu >= 0)
			k = pathclass_between(t, &t->gpus[s->gpu].pci, &t->nics[i].pci);
		else
			k = bitmap_intersects(&t->nics[i].pci.nodeset, &s->nodeset)
			    ? PATHCLASS_NODE : PATHCLASS_SYS;
		if (k < p->cls || bitmap_is_empty(&p->set)) {
			bitmap_zero(&p->set);
			p->cls = k;
		}
		if (k == p->cls)
			bitmap_set(&p->set, (unsigned)i);
	}
}

static void add_nic_names(const struct node_topo *t, struct sbuf *sb, const int *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_addf(sb, "%s%s", i ? "," : "", topo_nic_name(&t->nics[v[i]]));
}

/* Gives entity e (a GPU, or a rank without one) its fair share of the NICs
 * at its best class: the k entities with the same best set split its m
 * NICs in contiguous blocks (m >= k) or share NIC floor(i*m/k). */
static void share_nics(const struct node_topo *t, enum plan_nic_policy policy,
		       struct nic_pick *picks, size_t n, size_t e,
		       struct slice *s)
{
	struct bitmap peers = BITMAP_INIT;
	struct sbuf why = SBUF_INIT;
	size_t k = 0, pos = 0, m = bitmap_count(&picks[e].set);
	int nic, j = 0;

	for (size_t i = 0; i < n; i++)
		if (picks[i].cls == picks[e].cls && bitmap_equal(&picks[i].set, &picks[e].set)) {
			if (i < e)
				pos++;
			k++;
			bitmap_set(&peers, (unsigned)picks[i].who);
		}
	s->nics = xmalloc((m + 1) * sizeof(*s->nics));
	s->n_nics = 0;
	s->nic_class = picks[e].cls;
	bitmap_foreach(nic, &picks[e].set) {
		if (m >= k ? (size_t)j * k / m == pos : (size_t)j == pos * m / k)
			s->nics[s->n_nics++] = nic;
		j++;
	}
	if (s->gpu >= 0) {
		sbuf_addf(&why, "%s to gpu %d", pathclass_name(s->nic_class), s->gpu);
	} else {
		sbuf_addf(&why, "%s to numa ", pathclass_name(s->nic_class));
		bitmap_format_list(&s->nodeset, &why);
		if (s->nic_class == PATHCLASS_SYS)
			sbuf_addstr(&why, " (no local nic)");
	}
	if (k > 1) {
		sbuf_addf(&why, m >= k ? "; %s " : "; shared by %s ", s->gpu >= 0 ? "gpus" : "ranks");
		bitmap_format_list(&peers, &why);
		if (m >= k)
			sbuf_addf(&why, " split %zu nics", m);
	} else if (m > 1) {
		sbuf_addf(&why, "; all %zu nics at that class", m);
	}
	if (policy == PLAN_NIC_SINGLE && s->n_nics > 1) {
		s->n_nics = 1;
		sbuf_addstr(&why, "; nic: single keeps ");
		add_nic_names(t, &why, s->nics, 1);
	}
	s->why = sbuf_detach(&why, NULL);
	bitmap_release(&peers);
}

void plan_nic_assign(const struct node_topo *t, enum plan_nic_policy policy, struct plan *p)
{
	struct nic_pick *picks;
	size_t *entity = xmalloc(p->n * sizeof(*entity));
	size_t n = 0, n_cand = 0;
	bool ofed_only = false;

	for (size_t i = 0; i < t->n_nics; i++)
		ofed_only |= t->nics[i].n_ofed > 0;
	for (size_t i = 0; i < t->n_nics; i++)
		n_cand += nic_candidate(t, i, ofed_only);
	if (policy == PLAN_NIC_NONE || !n_cand) {
		for (size_t r = 0; r < p->n; r++)
			p->slices[r].why = xstrdup(n_cand ? "nic: none" : "no network device on this node");
		free(entity);
		return;
	}
	/* Entities share NICs: the GPUs in use (ranks on one GPU share its
	 * NICs), or the ranks themselves on a node planned without GPUs. */
	picks = xcalloc(p->n, sizeof(*picks));
	for (size_t r = 0; r < p->n; r++) {
		const struct slice *s = &p->slices[r];
		size_t e;

		/* Ranks on one GPU share its pick; ranks without a GPU each
		 * have their own. */
		e = n;
		for (size_t i = 0; i < n && s->gpu >= 0; i++)
			if (picks[i].who == s->gpu)
				e = i;
		if (e == n) {
			pick_best(t, &picks[n], s, ofed_only);
			picks[n].who = s->gpu >= 0 ? s->gpu : (int)r;
			n++;
		}
		entity[r] = e;
	}
	for (size_t r = 0; r < p->n; r++)
		share_nics(t, policy, picks, n, entity[r], &p->slices[r]);
	for (size_t e = 0; e < n; e++)
		bitmap_release(&picks[e].set);
	free(picks);
	free(entity);
}

