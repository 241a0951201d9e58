/* container_argv.c - each runtime's command line for one rank.
 * Core: see container_argv.h.  One function per runtime; the mounts
 * every runtime gets (run directory, data directories, container.mounts)
 * are gathered once, in that order, duplicates dropped. */
#include "launcher/container/container_argv.h" // defines: container_argv_build
#include "common/bug.h"  // defines: BUG, BUG_NOTE
#include "common/sbuf.h" // defines: struct sbuf, xstrdup, xasprintf

#include <stdlib.h>
#include <string.h>

const char *const container_image_kind_names[] = { "directory", "SquashFS file", "SIF file",
						   "image reference", NULL };

static void push(struct job_argv *a, const char *s)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

/* "--opt=VALUE" as one element: VALUE may start with '-'. */
static void push_opt(struct job_argv *a, const char *opt, const char *value)
{
	char *s = xasprintf("%s=%s", opt, value);

	push(a, s);
	free(s);
}

static void push_program(struct job_argv *a, char *const *argv)
{
	for (size_t i = 0; argv[i]; i++)
		push(a, argv[i]);
}

void container_argv_mounts(const struct container_input *in, struct job_argv *m)
{
	struct job_argv all = { NULL, 0 };

	if (in->run_dir)
		push(&all, in->run_dir);
	for (size_t i = 0; i < in->ndata; i++)
		push(&all, in->data_dirs[i]);
	for (size_t i = 0; i < in->c->mounts.n; i++)
		push(&all, in->c->mounts.v[i]);
	for (size_t i = 0; i < all.n; i++) {
		char *pair = strchr(all.v[i], ':') ? xstrdup(all.v[i])
						   : xasprintf("%s:%s", all.v[i], all.v[i]);
		const char *dst = strchr(pair, ':');
		int dup = 0;

		for (size_t j = 0; j < m->n && !dup; j++)
			dup = !strcmp(strchr(m->v[j], ':'), dst);
		if (!dup)
			push(m, pair);
		free(pair);
	}
	container_argv_release(&all);
}

/* ch-run execs in place with a directory image: the program keeps the
 * caller's PID, affinity and environment, so the supervisor and the
 * binding reach it.  It binds only /tmp by default; -b needs each DST in
 * the image.  LD_PRELOAD names host libraries the image lacks. */
static int charliecloud(const struct container_input *in, const struct job_argv *m,
			struct job_argv *out, struct sbuf *err)
{
	const char *image = in->c->image;

	if (in->kind == CONTAINER_IMAGE_SQUASHFS && !in->squash_dir) {
		sbuf_addf(err, "refusing the SquashFS image %s under charliecloud: ch-run would "
			  "stay behind as its FUSE server, so signals and kills would not reach "
			  "the program; unpack it into a directory (ch-convert) for now",
			  in->c->image);
		return -1;
	}
	if (in->kind == CONTAINER_IMAGE_SQUASHFS)
		image = in->squash_dir; /* mounted outside: ch-run execs in place */
	else if (in->kind != CONTAINER_IMAGE_DIR) {
		sbuf_addf(err, "charliecloud cannot start the %s %s; give it a directory image",
			  container_image_kind_names[in->kind], in->c->image);
		return -1;
	}
	push(out, "ch-run");
	if (in->c->writable)
		push(out, "--write");
	for (size_t i = 0; i < m->n; i++)
		push_opt(out, "--bind", m->v[i]);
	if (in->workdir)
		push_opt(out, "--cd", in->workdir);
	push(out, "--unset-env=LD_PRELOAD");
	if (in->local_size > 1 && in->join_tag) {
		char *n = xasprintf("%u", in->local_size);

		/* one namespace per node: Open MPI's single-copy (CMA)
		 * transport works only inside one user namespace */
		push_opt(out, "--join-ct", n);
		push_opt(out, "--join-tag", in->join_tag);
		free(n);
	}
	push(out, image);
	push(out, "--");
	return 0;
}

static int apptainer(const struct container_input *in, const struct job_argv *m,
		     struct job_argv *out)
{
	push(out, "apptainer");
	push(out, "exec");
	if (in->gpus)
		push(out, "--nv");
	if (in->c->writable)
		push(out, "--writable");
	for (size_t i = 0; i < m->n; i++)
		push_opt(out, "--bind", m->v[i]);
	if (in->workdir)
		push_opt(out, "--pwd", in->workdir);
	push(out, in->c->image);
	return 0;
}

/* enroot passes in only the variables named with --env, and has no
 * working-directory option: env(1) from the image's coreutils changes
 * it, with the directory as one argument. */
