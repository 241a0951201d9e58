/* comm_cuda.c - data parallelism for a model on the GPU (comm_cuda.h):
 * the rank's device, NCCL bootstrapped over MPI, and the bucketed device
 * allreduce wrapped around comm.c's hooks.  Shell (MPI, CUDA, NCCL).
 *
 * The hooks have no error argument (train.h), so a failing NCCL call
 * prints its line here, as comm.c's comm_check() does, and returns -1; the
 * trainer then fails and comm_finish() takes the other ranks down.
 */
#include "trainer/cuda/comm_cuda.h"    // defines: struct comm_cuda, comm_cuda_*
#include "common/say.h" // defines: say
#include "trainer/cuda/backend_cuda.h" // defines: be_cuda_init, be_cuda_nccl_*, be_cuda_allreduce_*
#include "trainer/comm/comm.h"         // defines: struct comm
#include "trainer/comm/watchdog.h" // defines: watchdog_begin, watchdog_end
#include "trainer/cuda/gpu_plan.h"     // defines: gpu_device_for, gpu_check_sharing, GPU_SHARE_ENV
#include "trainer/model/model.h"        // defines: struct model
#include "trainer/cuda/model_cuda.h"   // defines: model_cuda_grads
#include "trainer/train.h"        // defines: struct train_hooks, train_get_model, train_get_model_cuda
#include "common/exitcode.h"         // defines: HPT_EXIT_*
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_addf
#include "common/spec/spec.h"             // defines: struct job, COMPRESS_NONE, BATCHNORM_SYNC

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int comm_cuda_agree(struct comm *c, bool *cuda, struct sbuf *err)
{
	int v = *cuda, rc;

	if (c->mpi && c->world > 1) {
		rc = MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS) {
			sbuf_addf(err, "MPI_Allreduce of the ranks' device choice failed with %d", rc);
			return HPT_EXIT_UNAVAILABLE;
		}
	}
	*cuda = v != 0;
	return 0;
}

/* What the GPU path does not implement, refused rather than ignored. */
static int refuse(const struct comm *c, struct sbuf *err)
{
	const struct job_train *tr = &c->job->train;

	if (tr->allreduce.delayed)
		sbuf_addstr(err, "train.allreduce.delayed is not implemented on the GPU; set it to "
			    "false, or train.device: cpu");
	else if (tr->allreduce.compress != COMPRESS_NONE)
		sbuf_addf(err, "train.allreduce.compress: %s is not implemented on the GPU (NCCL "
			  "averages fp32); use none, or train.device: cpu",
			  grad_compress_names[tr->allreduce.compress]);
	else if (c->world > 1 && tr->batchnorm == BATCHNORM_SYNC)
		sbuf_addstr(err, "train.batchnorm: sync is not implemented on the GPU; use local, "
			    "or train.device: cpu");
	else
		return 0;
	return HPT_EXIT_BAD_SPEC;
}

/* The node's ranks: a communicator of them (MPI_COMM_NULL without MPI)
 * and this rank's place among them. */
static int node_ranks(const struct comm *c, MPI_Comm *shm, int *local, int *n, struct sbuf *err)
{
	*shm = MPI_COMM_NULL;
	*local = 0;
	*n = 1;
	if (!c->mpi)
		return 0;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL,
				shm) != MPI_SUCCESS) {
		sbuf_addstr(err, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
		return -1;
	}
	if (MPI_Comm_rank(*shm, local) != MPI_SUCCESS || MPI_Comm_size(*shm, n) != MPI_SUCCESS) {
		sbuf_addstr(err, "MPI_Comm_rank of the node's communicator failed");
		MPI_Comm_free(shm);
		return -1;
	}
	return 0;
}

/* Whether ranks of some node would share a GPU (gpu_check_sharing over
 * the node's bus ids), agreed by all ranks, since a job must exchange
 * gradients the same way everywhere: *host becomes true when sharing was
 * found and asked for.  0, or a status with err.  Collective. */
static int check_sharing(struct comm_cuda *cc, MPI_Comm shm, int n, bool *host,
			 struct sbuf *err)
{
	const char *env = getenv(GPU_SHARE_ENV);
	char (*bus)[GPU_BUS_ID_LEN] = xcalloc((size_t)n, GPU_BUS_ID_LEN);
	char mine[GPU_BUS_ID_LEN] = "";
	struct sbuf why = SBUF_INIT;
	int v = 0, all = 0, st = 0;

