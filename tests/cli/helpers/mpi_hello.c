/* mpi_hello.c - the smallest real MPI program: init, one allreduce, print.
 * launch.bats runs it under `hpctrain launch`, because a PMIx session in
 * the launcher once made every rank's MPI_Init abort. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size;
	double mine, sum;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mine = rank + 1;
	MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	printf("mpi rank %d of %d sum %g\n", rank, size, sum);
	MPI_Finalize();
	return 0;
}
