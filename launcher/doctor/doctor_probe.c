/* doctor_probe.c - what doctor measures and exchanges: a slot's binding
 * tried on a thread, a one-core fp32 GEMM, munge credentials, and over
 * MPI the ring of point-to-point transfers, the clock offsets and the
 * gathering of every node's result on the first rank.
 * Shell (pthreads, set_mempolicy, oneDNN, libmunge, MPI); the grading
 * is doctor_grade.c's. */
#include "launcher/doctor/doctor_probe.h" // defines: doctor_probe_*
#include "common/sbuf.h"           // defines: struct sbuf, xmalloc
#include "common/monoclock.h"  // defines: monoclock_s
#include "common/strfmt.h" // defines: strfmt_label

#include <dnnl.h>
#include <errno.h>
#include <munge.h>
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_PREFERRED 1
#define MPOL_BIND 2
#define MAX_NUMA 1024

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- binding: a thread takes the slot's CPUs and memory policy, then
 * reads back what the kernel kept --- */

struct bind_try {
	const struct bitmap *cpus, *mems;
	int mem_mode;
	struct doctor_bind_result *r;
};

static void set_error(struct doctor_bind_result *r, const char *call)
{
	strfmt_label(r->error, sizeof(r->error), "%s: %s", call, strerror(errno));
}

static void try_cpus(const struct bitmap *cpus, struct doctor_bind_result *r)
{
	size_t n = 4096, bytes;
	cpu_set_t *set;

	if (bitmap_last(cpus) >= (int)n)
		n = (size_t)bitmap_last(cpus) + 1;
	bytes = CPU_ALLOC_SIZE(n);
	set = CPU_ALLOC(n);
	CPU_ZERO_S(bytes, set);
	for (int i = bitmap_first(cpus); i >= 0; i = bitmap_next(cpus, i))
		CPU_SET_S((size_t)i, bytes, set);
	if (sched_setaffinity(0, bytes, set)) {
		set_error(r, "sched_setaffinity");
	} else if (!sched_getaffinity(0, bytes, set)) {
		for (size_t i = 0; i < n; i++)
			if (CPU_ISSET_S(i, bytes, set))
				bitmap_set(&r->cpus, (unsigned)i);
		r->have_cpus = true;
	}
	CPU_FREE(set);
}

static void try_mems(const struct bitmap *mems, int mode, struct doctor_bind_result *r)
{
	unsigned long mask[MAX_NUMA / 64] = { 0 };
	int got_mode = 0;

	for (int i = bitmap_first(mems); i >= 0 && i < MAX_NUMA; i = bitmap_next(mems, i))
		mask[i / 64] |= 1UL << (i % 64);
	if (syscall(SYS_set_mempolicy, mode, mask, (unsigned long)MAX_NUMA + 1)) {
		set_error(r, "set_mempolicy");
		return;
	}
	memset(mask, 0, sizeof(mask));
	if (syscall(SYS_get_mempolicy, &got_mode, mask, (unsigned long)MAX_NUMA + 1, NULL, 0UL))
		return;
	for (unsigned i = 0; i < MAX_NUMA; i++)
		if (mask[i / 64] >> (i % 64) & 1)
			bitmap_set(&r->mems, i);
	r->have_mems = true;
}

static void *bind_thread(void *arg)
{
	struct bind_try *t = arg;

	try_cpus(t->cpus, t->r);
	if (!t->r->error[0] && t->mems)
		try_mems(t->mems, t->mem_mode, t->r);
	return NULL;
}

void doctor_probe_bind(const struct bitmap *cpus, const struct bitmap *mems, bool preferred,
		       struct doctor_bind_result *r)
{
	struct bind_try t = { cpus, mems, preferred ? MPOL_PREFERRED : MPOL_BIND, r };
	pthread_t th;

	memset(r, 0, sizeof(*r));
	bitmap_init(&r->cpus);
	bitmap_init(&r->mems);
	/* A thread of its own: affinity and memory policy are per thread, so
	 * the doctor itself stays where it was. */
	if (pthread_create(&th, NULL, bind_thread, &t)) {
		strfmt_label(r->error, sizeof(r->error), "cannot start a thread");
		return;
	}
	pthread_join(th, NULL);
}

void doctor_bind_result_release(struct doctor_bind_result *r)
{
	bitmap_release(&r->cpus);
	bitmap_release(&r->mems);
}

/* --- compute --- */

double doctor_probe_gemm(int n, int windows, double window_s)
{
	size_t k = (size_t)n * (size_t)n;
	float *a = xmalloc(k * sizeof(float)), *b = xmalloc(k * sizeof(float));
	float *c = xmalloc(k * sizeof(float));
	double best = 0, flops = 2.0 * n * n * n;

	for (size_t i = 0; i < k; i++) {
		a[i] = (float)(i % 17) / 17.0f;
		b[i] = (float)(i % 13) / 13.0f;
		c[i] = 0;
	}
	/* One core: a straggler is a slow core (throttled, capped by a
	 * cgroup, shared), and one core's figure compares across nodes of
	 * any size. */
	omp_set_num_threads(1);
	/* Windows longer than a CFS period (100 ms): a CPU quota cannot hide
	 * inside one, yet the best window shrugs off a passing neighbour.
	 * The first window only warms up. */
	for (int w = 0; w <= windows && best >= 0; w++) {
		double t0 = monoclock_s(), dt;
		long runs = 0;

		do {
			if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n) != dnnl_success) {
				best = -1;
				break;
			}
			runs++;
			dt = monoclock_s() - t0;
		} while (dt < window_s);
		if (w && best >= 0 && runs * flops / dt / 1e9 > best)
			best = runs * flops / dt / 1e9;
	}
	free(a);
	free(b);
	free(c);
	return best;
}

