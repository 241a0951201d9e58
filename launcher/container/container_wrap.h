/* container_wrap.h - one rank's program wrapped in its job's container,
 * as hpctrain launch runs it.
 * Shell: finds the runtime in PATH, looks at the image, resolves the
 * run and data directories and the working directory, reads the
 * environment's names and the step's ids, then hands all of it to the
 * pure container_argv_build().  Prints nothing; launch reports.
 */
#ifndef HPT_CONTAINER_WRAP_H
#define HPT_CONTAINER_WRAP_H

#include "common/spec/spec.h" // defines: struct job, struct job_argv
#include "launcher/container/container_squash.h" // defines: struct container_squash

struct sbuf;

struct container_wrap_in {
	const struct job *job;   /* job->container.image is not NULL */
	const char *run;         /* launch --run, or NULL */
	unsigned rank;           /* names a podman container */
	const char *cpus, *mems; /* the plan's lists, or NULL where not bound */
	unsigned local_size;
	char *const *argv;       /* the program */
	const char *image;       /* start this copy of the image (container.stage), or NULL:
				  * container.image */
	const char *const *dirs; /* more directories mounted at their own path (the
				  * node's data cache, sources read in its place) */
	size_t ndirs;
};

/* Why a wrap failed, for launch's exit status. */
enum container_wrap_error {
	CONTAINER_WRAP_NO_RUNTIME = 1, /* no runtime program in PATH */
	CONTAINER_WRAP_NO_IMAGE,       /* the image is missing or unreadable */
	CONTAINER_WRAP_REFUSED,        /* this runtime cannot start this image */
};

/* What a wrapped program runs as, and what the caller releases once it
 * has ended (container_wrap_release). */
struct container_run {
	struct job_argv argv;          /* the full command line */
	struct container_squash squash; /* a SquashFS image mounted for ch-run, held */
	char *podman_name;             /* podman's container (--name), or NULL */
};

#define CONTAINER_RUN_INIT { { NULL, 0 }, CONTAINER_SQUASH_INIT, NULL }

/* The full command line into out (CONTAINER_RUN_INIT before): 0, or an
 * enum container_wrap_error with err in one line.  A SquashFS image
 * under Charliecloud is mounted with squashfuse first and held in
 * out->squash; without squashfuse it is refused, saying so.  Podman's
 * container is named hpctrain-JOB.STEP-rRANK-PID (JOB.STEP "local"
 * outside a Slurm step), for the supervisor to find and remove. */
int container_wrap(const struct container_wrap_in *in, struct container_run *out,
		   struct sbuf *err);

/* Releases the command line and the name, and lets go of the mounted
 * image (the node's last rank unmounts it).  Accepts CONTAINER_RUN_INIT. */
void container_wrap_release(struct container_run *r);

#endif
