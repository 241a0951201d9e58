/* comm.c - data parallelism over MPI: broadcast, bucketed overlapped
 * allreduce, delayed and compressed gradients, synchronised batch-norm
 * statistics and preemption agreement; watchdog.c keeps every wait
 * from hanging.  Shell.  See comm.h for the design.
 *
 * struct comm holds the watchdog's state (struct watchdog) and sets it
 * up; calls go one way, comm.c -> watchdog.c. */
#include "trainer/comm/comm.h"     // defines: struct comm, comm_*
#include "common/say.h" // defines: say
#include "trainer/comm/watchdog.h" // defines: struct watchdog, watchdog_*
#include "trainer/comm/comm_pack.h" // defines: comm_pack, comm_unpack, comm_pack_sum
#include "trainer/cpu/backend.h"  // defines: be_alloc, be_free
#include "trainer/model/ckpt.h"     // defines: struct ckpt_state
#include "trainer/metrics.h"  // defines: struct metrics
#include "trainer/model/model.h"    // defines: struct model
#include "trainer/model/optim.h"    // defines: struct optim
#include "trainer/train.h"    // defines: struct train_hooks, train_get_model, train_get_optim, train_get_metrics, train_get_ckpt_state, train_average_gradients_over
#include "common/exitcode.h"     // defines: HPT_EXIT_*
#include "common/monoclock.h"    // defines: monoclock_s
#include "common/mpistep.h"      // defines: mpistep_launched
#include "common/sbuf.h"         // defines: struct sbuf, sbuf_grow, xcalloc
#include "common/spec/spec.h"         // defines: struct job, COMPRESS_*, PREEMPT_*, BATCHNORM_*

#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile sig_atomic_t comm_preempt_signal;

static void on_signal(int sig)
{
	comm_preempt_signal = sig;
}

static MPI_Comm *ctl_of(struct comm *c)
{
	return c->ctl;
}

static MPI_Comm *bn_comm_of(struct comm *c)
{
	return c->bn_comm;
}

static MPI_Request *req_of(struct grad_bucket *b, int p)
{
	return b->req[p];
}

/* MPI errors are fatal here (MPI_ERRORS_ARE_FATAL on the communicators
 * we use, the default): a failed call aborts the job with Open MPI's
 * message, which is what a stuck peer would need anyway.  comm_check() only
 * names the call for the rare error that returns.  watchdog.c has its own
 * copy, so that it calls nothing here. */
static void comm_check(struct comm *c, int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int len = 0;

		MPI_Error_string(rc, msg, &len);
		say("rank %d: %s failed: %s", c->rank, what, msg);
		MPI_Abort(MPI_COMM_WORLD, HPT_EXIT_FAILURE);
	}
}

static void op16_fp16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	comm_pack_sum(COMM_PACK_FP16, in, inout, (size_t)*len);
}

static void op16_bf16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	comm_pack_sum(COMM_PACK_BF16, in, inout, (size_t)*len);
}

/* The watchdog watches this rank's waits on the control communicator;
 * it reads the step from c for its messages. */
static int start_watchdog(struct comm *c, bool multiple)
{
	struct watchdog *w = &c->wd;

	w->rank = c->rank;
	w->world = c->world;
	w->ctl = c->ctl;
	w->multiple = multiple;
	w->stall_timeout_s = c->job->train.allreduce.stall_timeout_s;
	w->step = &c->step;
	return watchdog_start(w);
}

