/* cuda_nccl.cu - the CUDA backend's gradient allreduce: NCCL on its
 * own stream, started as buckets fill and overlapped with backward;
 * MPI carries the bootstrap.  Shell. */
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

#include <mpi.h>

/* ---- NCCL ---- */

/* Every rank learns of a failure on any rank: rank 0 sends whether it
 * made the id along with it, and the ranks agree on whether all joined
 * (a rank whose ncclCommInitRank failed while the others still wait in
 * theirs is for the caller's stall watchdog). */
extern "C" int be_cuda_nccl_init_mpi(const void *mpi_comm, struct sbuf *err)
{
	MPI_Comm comm = *(const MPI_Comm *)mpi_comm;
	struct {
		int ok;
		ncclUniqueId id;
	} boot;
	ncclResult_t r;
	int rank, world, rc, ok;

	if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &world) != MPI_SUCCESS) {
		sbuf_addstr(err, "MPI: cannot query the communicator for NCCL");
		return -1;
	}
	memset(&boot, 0, sizeof(boot));
	if (!rank) {
		r = ncclGetUniqueId(&boot.id);
		boot.ok = r == ncclSuccess;
		if (!boot.ok)
			sbuf_addf(err, "NCCL: ncclGetUniqueId: %s", ncclGetErrorString(r));
	}
	rc = MPI_Bcast(&boot, (int)sizeof(boot), MPI_BYTE, 0, comm);
	if (rc != MPI_SUCCESS) {
		sbuf_addf(err, "MPI: MPI_Bcast of the NCCL id failed with %d", rc);
		return -1;
	}
	if (!boot.ok) {
		if (rank)
			sbuf_addstr(err, "NCCL: rank 0 could not make the communicator's id");
		return -1;
	}
	r = ncclCommInitRank(&G.nccl, world, boot.id, rank);
	ok = r == ncclSuccess;
	if (!ok) {
		sbuf_addf(err, "NCCL: ncclCommInitRank: %s", ncclGetErrorString(r));
		G.nccl = NULL;
	}
	rc = MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
	if (rc != MPI_SUCCESS || !ok) {
		if (rc != MPI_SUCCESS)
			sbuf_addf(err, "MPI: MPI_Allreduce of the NCCL start failed with %d", rc);
		else if (G.nccl)
			sbuf_addstr(err, "NCCL: another rank could not join the communicator");
		if (G.nccl) /* abort: a destroy could wait for the missing peer */
			ncclCommAbort(G.nccl);
		G.nccl = NULL;
		return -1;
	}
	G.world = world;
	return 0;
}

extern "C" int be_cuda_allreduce_start(float *d_buf, size_t n, struct sbuf *err)
{
	if (!G.nccl) {
		sbuf_addstr(err, "be_cuda_allreduce_start: NCCL is not initialised");
		return -1;
	}
	CU_TRY(cudaEventRecord(G.queued, G.compute));
	CU_TRY(cudaStreamWaitEvent(G.comm, G.queued, 0));
	NCCL_TRY(ncclAllReduce(d_buf, d_buf, n, ncclFloat, ncclSum, G.nccl, G.comm));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_allreduce_wait(struct sbuf *err)
{
	CU_TRY(cudaEventRecord(G.computed, G.compute));
	CU_TRY(cudaEventRecord(G.reduced, G.comm));
	CU_TRY(cudaStreamWaitEvent(G.compute, G.reduced, 0));
	CU_TRY(cudaEventRecord(G.waited, G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_exposed_ms(float *ms, struct sbuf *err)
{
	CU_TRY(cudaEventElapsedTime(ms, G.computed, G.waited));
	return 0;
fail:
	return -1;
}

extern "C" void be_cuda_nccl_shutdown(void)
{
	if (G.nccl) {
		cudaStreamSynchronize(G.comm);
		ncclCommDestroy(G.nccl);
		G.nccl = NULL;
	}
}
