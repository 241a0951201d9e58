/* container_wrap.h - one rank's program wrapped in its job's container,
 * as hpctrain launch runs it (or, for --dry-run, previews it).
 * Shell: finds the runtime in PATH, looks at the image, resolves the
 * run and data directories and the working directory, reads the
 * environment's names and the step's ids, then hands all of it to the
 * pure container_argv_build().  Prints nothing; launch reports.
 */
#ifndef HPT_CONTAINER_WRAP_H
#define HPT_CONTAINER_WRAP_H

#include "common/spec/spec.h" // defines: struct job, struct job_argv
#include "launcher/container/container_squash.h" // defines: struct container_squash

#include <stdbool.h>

struct sbuf;

struct container_wrap_in {
	const struct job *job;   /* job->container.image is not NULL */
	const char *run;         /* launch --run, or NULL */
	unsigned rank;           /* names a podman container */
	const char *cpus, *mems; /* the plan's lists, or NULL where not bound */
	unsigned local_size;
	bool supervised;         /* a supervisor stays to find the program (podman --pidfile) */
	char *const *argv;       /* the program */
	const char *image;       /* start this copy of the image (container.stage), or NULL:
				  * container.image */
	const char *const *dirs; /* more directories mounted at their own path (the
				  * node's data cache, sources read in its place) */
	size_t ndirs;
	const char *code_dir;    /* the code snapshot (in dirs too): the working directory
				  * unless container.workdir says otherwise; or NULL */
};

/* Why a wrap failed, for launch's exit status. */
enum container_wrap_error {
	CONTAINER_WRAP_NO_RUNTIME = 1, /* no runtime program in PATH */
	CONTAINER_WRAP_NO_IMAGE,       /* the image is missing or unreadable */
	CONTAINER_WRAP_REFUSED,        /* this runtime cannot start this image */
	CONTAINER_WRAP_IO,             /* no directory could be made for podman's PID file */
};

/* What a wrapped program runs as, and what the caller releases once it
 * has ended (container_wrap_release). */
struct container_run {
	struct job_argv argv;          /* the full command line */
	struct container_squash squash; /* a SquashFS image mounted for ch-run, held */
	char *podman_name;             /* podman's container (--name), or NULL */
	char *podman_dir;              /* podman_pidfile's private (0700) directory */
	char *podman_pidfile;          /* podman's --pidfile, or NULL */
};

#define CONTAINER_RUN_INIT { { NULL, 0 }, CONTAINER_SQUASH_INIT, NULL, NULL, NULL }

/* The full command line into out (CONTAINER_RUN_INIT before): 0, or an
 * enum container_wrap_error with err in one line.  A SquashFS image
 * under Charliecloud is mounted with squashfuse first and held in
 * out->squash; without squashfuse it is refused, saying so.  Podman's
 * container is named hpctrain-JOB.STEP-rRANK-PID (JOB.STEP "local"
 * outside a Slurm step), for the supervisor to remove; supervised, podman
 * writes the program's host PID to out->podman_pidfile, in a directory of its own
 * under $TMPDIR (else /tmp), for the supervisor to find it without
 * running podman inspect (about 40 ms a call). */
int container_wrap(const struct container_wrap_in *in, struct container_run *out,
		   struct sbuf *err);

/* What container_wrap would run, worked out without starting, mounting
 * or creating anything, for launch --dry-run. */
struct container_preview {
	struct job_argv argv;  /* the full command line, as container_wrap's */
	struct job_argv mount; /* squashfuse IMAGE DIR, run first for a SquashFS
				* image under Charliecloud; n == 0: none */
};

#define CONTAINER_PREVIEW_INIT { { NULL, 0 }, { NULL, 0 } }

/* container_wrap's command line into out (CONTAINER_PREVIEW_INIT
 * before), with its errors, but: a runtime the spec names need not be in
 * PATH (auto still picks one from PATH, as a launch on this node would);
 * a SquashFS image under Charliecloud is shown on the mount point
 * container_squash_mount would use (container_squash_path), after the
 * squashfuse command that would mount it, its mount points not looked
 * at; podman's container is named as it would be, and not created, and
 * its --pidfile (supervised) is in the directory's mkdtemp template. */
int container_wrap_preview(const struct container_wrap_in *in, struct container_preview *out,
			   struct sbuf *err);

/* Accepts CONTAINER_PREVIEW_INIT. */
void container_wrap_preview_release(struct container_preview *p);

/* Releases the command line, the name and the PID file with its
 * directory, and lets go of the mounted
 * image (the node's last rank unmounts it).  Accepts CONTAINER_RUN_INIT. */
void container_wrap_release(struct container_run *r);

#endif