int comm_init(struct comm *c, const struct job *job, struct sbuf *err)
{
	static const int signals[] = { SIGUSR2, SIGTERM, SIGINT };
	struct sigaction sa;

	memset(c, 0, sizeof(*c));
	c->job = job;
	c->world = 1;
	if (mpistep_launched()) {
		int provided = 0;

		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
			sbuf_addstr(err, "MPI_Init_thread failed");
			return HPT_EXIT_UNAVAILABLE;
		}
		mpistep_fence();
		c->mpi = true;
		c->ctl = xcalloc(1, sizeof(MPI_Comm));
		MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &c->world);
		/* control traffic (the watchdog's stall reports, barriers)
		 * on its own communicator, so no message of ours can match
		 * a collective's */
		comm_check(c, MPI_Comm_dup(MPI_COMM_WORLD, ctl_of(c)), "MPI_Comm_dup");
		if (start_watchdog(c, provided >= MPI_THREAD_MULTIPLE)) {
			sbuf_addstr(err, "cannot start the watchdog thread");
			return HPT_EXIT_INTERNAL;
		}
	}
	c->compress = job->train.allreduce.compress != COMPRESS_NONE;
	c->pack = job->train.allreduce.compress == COMPRESS_BF16 ? COMM_PACK_BF16 : COMM_PACK_FP16;
	if (c->mpi && c->compress) {
		c->op16 = xcalloc(1, sizeof(MPI_Op));
		comm_check(c, MPI_Op_create(c->pack == COMM_PACK_BF16 ? op16_bf16 : op16_fp16, 1,
				       (MPI_Op *)c->op16), "MPI_Op_create");
	}
	/* After MPI_Init: Open MPI may install handlers of its own. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(signals) / sizeof(*signals); i++)
		if ((signals[i] != SIGINT || job->preempt.signal == PREEMPT_INT) &&
		    sigaction(signals[i], &sa, NULL)) {
			sbuf_addstr(err, "cannot install the preemption signal handlers");
			return HPT_EXIT_INTERNAL;
		}
	return 0;
}

int comm_setup(struct comm *c, float *grads, size_t n)
{
	const struct job_allreduce *ar = &c->job->train.allreduce;
	size_t cap = (size_t)(ar->bucket_mb * 1024 * 1024 / sizeof(float));
	int nbufs = ar->delayed ? 2 : 1;

	c->grads = grads;
	c->n = n;
	if (cap < 1)
		cap = 1;
	c->nb = (c->n + cap - 1) / cap;
	c->b = xcalloc(c->nb ? c->nb : 1, sizeof(*c->b));
	for (size_t i = 0; i < c->nb; i++) {
		c->b[i].lo = i * cap;
		c->b[i].hi = i + 1 == c->nb ? c->n : (i + 1) * cap;
		for (int p = 0; p < 2; p++) {
			c->b[i].req[p] = xcalloc(1, sizeof(MPI_Request));
			*req_of(&c->b[i], p) = MPI_REQUEST_NULL;
		}
	}
	for (int p = 0; p < nbufs; p++) {
		if (c->compress)
			c->hbuf[p] = malloc((c->n ? c->n : 1) * sizeof(uint16_t));
		else if (ar->delayed)
			c->fbuf[p] = be_alloc(c->n);
		if ((c->compress && !c->hbuf[p]) || (!c->compress && ar->delayed && !c->fbuf[p]))
			return -1;
	}
	return 0;
}

/* Reduces bucket i of buffer p with a blocking MPI_Allreduce: when
 * backward is over there is nothing left to overlap with, and Open
 * MPI's blocking allreduce moves about twice the bytes per second of
 * libnbc's MPI_Iallreduce here (make bench). */
static void reduce_now(struct comm *c, size_t i, int p)
{
	struct grad_bucket *b = &c->b[i];
	size_t n = b->hi - b->lo;
	float *g = c->grads + b->lo;

	watchdog_enter(&c->wd);
	watchdog_begin(&c->wd);
	comm_check(c, MPI_Allreduce(MPI_IN_PLACE, g, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
	      "MPI_Allreduce");
	watchdog_end(&c->wd);
	(void)p;
}

/* struct bn_sync's allreduce_sum: a nonblocking allreduce on bn_comm,
 * polled by wait_all, so the watchdog covers it and its MPI_Testall
 * also progresses the bucket reductions in flight (Open MPI moves every
 * pending nonblocking collective in any MPI call).  A few hundred bytes:
 * latency-bound, one per batch-norm layer and pass, exposed in full
 * (counted in comm_ms).  A blocking MPI_Allreduce under the watchdog
 * thread, as reduce_now() does, would save about 6 us a call (2 local
 * ranks, 33 doubles: 6 us against 12 us), 0.2 ms of a 10 ms resnet-small
 * step; polling keeps the watchdog's per-rank verdict without
 * MPI_THREAD_MULTIPLE.  MPI errors abort (comm_check()): err stays empty. */
static int comm_bn_allreduce(void *ctx, double *buf, size_t n, struct sbuf *err)
{
	struct comm *c = ctx;
	double t0 = monoclock_s();
	MPI_Request q;

	(void)err;
	comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, *bn_comm_of(c), &q),
	      "MPI_Iallreduce");
	watchdog_wait_all(&c->wd, &q, 1, "the batch-norm allreduce");
	c->step_comm_s += monoclock_s() - t0;
	return 0;
}

