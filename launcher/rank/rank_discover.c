/* rank_discover.c - who this rank is: the launcher's variables first
 * (a Slurm step's SLURM_*, mpirun's OMPI_COMM_WORLD_*), the launcher's
 * PMIx server only when neither is there, else a lone process; rank.h
 * says why PMIx comes last.
 * Shell: reads the environment, talks to the PMIx server. */
#include "launcher/rank/rank.h" // defines: struct rank_info, rank_discover
#include "common/sbuf.h"      // defines: xstrdup, xasprintf

#include <pmix.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *real_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static int get_u32(const pmix_proc_t *who, const char *key, unsigned *out)
{
	pmix_value_t *val = NULL;
	int rc = 0;

	if (PMIx_Get(who, key, NULL, 0, &val) != PMIX_SUCCESS || !val)
		return -1;
	switch (val->type) {
	case PMIX_UINT32:
		*out = val->data.uint32;
		break;
	case PMIX_UINT16:
		*out = val->data.uint16;
		break;
	case PMIX_PROC_RANK:
		*out = val->data.rank;
		break;
	case PMIX_INT:
		*out = (unsigned)val->data.integer;
		break;
	default:
		rc = -1;
	}
	PMIX_VALUE_RELEASE(val);
	return rc;
}

static char *get_string(const pmix_proc_t *who, const char *key)
{
	pmix_value_t *val = NULL;
	char *s = NULL;

	if (PMIx_Get(who, key, NULL, 0, &val) != PMIX_SUCCESS || !val)
		return NULL;
	if (val->type == PMIX_STRING && val->data.string)
		s = xstrdup(val->data.string);
	PMIX_VALUE_RELEASE(val);
	return s;
}

/* Asks the PMIx server; returns 0, or -1 when there is no usable server
 * (the caller then reads the environment). */
static int from_pmix(struct rank_info *ri, const char *hostname)
{
	pmix_proc_t me, wild, first;
	unsigned world = 0, local_size = 0, local = 0, node = 0, nodes = 0;
	bool own_gds = !getenv("PMIX_MCA_gds");
	int rc = -1;

	/* The shared-memory data store (gds/ds21) costs ~10 ms to attach, far
	 * more than the six keys we read; the hash store asks the server.
	 * Set for our client only: the program gets the default back. */
	if (own_gds)
		setenv("PMIX_MCA_gds", "hash", 1);
	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
		if (own_gds)
			unsetenv("PMIX_MCA_gds");
		return -1;
	}
	PMIX_PROC_CONSTRUCT(&wild);
	PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
	PMIX_PROC_CONSTRUCT(&first);
	PMIX_LOAD_PROCID(&first, me.nspace, 0);
	/* Job-level keys are asked of the wildcard rank, process-level keys
	 * of the process itself (PMIx 4 standard, section 6.1). */
	if (get_u32(&wild, PMIX_JOB_SIZE, &world) || get_u32(&wild, PMIX_LOCAL_SIZE, &local_size) ||
	    get_u32(&me, PMIX_LOCAL_RANK, &local) || !world || !local_size || me.rank >= world ||
	    local >= local_size || local_size > world || world > 1u << 30) /* as rank.c bounds them */
		goto out;
	if (get_u32(&me, PMIX_NODEID, &node))
		node = 0;
	if (get_u32(&wild, PMIX_NUM_NODES, &nodes) || !nodes)
		nodes = (world + local_size - 1) / local_size;
	ri->source = RANK_SOURCE_PMIX;
	ri->rank = me.rank;
	ri->world_size = world;
	ri->local_rank = local;
	ri->local_size = local_size;
	ri->node_rank = node < nodes ? node : 0;
	ri->num_nodes = nodes;
	ri->hostname = get_string(&me, PMIX_HOSTNAME);
	if (!ri->hostname)
		ri->hostname = xstrdup(hostname);
	ri->master_addr = get_string(&first, PMIX_HOSTNAME);
	if (!ri->master_addr)
		ri->master_addr = xstrdup(nodes == 1 ? ri->hostname : "");
	ri->job_key = xasprintf("pmix:%s", me.nspace);
	rc = 0;
out:
	/* Before exec: the program may be an MPI or PMIx client itself. */
	PMIx_Finalize(NULL, 0);
	if (own_gds)
		unsetenv("PMIX_MCA_gds");
	return rc;
}

int rank_discover(struct rank_info *ri, struct diag_list *dl)
{
	char host[256] = "localhost";

	memset(ri, 0, sizeof(*ri));
	gethostname(host, sizeof(host) - 1);
	/* A PMIx client session in this process, even one finalized before
	 * exec, makes the program's own MPI_Init abort: Slurm 22.05's pmix
	 * plugin and Open MPI 4.1's server both refuse a second session from
	 * a rank (tests/cli/launch.bats runs an MPI program under both).  So
	 * the launchers' own variables come first, which carry the same
	 * facts, and PMIx answers only for launchers that set nothing else.
	 * Without PMIX_NAMESPACE there is no server to ask. */
	if (!rank_in_slurm_step(real_getenv, NULL) && !getenv("OMPI_COMM_WORLD_RANK") &&
	    getenv("PMIX_NAMESPACE") && !from_pmix(ri, host))
		return 0;
	rank_info_release(ri);
	if (rank_from_env(real_getenv, NULL, host, ri, dl))
		return -1;
	if (ri->source == RANK_SOURCE_SINGLE) {
		/* Alone, the port only has to differ from other lone runs. */
		free(ri->job_key);
		ri->job_key = xasprintf("single:%s:%ld", host, (long)getpid());
	}
	return 0;
}
