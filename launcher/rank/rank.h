/* rank.h - who this process is in the job: rank, local rank, node, world.
 *
 * Sources, in order: a Slurm step's SLURM_* variables (srun), Open MPI's
 * OMPI_COMM_WORLD_* (mpirun), the launcher's PMIx server (any other PMIx
 * launcher), then a lone process.  The issue asked for PMIx first; it is
 * last because a PMIx session in the launcher, even finalized before
 * exec, makes the program's own MPI_Init abort under Slurm 22.05 and
 * Open MPI 4.1 (see rank_discover.c), and the launchers' variables carry the
 * same facts.
 *
 * rank_from_env() is a pure core (it reads variables through a callback),
 * so tests feed it any environment; rank_discover() is the shell.
 */
#ifndef HPT_RANK_H
#define HPT_RANK_H

#include <stdbool.h>

struct diag_list;

enum rank_source { RANK_SOURCE_PMIX, RANK_SOURCE_SLURM, RANK_SOURCE_OMPI, RANK_SOURCE_SINGLE };

/* Invariants after a successful discovery: rank < world_size,
 * local_rank < local_size <= world_size, node_rank < num_nodes; strings
 * are owned and non-NULL (master_addr may be "" when no source names the
 * first node: then MASTER_ADDR is left unset). */
struct rank_info {
	enum rank_source source;
	unsigned rank, world_size;
	unsigned local_rank, local_size;
	unsigned node_rank, num_nodes;
	char *hostname;    /* this node, as the source names it */
	char *master_addr; /* the node of rank 0 */
	char *job_key;     /* the same string on every rank of one job step */
};

const char *rank_source_name(enum rank_source s);

/* Fills *ri from environment variables (Slurm, then Open MPI, then a lone
 * process), read through get(ctx, NAME) (NULL when unset).  hostname is this node's name.  Returns 0,
 * or -1 with a DIAG_ERROR naming the variable when a source's variables
 * are present but inconsistent (e.g. SLURM_PROCID >= SLURM_NTASKS). */
int rank_from_env(const char *(*get)(void *ctx, const char *name), void *ctx, const char *hostname,
		  struct rank_info *ri, struct diag_list *dl);

/* True inside a Slurm job step (srun), false in a batch script. */
bool rank_in_slurm_step(const char *(*get)(void *ctx, const char *name), void *ctx);

/* The first host of a Slurm host list: "node[001-004,9],gpu1" -> "node001".
 * Returns a new string, or NULL when list is malformed. */
char *rank_first_host(const char *list);

/* The number of tasks on node `node` from a Slurm tasks-per-node list such
 * as "2(x3),1"; 0 when the list is malformed or too short. */
unsigned rank_tasks_on_node(const char *list, unsigned node);

/* A port in [20000, 32000) derived from job_key: unprivileged, below
 * Linux's ephemeral range, equal on every rank of the step. */
unsigned rank_master_port(const char *job_key);

/* Shell: the environment of a Slurm step or of mpirun, else PMIx when
 * a PMIx server started the process (and set PMIX_NAMESPACE), else a
 * lone process.  Returns 0, or -1 with a diagnostic. */
int rank_discover(struct rank_info *ri, struct diag_list *dl);

void rank_info_release(struct rank_info *ri);

#endif
