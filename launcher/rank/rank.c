/* rank.c - rank, local rank and world from Slurm or Open MPI variables.
 * Core: reads variables through a callback, never getenv() itself.
 * Every number is read strictly (common/envvar.h): a malformed one is
 * refused by name, never read as 0 or as another variable's stand-in. */
#include "launcher/rank/rank.h" // defines: struct rank_info, rank_from_env
#include "common/diag.h"      // defines: diag_add
#include "common/envvar.h"    // defines: envvar_int
#include "common/sbuf.h"      // defines: struct sbuf, xstrdup, sbuf_clip

#include <stdarg.h>
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

/* Ranks, tasks and nodes stay below this, as in every launcher we know
 * of; it keeps products and sums of them far from overflow. */
#define RANK_MAX (INT64_C(1) << 30)

/* The variables of one source, read strictly: a malformed one is
 * recorded (naming it and its value) and the source refused after
 * reading the rest, so every bad variable is reported at once. */
struct vars {
	const char *(*get)(void *ctx, const char *name);
	void *ctx;
	struct diag_list *dl;
	bool bad;
};

/* An unsigned decimal variable in min..RANK_MAX: -1 when unset, -2
 * when malformed (recorded). */
static long var_uint(struct vars *vs, const char *name, long min)
{
	const char *s = vs->get(vs->ctx, name);
	struct sbuf err = SBUF_INIT;
	int64_t v = -1;

	if (s && envvar_int(name, s, min, RANK_MAX, &v, &err) != ENVVAR_OK) {
		diag_add(vs->dl, DIAG_ERROR, "", 0, 0, "", "%s", err.buf);
		vs->bad = true;
		v = -2;
	}
	sbuf_release(&err);
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

/* A count of the list: digits only, 1..RANK_MAX; 0 when malformed. */
static unsigned long list_count(const char *s, char **end)
{
	size_t n = strspn(s, "0123456789");
	unsigned long v;

	*end = (char *)s;
	if (!n || n > 10)
		return 0;
	v = strtoul(s, end, 10);
	return v <= (unsigned long)RANK_MAX ? v : 0;
}

unsigned rank_tasks_on_node(const char *list, unsigned node)
{
	unsigned long seen = 0;

	while (*list) {
		char *end;
		unsigned long count = list_count(list, &end), times = 1;

		if (!count && *list != '0')
			return 0;
		if (!strncmp(end, "(x", 2)) {
			times = list_count(end + 2, &end);
			if (*end++ != ')' || !times)
				return 0;
		}
		if (node < seen + times)
			return (unsigned)count;
		seen += times; /* at most RANK_MAX per entry, and node < 2^32: no overflow */
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

static int bad_var(struct diag_list *dl, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad_var(struct diag_list *dl, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(dl, DIAG_ERROR, "", 0, 0, name, fmt, ap);
	va_end(ap);
	return -1;
}

/* The step's tasks and nodes: SLURM_STEP_NUM_* in a step, else the
 * job's SLURM_NTASKS and SLURM_NNODES; *from names the one read. */
static long step_count(struct vars *vs, const char *step_var, const char *job_var,
		       const char **from)
{
	long v = var_uint(vs, step_var, 1);

	*from = step_var;
	if (v == -1) {
		v = var_uint(vs, job_var, 1);
		*from = job_var;
	}
	return v;
}

/* Whether the Slurm variables agree; -1 after saying which does not. */
static int check_slurm(struct vars *vs, long rank, long world, const char *world_var, long local,
		       long node, long nodes, const char *nodes_var)
{
	if (vs->bad)
		return -1;
	if (world < 0)
		return bad_var(vs->dl, "SLURM_PROCID", "needs SLURM_STEP_NUM_TASKS or SLURM_NTASKS "
			       "too, and neither is set");
	if (rank >= world)
		return bad_var(vs->dl, "SLURM_PROCID", "%ld is not below %s (%ld)", rank, world_var,
			       world);
	if (local < 0)
		return bad_var(vs->dl, "SLURM_LOCALID", "is not set");
	if (node < 0)
		return bad_var(vs->dl, "SLURM_NODEID", "is not set");
	if (nodes < 0)
		return bad_var(vs->dl, "SLURM_STEP_NUM_NODES", "is not set, nor SLURM_NNODES");
	if (node >= nodes)
		return bad_var(vs->dl, "SLURM_NODEID", "%ld is not below %s (%ld)", node, nodes_var,
			       nodes);
	return 0;
}

/* Inside a Slurm job step: srun sets SLURM_STEP_ID for every task; the
 * batch script itself has SLURM_PROCID too, but is not a rank of a step. */
static int from_slurm(const char *(*get)(void *, const char *), void *ctx,
		      const char *hostname, struct rank_info *ri, struct diag_list *dl)
{
	struct vars vs = { get, ctx, dl, false };
	const char *world_var, *nodes_var;
	long rank = var_uint(&vs, "SLURM_PROCID", 0);
	long world = step_count(&vs, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", &world_var);
	long local = var_uint(&vs, "SLURM_LOCALID", 0);
	long node = var_uint(&vs, "SLURM_NODEID", 0);
	long nodes = step_count(&vs, "SLURM_STEP_NUM_NODES", "SLURM_NNODES", &nodes_var);
	const char *tpn_var = get(ctx, "SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE"
								    : "SLURM_TASKS_PER_NODE";
	const char *tpn = get(ctx, tpn_var);
	const char *list = first_of(get, ctx, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST");
	const char *name = get(ctx, "SLURMD_NODENAME");
	char clip[SBUF_CLIP_SIZE];
	unsigned local_size;

	if (check_slurm(&vs, rank, world, world_var, local, node, nodes, nodes_var))
		return -1;
	local_size = tpn ? rank_tasks_on_node(tpn, (unsigned)node) : 0;
	if (!local_size || (unsigned)local >= local_size)
		return bad_var(dl, tpn_var, "\"%s\" does not give node %ld more tasks than "
			       "SLURM_LOCALID (%ld)", tpn ? sbuf_clip(tpn, clip) : "", node, local);
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
	struct vars vs = { get, ctx, dl, false };
	long rank = var_uint(&vs, "OMPI_COMM_WORLD_RANK", 0);
	long world = var_uint(&vs, "OMPI_COMM_WORLD_SIZE", 1);
	long local = var_uint(&vs, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
	long local_size = var_uint(&vs, "OMPI_COMM_WORLD_LOCAL_SIZE", 1);
	const char *ns = first_of(get, ctx, "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid");

	if (vs.bad)
		return -1;
	if (world < 0)
		return bad_var(dl, "OMPI_COMM_WORLD_SIZE", "is not set");
	if (rank >= world)
		return bad_var(dl, "OMPI_COMM_WORLD_RANK", "%ld is not below OMPI_COMM_WORLD_SIZE (%ld)",
			       rank, world);
	if (local < 0 || local_size < 0)
		return bad_var(dl, local < 0 ? "OMPI_COMM_WORLD_LOCAL_RANK" : "OMPI_COMM_WORLD_LOCAL_SIZE",
			       "is not set");
	if (local >= local_size || local_size > world)
		return bad_var(dl, "OMPI_COMM_WORLD_LOCAL_RANK", "%ld is not below "
			       "OMPI_COMM_WORLD_LOCAL_SIZE (%ld), or that is above OMPI_COMM_WORLD_SIZE "
			       "(%ld)", local, local_size, world);
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
