/* doctor_probe.h - doctor's measurements and its exchange between nodes.
 *
 * Shell: threads, the kernel's binding calls, oneDNN, libmunge and MPI.
 * The MPI functions are collective over MPI_COMM_WORLD: every rank calls
 * them, in the same order.
 */
#ifndef HPT_DOCTOR_PROBE_H
#define HPT_DOCTOR_PROBE_H

#include "launcher/doctor/doctor.h" // defines: struct doctor_node
#include "topology/bitmap.h" // defines: struct bitmap

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* What a thread bound to a slot got back from the kernel. */
struct doctor_bind_result {
	struct bitmap cpus, mems;
	bool have_cpus, have_mems;
	char error[256]; /* "sched_setaffinity: Invalid argument", or "" */
};

/* Binds a new thread to cpus and (mems not NULL) its memory to mems,
 * MPOL_BIND or MPOL_PREFERRED, and reads both back. */
void doctor_probe_bind(const struct bitmap *cpus, const struct bitmap *mems, bool preferred,
		       struct doctor_bind_result *r);
void doctor_bind_result_release(struct doctor_bind_result *r);

/* GFLOP/s of n x n x n fp32 GEMMs (oneDNN's sgemm) on one core: the
 * best of windows windows of at least window_s seconds each, after one
 * to warm up; -1 when oneDNN refused. */
double doctor_probe_gemm(int n, int windows, double window_s);

/* A munge credential through socket (NULL or "": munge's default), or
 * NULL with err.  Decoding one made on another node proves the keys
 * match and the clocks agree within the credential's lifetime. */
char *doctor_munge_encode(const char *socket, struct sbuf *err);
int doctor_munge_decode(const char *socket, const char *cred, struct sbuf *err);

/* Collective.  Once every rank has arrived, each sends bytes to the
 * next and receives from the previous, reps times after a warm-up; the
 * best GB/s of this rank's outgoing link, or -1 with err when the
 * transfers did not finish within timeout_s of everyone's arrival. */
double doctor_probe_ring(size_t bytes, int reps, double timeout_s, struct sbuf *err);

/* Collective.  On the first rank, offsets[i] is rank i's clock minus
 * the first's, in seconds (offsets has one entry per rank). */
void doctor_probe_clocks(double *offsets);

/* Collective.  The first rank's string on every rank (malloc'd; NULL
 * when it passed NULL). */
char *doctor_probe_bcast_string(const char *s);

/* Collective.  On the first rank, every rank's text in rank order (a
 * malloc'd array of malloc'd strings); NULL on the others. */
char **doctor_probe_gather(const char *text);

#endif