	*host = false;
	if (be_cuda_bus_id(cc->device, mine, GPU_BUS_ID_LEN, &why)) {
		sbuf_addf(err, "cannot identify GPU %d: %s", cc->device, why.buf);
		v = 3;
	}
	if (MPI_Allgather(mine, GPU_BUS_ID_LEN, MPI_CHAR, bus, GPU_BUS_ID_LEN, MPI_CHAR, shm) !=
	    MPI_SUCCESS) {
		sbuf_addstr(err, "MPI_Allgather of the GPUs' bus ids failed");
		free(bus);
		sbuf_release(&why);
		return HPT_EXIT_UNAVAILABLE;
	}
	if (!v) { /* 1: shared and allowed; 2: shared, refused; 3: no bus id */
		v = gpu_check_sharing(bus, n, env && !strcmp(env, "1"), err);
		v = v < 0 ? 2 : v;
	}
	if (MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
		sbuf_addstr(err, "MPI_Allreduce of the GPU sharing check failed");
		st = HPT_EXIT_UNAVAILABLE;
	} else if (all == 3) {
		if (v != 3)
			sbuf_addstr(err, "another rank could not identify its GPU");
		st = HPT_EXIT_UNAVAILABLE;
	} else if (all == 2) {
		if (v != 2)
			sbuf_addstr(err, "ranks of another node would share a GPU (its ranks say "
				    "which)");
		st = HPT_EXIT_BAD_SPEC;
	}
	*host = all == 1;
	free(bus);
	sbuf_release(&why);
	return st;
}

/* NCCL's bootstrap under comm.c's stall watchdog: ncclCommInitRank waits
 * for every rank and would wait forever for one that died. */
static int start_nccl(struct comm_cuda *cc, struct sbuf *err)
{
	MPI_Comm world = MPI_COMM_WORLD;
	struct sbuf why = SBUF_INIT;
	int rc;

	watchdog_begin(&cc->c->wd);
	rc = be_cuda_nccl_init_mpi(&world, &why);
	watchdog_end(&cc->c->wd);
	if (rc)
		sbuf_addf(err, "cannot start NCCL on GPU %d: %s", cc->device, why.buf);
	sbuf_release(&why);
	return rc;
}

int comm_cuda_init(struct comm_cuda *cc, struct comm *c, struct sbuf *err)
{
	const struct job_train *tr = &c->job->train;
	struct sbuf why = SBUF_INIT;
	int count = be_cuda_device_count(), local, nlocal, st;
	MPI_Comm shm;

	memset(cc, 0, sizeof(*cc));
	cc->c = c;
	if ((st = refuse(c, err)))
		return st;
	if (count < 1) {
		sbuf_addstr(err, "no GPU is visible");
		return HPT_EXIT_UNAVAILABLE;
	}
	if (node_ranks(c, &shm, &local, &nlocal, err))
		return HPT_EXIT_UNAVAILABLE;
	cc->device = gpu_device_for(local, count);
	st = c->mpi && c->world > 1 ? check_sharing(cc, shm, nlocal, &cc->host, err) : 0;
	if (shm != MPI_COMM_NULL)
		MPI_Comm_free(&shm);
	if (st)
		return st;
	if (be_cuda_init(cc->device, &why)) {
		sbuf_addf(err, "cannot use GPU %d of %d: %s", cc->device, count, why.buf);
		sbuf_release(&why);
		return HPT_EXIT_UNAVAILABLE;
	}
	cc->overlap = tr->allreduce.overlap;
	cc->cap = (size_t)(tr->allreduce.bucket_mb * 1024 * 1024 / sizeof(float));
	cc->cap = cc->cap ? cc->cap : 1;
	if (c->mpi && c->world > 1 && !cc->host) {
		if (start_nccl(cc, err))
			return HPT_EXIT_UNAVAILABLE;
		cc->nccl = true;
	}
	return 0;
}

void comm_cuda_release(struct comm_cuda *cc)
{
	be_cuda_shutdown(); /* NCCL first, then streams and handles; no-op if never started */
	memset(cc, 0, sizeof(*cc));
}

static void report(const struct comm_cuda *cc, const struct sbuf *err)
{
	say("rank %d: %s", cc->c->rank, err->buf);
}

static size_t nbuckets(const struct comm_cuda *cc)
{
	return (cc->n + cc->cap - 1) / cc->cap;
}

static size_t bucket_hi(const struct comm_cuda *cc, size_t i)
{
	return (i + 1) * cc->cap < cc->n ? (i + 1) * cc->cap : cc->n;
}

/* Starts bucket next: summed by NCCL in place, which averages the
 * gradients backward pre-divided by world (comm.h). */
static int start_bucket(struct comm_cuda *cc, struct sbuf *err)
{
	size_t lo = cc->next * cc->cap, hi = bucket_hi(cc, cc->next);

	cc->next++;
	return be_cuda_allreduce_start(cc->grads + lo, hi - lo, err);
}

