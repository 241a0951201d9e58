/* mpistep.h - how a side binary (train, doctor, stage) learns whether a
 * launcher wired it up as an MPI rank, and refuses a step of several
 * tasks that has none, where each task would work alone unknowingly.
 *
 * Shell: reads the environment the launchers set, sets a signal handler.
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

/* The step's tasks agreed on a failing status (an MPI_MAX over them):
 * from here a SIGTERM ends this task with that status.  srun
 * --kill-on-bad-exit terminates the tasks still in MPI_Finalize when
 * the first peer exits, and each would otherwise end as 143, which
 * srun then reports as the step's status instead of the agreed one.
 * A status of 0 changes nothing: a SIGTERM then means what it says. */
void mpistep_exit_on_term(int status);

#endif
