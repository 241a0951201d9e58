/* bench_comm.c - the gradient exchange of comm.c against raw MPI, run
 * under `mpirun -np 2` by tests/bench/dp_comm.sh.
 *
 *  1. The cnn's gradients on Fashion-MNIST (8 tensors, 421,642 floats,
 *     1.6 MiB): one blocking MPI_Allreduce per tensor against comm.c's
 *     buckets (25 MiB: one bucket), both averaging.  Goal: buckets >= 3x.
 *  2. An nccl-tests style table over sizes: raw MPI_Allreduce (in place,
 *     fp32 sum) against a comm.c bucket of the same bytes (prescale by
 *     1/world, MPI_Iallreduce, polled wait with the watchdog).  busbw =
 *     algbw * 2(n-1)/n; goal: bucket >= 90% of raw.
 * Budget: the bytes move at memory/shared-memory speed; on this 2-core
 * machine raw busbw is 2-2.5 GB/s from 256 KB up (shared/NOTES.md).
 * The tensor sizes are the cnn's of trainer/model.c at 28x28x1 and 10
 * classes, in arena order (last layer first). */
#include "trainer/comm.h"  // defines: struct comm, comm_init, comm_setup, comm_hooks
#include "trainer/train.h" // defines: struct train_hooks
#include "cli/sbuf.h"      // defines: struct sbuf
#include "cli/spec.h"      // defines: struct job

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t cnn_tensors[] = { 1280, 10, 401408, 128, 18432, 64, 288, 32 };
#define NT (sizeof(cnn_tensors) / sizeof(*cnn_tensors))

static double per_tensor(float *g, int world)
{
	size_t off = 0;
	double t0 = MPI_Wtime();

	for (size_t i = 0; i < NT; i++) {
		MPI_Allreduce(MPI_IN_PLACE, g + off, (int)cnn_tensors[i], MPI_FLOAT, MPI_SUM,
			      MPI_COMM_WORLD);
#pragma omp simd
		for (size_t j = 0; j < cnn_tensors[i]; j++)
			g[off + j] *= 1.0f / (float)world;
		off += cnn_tensors[i];
	}
	return MPI_Wtime() - t0;
}

/* One step of comm.c: on_grad_ready per tensor as backward would call
 * it, then before_update waits. */
static double bucketed(struct train_hooks *h, const size_t *sizes, size_t nt)
{
	size_t off = 0;
	double t0 = MPI_Wtime();

	for (size_t i = 0; i < nt; i++) {
		h->on_grad_ready(h->ctx, off, off + sizes[i]);
		off += sizes[i];
	}
	h->before_update(h->ctx, NULL);
	return MPI_Wtime() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

int main(void)
{
	struct job job = { 0 };
	struct comm c;
	struct train_hooks h;
	struct sbuf err = SBUF_INIT;
	size_t total = 0;
	float *g;
	enum { ITERS = 200 };
	double a[ITERS], b[ITERS];

	job.train.allreduce.bucket_mb = 25;
	job.train.allreduce.overlap = true;
	job.train.allreduce.stall_timeout_s = 300;
	if (comm_init(&c, &job, &err) || c.world < 2) {
		fprintf(stderr, "bench_comm: run under mpirun -np 2 or more (%s)\n", err.len ? err.buf : "one rank");
		return 2;
	}
	comm_hooks(&c, &h);
	for (size_t i = 0; i < NT; i++)
		total += cnn_tensors[i];
	g = calloc(total < (16u << 20) ? 16u << 20 : total, sizeof(float));
	if (comm_setup(&c, g, total))
		return 70;
	for (int i = -20; i < ITERS; i++) {
		double x, y;

		MPI_Barrier(MPI_COMM_WORLD);
		x = per_tensor(g, c.world);
		MPI_Barrier(MPI_COMM_WORLD);
		y = bucketed(&h, cnn_tensors, NT);
		if (i >= 0) {
			a[i] = x;
			b[i] = y;
		}
	}
	comm_teardown(&c);
	if (!c.rank) {
		double pt = median(a, ITERS), bk = median(b, ITERS);

		printf("cnn gradients (%zu tensors, %zu floats, %.2f MiB), %d ranks, median of %d:\n",
		       NT, total, total * 4.0 / (1 << 20), c.world, ITERS);
		printf("  per-tensor MPI_Allreduce  %8.1f us\n", pt * 1e6);
		printf("  comm.c buckets (25 MiB)   %8.1f us   %.2fx faster   (goal >= 3x)\n",
		       bk * 1e6, pt / bk);
		printf("\n%12s %10s | %10s %10s | %10s %10s | %6s\n", "size(B)", "count", "raw(us)",
		       "busbw GB/s", "bucket(us)", "busbw GB/s", "ratio");
	}
	for (size_t bytes = 1024; bytes <= (64u << 20); bytes *= 4) {
		size_t n = bytes / 4;
		int iters = bytes <= (1u << 20) ? 200 : bytes <= (16u << 20) ? 30 : 10;
		double *ra = calloc((size_t)iters, sizeof(double)), *rb = calloc((size_t)iters, sizeof(double));
		float *v = calloc(n, sizeof(float));
		size_t one[1] = { n };
		double fac = 2.0 * (c.world - 1) / c.world;

		job.train.allreduce.bucket_mb = bytes / 1048576.0 + 1;
		comm_setup(&c, v, n);
		for (int i = -3; i < iters; i++) {
			double x, y;

			MPI_Barrier(MPI_COMM_WORLD);
			x = MPI_Wtime();
			MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			x = MPI_Wtime() - x;
			MPI_Barrier(MPI_COMM_WORLD);
			y = bucketed(&h, one, 1);
			if (i >= 0) {
				ra[i] = x;
				rb[i] = y;
			}
		}
		comm_teardown(&c);
		if (!c.rank) {
			double x = median(ra, iters), y = median(rb, iters);

			printf("%12zu %10zu | %10.1f %10.2f | %10.1f %10.2f | %5.0f%%\n", bytes, n, x * 1e6,
			       bytes / x * fac * 1e-9, y * 1e6, bytes / y * fac * 1e-9, 100 * x / y);
		}
		free(ra);
		free(rb);
		free(v);
	}
	if (!c.rank)
		printf("(goal: bucket busbw >= 90%% of raw from 256 KB up)\n");
	free(g);
	c.job = &job;
	comm_finish(&c, 0);
	comm_release(&c);
	return 0;
}
