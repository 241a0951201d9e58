/* plan.c - share one node's GPUs, NICs and cores among its local ranks.
 * Pure core: struct node_topo in, struct slice[] out; no hwloc, no getenv.
 * Every rank computes the same plan, so binding needs no communication.
 * The rules are stated once, in plan.h. */
#include "topology/plan.h"      // defines: struct plan, struct slice, plan_*
#include "topology/plan_nic.h"  // defines: plan_nic_assign
#include "common/diag.h"           // defines: struct diag_list
#include "common/sbuf.h"           // defines: struct sbuf, x* allocators

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Ranks whose home (the cores they should live on) is the same set; with
 * GPUs, the ranks of every GPU attached to one NUMA node. */
struct group {
	struct bitmap home;  /* core indices */
	unsigned *ranks;     /* ascending */
	size_t n;
};

struct ctx {
	const struct node_topo *t;
	const struct plan_request *req;
	struct plan *p;
	struct bitmap allowed;  /* PUs */
	struct bitmap ok;       /* core indices with at least one allowed PU */
	size_t n_ok;
	int *visible;           /* GPU indices, in device order */
	size_t g;
	struct group *groups;
	size_t n_groups;
	size_t *rank_group;
	struct bitmap *cores;   /* per rank: core indices it got */
};

static void group_add(struct ctx *c, const struct bitmap *home, unsigned r)
{
	struct group *gr;
	size_t i;

	/* O(groups) per rank: groups <= NUMA nodes, a handful. */
	for (i = 0; i < c->n_groups; i++)
		if (bitmap_equal(&c->groups[i].home, home))
			break;
	if (i == c->n_groups) {
		c->groups = xrealloc(c->groups, (c->n_groups + 1) * sizeof(*c->groups));
		gr = &c->groups[c->n_groups++];
		bitmap_init(&gr->home);
		bitmap_copy(&gr->home, home);
		gr->ranks = NULL;
		gr->n = 0;
	}
	gr = &c->groups[i];
	gr->ranks = xrealloc(gr->ranks, (gr->n + 1) * sizeof(*gr->ranks));
	gr->ranks[gr->n++] = r;
	c->rank_group[r] = i;
}

/* Without GPUs, the units ranks spread over: NUMA nodes holding allowed
 * cores, else packages, else the whole node. */
static size_t cpu_domains(struct ctx *c, struct bitmap **out)
{
	const struct node_topo *t = c->t;
	struct bitmap *d = xcalloc(t->n_numa + t->n_packages + 1, sizeof(*d));
	size_t n = 0;

	for (int pass = 0; pass < 2 && !n; pass++) {
		size_t units = pass ? t->n_packages : t->n_numa;

		for (size_t u = 0; u < units; u++) {
			bitmap_init(&d[n]);
			for (size_t i = 0; i < t->n_cores; i++)
				if ((pass ? t->cores[i].package : t->cores[i].numa) == (int)u)
					bitmap_set(&d[n], (unsigned)i);
			if (bitmap_intersects(&d[n], &c->ok))
				n++;
			else
				bitmap_release(&d[n]);
		}
	}
	if (!n) {
		bitmap_init(&d[0]);
		bitmap_set_range(&d[0], 0, (unsigned)t->n_cores - 1);
		n = 1;
	}
	*out = d;
	return n;
}

static void build_groups(struct ctx *c)
{
	const struct node_topo *t = c->t;
	unsigned R = c->req->ranks;
	struct bitmap home = BITMAP_INIT;

	if (c->g) {
		for (unsigned r = 0; r < R; r++) {
			size_t v = (size_t)((unsigned long long)r * c->g / R);
			struct slice *s = &c->p->slices[r];

			s->gpu = c->visible[v];
			s->gpu_ordinal = (int)v;
			memcpy(s->busid, t->gpus[s->gpu].pci.busid, sizeof(s->busid));
			topo_local_cores(t, &t->gpus[s->gpu].pci, &home);
			group_add(c, &home, r);
		}
	} else {
		struct bitmap *dom;
		size_t D = cpu_domains(c, &dom);

		for (unsigned r = 0; r < R; r++) {
			size_t lo, hi;

			if (R >= D) {
				lo = (size_t)r * D / R;
				hi = lo + 1;
			} else {
				lo = (size_t)r * D / R;
				hi = (size_t)(r + 1) * D / R;
			}
			bitmap_zero(&home);
			for (size_t d = lo; d < hi; d++)
				bitmap_or(&home, &home, &dom[d]);
			group_add(c, &home, r);
		}
		for (size_t d = 0; d < D; d++)
			bitmap_release(&dom[d]);
		free(dom);
	}
	bitmap_release(&home);
}

/* Cores (indices) nearest a home that has none allowed: allowed cores of
 * the packages the home touches, else every allowed core. */
