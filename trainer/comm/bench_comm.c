/* bench_comm.c - the gradient exchange of comm.c against raw MPI, run
 * under `mpirun -np 2` by tests/bench/dp_comm.sh.
 *
 *  1. A model's gradients, tensor by tensor as trainer/model/model.c lays them
 *     out (the cnn on Fashion-MNIST: 8 tensors, 421,642 floats, 1.6 MiB;
 *     resnet-small: many small tensors): one blocking MPI_Allreduce per
 *     tensor, and non-blocking MPI_Iallreduces issued per tensor as
 *     Horovod and DDP do without fusion, against comm.c's buckets (25
 *     MiB), all summing gradients that backward pre-divided by world
 *     (comm.h).  Goal: buckets >= 3x the blocking peer; the ratio to the
 *     non-blocking one is reported.
 *     Merging saves per-call latency only, so no bucketing can beat the
 *     time of the largest tensor's allreduce alone: that bound is printed.
 *  2. An nccl-tests style table over sizes: raw MPI_Allreduce (in place,
 *     fp32 sum) against a comm.c bucket of the same bytes (the arrival
 *     notice of the stall watchdog, then the allreduce under it).
 *     busbw = algbw * 2(n-1)/n; goal: bucket >= 90% of raw.
 * Budget: the bytes move at memory/shared-memory speed; on this 2-core
 * machine raw busbw measured 2-2.5 GB/s from 256 KB up. */
#include "trainer/cpu/backend.h" // defines: backend_init
#include "trainer/bench_median.h" // defines: bench_median
#include "trainer/comm/comm.h"  // defines: struct comm, comm_init, comm_setup, comm_hooks
#include "trainer/model/layer.h" // defines: struct seq, struct layer
#include "trainer/model/model.h" // defines: struct model, model_build
#include "trainer/train.h" // defines: struct train_hooks
#include "common/sbuf.h"      // defines: struct sbuf
#include "common/spec/spec.h"      // defines: struct job, MODEL_*

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TENSORS = 512, ITERS = 200 };

/* A model's parameter tensors in arena order. */
struct tensors {
	size_t n, size[MAX_TENSORS];
	size_t lo[MAX_TENSORS];
};

static void add_tensor(struct tensors *t, const float *grads, const float *g, size_t n)
{
	if (n && t->n < MAX_TENSORS) {
		t->lo[t->n] = (size_t)(g - grads);
		t->size[t->n++] = n;
	}
}

static void collect(struct tensors *t, const float *grads, const struct seq *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct layer *l = &s->v[i];

		add_tensor(t, grads, l->dw, l->nw);
		add_tensor(t, grads, l->db, l->nb);
		if (l->body)
			collect(t, grads, l->body);
		if (l->shortcut)
			collect(t, grads, l->shortcut);
	}
}

/* Arena order (insertion sort: a few hundred tensors). */
static void sort_tensors(struct tensors *t)
{
	for (size_t i = 1; i < t->n; i++)
		for (size_t j = i; j && t->lo[j - 1] > t->lo[j]; j--) {
			size_t lo = t->lo[j], n = t->size[j];

			t->lo[j] = t->lo[j - 1], t->size[j] = t->size[j - 1];
			t->lo[j - 1] = lo, t->size[j - 1] = n;
		}
}

static int model_tensors(int kind, struct shape in, struct tensors *t, size_t *total)
{
	struct model m;
	struct sbuf err = SBUF_INIT;

	if (model_build(&m, kind, in, 10, LOSS_XENT, BE_FP32, &err)) {
		fprintf(stderr, "bench_comm: %s\n", err.buf);
		sbuf_release(&err);
		return -1;
	}
	t->n = 0;
	collect(t, m.grads, &m.net);
	sort_tensors(t);
	*total = m.narena;
	model_release(&m);
	return 0;
}

static double per_tensor(float *g, const struct tensors *t)
{
	double t0 = MPI_Wtime();

	for (size_t i = 0; i < t->n; i++)
		MPI_Allreduce(MPI_IN_PLACE, g + t->lo[i], (int)t->size[i], MPI_FLOAT, MPI_SUM,
			      MPI_COMM_WORLD);
	return MPI_Wtime() - t0;
}

/* What Horovod and DDP do without fusion: a non-blocking allreduce per
 * tensor, issued as backward makes its gradient (the same order as
 * bucketed() below), all waited for before the update. */
static double per_tensor_nonblocking(float *g, const struct tensors *t)
{
	static MPI_Request req[MAX_TENSORS];
	double t0 = MPI_Wtime();

	for (size_t i = 0; i < t->n; i++)
		MPI_Iallreduce(MPI_IN_PLACE, g + t->lo[i], (int)t->size[i], MPI_FLOAT, MPI_SUM,
			       MPI_COMM_WORLD, &req[i]);
	MPI_Waitall((int)t->n, req, MPI_STATUSES_IGNORE);
	return MPI_Wtime() - t0;
}

static double largest_alone(float *g, const struct tensors *t)
{
	size_t big = 0;
	double t0;

	for (size_t i = 1; i < t->n; i++)
		if (t->size[i] > t->size[big])
			big = i;
	t0 = MPI_Wtime();
	MPI_Allreduce(MPI_IN_PLACE, g + t->lo[big], (int)t->size[big], MPI_FLOAT, MPI_SUM,
		      MPI_COMM_WORLD);
	return MPI_Wtime() - t0;
}

/* One step of comm.c: on_grad_ready per tensor as backward would call
 * it, then before_update waits. */
