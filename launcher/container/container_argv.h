/* container_argv.h - a rank's program wrapped in its container runtime's
 * command line.
 *
 * Core: the spec's container section, the resolved runtime, the kind of
 * image, the run and data directories and the rank's plan in; a NULL-
 * terminated argument vector out.  No I/O, no getenv: the shell
 * (hpctrain launch) resolves `auto`, looks at the image and formats the
 * plan first, so equal input gives equal vectors and the goldens in
 * tests/unit/test_container.c are the command lines' specification.
 * Every user string (image, paths, the program and its arguments) is one
 * element of its own: nothing reaches a shell.
 */
#ifndef HPT_CONTAINER_ARGV_H
#define HPT_CONTAINER_ARGV_H

#include "common/spec/spec.h" // defines: struct job_container, struct job_argv, enum container_runtime

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* What container.image names, as the shell found it. */
enum container_image_kind {
	CONTAINER_IMAGE_DIR,      /* an unpacked image (a directory) */
	CONTAINER_IMAGE_SQUASHFS, /* a SquashFS file ("hsqs" magic) */
	CONTAINER_IMAGE_SIF,      /* a Singularity/Apptainer SIF file */
	CONTAINER_IMAGE_REF,      /* not a path: a reference a runtime pulls */
};

extern const char *const container_image_kind_names[];

struct container_input {
	const struct job_container *c; /* c->image is not NULL */
	int runtime;                   /* enum container_runtime, not CONTAINER_AUTO */
	enum container_image_kind kind;
	const char *squash_dir;        /* a SquashFS image mounted outside ch-run
					* or podman (squashfuse), given to them as
					* a directory; NULL: none, and refused */
	const char *run_dir;           /* absolute, or NULL: mounted at its own path */
	const char *const *data_dirs;  /* absolute, each mounted at its own path */
	size_t ndata;
	const char *workdir;           /* the program's working directory inside, or NULL */
	const char *cpus, *mems;       /* the plan's lists ("0-3,8"), or NULL: not bound */
	bool gpus;                     /* container.gpus resolved */
	unsigned local_size;           /* ranks on this node (ch-run --join when > 1) */
	const char *join_tag;          /* the same for a step's ranks on a node, or NULL */
	const char *podman_runtime;    /* podman --runtime (e.g. runc), or NULL */
	const char *name;              /* podman --name, which the supervisor finds
					* the program and removes the container
					* by; NULL: podman names it */
	const char *pidfile;           /* podman --pidfile: where podman writes the
					* program's host PID, which the supervisor
					* reads instead of running podman inspect;
					* NULL: none */
	const char *const *podman_ulimits; /* podman --ulimit values (nofile=N:N) */
	size_t nulimits;
	const char *const *env_names;  /* enroot: variables to pass in (--env NAME) */
	size_t nenv;
	char *const *argv;             /* the program, NULL-terminated */
};

/* Fills out (released first) with the full command line: the runtime's
 * program, its options, the image, then argv unchanged.  Returns 0, or
 * -1 with err saying why this runtime cannot start this image (a
 * SquashFS image under Charliecloud or Podman that is not mounted at
 * squash_dir: ch-run would stay behind as its FUSE server, out of the
 * supervisor's reach; a reference under a runtime that does not pull). */
int container_argv_build(const struct container_input *in, struct job_argv *out,
			 struct sbuf *err);

/* The mounts container_argv_build gives every runtime, as "SRC:DST":
 * the run directory, the data directories, container.mounts, in that
 * order, each DST once.  Appends to out. */
void container_argv_mounts(const struct container_input *in, struct job_argv *out);

void container_argv_release(struct job_argv *a);

#endif
