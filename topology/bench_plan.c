/* bench_plan.c - how long probing and planning take (`make bench`).
 *
 * Shell (a program: reads fixtures, reads the clock, prints).  For each
 * fixture: load + convert an hwloc XML file, and plan 8 ranks (or as many
 * as the node takes), best of several repeats.  Then planning for a
 * cluster of 8,192 nodes x 8 GPUs, "one plan per distinct topology":
 * every node's node_topo is fingerprinted (topo_fingerprint) and only
 * unseen fingerprints are planned; the naive plan-every-node loop runs as
 * the peer.  Budget: the cached cluster plan under 1 s.
 *
 * What the cluster figure does NOT include: getting each node's topology.
 * The 8,192 node_topo are three shapes loaded once (DGX A100, the same
 * with one core hidden by a cgroup, DGX H100) and pointed to 8,192 times,
 * so the figure is fingerprinting and planning from memory.  In a job each
 * node probes itself, in parallel, at the per-fixture load+conv cost of
 * the table; loading 8,192 XML files in one process would cost 8,192
 * times that, which the bench prints beside it for scale.
 *
 *     bench_plan [FIXTURE_DIR]   # default $HPT_FIXTURES, else tests/fixtures
 */
#include "topology/probe.h" // defines: probe_load
#include "topology/plan.h"  // defines: plan_slices, plan_release
#include "topology/topo.h"  // defines: struct node_topo, topo_fingerprint
#include "common/diag.h"       // defines: struct diag_list, diag_report
#include "common/sbuf.h"       // defines: xasprintf
#include "common/monoclock.h"  // defines: monoclock_s

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLUSTER_NODES 8192
#define LOAD_REPEATS 5
#define PLAN_REPEATS 50

static const char *const fixtures[] = {
	"256amd64-8n16c2t-dgxa100.xml", "224em64t-2n56c2t-dgxh100.xml",
	"80em64t-2n20c2t-4v100-1hca.xml", "144em64t-4n18c2t-snc2-cpuonly.xml",
	"nvidiaDGX2.xml", "32em64t-2n8c2t-pci-wholeio.xml", "24em64t-2n6c2t-pci.xml",
	"192em64t-12gr2n8c2t.xml", "16intel64-manyVFs.xml",
};

static int load(const char *dir, const char *name, struct node_topo *t)
{
	struct diag_list err = DIAG_LIST_INIT;
	char *path = xasprintf("%s/%s", dir, name);
	int rc = probe_load(path, t, &err);

	if (rc)
		diag_report(stderr, &err);
	diag_list_release(&err);
	free(path);
	return rc;
}

/* 8 ranks where the node takes them, else one per GPU, else 1. */
static unsigned ranks_for(const struct node_topo *t)
{
	size_t g = t->n_gpus;

	if (t->n_cores >= 8 && (!g || g >= 8 || 8 % g == 0))
		return 8;
	if (g && g <= t->n_cores)
		return (unsigned)g;
	return 1;
}

static double time_plan(const struct node_topo *t, unsigned ranks, int *ok)
{
	struct plan_request req = { ranks, PLAN_POLICY_INIT, NULL, NULL, 0 };
	double best = 1e9;

	*ok = 1;
	for (int i = 0; i < PLAN_REPEATS; i++) {
		struct diag_list err = DIAG_LIST_INIT;
		struct plan p;
		double t0 = monoclock_s();
		int rc = plan_slices(t, &req, &p, &err);
		double dt = monoclock_s() - t0;

		if (rc) {
			diag_report(stderr, &err);
			*ok = 0;
		}
		plan_release(&p);
		diag_list_release(&err);
		if (dt < best)
			best = dt;
	}
	return best;
}

/* A fingerprint -> plan cache, open addressing; a launcher would keep one
 * per job.  Sized for the handful of distinct node shapes a cluster has. */
#define CACHE_SLOTS 64

struct cache {
	uint64_t key[CACHE_SLOTS];
	struct plan plan[CACHE_SLOTS];
	bool used[CACHE_SLOTS];
	size_t n;
};

static const struct plan *cache_plan(struct cache *c, const struct node_topo *t,
				     const struct plan_request *req)
{
	uint64_t fp = topo_fingerprint(t);
	size_t i = (size_t)(fp % CACHE_SLOTS);

	while (c->used[i] && c->key[i] != fp)
		i = (i + 1) % CACHE_SLOTS;
	if (!c->used[i]) {
		struct diag_list err = DIAG_LIST_INIT;

		if (c->n + 1 >= CACHE_SLOTS || plan_slices(t, req, &c->plan[i], &err)) {
			diag_report(stderr, &err);
			diag_list_release(&err);
			return NULL;
		}
		c->used[i] = true;
		c->key[i] = fp;
		c->n++;
	}
	return &c->plan[i];
}

