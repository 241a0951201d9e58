/* doctor_container.h - doctor's container cell: does the job's image
 * start on this node, and do its GPUs, HCAs and PMIx reach inside?
 *
 * The shell (doctor_container.c) finds the runtime and the image as
 * launch does (launcher/container/), starts a probe, /bin/sh in the
 * image through the same command line a rank gets, kills it at the
 * deadline, and hands what it printed to the pure grader
 * (doctor_container_grade.c), which unit tests feed directly.
 *
 * The probe is given what must be visible inside, one argument each:
 * a path (a device such as /dev/nvidia0, PMIx's rendezvous directory)
 * or "env:NAME" (a PMIX_* variable); it prints "+ARG" when it sees one
 * and "-ARG" when it does not, and nothing else on success.
 */
#ifndef HPT_DOCTOR_CONTAINER_H
#define HPT_DOCTOR_CONTAINER_H

#include "launcher/doctor/doctor.h" // defines: struct doctor_cell

#include <stdbool.h>
#include <stddef.h>

struct job;

/* The probe's shell script: sh -c SCRIPT sh ARG...  (see above). */
extern const char doctor_container_script[];

/* What one probe did.  status is the exit status (0..255), or 128 + a
 * signal; ignored when timed_out. */
struct doctor_container_run {
	const char *runtime;        /* the runtime's program ("ch-run") */
	const char *image;
	double timeout_s;
	bool timed_out;             /* killed at the deadline */
	int status;
	const char *output;         /* stdout and stderr, as read (may be cut) */
	const char *const *want;    /* the probe's arguments, in order */
	size_t n_want;
};

/* Grades one probe into out: FAIL when it timed out, exited nonzero
 * (with the first line it printed), or did not see one of want (each
 * named: a device, PMIx's directory, a PMIX_* variable); else OK with
 * what it saw.  Pure. */
void doctor_container_grade(const struct doctor_container_run *r, struct doctor_cell *out);

/* The shell: checks job's container on this node into out.  SKIP when
 * the job has no container.image; FAIL naming the runtime or the image
 * when either is missing or unreadable; else one probe, killed after
 * timeout_s.  run: the run directory (mounted as launch mounts it), or
 * NULL.  granted: SLURM_STEP_GPUS or SLURM_JOB_GPUS, or NULL. */
void doctor_container_check(const struct job *job, const char *run, const char *granted,
			    double timeout_s, struct doctor_cell *out);

#endif
