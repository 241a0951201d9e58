/* watchdog.c - no wait of the trainer's data parallelism hangs: a wait
 * older than train.allreduce.stall_timeout_s names the ranks that never
 * reached it and aborts the job, and a rank whose launcher died exits.
 * Polled waits run the checks between polls (watchdog_wait_all);
 * blocking calls are watched by a thread (watchdog_start starts it; it
 * acts between watchdog_begin and watchdog_end).  Shell.  Its state is
 * struct watchdog, which struct comm holds: comm.c calls in, nothing
 * here calls comm.c.
 *
 * A wait costs no message: who is late is asked only once a wait has
 * timed out.  Each rank whose wait timed out sends rank 0 the number of
 * its wait; rank 0, when its own wait times out, takes the reports in
 * for a grace period and names the ranks that sent none (stopped, dead,
 * or still computing) or an older number (stuck in an earlier wait).
 * When rank 0 is the late one, the others abort after twice the grace,
 * saying so.  So a rank's cost per wait is O(1) at any world size, and
 * rank 0's O(world) only on the way to an abort.  (It used to tell every
 * peer of every wait and repeat that as a heartbeat: O(world) messages
 * per rank and wait, O(world^2) per job.) */
#include "trainer/comm/watchdog.h" // defines: struct watchdog, watchdog_*
#include "trainer/comm/late_ranks.h" // defines: late_ranks_describe, LATE_*
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

#define TAG_LATE 7702
#define NAP_NS (20 * 1000 * 1000)

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

static void nap(void)
{
	struct timespec t = { 0, NAP_NS };

	nanosleep(&t, NULL);
}

/* How long rank 0 takes reports in after its own wait timed out: the
 * ranks entered the wait up to a step apart, and time out as far apart. */
static double grace_s(const struct watchdog *w)
{
	double g = 0.1 * (double)w->stall_timeout_s;

	return g < 2 ? 2 : g > 30 ? 30 : g;
}

static void stalled_line(const struct watchdog *w, const char *what, double waited,
			 const char *verdict)
{
	fprintf(stderr,
		"hpctrain train: rank %d: %s of step %lld has not completed after %.0f s "
		"(train.allreduce.stall_timeout_s); %s; aborting the job\n",
		w->rank, what, (long long)*w->step + 1, waited, verdict);
	fflush(stderr);
}

/* Rank 0's side of a stall: the others' reports, then the verdict. */
static void collect_and_abort(struct watchdog *w, const char *what, double waited)
{
	unsigned char *state = xcalloc((size_t)w->world, 1);
	double end = monoclock_s() + grace_s(w);
	struct sbuf verdict = SBUF_INIT;
	int heard = 1;

	state[w->rank] = LATE_ARRIVED;
	while (heard < w->world && monoclock_s() < end) {
		MPI_Status st;
		int64_t seq;
		int flag;

		check(w, MPI_Iprobe(MPI_ANY_SOURCE, TAG_LATE, ctl_of(w), &flag, &st), "MPI_Iprobe");
		if (!flag) {
			nap();
			continue;
		}
		check(w, MPI_Recv(&seq, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_LATE, ctl_of(w),
				  MPI_STATUS_IGNORE), "MPI_Recv");
		heard += state[st.MPI_SOURCE] == LATE_SILENT;
		state[st.MPI_SOURCE] = seq >= w->wait_seq ? LATE_ARRIVED : LATE_BEHIND;
	}
	late_ranks_describe(state, w->world, &verdict);
	stalled_line(w, what, waited, verdict.buf);
	MPI_Abort(MPI_COMM_WORLD, HPT_EXIT_FAILURE);
}

/* Any other rank's side: its report to rank 0, whose verdict ends the
 * job; if none comes, rank 0 is the late one. */
static void report_and_abort(struct watchdog *w, const char *what, double waited)
{
	double end = monoclock_s() + 2 * grace_s(w);
	MPI_Request q;
	int sent = 0;

	w->report = w->wait_seq;
	check(w, MPI_Isend(&w->report, 1, MPI_INT64_T, 0, TAG_LATE, ctl_of(w), &q), "MPI_Isend");
	while (monoclock_s() < end) {
		if (!sent)
			check(w, MPI_Test(&q, &sent, MPI_STATUS_IGNORE), "MPI_Test");
		nap();
	}
	stalled_line(w, what, waited,
		     "rank 0, which names the ranks that have not arrived, did not: it has not "
		     "arrived either");
	MPI_Abort(MPI_COMM_WORLD, HPT_EXIT_FAILURE);
}

/* The watchdog's verdict: names the ranks that have not entered this
 * wait, then aborts the whole job.  can_ask: this thread may call MPI. */
static void stall(struct watchdog *w, const char *what, double waited, bool can_ask)
{
	if (!can_ask) {
		stalled_line(w, what, waited,
			     "which ranks are late is not known (no MPI_THREAD_MULTIPLE)");
		MPI_Abort(MPI_COMM_WORLD, HPT_EXIT_FAILURE);
	}
	if (w->rank == 0)
		collect_and_abort(w, what, waited);
	report_and_abort(w, what, waited);
}

/* Waits for n requests, polling; the watchdog runs between polls and
 * gives up after stall_timeout_s.  A changed parent means the launcher
 * (mpirun, slurmstepd) died and nobody will clean up: exit at once
 * rather than linger as an orphan.  Busy polling costs the waiting
 * core, which Open MPI's own blocking wait spends as well. */
void watchdog_wait_all(struct watchdog *w, void *requests, int n, const char *what)
{
	MPI_Request *reqs = requests;
	double t0 = monoclock_s(), limit = (double)w->stall_timeout_s;
	int done = 0;

	watchdog_enter(w);
	for (unsigned spin = 0;; spin++) {
		check(w, MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
		if (done)
			return;
		if ((spin & 255) == 0) {
			double t = monoclock_s();

			if (getppid() != w->parent) {
				say("rank %d: the launcher died during %s of "
					"step %lld; exiting", w->rank, what, (long long)*w->step + 1);
				_exit(HPT_EXIT_FAILURE);
			}
			if (t - t0 > limit)
				stall(w, what, t - t0, true);
		}
	}
}

/* The watchdog of blocking calls: while the main thread sits in a
 * blocking MPI_Allreduce (blocked_since > 0), after stall_timeout_s this
 * thread reports and aborts as watchdog_wait_all() does for polled
 * waits.  Without MPI_THREAD_MULTIPLE it makes no MPI call but
 * MPI_Abort, and cannot learn which ranks are late. */
static void *watch(void *arg)
{
	struct watchdog *w = arg;
	double limit = (double)w->stall_timeout_s;
	struct timespec pause = { 0, 50 * 1000 * 1000 };

	while (!atomic_load(&w->quit)) {
		double since = atomic_load(&w->blocked_since), t = monoclock_s();

		nanosleep(&pause, NULL);
		if (since <= 0)
			continue;
		if (getppid() != w->parent) {
			say("rank %d: the launcher died; exiting", w->rank);
			_exit(HPT_EXIT_FAILURE);
		}
		if (t - since > limit)
			stall(w, "the gradient allreduce", t - since, w->multiple);
	}
	return NULL;
}

int watchdog_start(struct watchdog *w)
{
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
	memset(w, 0, sizeof(*w));
}

void watchdog_enter(struct watchdog *w)
{
	w->wait_seq++;
}

void watchdog_begin(struct watchdog *w)
{
	atomic_store(&w->blocked_since, monoclock_s());
}

void watchdog_end(struct watchdog *w)
{
	atomic_store(&w->blocked_since, 0.0);
}
