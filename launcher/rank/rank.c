/* rank.c - rank, local rank and world from Slurm or Open MPI variables.
 * Core: reads variables through a callback, never getenv() itself. */
#include "launcher/rank/rank.h" // defines: struct rank_info, rank_from_env
#include "common/diag.h"      // defines: diag_add
#include "common/sbuf.h"      // defines: struct sbuf, xstrdup

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *rank_source_name(enum rank_source s)
{
	static const char *const names[] = { "pmix", "slurm", "ompi", "single" };

	return (unsigned)s < 4 ? names[s] : "?";
}

void rank_info_release(struct rank_info *ri)
{
	if (!ri)
		return;
	free(ri->hostname);
	free(ri->master_addr);
	free(ri->job_key);
	memset(ri, 0, sizeof(*ri));
}

/* Reads an unsigned decimal variable; -1 when unset, -2 when malformed. */
static long get_uint(const char *(*get)(void *, const char *), void *ctx, const char *name)
{
	const char *s = get(ctx, name);
	char *end;
	unsigned long v;

	if (!s)
		return -1;
	if (!isdigit((unsigned char)*s))
		return -2;
	v = strtoul(s, &end, 10);
	if (*end || v > 1u << 30)
		return -2;
	return (long)v;
}

char *rank_first_host(const char *list)
{
	size_t len = strcspn(list, ",[");
	struct sbuf host = SBUF_INIT;

	if (!*list)
		return NULL;
	sbuf_add(&host, list, len);
	if (list[len] == '[') {
		const char *p = list + len + 1;
		size_t digits = strspn(p, "0123456789");

		if (!digits || (p[digits] != '-' && p[digits] != ',' && p[digits] != ']')) {
			sbuf_release(&host);
			return NULL;
		}
		sbuf_add(&host, p, digits); /* keeps zero padding: node[001-004] */
		p = strchr(p, ']');
		if (!p) {
			sbuf_release(&host);
			return NULL;
		}
		sbuf_add(&host, p + 1, strcspn(p + 1, ",["));
	}
	if (!host.len) {
		sbuf_release(&host);
		return NULL;
	}
	return sbuf_detach(&host, NULL);
}

unsigned rank_tasks_on_node(const char *list, unsigned node)
{
	unsigned seen = 0;

	while (*list) {
		char *end;
		unsigned long count = strtoul(list, &end, 10), times = 1;

		if (end == list)
			return 0;
		if (!strncmp(end, "(x", 2)) {
			times = strtoul(end + 2, &end, 10);
			if (*end++ != ')' || !times)
				return 0;
		}
		if (node < seen + times)
			return (unsigned)count;
		seen += (unsigned)times;
		if (*end == ',')
			end++;
		else if (*end)
			return 0;
		list = end;
	}
	return 0;
}

unsigned rank_master_port(const char *job_key)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)job_key; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return 20000 + (unsigned)(h % 12000);
}

static const char *first_of(const char *(*get)(void *, const char *), void *ctx,
			    const char *a, const char *b)
{
	const char *v = get(ctx, a);

	return v ? v : get(ctx, b);
}

static int bad_var(struct diag_list *dl, const char *name, const char *why)
{
	diag_add(dl, DIAG_ERROR, "environment", 0, 0, name, "%s", why);
	return -1;
}

/* Inside a Slurm job step: srun sets SLURM_STEP_ID for every task; the
 * batch script itself has SLURM_PROCID too, but is not a rank of a step. */
