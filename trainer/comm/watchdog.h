/* watchdog.h - the stall watchdog of comm.c's waits (see watchdog.c).
 * Shell.  MPI types stay out of this header, as out of comm.h: the
 * communicator is boxed behind a void pointer.
 *
 * struct comm holds one struct watchdog (c->wd), which comm.c sets up
 * and comm_cuda.c also uses around its blocking waits; calls go one way,
 * into watchdog.c, which knows nothing of struct comm.  The owner fills
 * the first block of fields, then calls watchdog_start();
 * watchdog_release() undoes it. */
#ifndef HPT_WATCHDOG_H
#define HPT_WATCHDOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct watchdog {
	/* set by the owner before watchdog_start() */
	int rank, world;
	void *ctl;          /* MPI_Comm * of the arrivals, borrowed: the owner frees
			     * it after watchdog_release() */
	bool multiple;      /* MPI_THREAD_MULTIPLE: the thread may call MPI */
	int64_t stall_timeout_s; /* train.allreduce.stall_timeout_s */
	const int64_t *step; /* the owner's current step, read for messages only */
	/* the watchdog's own */
	int64_t wait_seq;   /* waits entered so far; the same on every rank */
	int64_t report;     /* the buffer of this rank's report to rank 0 in a stall */
	int parent;         /* getppid() at start: the launcher */
	pthread_t thread;   /* watchdog of blocking calls */
	bool running;
	_Atomic bool quit;
	_Atomic double blocked_since; /* > 0: in a blocking call since then */
};

/* Notes the launcher and, with more than one rank, starts the thread
 * that watches blocking calls.  0, or -1 when the thread cannot start. */
int watchdog_start(struct watchdog *w);
/* Stops the thread; accepts a zeroed struct. */
void watchdog_release(struct watchdog *w);
/* Counts a wait this rank enters (no message: who is late is asked only
 * when a wait times out, watchdog.c). */
void watchdog_enter(struct watchdog *w);
/* Enters a wait and waits for the n MPI_Requests at requests, polling;
 * after stall_timeout_s it aborts the job naming the late ranks.  what names the wait in that
 * message ("the gradient allreduce"). */
void watchdog_wait_all(struct watchdog *w, void *requests, int n, const char *what);
/* Bracket a blocking wait (a blocking MPI call, or the CUDA path's
 * stream sync before NCCL's result is used), so the thread reports and
 * aborts it like a polled one. */
void watchdog_begin(struct watchdog *w);
void watchdog_end(struct watchdog *w);

#endif