/* Sync batch norm: its own communicator (a duplicate, so its collectives
 * never meet the buckets' on MPI_COMM_WORLD), then the model's
 * batch-norm layers call comm_bn_allreduce.  Collective: every rank runs
 * on_start. */
static void start_bn_sync(struct comm *c, struct model *m)
{
	c->bn_comm = xcalloc(1, sizeof(MPI_Comm));
	comm_check(c, MPI_Comm_dup(MPI_COMM_WORLD, bn_comm_of(c)), "MPI_Comm_dup");
	c->bn.allreduce_sum = comm_bn_allreduce;
	c->bn.ctx = c;
	model_set_bn_sync(m, &c->bn);
}

/* on_start: buckets and buffers for the model's arena, then rank 0's
 * parameters, state, optimizer and position to everyone, and with
 * train.batchnorm: sync the batch-norm reduction (one rank needs none:
 * its statistics are the global ones). */
static int comm_start(void *ctx, struct trainer *t)
{
	struct comm *c = ctx;
	struct model *m = train_get_model(t);
	struct optim *o = train_get_optim(t);

	if (comm_setup(c, m->grads, m->narena) || straggle_init(&c->sg, c))
		return -1;
	train_get_metrics(t)->ranks = c->world;
	/* averaging without a pass over the gradients: each rank's come out
	 * of backward divided by world, so the allreduce's sum is the mean */
	train_average_gradients_over(t, c->world);
	c->step = train_get_ckpt_state(t)->step;
	if (!c->mpi || c->world == 1)
		return 0;
	{
		MPI_Request q[6];
		struct ckpt_state *cs = train_get_ckpt_state(t);
		int k = 0;

		comm_check(c, MPI_Ibcast(m->params, (int)m->narena, MPI_FLOAT, 0, MPI_COMM_WORLD, &q[k++]),
		      "MPI_Ibcast");
		if (m->nstate)
			comm_check(c, MPI_Ibcast(m->state, (int)m->nstate, MPI_FLOAT, 0, MPI_COMM_WORLD,
					    &q[k++]), "MPI_Ibcast");
		if (o->m)
			comm_check(c, MPI_Ibcast(o->m, (int)o->n, MPI_FLOAT, 0, MPI_COMM_WORLD, &q[k++]),
			      "MPI_Ibcast");
		if (o->v)
			comm_check(c, MPI_Ibcast(o->v, (int)o->n, MPI_FLOAT, 0, MPI_COMM_WORLD, &q[k++]),
			      "MPI_Ibcast");
		comm_check(c, MPI_Ibcast(&o->t, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &q[k++]), "MPI_Ibcast");
		/* plain data of one binary: bytes are fine */
		comm_check(c, MPI_Ibcast(cs, (int)sizeof(*cs), MPI_BYTE, 0, MPI_COMM_WORLD, &q[k++]),
		      "MPI_Ibcast");
		watchdog_wait_all(&c->wd, q, k, "the broadcast of rank 0's parameters");
	}
	if (c->job->train.batchnorm == BATCHNORM_SYNC)
		start_bn_sync(c, m);
	return 0;
}

/* Starts bucket i of buffer p: copy or pack into the buffer the
 * reduction runs in, MPI_Iallreduce.  A sum: the gradients came out of
 * backward already divided by world (comm_start). */
