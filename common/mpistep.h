/* mpistep.h - how a side binary (train, doctor, stage) learns whether a
 * launcher wired it up as an MPI rank, and refuses a step of several
 * tasks that has none, where each task would work alone unknowingly.
 *
 * Shell: reads the environment the launchers set, sets a signal handler,
 * fences over PMIx.
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

/* Right after MPI_Init, before any MPI message: waits until every task
 * of the job has returned from its MPI_Init, through the launcher's
 * PMIx server (no MPI traffic).  Open MPI 4.1 started by srun's PMIx
 * plugin segfaults a task still finishing MPI_Init when a peer that
 * finished first connects to it over TCP (a NULL handler in btl/tcp,
 * seen once in five runs of the suite on 2 cores, twice in a row when
 * two jobs started on the same nodes at once).  Nothing when there is
 * no PMIx server (mpirun's tasks have one too). */
void mpistep_fence(void);

/* The step's tasks agreed on a failing status (an MPI_MAX over them):
 * from here a SIGTERM ends this task with that status.  srun
 * --kill-on-bad-exit terminates the tasks still in MPI_Finalize when
 * the first peer exits, and each would otherwise end as 143, which
 * srun then reports as the step's status instead of the agreed one.
 * A status of 0 changes nothing: a SIGTERM then means what it says. */
void mpistep_exit_on_term(int status);

#endif
