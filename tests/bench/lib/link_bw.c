/* link_bw.c - one-way MPI throughput from rank 0 to rank 1, the way
 * hpctrain stage streams (launcher/stage/stage_mpi.c): 4 MiB messages,
 * 4 in flight.  tests/bench/stage.sh builds it with mpicc and runs it on
 * two nodes of its netns cluster to measure what the veth link gives.
 * Prints "<bytes> <seconds>" on rank 0.  argv[1]: MiB to send (512). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MSG (4 << 20)
#define NBUF 4

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 512;
	long n = mib / 4, k;
	MPI_Request req[NBUF];
	char *buf;
	int rank, b, ack = 0;
	double t0, t1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	buf = calloc(NBUF, MSG);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (b = 0; b < NBUF; b++)
		req[b] = MPI_REQUEST_NULL;
	/* one round first: the TCP connection is set up outside the timing */
	if (rank == 0)
		MPI_Send(buf, MSG, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
	else if (rank == 1)
		MPI_Recv(buf, MSG, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (k = 0; k < n && rank < 2; k++) {
		b = (int)(k % NBUF);
		MPI_Wait(&req[b], MPI_STATUS_IGNORE);
		if (rank == 0)
			MPI_Isend(buf + (size_t)b * MSG, MSG, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[b]);
		else
			MPI_Irecv(buf + (size_t)b * MSG, MSG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[b]);
	}
	MPI_Waitall(NBUF, req, MPI_STATUSES_IGNORE);
	/* the receiver's ack: the last byte arrived */
	if (rank == 1)
		MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
	else if (rank == 0)
		MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	t1 = MPI_Wtime();
	if (rank == 0)
		printf("%ld %.6f\n", n * (long)MSG, t1 - t0);
	free(buf);
	MPI_Finalize();
	return 0;
}
