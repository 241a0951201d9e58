/* watchdog.c - no wait of the trainer's data parallelism hangs: every
 * rank announces each wait it enters and sends heartbeats while it
 * waits; a wait older than train.allreduce.stall_timeout_s names the
 * ranks that never arrived or went silent and aborts the job, and a rank
 * whose launcher died exits.  Polled waits run the checks between polls
 * (watchdog_wait_all); blocking calls are watched by a thread
 * (watchdog_start starts it; it acts between watchdog_begin and
 * watchdog_end).  Shell.  Its state is struct watchdog, which struct
 * comm holds: comm.c calls in, nothing here calls comm.c. */
#include "trainer/comm/watchdog.h" // defines: struct watchdog, watchdog_*
#include "common/say.h" // defines: say
#include "common/exitcode.h"  // defines: HPT_EXIT_FAILURE
#include "common/sbuf.h"      // defines: struct sbuf, xcalloc
#include "common/monoclock.h" // defines: monoclock_s

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_ARRIVE 7701

static MPI_Comm ctl_of(const struct watchdog *w)
{
	return *(MPI_Comm *)w->ctl;
}

/* comm.c's comm_check(), the same words: the watchdog makes its own MPI
 * calls and takes nothing from comm.c.  MPI errors are fatal on the
 * communicators we use (the default), so this only names the call for
 * the rare error that returns. */
static void check(const struct watchdog *w, int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int len = 0;

		MPI_Error_string(rc, msg, &len);
		say("rank %d: %s failed: %s", w->rank, what, msg);
		MPI_Abort(MPI_COMM_WORLD, HPT_EXIT_FAILURE);
	}
}

/* Tells every peer that this rank entered wait number seq; takes in
 * what the peers said.  O(world) tiny eager messages per wait. */
void watchdog_announce(struct watchdog *w, int64_t seq)
{
	int64_t *v = &w->arrive_val[seq & 7];

	*v = seq;
	for (int r = 0; r < w->world; r++) {
		MPI_Request q;

		if (r == w->rank)
			continue;
		check(w, MPI_Isend(v, 1, MPI_INT64_T, r, TAG_ARRIVE, ctl_of(w), &q), "MPI_Isend");
		MPI_Request_free(&q);
	}
}

void watchdog_drain(struct watchdog *w)
{
	int flag;
	MPI_Status st;

	for (;;) {
		int64_t v;

		check(w, MPI_Iprobe(MPI_ANY_SOURCE, TAG_ARRIVE, ctl_of(w), &flag, &st), "MPI_Iprobe");
		if (!flag)
			return;
		check(w, MPI_Recv(&v, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_ARRIVE, ctl_of(w),
				  MPI_STATUS_IGNORE), "MPI_Recv");
		if (v > w->arrived[st.MPI_SOURCE])
			w->arrived[st.MPI_SOURCE] = v;
		w->heard[st.MPI_SOURCE] = monoclock_s();
	}
}

/* The watchdog's verdict: names the ranks that have not entered this
 * wait, then aborts the whole job. */
static void stall(struct watchdog *w, const char *what, double waited)
{
	struct sbuf late = SBUF_INIT;

	/* late: never entered this wait, or entered it and went silent (a
	 * stopped or dead process sends no heartbeats) */
	for (int r = 0; r < w->world; r++)
		if (r != w->rank && (w->arrived[r] < w->wait_seq || monoclock_s() - w->heard[r] > 1.0))
			sbuf_addf(&late, "%s%d", late.len ? ", " : "", r);
	fprintf(stderr,
		"hpctrain train: rank %d: %s of step %lld has not completed after %.0f s "
		"(train.allreduce.stall_timeout_s); %s%s; aborting the job\n",
		w->rank, what, (long long)*w->step + 1, waited,
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
void watchdog_wait_all(struct watchdog *w, void *requests, int n, const char *what)
{
	MPI_Request *reqs = requests;
	double t0 = monoclock_s(), beat = t0, limit = (double)w->stall_timeout_s;
	int done = 0;

	watchdog_announce(w, ++w->wait_seq);
	for (unsigned spin = 0;; spin++) {
		check(w, MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
		if (done)
			return;
		if ((spin & 255) == 0) {
			double t = monoclock_s();

			watchdog_drain(w);
			if (t - beat > 0.25) {
				watchdog_announce(w, w->wait_seq);
				beat = t;
			}
			if (getppid() != w->parent) {
				say("rank %d: the launcher died during %s of "
					"step %lld; exiting", w->rank, what, (long long)*w->step + 1);
				_exit(HPT_EXIT_FAILURE);
			}
			if (t - t0 > limit)
				stall(w, what, t - t0);
		}
	}
}

/* The watchdog of blocking calls: while the main thread sits in a
 * blocking MPI_Allreduce (blocked_since > 0) this thread sends its
 * heartbeats, takes in the peers' and, after stall_timeout_s, reports
 * and aborts, as watchdog_wait_all() does for polled waits.  Without
 * MPI_THREAD_MULTIPLE it makes no MPI call but MPI_Abort, and names
 * ranks from what the main thread last took in. */
static void *watch(void *arg)
{
	struct watchdog *w = arg;
	double beat = 0, limit = (double)w->stall_timeout_s;
	struct timespec nap = { 0, 50 * 1000 * 1000 };

	while (!atomic_load(&w->quit)) {
		double since = atomic_load(&w->blocked_since), t = monoclock_s();

		nanosleep(&nap, NULL);
		if (since <= 0)
			continue;
		if (w->multiple) {
			watchdog_drain(w);
			if (t - beat > 0.25) {
				watchdog_announce(w, w->wait_seq);
				beat = t;
			}
		}
		if (getppid() != w->parent) {
			say("rank %d: the launcher died; exiting", w->rank);
			_exit(HPT_EXIT_FAILURE);
		}
		if (t - since > limit)
			stall(w, "the gradient allreduce", t - since);
	}
	return NULL;
}

int watchdog_start(struct watchdog *w)
{
	w->arrived = xcalloc((size_t)w->world, sizeof(*w->arrived));
	w->heard = xcalloc((size_t)w->world, sizeof(*w->heard));
	w->parent = getppid();
	if (w->world > 1) {
		if (pthread_create(&w->thread, NULL, watch, w))
			return -1;
		w->running = true;
	}
	return 0;
}

void watchdog_release(struct watchdog *w)
{
	if (w->running) {
		atomic_store(&w->quit, true);
		pthread_join(w->thread, NULL);
	}
	free(w->arrived);
	free(w->heard);
	memset(w, 0, sizeof(*w));
}

void watchdog_begin(struct watchdog *w)
{
	atomic_store(&w->blocked_since, monoclock_s());
}

void watchdog_end(struct watchdog *w)
{
	atomic_store(&w->blocked_since, 0.0);
}
