/* mpistep.h - how a side binary (train, doctor, stage) learns whether a
 * launcher wired it up as an MPI rank, and refuses a step of several
 * tasks that has none, where each task would work alone unknowingly.
 *
 * Shell: reads the environment the launchers set.
 */
#ifndef HPT_MPISTEP_H
#define HPT_MPISTEP_H

#include <stdbool.h>

struct sbuf;

/* Open MPI's mpirun, or a PMIx/PMI launcher (srun --mpi=pmix) started
 * this process: MPI_Init will find its peers. */
bool mpistep_launched(void);

/* Without MPI: 0 when this is the step's only task, else
 * HPT_EXIT_USAGE with err saying why (SLURM_STEP_NUM_TASKS not an
 * integer, or above 1: "run it as 'srun --mpi=pmix hpctrain CMD'"). */
int mpistep_check_alone(const char *cmd, struct sbuf *err);

#endif