int main(int argc, char **argv)
{
	const char *env = getenv("HPT_FIXTURES");
	const char *dir = argc > 1 ? argv[1] : env && *env ? env : "tests/fixtures";
	struct node_topo shapes[3];
	const struct node_topo **nodes;
	struct plan_request req = { 8, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct cache cache;
	double t0, cached, naive, dgx_load = 0;
	uint32_t lcg = 12345;
	int status = 0;

	printf("%-36s %6s %6s %5s %12s %12s\n", "fixture", "cores", "gpus", "ranks",
	       "load+conv ms", "plan us");
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		double best_load = 1e9, best_plan;
		struct node_topo t;
		unsigned ranks;
		int ok;

		for (int i = 0; i < LOAD_REPEATS; i++) {
			double s = monoclock_s();

			if (load(dir, fixtures[f], &t))
				return 1;
			s = monoclock_s() - s;
			if (s < best_load)
				best_load = s;
			if (i + 1 < LOAD_REPEATS)
				topo_release(&t);
		}
		if (f == 0)
			dgx_load = best_load;
		ranks = ranks_for(&t);
		best_plan = time_plan(&t, ranks, &ok);
		printf("%-36s %6zu %6zu %5u %12.3f %12.1f%s\n", fixtures[f], t.n_cores, t.n_gpus,
		       ranks, best_load * 1e3, best_plan * 1e6, ok ? "" : "  (plan failed)");
		status |= !ok;
		topo_release(&t);
	}

	/* The cluster: DGX A100 nodes, some of them with a cgroup that hides
	 * one core (a distinct shape), and DGX H100 nodes. */
	if (load(dir, fixtures[0], &shapes[0]) || load(dir, fixtures[0], &shapes[1]) ||
	    load(dir, fixtures[1], &shapes[2]))
		return 1;
	bitmap_clr(&shapes[1].allowed, 127);
	nodes = xmalloc(CLUSTER_NODES * sizeof(*nodes));
	for (size_t i = 0; i < CLUSTER_NODES; i++) {
		lcg = lcg * 1103515245u + 12345u;
		nodes[i] = &shapes[(lcg >> 16) % 8 == 0 ? 1 : (lcg >> 16) % 8 < 3 ? 2 : 0];
	}
	memset(&cache, 0, sizeof(cache));
	t0 = monoclock_s();
	for (size_t i = 0; i < CLUSTER_NODES; i++)
		if (!cache_plan(&cache, nodes[i], &req)) {
			status = 1;
			break;
		}
	cached = monoclock_s() - t0;
	t0 = monoclock_s();
	for (size_t i = 0; i < CLUSTER_NODES; i++) {
		struct diag_list err = DIAG_LIST_INIT;
		struct plan p;

		status |= plan_slices(nodes[i], &req, &p, &err) != 0;
		plan_release(&p);
		diag_list_release(&err);
	}
	naive = monoclock_s() - t0;
	printf("\ncluster: %d nodes x 8 gpus, %zu distinct topologies\n", CLUSTER_NODES, cache.n);
	printf("  fingerprint every node, plan each distinct one: %9.3f ms (%.2f us/node)\n",
	       cached * 1e3, cached * 1e6 / CLUSTER_NODES);
	printf("  plan every node (peer):                         %9.3f ms (%.2f us/node)\n",
	       naive * 1e3, naive * 1e6 / CLUSTER_NODES);
	printf("  ratio: %.1fx faster with the cache; budget 1000 ms: %s\n", naive / cached,
	       cached < 1.0 ? "ok" : "OVER");
	printf("  (from node_topo in memory: 3 shapes loaded once.  Each node loads its own\n"
	       "   topology in parallel, %.3f ms for a DGX A100 XML; loading all %d serially\n"
	       "   would take %.1f s, which no launcher does)\n",
	       dgx_load * 1e3, CLUSTER_NODES, dgx_load * CLUSTER_NODES);
	status |= cached >= 1.0;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		plan_release(&cache.plan[i]);
	for (size_t i = 0; i < 3; i++)
		topo_release(&shapes[i]);
	free(nodes);
	return status;
}