static void start_bucket(struct comm *c, size_t i, int p)
{
	struct grad_bucket *b = &c->b[i];
	size_t n = b->hi - b->lo;
	bool delayed = c->job->train.allreduce.delayed;
	float *g = c->grads + b->lo;

	if (c->compress) {
		comm_pack(c->pack, g, c->hbuf[p] + b->lo, n);
		if (c->mpi && c->world > 1)
			comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, c->hbuf[p] + b->lo, (int)n, MPI_UINT16_T,
						*(MPI_Op *)c->op16, MPI_COMM_WORLD, req_of(b, p)),
			      "MPI_Iallreduce");
	} else {
		float *dst = delayed ? c->fbuf[p] + b->lo : g;

		if (delayed)
			memcpy(dst, g, n * sizeof(float));
		if (c->mpi && c->world > 1)
			comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, dst, (int)n, MPI_FLOAT, MPI_SUM,
						MPI_COMM_WORLD, req_of(b, p)), "MPI_Iallreduce");
	}
	b->started[p] = true;
}

/* Lets started reductions move: Open MPI progresses nonblocking
 * collectives only inside MPI calls. */
static void progress(struct comm *c)
{
	if (!c->mpi || c->world == 1)
		return;
	for (size_t i = 0; i < c->nb; i++)
		for (int p = 0; p < 2; p++) {
			int flag;

			if (*req_of(&c->b[i], p) != MPI_REQUEST_NULL)
				comm_check(c, MPI_Test(req_of(&c->b[i], p), &flag, MPI_STATUS_IGNORE), "MPI_Test");
		}
}

static int cur_buf(const struct comm *c)
{
	return c->job->train.allreduce.delayed ? (int)(c->step & 1) : 0;
}

/* Fp32, synchronous, MPI: the buckets left when backward is over go
 * through reduce_now(). */
static bool blocking_ok(const struct comm *c)
{
	return c->mpi && c->world > 1 && !c->compress && !c->job->train.allreduce.delayed;
}

static int comm_grad_ready(void *ctx, size_t lo, size_t hi)
{
	struct comm *c = ctx;
	double t0 = monoclock_s();
	int p;

	(void)lo;
	p = cur_buf(c);
	/* the last range: before_update follows at once, nothing to overlap */
	if (c->job->train.allreduce.overlap && !(hi == c->n && blocking_ok(c)))
		for (size_t i = 0; i < c->nb; i++)
			if (!c->b[i].started[p] && c->b[i].hi <= hi)
				start_bucket(c, i, p);
	progress(c);
	t0 = monoclock_s() - t0;
	c->step_comm_s += t0;
	c->step_own_s += t0;
	return 0;
}

/* Waits for buffer p's reductions and leaves the averages in grads. */
static void finish(struct comm *c, int p)
{
	MPI_Request reqs[64];
	size_t k = 0;

	if (c->mpi && c->world > 1)
		for (size_t i = 0; i < c->nb; i++) {
			reqs[k++] = *req_of(&c->b[i], p);
			if (k == 64 || i + 1 == c->nb) {
				watchdog_wait_all(&c->wd, reqs, (int)k, "the gradient allreduce");
				k = 0;
			}
		}
	for (size_t i = 0; i < c->nb; i++) {
		struct grad_bucket *b = &c->b[i];

		*req_of(b, p) = MPI_REQUEST_NULL;
		b->started[p] = false;
		if (c->compress)
			comm_unpack(c->pack, c->hbuf[p] + b->lo, c->grads + b->lo, b->hi - b->lo);
		else if (c->job->train.allreduce.delayed)
			memcpy(c->grads + b->lo, c->fbuf[p] + b->lo, (b->hi - b->lo) * sizeof(float));
	}
}

