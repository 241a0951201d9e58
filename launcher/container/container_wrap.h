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

struct sbuf;

struct container_wrap_in {
	const struct job *job;   /* job->container.image is not NULL */
	const char *run;         /* launch --run, or NULL */
	const char *cpus, *mems; /* the plan's lists, or NULL where not bound */
	unsigned local_size;
	char *const *argv;       /* the program */
};

/* Why a wrap failed, for launch's exit status. */
enum container_wrap_error {
	CONTAINER_WRAP_NO_RUNTIME = 1, /* no runtime program in PATH */
	CONTAINER_WRAP_NO_IMAGE,       /* the image is missing or unreadable */
	CONTAINER_WRAP_REFUSED,        /* this runtime cannot start this image */
};

/* The full command line into out (released first): 0, or an enum
 * container_wrap_error with err in one line. */
int container_wrap(const struct container_wrap_in *in, struct job_argv *out, struct sbuf *err);

#endif
