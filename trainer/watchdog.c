/* watchdog.c - no wait of the trainer's data parallelism hangs: every
 * rank announces each wait it enters and sends heartbeats while it
 * waits; a wait older than train.allreduce.stall_timeout_s names the
 * ranks that never arrived or went silent and aborts the job, and a rank
 * whose launcher died exits.  Polled waits run the checks between polls
 * (watchdog_wait_all); blocking calls are watched by a thread
 * (watchdog_thread, between watchdog_begin and watchdog_end).  Shell. */
#include "trainer/watchdog.h" // defines: watchdog_*
#include "trainer/comm.h"     // defines: struct comm, comm_check
#include "common/exitcode.h"  // defines: HPT_EXIT_FAILURE
#include "common/sbuf.h"      // defines: struct sbuf
#include "common/spec/spec.h" // defines: struct job (stall_timeout_s)

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define TAG_ARRIVE 7701

double watchdog_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}


/* Tells every peer that this rank entered wait number seq; takes in
 * what the peers said.  O(world) tiny eager messages per wait. */
void watchdog_announce(struct comm *c, int64_t seq)
{
	int64_t *v = &c->arrive_val[seq & 7];

	*v = seq;
	for (int r = 0; r < c->world; r++) {
		MPI_Request q;

		if (r == c->rank)
			continue;
		comm_check(c, MPI_Isend(v, 1, MPI_INT64_T, r, TAG_ARRIVE, *(MPI_Comm *)c->ctl, &q), "MPI_Isend");
		MPI_Request_free(&q);
	}
}

void watchdog_drain(struct comm *c)
{
	int flag;
	MPI_Status st;

	for (;;) {
		int64_t v;

		comm_check(c, MPI_Iprobe(MPI_ANY_SOURCE, TAG_ARRIVE, *(MPI_Comm *)c->ctl, &flag, &st), "MPI_Iprobe");
		if (!flag)
			return;
		comm_check(c, MPI_Recv(&v, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_ARRIVE, *(MPI_Comm *)c->ctl,
				  MPI_STATUS_IGNORE), "MPI_Recv");
		if (v > c->arrived[st.MPI_SOURCE])
			c->arrived[st.MPI_SOURCE] = v;
		c->heard[st.MPI_SOURCE] = watchdog_now();
	}
}

/* The watchdog's verdict: names the ranks that have not entered this
 * wait, then aborts the whole job. */
static void stall(struct comm *c, const char *what, double waited)
{
	struct sbuf late = SBUF_INIT;

	/* late: never entered this wait, or entered it and went silent (a
	 * stopped or dead process sends no heartbeats) */
	for (int r = 0; r < c->world; r++)
		if (r != c->rank && (c->arrived[r] < c->wait_seq || watchdog_now() - c->heard[r] > 1.0))
			sbuf_addf(&late, "%s%d", late.len ? ", " : "", r);
	fprintf(stderr,
		"hpctrain train: rank %d: %s of step %lld has not completed after %.0f s "
		"(train.allreduce.stall_timeout_s); %s%s; aborting the job\n",
		c->rank, what, (long long)c->step + 1, waited,
		late.len ? "ranks that have not arrived: " : "every rank arrived; the collective is stuck",
		late.len ? late.buf : "");
	fflush(stderr);
	sbuf_release(&late);
	MPI_Abort(MPI_COMM_WORLD, HPT_EXIT_FAILURE);
}

/* Waits for n requests, polling; the watchdog runs between polls: it
 * repeats this rank's arrival every 0.25 s as a heartbeat, takes in the
 * peers', and gives up after stall_timeout_s.  A changed parent means
 * the launcher (mpirun, slurmstepd) died and nobody will clean up: exit
 * at once rather than linger as an orphan.  Busy polling costs the
 * waiting core, which Open MPI's own blocking wait spends as well. */
void watchdog_wait_all(struct comm *c, void *requests, int n, const char *what)
{
	MPI_Request *reqs = requests;
	double t0 = watchdog_now(), beat = t0, limit = (double)c->job->train.allreduce.stall_timeout_s;
	int done = 0;

	watchdog_announce(c, ++c->wait_seq);
	for (unsigned spin = 0;; spin++) {
		comm_check(c, MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
		if (done)
			return;
		if ((spin & 255) == 0) {
			double t = watchdog_now();

			watchdog_drain(c);
			if (t - beat > 0.25) {
				watchdog_announce(c, c->wait_seq);
				beat = t;
			}
			if (getppid() != c->parent) {
				fprintf(stderr, "hpctrain train: rank %d: the launcher died during %s of "
					"step %lld; exiting\n", c->rank, what, (long long)c->step + 1);
				_exit(HPT_EXIT_FAILURE);
			}
			if (t - t0 > limit)
				stall(c, what, t - t0);
		}
	}
}

/* The watchdog of blocking calls: while the main thread sits in a
 * blocking MPI_Allreduce (blocked_since > 0) this thread sends its
 * heartbeats, takes in the peers' and, after stall_timeout_s, reports
 * and aborts, as wait_all() does for polled waits.  Without
 * MPI_THREAD_MULTIPLE it makes no MPI call but MPI_Abort, and names
 * ranks from what the main thread last took in. */
void *watchdog_thread(void *arg)
{
	struct comm *c = arg;
	double beat = 0, limit = (double)c->job->train.allreduce.stall_timeout_s;
	struct timespec nap = { 0, 50 * 1000 * 1000 };

	while (!atomic_load(&c->wd_quit)) {
		double since = atomic_load(&c->blocked_since), t = watchdog_now();

		nanosleep(&nap, NULL);
		if (since <= 0)
			continue;
		if (c->multiple) {
			watchdog_drain(c);
			if (t - beat > 0.25) {
				watchdog_announce(c, c->wait_seq);
				beat = t;
			}
		}
		if (getppid() != c->parent) {
			fprintf(stderr, "hpctrain train: rank %d: the launcher died; exiting\n", c->rank);
			_exit(HPT_EXIT_FAILURE);
		}
		if (t - since > limit)
			stall(c, "the gradient allreduce", t - since);
	}
	return NULL;
}

void watchdog_begin(struct comm *c)
{
	atomic_store(&c->blocked_since, watchdog_now());
}

void watchdog_end(struct comm *c)
{
	atomic_store(&c->blocked_since, 0.0);
}

