/* mpistep.c - is this process an MPI rank, and is it alone without one:
 * see mpistep.h.  Shell. */
#include "common/mpistep.h"  // defines: mpistep_launched, mpistep_check_alone, mpistep_exit_on_term, mpistep_fence
#include "common/envvar.h"   // defines: envvar_int
#include "common/exitcode.h" // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"     // defines: struct sbuf

#include <pmix.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

bool mpistep_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* SLURM_STEP_NUM_TASKS read strictly: atoi took "2x" as 2 and "x" as 1. */
int mpistep_check_alone(const char *cmd, struct sbuf *err)
{
	const char *v = getenv("SLURM_STEP_NUM_TASKS");
	int64_t n = 1;

	if (v && envvar_int("SLURM_STEP_NUM_TASKS", v, 1, INT64_C(1) << 30, &n, err))
		return HPT_EXIT_USAGE;
	if (n > 1) {
		sbuf_addf(err, "%lld tasks but no MPI wire-up: run it as "
			  "'srun --mpi=pmix hpctrain %s'", (long long)n, cmd);
		return HPT_EXIT_USAGE;
	}
	return 0;
}

static volatile sig_atomic_t agreed_status;

static void exit_agreed(int sig)
{
	(void)sig;
	_exit(agreed_status);
}

void mpistep_exit_on_term(int status)
{
	struct sigaction sa;

	if (!status)
		return;
	agreed_status = status;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exit_agreed;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
}

void mpistep_fence(void)
{
	pmix_proc_t me;

	/* Open MPI holds the client already: this counts one more use */
	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
		return;
	PMIx_Fence(NULL, 0, NULL, 0);
	PMIx_Finalize(NULL, 0);
}