/* --- munge --- */

static munge_ctx_t munge_context(const char *socket)
{
	munge_ctx_t ctx = munge_ctx_create();

	if (ctx && socket && *socket)
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket);
	return ctx;
}

char *doctor_munge_encode(const char *socket, struct sbuf *err)
{
	munge_ctx_t ctx = munge_context(socket);
	char *cred = NULL;
	munge_err_t e;

	if (!ctx) {
		sbuf_addstr(err, "munge: cannot create a context");
		return NULL;
	}
	e = munge_encode(&cred, ctx, "hpctrain doctor", 15);
	if (e != EMUNGE_SUCCESS) {
		sbuf_addf(err, "munge cannot encode: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
		cred = NULL;
	}
	munge_ctx_destroy(ctx);
	return cred;
}

int doctor_munge_decode(const char *socket, const char *cred, struct sbuf *err)
{
	munge_ctx_t ctx = munge_context(socket);
	void *data = NULL;
	int len = 0;
	munge_err_t e;

	if (!ctx) {
		sbuf_addstr(err, "munge: cannot create a context");
		return -1;
	}
	e = munge_decode(cred, ctx, &data, &len, NULL, NULL);
	/* munged checks for a replay after the credential's MAC and time
	 * have passed: a replayed one was made with the same key, which is
	 * all this check asks.  Nodes that share one munged (several per
	 * host, as in a test cluster) each decode the same credential. */
	if (e == EMUNGE_CRED_REPLAYED)
		e = EMUNGE_SUCCESS;
	if (e != EMUNGE_SUCCESS)
		sbuf_addf(err, "%s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
	free(data);
	munge_ctx_destroy(ctx);
	return e == EMUNGE_SUCCESS ? 0 : -1;
}

/* --- MPI --- */

/* Waits for both requests until deadline; -1 when it passed. */
static int wait_until(MPI_Request req[2], double deadline)
{
	int done = 0;

	while (!done) {
		MPI_Testall(2, req, &done, MPI_STATUSES_IGNORE);
		if (!done && monoclock_s() > deadline)
			return -1;
		if (!done)
			sched_yield();
	}
	return 0;
}

/* Until every rank has reached the ring, testing each millisecond: a
 * node that finished its own checks first must not take the CPU from
 * one still measuring its GEMM (nodes of a test cluster share cores),
 * and a late node is no slow link.  Only --timeout's alarm bounds it. */
static void wait_for_everyone(void)
{
	struct timespec ms = { 0, 1000000 };
	MPI_Request req;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done;
	     MPI_Test(&req, &done, MPI_STATUS_IGNORE))
		nanosleep(&ms, NULL);
}

double doctor_probe_ring(size_t bytes, int reps, double timeout_s, struct sbuf *err)
{
	int rank, size, next, prev;
	char *out = xmalloc(bytes), *in = xmalloc(bytes);
	double best = 0, deadline;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	memset(out, rank & 0xff, bytes);
	wait_for_everyone();
	deadline = monoclock_s() + timeout_s;
	for (int r = 0; r <= reps; r++) {
		MPI_Request req[2];
		double t0 = monoclock_s(), dt;

		MPI_Irecv(in, (int)bytes, MPI_BYTE, prev, 7, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(out, (int)bytes, MPI_BYTE, next, 7, MPI_COMM_WORLD, &req[1]);
		if (wait_until(req, deadline)) {
			sbuf_addf(err, "the ring transfer did not finish within %.0f s", timeout_s);
			/* the requests may still read and write both buffers:
			 * they are left to the process's end, which follows */
			return -1;
		}
		dt = monoclock_s() - t0;
		if (r && dt > 0 && bytes / dt / 1e9 > best)
			best = (double)bytes / dt / 1e9;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	free(out);
	free(in);
	return best;
}

/* The first rank asks each other rank for its clock in turn; offset =
 * its clock minus the midpoint of the round trip. */
void doctor_probe_clocks(double *offsets)
{
	int rank, size;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < size; i++) {
		double t;

		if (rank == 0) {
			double t0 = wall(), t1;

			MPI_Send(&t0, 1, MPI_DOUBLE, i, 8, MPI_COMM_WORLD);
			MPI_Recv(&t, 1, MPI_DOUBLE, i, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			t1 = wall();
			offsets[i] = t - (t0 + t1) / 2;
		} else if (rank == i) {
			MPI_Recv(&t, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			t = wall();
			MPI_Send(&t, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		offsets[0] = 0;
}

char *doctor_probe_bcast_string(const char *s)
{
	int rank, len = 0;
	char *buf;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!rank)
		len = s ? (int)strlen(s) + 1 : 0;
	MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!len)
		return NULL;
	buf = xmalloc((size_t)len);
	if (!rank)
		memcpy(buf, s, (size_t)len);
	MPI_Bcast(buf, len, MPI_CHAR, 0, MPI_COMM_WORLD);
	return buf;
}

char **doctor_probe_gather(const char *text)
{
	int rank, size, len = (int)strlen(text) + 1, *lens = NULL, *offs = NULL, total = 0;
	char *all = NULL, **out = NULL;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!rank) {
		lens = xmalloc((size_t)size * sizeof(int));
		offs = xmalloc((size_t)size * sizeof(int));
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!rank) {
		for (int i = 0; i < size; i++) {
			offs[i] = total;
			total += lens[i];
		}
		all = xmalloc((size_t)total);
	}
	MPI_Gatherv(text, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (!rank) {
		out = xmalloc((size_t)size * sizeof(*out));
		for (int i = 0; i < size; i++)
			out[i] = xstrdup(all + offs[i]);
	}
	free(lens);
	free(offs);
	free(all);
	return out;
}