static int from_slurm(const char *(*get)(void *, const char *), void *ctx,
		      const char *hostname, struct rank_info *ri, struct diag_list *dl)
{
	long rank = get_uint(get, ctx, "SLURM_PROCID");
	long world = get_uint(get, ctx, "SLURM_STEP_NUM_TASKS");
	long local = get_uint(get, ctx, "SLURM_LOCALID");
	long node = get_uint(get, ctx, "SLURM_NODEID");
	long nodes = get_uint(get, ctx, "SLURM_STEP_NUM_NODES");
	const char *tpn = first_of(get, ctx, "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE");
	const char *list = first_of(get, ctx, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST");
	const char *name = get(ctx, "SLURMD_NODENAME");
	unsigned local_size;

	if (world < 0)
		world = get_uint(get, ctx, "SLURM_NTASKS");
	if (nodes < 0)
		nodes = get_uint(get, ctx, "SLURM_NNODES");
	if (rank < 0 || world < 1)
		return bad_var(dl, "SLURM_PROCID", "needs SLURM_NTASKS or SLURM_STEP_NUM_TASKS too");
	if (rank >= world)
		return bad_var(dl, "SLURM_PROCID", "is not below the number of tasks");
	if (local < 0 || node < 0 || nodes < 1 || node >= nodes)
		return bad_var(dl, "SLURM_LOCALID", "SLURM_LOCALID, SLURM_NODEID and SLURM_NNODES are missing or inconsistent");
	local_size = tpn ? rank_tasks_on_node(tpn, (unsigned)node) : 0;
	if (!local_size || (unsigned)local >= local_size)
		return bad_var(dl, "SLURM_STEP_TASKS_PER_NODE", "does not give this node more tasks than SLURM_LOCALID");
	ri->source = RANK_SOURCE_SLURM;
	ri->rank = (unsigned)rank;
	ri->world_size = (unsigned)world;
	ri->local_rank = (unsigned)local;
	ri->local_size = local_size;
	ri->node_rank = (unsigned)node;
	ri->num_nodes = (unsigned)nodes;
	ri->hostname = xstrdup(name ? name : hostname);
	ri->master_addr = list ? rank_first_host(list) : NULL;
	if (!ri->master_addr)
		ri->master_addr = xstrdup(nodes == 1 ? ri->hostname : "");
	ri->job_key = xasprintf("slurm:%s.%s", get(ctx, "SLURM_JOB_ID") ? get(ctx, "SLURM_JOB_ID") : "?",
				get(ctx, "SLURM_STEP_ID"));
	return 0;
}

static int from_ompi(const char *(*get)(void *, const char *), void *ctx,
		     const char *hostname, struct rank_info *ri, struct diag_list *dl)
{
	long rank = get_uint(get, ctx, "OMPI_COMM_WORLD_RANK");
	long world = get_uint(get, ctx, "OMPI_COMM_WORLD_SIZE");
	long local = get_uint(get, ctx, "OMPI_COMM_WORLD_LOCAL_RANK");
	long local_size = get_uint(get, ctx, "OMPI_COMM_WORLD_LOCAL_SIZE");
	const char *ns = first_of(get, ctx, "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid");

	if (world < 1 || rank < 0 || rank >= world)
		return bad_var(dl, "OMPI_COMM_WORLD_RANK", "is missing or not below OMPI_COMM_WORLD_SIZE");
	if (local < 0 || local_size < 1 || local >= local_size || local_size > world)
		return bad_var(dl, "OMPI_COMM_WORLD_LOCAL_RANK", "is missing or not below OMPI_COMM_WORLD_LOCAL_SIZE");
	ri->source = RANK_SOURCE_OMPI;
	ri->rank = (unsigned)rank;
	ri->world_size = (unsigned)world;
	ri->local_rank = (unsigned)local;
	ri->local_size = (unsigned)local_size;
	/* Open MPI's default by-slot mapping fills nodes in rank order. */
	ri->num_nodes = (unsigned)((world + local_size - 1) / local_size);
	ri->node_rank = (unsigned)(rank / local_size);
	ri->hostname = xstrdup(hostname);
	ri->master_addr = xstrdup(ri->num_nodes == 1 ? hostname : "");
	ri->job_key = xasprintf("ompi:%s", ns ? ns : "?");
	return 0;
}

bool rank_in_slurm_step(const char *(*get)(void *ctx, const char *name), void *ctx)
{
	return get(ctx, "SLURM_STEP_ID") && get(ctx, "SLURM_PROCID");
}

int rank_from_env(const char *(*get)(void *ctx, const char *name), void *ctx, const char *hostname,
		  struct rank_info *ri, struct diag_list *dl)
{
	memset(ri, 0, sizeof(*ri));
	if (rank_in_slurm_step(get, ctx))
		return from_slurm(get, ctx, hostname, ri, dl);
	if (get(ctx, "OMPI_COMM_WORLD_RANK"))
		return from_ompi(get, ctx, hostname, ri, dl);
	ri->source = RANK_SOURCE_SINGLE;
	ri->world_size = ri->local_size = ri->num_nodes = 1;
	ri->hostname = xstrdup(hostname);
	ri->master_addr = xstrdup("127.0.0.1");
	ri->job_key = xasprintf("single:%s", hostname);
	return 0;
}
