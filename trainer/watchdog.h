/* watchdog.h - the stall watchdog of comm.c's waits (see watchdog.c).
 * Shell.  MPI types stay out of this header, as out of comm.h. */
#ifndef HPT_WATCHDOG_H
#define HPT_WATCHDOG_H

#include <stdint.h>

struct comm;

/* CLOCK_MONOTONIC in seconds. */
double watchdog_now(void);
/* Tells every peer that this rank entered wait number seq. */
void watchdog_announce(struct comm *c, int64_t seq);
/* Takes in the peers' arrivals and heartbeats that have come. */
void watchdog_drain(struct comm *c);
/* Waits for the n MPI_Requests at requests, polling; between polls it
 * sends heartbeats, takes in the peers', and aborts the job naming the
 * late ranks after stall_timeout_s.  what names the wait in that
 * message ("the gradient allreduce"). */
void watchdog_wait_all(struct comm *c, void *requests, int n, const char *what);
/* The thread that watches blocking calls (pthread_create's start). */
void *watchdog_thread(void *arg);
/* Bracket a blocking wait (a blocking MPI call, or the CUDA path's
 * stream sync before NCCL's result is used), so the thread reports and
 * aborts it like a polled one. */
void watchdog_begin(struct comm *c);
void watchdog_end(struct comm *c);

#endif