static int comm_before_update(void *ctx, struct trainer *t)
{
	struct comm *c = ctx;
	double t0 = monoclock_s();
	int p = cur_buf(c), skip = 0;

	(void)t;
	for (size_t i = 0; i < c->nb; i++)
		if (!c->b[i].started[p] && blocking_ok(c))
			reduce_now(c, i, p);
		else if (!c->b[i].started[p])
			start_bucket(c, i, p);
	if (!c->job->train.allreduce.delayed) {
		finish(c, p);
	} else if (c->pending) {
		finish(c, 1 - p);
	} else {
		skip = 1; /* nothing averaged yet: the first step makes no update */
		progress(c);
	}
	c->pending = true;
	c->step_comm_s += monoclock_s() - t0;
	return skip;
}

static int comm_after_update(void *ctx, struct trainer *t)
{
	struct comm *c = ctx;
	struct metrics *mt = train_get_metrics(t);

	mt->comm_ms = c->step_comm_s * 1e3;
	c->total_comm_s += c->step_comm_s;
	c->step_comm_s = 0;
	c->last_own_s = c->step_own_s;
	c->step_own_s = 0;
	c->step++;
	return 0;
}

/* Rank 0 gets every rank's rate for the step record; a tiny gather at
 * the log interval only. */
static int comm_on_log(void *ctx, struct trainer *t, double samples_per_s)
{
	struct comm *c = ctx;
	struct metrics *mt = train_get_metrics(t);
	double t0 = monoclock_s();
	MPI_Request q;

	if (!c->mpi || c->world < 2)
		return 0;
	if (!mt->rank_rates && c->rank == 0)
		mt->rank_rates = xcalloc((size_t)c->world, sizeof(*mt->rank_rates));
	comm_check(c, MPI_Igather(&samples_per_s, 1, MPI_DOUBLE, mt->rank_rates, 1, MPI_DOUBLE, 0,
				  *ctl_of(c), &q), "MPI_Igather");
	watchdog_wait_all(&c->wd, &q, 1, "the gather of the ranks' rates");
	mt->nrank_rates = c->rank == 0 ? c->world : 0;
	c->total_comm_s += monoclock_s() - t0;
	return 0;
}

/* After each step: its compute (the step less its exposed
 * communication, as the step record's compute_ms) and own communication
 * into the slow-rank window (straggle.c). */
static int comm_step_time(void *ctx, struct trainer *t, int64_t step, double seconds)
{
	struct comm *c = ctx;
	struct metrics *mt = train_get_metrics(t);
	double ms = seconds * 1e3, comm = mt->comm_ms < ms ? mt->comm_ms : ms;
	double t0 = monoclock_s();
	int rc = straggle_step(&c->sg, c, mt, step, ms - comm, c->last_own_s * 1e3);

	c->total_comm_s += monoclock_s() - t0;
	return rc;
}

/* train_plan_make: rank 0's v[0..n) to every rank, before the model. */
static int comm_share(void *ctx, int64_t *v, int n)
{
	struct comm *c = ctx;
	MPI_Request q;

	if (!c->mpi || c->world < 2)
		return 0;
	comm_check(c, MPI_Ibcast(v, n, MPI_INT64_T, 0, *ctl_of(c), &q), "MPI_Ibcast");
	watchdog_wait_all(&c->wd, &q, 1, "the broadcast of the checkpoint's batch shape");
	return 0;
}

/* Before the model: rank 0's text (its kernel choices) to every rank,
 * its length first.  The others wait here while rank 0 measures. */
static int comm_share_text(void *ctx, struct sbuf *s)
{
	struct comm *c = ctx;
	int64_t len = (int64_t)s->len;
	MPI_Request q;

	if (!c->mpi || c->world < 2)
		return 0;
	comm_check(c, MPI_Ibcast(&len, 1, MPI_INT64_T, 0, *ctl_of(c), &q), "MPI_Ibcast");
	watchdog_wait_all(&c->wd, &q, 1, "the broadcast of rank 0's kernel choices");
	if (len < 0 || len > INT_MAX)
		return -1;
	if (c->rank) {
		sbuf_reset(s);
		sbuf_grow(s, (size_t)len);
	}
	if (len) {
		comm_check(c, MPI_Ibcast(s->buf, (int)len, MPI_CHAR, 0, *ctl_of(c), &q),
			   "MPI_Ibcast");
		watchdog_wait_all(&c->wd, &q, 1, "the broadcast of rank 0's kernel choices");
	}
	if (c->rank) {
		s->len = (size_t)len;
		s->buf[len] = '\0';
	}
	return 0;
}