/* Waits for the compute stream (backward, then the allreduce it was
 * told to wait for) under comm.c's watchdog, which aborts the job after
 * train.allreduce.stall_timeout_s: NCCL itself would wait forever for a
 * dead peer.  The price: the host no longer prepares the next batch
 * while backward runs on the GPU (it does on one rank). */
static int watched_sync(struct comm_cuda *cc, struct sbuf *err)
{
	int rc;

	watchdog_begin(&cc->c->wd);
	rc = be_cuda_sync(err);
	watchdog_end(&cc->c->wd);
	return rc;
}

static int cc_start(void *ctx, struct trainer *t)
{
	struct comm_cuda *cc = ctx;
	struct model_cuda *mc = train_get_model_cuda(t);

	if (!mc) /* the hooks of a GPU run given to a CPU run */
		return -1;
	if (cc->inner.on_start && cc->inner.on_start(cc->inner.ctx, t))
		return -1;
	cc->grads = model_cuda_grads(mc);
	cc->n = train_get_model(t)->narena;
	cc->next = 0;
	return 0;
}

/* Gradients of [lo, hi) are queued on the compute stream: start every
 * bucket that ends at or below hi. */
static int cc_grad_ready(void *ctx, size_t lo, size_t hi)
{
	struct comm_cuda *cc = ctx;
	struct sbuf err = SBUF_INIT;
	int rc = 0;

	(void)lo;
	while (cc->nccl && cc->overlap && !rc && cc->next < nbuckets(cc) &&
	       bucket_hi(cc, cc->next) <= hi)
		rc = start_bucket(cc, &err);
	if (rc)
		report(cc, &err);
	sbuf_release(&err);
	return rc ? -1 : 0;
}

/* Ranks sharing a GPU: the device gradients go through comm.c's host
 * allreduce, which averages them in the host arena. */
static int host_exchange(struct comm_cuda *cc, struct trainer *t, struct sbuf *err)
{
	struct model *m = train_get_model(t);
	int rc;

	if (be_cuda_download(m->grads, cc->grads, cc->n, err))
		return -1;
	rc = cc->inner.before_update ? cc->inner.before_update(cc->inner.ctx, t) : 0;
	if (rc < 0) {
		sbuf_addstr(err, "the host gradient allreduce failed");
		return -1;
	}
	return be_cuda_upload(cc->grads, m->grads, cc->n, err) ? -1 : rc;
}

static int cc_before_update(void *ctx, struct trainer *t)
{
	struct comm_cuda *cc = ctx;
	struct sbuf err = SBUF_INIT;
	int rc = 0;

	if (cc->host) {
		rc = host_exchange(cc, t, &err);
	} else if (cc->nccl) {
		while (!rc && cc->next < nbuckets(cc))
			rc = start_bucket(cc, &err);
		if (!rc)
			rc = be_cuda_allreduce_wait(&err);
		if (!rc)
			rc = watched_sync(cc, &err);
		if (!rc) {
			float ms = 0;

			rc = be_cuda_exposed_ms(&ms, &err);
			cc->c->step_comm_s += ms * 1e-3;
		}
		cc->next = 0;
	}
	if (rc)
		report(cc, &err);
	sbuf_release(&err);
	return rc ? -1 : 0;
}

static int cc_after_update(void *ctx, struct trainer *t)
{
	struct comm_cuda *cc = ctx;

	return cc->inner.after_update ? cc->inner.after_update(cc->inner.ctx, t) : 0;
}

static bool cc_should_stop(void *ctx, struct trainer *t)
{
	struct comm_cuda *cc = ctx;

	return cc->inner.should_stop && cc->inner.should_stop(cc->inner.ctx, t);
}

/* A few host numbers: comm.c's collectives as they are. */
static int cc_share(void *ctx, int64_t *v, int n)
{
	struct comm_cuda *cc = ctx;

	return cc->inner.share ? cc->inner.share(cc->inner.ctx, v, n) : 0;
}

static int cc_sum(void *ctx, double *v, int n)
{
	struct comm_cuda *cc = ctx;

	return cc->inner.sum ? cc->inner.sum(cc->inner.ctx, v, n) : 0;
}

static int cc_share_text(void *ctx, struct sbuf *s)
{
	struct comm_cuda *cc = ctx;

	return cc->inner.share_text ? cc->inner.share_text(cc->inner.ctx, s) : 0;
}

void comm_cuda_hooks(struct comm_cuda *cc, struct train_hooks *h)
{
	cc->inner = *h;
	memset(h, 0, sizeof(*h));
	h->ctx = cc;
	h->on_start = cc_start;
	h->on_grad_ready = cc_grad_ready;
	h->before_update = cc_before_update;
	h->after_update = cc_after_update;
	h->should_stop = cc_should_stop;
	h->share = cc_share;
	h->sum = cc_sum;
	h->share_text = cc_share_text;
}