static int enroot(const struct container_input *in, const struct job_argv *m,
		  struct job_argv *out, struct sbuf *err)
{
	if (in->kind != CONTAINER_IMAGE_SQUASHFS) {
		sbuf_addf(err, "enroot cannot start the %s %s; give it a SquashFS image "
			  "(enroot import makes one)", container_image_kind_names[in->kind],
			  in->c->image);
		return -1;
	}
	push(out, "enroot");
	push(out, "start");
	if (in->c->writable)
		push(out, "--rw");
	for (size_t i = 0; i < m->n; i++)
		push_opt(out, "--mount", m->v[i]);
	for (size_t i = 0; i < in->nenv; i++)
		push_opt(out, "--env", in->env_names[i]);
	push(out, in->c->image);
	if (in->workdir) {
		push(out, "env");
		push_opt(out, "--chdir", in->workdir);
		push(out, "--");
	}
	return 0;
}

/* Without --env-host every rank sees rank 0 of 1; MPI and PMIx need the
 * host's network, IPC, PIDs and /tmp; the plan's cpuset is given to the
 * runtime, which would otherwise reset the binding. */
static int podman(const struct container_input *in, const struct job_argv *m,
		  struct job_argv *out, struct sbuf *err)
{
	if (in->kind == CONTAINER_IMAGE_SQUASHFS && !in->squash_dir) {
		sbuf_addf(err, "refusing the SquashFS image %s under podman: it is not mounted "
			  "(squashfuse)", in->c->image);
		return -1;
	}
	if (in->kind != CONTAINER_IMAGE_DIR && in->kind != CONTAINER_IMAGE_REF &&
	    in->kind != CONTAINER_IMAGE_SQUASHFS) {
		sbuf_addf(err, "podman cannot start the %s %s; give it a directory, a SquashFS "
			  "file or a reference", container_image_kind_names[in->kind], in->c->image);
		return -1;
	}
	push(out, "podman");
	if (in->podman_runtime)
		push_opt(out, "--runtime", in->podman_runtime);
	push(out, "run");
	push(out, "--rm");
	if (in->name)
		push_opt(out, "--name", in->name);
	if (in->pidfile)
		push_opt(out, "--pidfile", in->pidfile);
	push(out, "--env-host");
	push(out, "--network=host");
	push(out, "--ipc=host");
	push(out, "--pid=host");
	/* podman's own defaults (nproc=32768, nofile raised to the maximum)
	 * fail where root lacks CAP_SYS_RESOURCE, and so does "host": the
	 * site says which limits work */
	for (size_t i = 0; i < in->nulimits; i++)
		push_opt(out, "--ulimit", in->podman_ulimits[i]);
	if (!in->c->writable)
		push(out, "--read-only");
	push(out, "--volume=/tmp:/tmp");
	for (size_t i = 0; i < m->n; i++)
		push_opt(out, "--volume", m->v[i]);
	if (in->cpus)
		push_opt(out, "--cpuset-cpus", in->cpus);
	if (in->mems)
		push_opt(out, "--cpuset-mems", in->mems);
	if (in->gpus)
		push(out, "--device=nvidia.com/gpu=all");
	if (in->workdir)
		push_opt(out, "--workdir", in->workdir);
	if (in->kind == CONTAINER_IMAGE_DIR) {
		push(out, "--rootfs");
		push(out, in->c->image);
	} else if (in->kind == CONTAINER_IMAGE_SQUASHFS) {
		/* podman writes /etc/mtab into its root before the program
		 * starts, which a read-only FUSE mount refuses: ":O" puts a
		 * throw-away overlay on it, as --read-only still asks */
		char *o = xasprintf("%s:O", in->squash_dir);

		push(out, "--rootfs");
		push(out, o);
		free(o);
	} else {
		push(out, in->c->image);
	}
	return 0;
}

int container_argv_build(const struct container_input *in, struct job_argv *out,
			 struct sbuf *err)
{
	struct job_argv m = { NULL, 0 };
	int rc = -1;

	container_argv_release(out);
	container_argv_mounts(in, &m);
	switch (in->runtime) {
	case CONTAINER_CHARLIECLOUD:
		rc = charliecloud(in, &m, out, err);
		break;
	case CONTAINER_APPTAINER:
		rc = apptainer(in, &m, out);
		break;
	case CONTAINER_ENROOT:
		rc = enroot(in, &m, out, err);
		break;
	case CONTAINER_PODMAN:
		rc = podman(in, &m, out, err);
		break;
	default:
		BUG("runtime %d not resolved", in->runtime);
	}
	if (!rc)
		push_program(out, in->argv);
	else
		container_argv_release(out);
	container_argv_release(&m);
	return rc;
}

void container_argv_release(struct job_argv *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}