/* Every step: the global batch's loss and right predictions.  Counted
 * in the step's communication time. */
static int comm_sum(void *ctx, double *v, int n)
{
	struct comm *c = ctx;
	double t0 = monoclock_s();
	MPI_Request q;

	if (!c->mpi || c->world < 2)
		return 0;
	comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, *ctl_of(c), &q),
		   "MPI_Iallreduce");
	watchdog_wait_all(&c->wd, &q, 1, "the sum of the ranks' losses");
	c->total_comm_s += monoclock_s() - t0;
	return 0;
}

static bool comm_should_stop(void *ctx, struct trainer *t)
{
	struct comm *c = ctx;
	int flag = comm_preempt_signal != 0;
	double t0 = monoclock_s();

	(void)t;
	if (c->mpi && c->world > 1) {
		MPI_Request q;

		comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, *ctl_of(c), &q),
		      "MPI_Iallreduce");
		watchdog_wait_all(&c->wd, &q, 1, "the preemption check");
	}
	/* outside train.c's step time: counted in the total only */
	c->total_comm_s += monoclock_s() - t0;
	if (flag && c->rank == 0)
		say("preempted (%s) after step %lld; writing a checkpoint",
			comm_preempt_signal == SIGTERM ? "SIGTERM"
			: comm_preempt_signal == SIGINT ? "SIGINT"
			: comm_preempt_signal ? "SIGUSR2" : "a peer rank was signalled",
			(long long)c->step);
	return flag != 0;
}

void comm_hooks(struct comm *c, struct train_hooks *h)
{
	memset(h, 0, sizeof(*h));
	h->ctx = c;
	h->on_start = comm_start;
	h->on_grad_ready = comm_grad_ready;
	h->before_update = comm_before_update;
	h->after_update = comm_after_update;
	h->should_stop = comm_should_stop;
	h->on_log = comm_on_log;
	h->on_step_time = comm_step_time;
	h->share = comm_share;
	h->sum = comm_sum;
	h->share_text = comm_share_text;
}

int comm_finish(struct comm *c, int status)
{
	if (!c->mpi)
		return status;
	if (status && status != HPT_EXIT_PREEMPTED && c->world > 1) {
		say("rank %d failed (status %d); aborting the job",
			c->rank, status);
		fflush(stderr);
		MPI_Abort(MPI_COMM_WORLD, status);
	}
	if (c->world > 1) {
		MPI_Request q;

		/* everyone waits for rank 0's final or preemption checkpoint */
		comm_check(c, MPI_Ibarrier(*ctl_of(c), &q), "MPI_Ibarrier");
		watchdog_wait_all(&c->wd, &q, 1, "the final barrier");
	}
	return status;
}

void comm_teardown(struct comm *c)
{
	for (size_t i = 0; c->b && i < c->nb; i++)
		for (int p = 0; p < 2; p++)
			free(c->b[i].req[p]);
	free(c->b);
	c->b = NULL;
	c->nb = 0;
	for (int p = 0; p < 2; p++) {
		be_free(c->fbuf[p]);
		free(c->hbuf[p]);
		c->fbuf[p] = NULL;
		c->hbuf[p] = NULL;
	}
	c->pending = false;
}

void comm_release(struct comm *c)
{
	watchdog_release(&c->wd);
	straggle_release(&c->sg);
	comm_teardown(c);
	if (c->mpi) {
		if (c->op16)
			MPI_Op_free((MPI_Op *)c->op16);
		if (c->bn_comm)
			MPI_Comm_free(bn_comm_of(c));
		MPI_Comm_free(ctl_of(c));
		MPI_Finalize();
	}
	free(c->op16);
	free(c->bn_comm);
	free(c->ctl);
	memset(c, 0, sizeof(*c));
}