static void nearest_cores(struct ctx *c, const struct bitmap *home, struct bitmap *out)
{
	const struct node_topo *t = c->t;
	int i;

	bitmap_zero(out);
	bitmap_foreach(i, home) {
		int pkg = t->cores[i].package;

		for (size_t j = 0; pkg >= 0 && j < t->n_cores; j++)
			if (t->cores[j].package == pkg && bitmap_test(&c->ok, (unsigned)j))
				bitmap_set(out, (unsigned)j);
	}
	if (bitmap_is_empty(out))
		bitmap_copy(out, &c->ok);
}

static void note(struct ctx *c, unsigned r, const char *what)
{
	struct slice *s = &c->p->slices[r];
	struct sbuf sb = SBUF_INIT;

	if (s->cpu_note)
		return;
	if (s->gpu >= 0)
		sbuf_addf(&sb, "gpu %d's numa node has %s; using the nearest allowed cores",
			  s->gpu, what);
	else
		sbuf_addf(&sb, "its numa node has %s; using the nearest allowed cores", what);
	s->cpu_note = sbuf_detach(&sb, NULL);
}

/* Takes the first n set bits of from (ascending) into to, clearing them in
 * from. */
static void take(struct bitmap *to, struct bitmap *from, size_t n)
{
	int i = -1;

	while (n-- > 0 && (i = bitmap_next(from, i)) >= 0) {
		bitmap_set(to, (unsigned)i);
		bitmap_clr(from, (unsigned)i);
	}
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* Group indices, smaller allowed homes first, then by first rank.
 * Insertion sort: a handful of groups. */
static void order_groups(struct ctx *c, size_t *order)
{
	size_t *size = xmalloc((c->n_groups + 1) * sizeof(*size));
	struct bitmap tmp = BITMAP_INIT;

	for (size_t k = 0; k < c->n_groups; k++) {
		bitmap_and(&tmp, &c->groups[k].home, &c->ok);
		size[k] = bitmap_count(&tmp);
		order[k] = k;
	}
	for (size_t i = 1; i < c->n_groups; i++) {
		size_t key = order[i], j = i;

		while (j > 0 && size[order[j - 1]] > size[key]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = key;
	}
	bitmap_release(&tmp);
	free(size);
}

/* One exclusive pass with every share capped at cap cores.  Returns 0, or
 * -1 when the ranks left without a home cannot get one core each. */
static int exclusive_pass(struct ctx *c, const size_t *order, size_t cap)
{
	struct bitmap free_ = BITMAP_INIT, avail = BITMAP_INIT, near = BITMAP_INIT;
	unsigned *fallback = xmalloc((c->req->ranks + 1) * sizeof(*fallback));
	size_t nf = 0, share;
	int rc = 0;

	bitmap_copy(&free_, &c->ok);
	for (unsigned r = 0; r < c->req->ranks; r++)
		bitmap_zero(&c->cores[r]);
	/* Smaller homes first, so a home nested in a larger one is served
	 * before the larger one takes its cores. */
	for (size_t k = 0; k < c->n_groups; k++) {
		struct group *gr = &c->groups[order[k]];
		size_t n;

		bitmap_and(&avail, &gr->home, &free_);
		n = bitmap_count(&avail);
		if (n < gr->n) {
			for (size_t i = 0; i < gr->n; i++)
				fallback[nf++] = gr->ranks[i];
			continue;
		}
		share = n / gr->n < cap ? n / gr->n : cap;
		for (size_t i = 0; i < gr->n; i++) {
			take(&c->cores[gr->ranks[i]], &avail, share);
			bitmap_andnot(&free_, &free_, &c->cores[gr->ranks[i]]);
		}
	}
	if (nf > bitmap_count(&free_)) {
		rc = -1;
		goto out;
	}
	share = nf ? bitmap_count(&free_) / nf : 0;
	qsort(fallback, nf, sizeof(*fallback), cmp_unsigned);
	for (size_t i = 0; i < nf; i++) {
		unsigned r = fallback[i];
		struct bitmap *home = &c->groups[c->rank_group[r]].home;
		size_t got;

		/* Nearest first: what is left of the home, then its package,
		 * then anything. */
		bitmap_and(&avail, home, &free_);
		take(&c->cores[r], &avail, share);
		got = bitmap_count(&c->cores[r]);
		if (got < share) {
			nearest_cores(c, home, &near);
			bitmap_and(&near, &near, &free_);
			bitmap_andnot(&near, &near, &c->cores[r]);
			take(&c->cores[r], &near, share - got);
			got = bitmap_count(&c->cores[r]);
		}
		if (got < share) {
			bitmap_andnot(&avail, &free_, &c->cores[r]);
			take(&c->cores[r], &avail, share - got);
		}
		bitmap_andnot(&free_, &free_, &c->cores[r]);
		note(c, r, "too few free allowed cores");
	}
out:
	free(fallback);
	bitmap_release(&free_);
	bitmap_release(&avail);
	bitmap_release(&near);
	return rc;
}

static int assign_exclusive(struct ctx *c)
{
	size_t *order = xmalloc((c->n_groups + 1) * sizeof(*order));
	size_t cap = SIZE_MAX;
	int rc;

	order_groups(c, order);
	/* The common case succeeds at once.  When ranks must borrow cores
	 * outside their NUMA node and none are free, shrink every share
	 * until they fit; R <= allowed cores guarantees cap = 1 fits. */
	while ((rc = exclusive_pass(c, order, cap)) && cap > 1) {
		size_t max = 0;

		for (unsigned r = 0; r < c->req->ranks; r++)
			if (bitmap_count(&c->cores[r]) > max)
				max = bitmap_count(&c->cores[r]);
		cap = max > 1 ? max - 1 : 1;
		for (unsigned r = 0; r < c->req->ranks; r++) {
			free(c->p->slices[r].cpu_note);
			c->p->slices[r].cpu_note = NULL;
		}
	}
	free(order);
	return rc;
}

static void assign_shared(struct ctx *c)
{
	const struct node_topo *t = c->t;
	struct bitmap cores = BITMAP_INIT;
	/* distinct L3 ids of one home, plus -1 for cores without an L3 */
	int *keys = xmalloc((t->n_l3 + 1) * sizeof(*keys));

	for (size_t k = 0; k < c->n_groups; k++) {
		struct group *gr = &c->groups[k];
		size_t nk = 0;
		int i;

		bitmap_and(&cores, &gr->home, &c->ok);
		if (bitmap_is_empty(&cores)) {
			nearest_cores(c, &gr->home, &cores);
			for (size_t j = 0; j < gr->n; j++)
				note(c, gr->ranks[j], "no allowed cores");
		}
		if (c->req->policy.cpu == PLAN_CPU_NODE) {
			for (size_t j = 0; j < gr->n; j++)
				bitmap_copy(&c->cores[gr->ranks[j]], &cores);
			continue;
		}
		/* core-complex: list the home's L3 ids in order of first core
		 * (cores without an L3 form one complex, key -1). */
		bitmap_foreach(i, &cores) {
			int key = t->cores[i].l3;
			size_t j;

			for (j = 0; j < nk && keys[j] != key; j++)
				;
			if (j == nk && nk <= t->n_l3)
				keys[nk++] = key;
		}
		for (size_t j = 0; j < gr->n; j++) {
			size_t lo, hi;

			if (nk >= gr->n) {
				lo = j * (nk / gr->n);
				hi = lo + nk / gr->n;
			} else {
				lo = j * nk / gr->n;
				hi = lo + 1;
			}
			bitmap_foreach(i, &cores)
				for (size_t q = lo; q < hi; q++)
					if (t->cores[i].l3 == keys[q])
						bitmap_set(&c->cores[gr->ranks[j]], (unsigned)i);
		}
	}
	free(keys);
	bitmap_release(&cores);
}

static void fill_sets(struct ctx *c, struct slice *s, const struct bitmap *cores)
{
	const struct node_topo *t = c->t;
	int i;

	bitmap_zero(&s->cpuset);
	if (c->req->policy.cpu == PLAN_CPU_NONE)
		bitmap_copy(&s->cpuset, &c->allowed);
	else
		bitmap_foreach(i, cores)
			bitmap_or(&s->cpuset, &s->cpuset, &t->cores[i].pus);
	bitmap_and(&s->cpuset, &s->cpuset, &c->allowed);
	bitmap_zero(&s->nodeset);
	for (size_t n = 0; n < t->n_numa; n++)
		if (bitmap_intersects(&t->numa[n].cpuset, &s->cpuset))
			bitmap_set(&s->nodeset, t->numa[n].os_index);
}

static int fail(struct diag_list *err, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct diag_list *err, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(err, DIAG_ERROR, "plan", 0, 0, key, fmt, ap);
	va_end(ap);
	return -1;
}

static int check_request(struct ctx *c, struct diag_list *err)
{
	const struct node_topo *t = c->t;
	const struct plan_request *req = c->req;
	struct sbuf sb = SBUF_INIT;
	int rc = 0;

	if (req->ranks < 1 || req->ranks > PLAN_MAX_RANKS)
		return fail(err, "ranks", "ranks per node must be 1..%d, got %u",
			    PLAN_MAX_RANKS, req->ranks);
	if (!t->n_cores)
		return fail(err, "", "the topology has no cores");
	bitmap_copy(&c->allowed, &t->allowed);
	if (req->allowed)
		bitmap_and(&c->allowed, &c->allowed, req->allowed);
	if (bitmap_is_empty(&c->allowed)) {
		if (req->allowed)
			bitmap_format_list(req->allowed, &sb);
		rc = fail(err, "allowed", "no allowed cpu is on this node (allowed \"%s\")", sb.buf);
		goto out;
	}
	for (size_t i = 0; i < t->n_cores; i++)
		if (bitmap_intersects(&t->cores[i].pus, &c->allowed)) {
			bitmap_set(&c->ok, (unsigned)i);
			c->n_ok++;
		}
	c->visible = xmalloc((t->n_gpus + req->n_visible_gpus + 1) * sizeof(*c->visible));
	if (req->policy.gpu == PLAN_GPU_NONE) {
		c->g = 0;
	} else if (req->visible_gpus) {
		for (size_t i = 0; i < req->n_visible_gpus; i++) {
			int v = req->visible_gpus[i];

			if (v < 0 || (size_t)v >= t->n_gpus) {
				rc = fail(err, "visible_gpus", "gpu %d is not on this node, which has %zu gpus",
					  v, t->n_gpus);
				goto out;
			}
			for (size_t j = 0; j < i; j++)
				if (req->visible_gpus[j] == v) {
					rc = fail(err, "visible_gpus", "gpu %d is listed twice", v);
					goto out;
				}
			c->visible[c->g++] = v;
		}
	} else {
		for (size_t i = 0; i < t->n_gpus; i++)
			c->visible[c->g++] = (int)i;
	}
	if (req->policy.cpu == PLAN_CPU_EXCLUSIVE && req->ranks > c->n_ok) {
		rc = fail(err, "ranks", "%u ranks need %u allowed cores with cpu: exclusive, "
			  "but only %zu are allowed", req->ranks, req->ranks, c->n_ok);
		goto out;
	}
	if (c->g && req->ranks > c->g && req->ranks % c->g) {
		rc = fail(err, "ranks", "%u ranks cannot share %zu gpus evenly; use a multiple "
			  "of %zu ranks, at most %zu, or gpu: none", req->ranks, c->g, c->g, c->g);
		goto out;
	}
out:
	sbuf_release(&sb);
	return rc;
}

int plan_slices(const struct node_topo *t, const struct plan_request *req,
		struct plan *out, struct diag_list *err)
{
	struct ctx c;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	c.t = t;
	c.req = req;
	c.p = out;
	plan_init(out);
	out->policy = req->policy;
	if (check_request(&c, err))
		goto out;
	out->n_gpus = c.g;
	out->n = req->ranks;
	out->slices = xcalloc(req->ranks, sizeof(*out->slices));
	c.rank_group = xcalloc(req->ranks, sizeof(*c.rank_group));
	c.cores = xcalloc(req->ranks, sizeof(*c.cores));
	for (unsigned r = 0; r < req->ranks; r++) {
		out->slices[r].local_rank = r;
		out->slices[r].gpu = -1;
		out->slices[r].gpu_ordinal = -1;
		out->slices[r].memory = req->policy.memory;
	}
	build_groups(&c);
	if (req->policy.cpu == PLAN_CPU_EXCLUSIVE) {
		if (assign_exclusive(&c)) {
			fail(err, "ranks", "%u ranks cannot get a core each", req->ranks);
			goto out;
		}
	} else if (req->policy.cpu != PLAN_CPU_NONE) {
		assign_shared(&c);
	}
	for (unsigned r = 0; r < req->ranks; r++) {
		fill_sets(&c, &out->slices[r], &c.cores[r]);
		if (bitmap_is_empty(&out->slices[r].cpuset)) {
			/* BUG-class: shares are >= 1 allowed core by construction. */
			fail(err, "ranks", "rank %u got no cpu", r);
			goto out;
		}
	}
	plan_nic_assign(t, req->policy.nic, out);
	rc = 0;
out:
	if (rc)
		plan_release(out);
	bitmap_release(&c.allowed);
	bitmap_release(&c.ok);
	free(c.visible);
	for (size_t k = 0; k < c.n_groups; k++) {
		bitmap_release(&c.groups[k].home);
		free(c.groups[k].ranks);
	}
	free(c.groups);
	free(c.rank_group);
	for (unsigned r = 0; c.cores && r < req->ranks; r++)
		bitmap_release(&c.cores[r]);
	free(c.cores);
	return rc;
}

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
}

void plan_release(struct plan *p)
{
	if (!p)
		return;
	for (size_t r = 0; r < p->n; r++) {
		struct slice *s = &p->slices[r];

		free(s->nics);
		bitmap_release(&s->cpuset);
		bitmap_release(&s->nodeset);
		free(s->why);
		free(s->cpu_note);
	}
	free(p->slices);
	plan_init(p);
}

