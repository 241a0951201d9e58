/* stall_mpi.c - rank 1 sleeps before the MPI_Allreduce the others wait in.
 * For tests/cli/supervise.bats; built with mpicc -g. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, x = 1, sum;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	printf("rank %d ready\n", rank);
	fflush(stdout);
	if (rank == 1)
		sleep(3600);
	MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