static double bucketed(struct train_hooks *h, const struct tensors *t)
{
	double t0 = MPI_Wtime();

	for (size_t i = 0; i < t->n; i++)
		h->on_grad_ready(h->ctx, t->lo[i], t->lo[i] + t->size[i]);
	h->before_update(h->ctx, NULL);
	return MPI_Wtime() - t0;
}

/* Part 1 for one model; 0, or -1 when it cannot be built. */
static int model_exchange(struct comm *c, struct train_hooks *h, const char *name, int kind,
			  struct shape in)
{
	static struct tensors t;
	double a[ITERS], nb[ITERS], b[ITERS], z[ITERS];
	size_t total;
	float *g;

	if (model_tensors(kind, in, &t, &total))
		return -1;
	g = calloc(total, sizeof(float));
	if (!g || comm_setup(c, g, total))
		return -1;
	for (int i = -20; i < ITERS; i++) {
		double x, v, y, w;

		MPI_Barrier(MPI_COMM_WORLD);
		x = per_tensor(g, &t);
		MPI_Barrier(MPI_COMM_WORLD);
		v = per_tensor_nonblocking(g, &t);
		MPI_Barrier(MPI_COMM_WORLD);
		y = bucketed(h, &t);
		MPI_Barrier(MPI_COMM_WORLD);
		w = largest_alone(g, &t);
		if (i >= 0)
			a[i] = x, nb[i] = v, b[i] = y, z[i] = w;
	}
	comm_teardown(c);
	free(g);
	if (!c->rank) {
		double pt = bench_median(a, ITERS), bk = bench_median(b, ITERS);
		double pn = bench_median(nb, ITERS);
		double big = bench_median(z, ITERS);

		printf("%s gradients (%zu tensors, %zu floats, %.2f MiB), %d ranks, median of %d:\n",
		       name, t.n, total, total * 4.0 / (1 << 20), c->world, ITERS);
		printf("  per-tensor MPI_Allreduce  %8.1f us   (blocking, one after another)\n",
		       pt * 1e6);
		printf("  per-tensor MPI_Iallreduce %8.1f us   (Horovod/DDP without fusion: all issued\n"
		       "                                         in backward order, then MPI_Waitall)\n",
		       pn * 1e6);
		printf("  comm.c buckets (25 MiB)   %8.1f us   %.2fx faster than blocking (goal >= 3x),"
		       " %.2fx than non-blocking\n", bk * 1e6, pt / bk, pn / bk);
		printf("  largest tensor alone      %8.1f us   %.2fx: the most any merging can gain\n",
		       big * 1e6, pt / big);
	}
	return 0;
}

int main(void)
{
	struct job job = { 0 };
	struct comm c;
	struct train_hooks h;
	struct sbuf err = SBUF_INIT;

	job.train.allreduce.bucket_mb = 25;
	job.train.allreduce.overlap = true;
	job.train.allreduce.stall_timeout_s = 300;
	if (comm_init(&c, &job, &err) || c.world < 2) {
		fprintf(stderr, "bench_comm: run under mpirun -np 2 or more (%s)\n", err.len ? err.buf : "one rank");
		return 2;
	}
	comm_hooks(&c, &h);
	if (backend_init(1, &err)) {
		fprintf(stderr, "bench_comm: %s\n", err.buf);
		return 70;
	}
	if (model_exchange(&c, &h, "cnn", MODEL_CNN, (struct shape){ 128, 28, 28, 1 }) ||
	    model_exchange(&c, &h, "resnet-small", MODEL_RESNET_SMALL, (struct shape){ 32, 32, 32, 3 }))
		return 70;
	if (!c.rank)
		printf("\n%12s %10s | %10s %10s | %10s %10s | %6s\n", "size(B)", "count", "raw(us)",
		       "busbw GB/s", "bucket(us)", "busbw GB/s", "ratio");
	for (size_t bytes = 1024; bytes <= (64u << 20); bytes *= 4) {
		size_t n = bytes / 4;
		int iters = bytes <= (1u << 20) ? 200 : bytes <= (16u << 20) ? 30 : 10;
		double *ra = calloc((size_t)iters, sizeof(double)), *rb = calloc((size_t)iters, sizeof(double));
		float *v = calloc(n, sizeof(float));
		static struct tensors one;
		double fac = 2.0 * (c.world - 1) / c.world;

		job.train.allreduce.bucket_mb = bytes / 1048576.0 + 1;
		one.n = 1, one.lo[0] = 0, one.size[0] = n;
		comm_setup(&c, v, n);
		for (int i = -3; i < iters; i++) {
			double x, y;

			MPI_Barrier(MPI_COMM_WORLD);
			x = MPI_Wtime();
			MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			x = MPI_Wtime() - x;
			MPI_Barrier(MPI_COMM_WORLD);
			y = bucketed(&h, &one);
			if (i >= 0) {
				ra[i] = x;
				rb[i] = y;
			}
		}
		comm_teardown(&c);
		if (!c.rank) {
			double x = bench_median(ra, iters), y = bench_median(rb, iters);

			printf("%12zu %10zu | %10.1f %10.2f | %10.1f %10.2f | %5.0f%%\n", bytes, n, x * 1e6,
			       bytes / x * fac * 1e-9, y * 1e6, bytes / y * fac * 1e-9, 100 * x / y);
		}
		free(ra);
		free(rb);
		free(v);
	}
	if (!c.rank)
		printf("(goal: bucket busbw >= 90%% of raw from 256 KB up)\n");
	c.job = &job;
	comm_finish(&c, 0);
	comm_release(&c);
	return 0;
}
