/* comm_cuda_none.c - the GPU side of data parallelism in a trainer
 * built without nvcc: every rank agrees on the CPU (comm_cuda.h).  In
 * trainer/cuda's archive, taken only where comm_cuda.o is not linked
 * (trainer/build.mk).  Core. */
#include "trainer/cuda/comm_cuda.h" // defines: comm_cuda_*
#include "common/exitcode.h"        // defines: HPT_EXIT_UNAVAILABLE
#include "common/sbuf.h"            // defines: sbuf_addstr

int comm_cuda_agree(struct comm *c, bool *cuda, struct sbuf *err)
{
	(void)c;
	(void)err;
	*cuda = false;
	return 0;
}

int comm_cuda_init(struct comm_cuda *cc, struct comm *c, struct sbuf *err)
{
	(void)cc;
	(void)c;
	sbuf_addstr(err, "this trainer was built without CUDA");
	return HPT_EXIT_UNAVAILABLE;
}

void comm_cuda_hooks(struct comm_cuda *cc, struct train_hooks *h)
{
	(void)cc;
	(void)h;
}

void comm_cuda_release(struct comm_cuda *cc)
{
	(void)cc;
}
