/* container_wrap.c - a rank's program in its container, or the command
 * line it would be (a preview): see container_wrap.h.  Shell; a
 * SquashFS image under Charliecloud or Podman is mounted first (container_squash.c),
 * or, previewed, only named. */
#include "launcher/container/container_wrap.h"  // defines: container_wrap, container_wrap_preview
#include "launcher/container/container_argv.h"  // defines: container_argv_build
#include "launcher/container/container_image.h" // defines: container_image_kind, container_image_runtime
#include "launcher/container/container_squash.h" // defines: container_squash_mount, container_squash_path
#include "launcher/container/container_verify.h" // defines: container_verify, container_verify_is_needed
#include "common/sbuf.h" // defines: struct sbuf, xasprintf

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* The variables a runtime that passes none on (enroot) must be told
 * of: all of them, as the host runtimes pass them. */
static size_t env_names(char ***names)
{
	size_t n = 0;

	for (char **e = environ; *e; e++)
		n++;
	*names = xcalloc(n + 1, sizeof(**names));
	for (size_t i = 0; i < n; i++)
		(*names)[i] = xstrndup(environ[i], strcspn(environ[i], "="));
	return n;
}

static int is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n] || n == 1);
}

/* Absolute, resolved paths of the directories mounted at their own path:
 * the run, then the data set's directory (a file data set: its folder),
 * then the caller's (w->dirs).  One that does not exist is left out: the
 * program reports it.  dirs has room for 2 + w->ndirs. */
static size_t data_dirs(const struct container_wrap_in *w, char **dirs)
{
	const struct job *job = w->job;
	const char *cand[2] = { job->train.data_dir,
				strchr(job->train.dataset, '/') ? job->train.dataset : NULL };
	size_t n = 0;

	for (size_t i = 0; i < 2 + w->ndirs; i++) {
		const char *c = i < 2 ? cand[i] : w->dirs[i - 2];
		char *p = c ? realpath(c, NULL) : NULL;
		char *slash;
		struct stat st;

		if (p && !stat(p, &st) && !S_ISDIR(st.st_mode) && (slash = strrchr(p, '/')) &&
		    slash != p)
			*slash = '\0'; /* a file: mount its folder */
		if (p)
			dirs[n++] = p;
	}
	return n;
}

/* container.workdir; else the code snapshot, mounted at its own path;
 * else the caller's directory when it is mounted at its own path; else
 * the run directory (what the batch script is in). */
static char *workdir(const struct job *job, const char *code, const char *run, char *const *data,
		     size_t ndata)
{
	char cwd[PATH_MAX];

	if (job->container.workdir)
		return xstrdup(job->container.workdir);
	if (code)
		return xstrdup(code);
	if (getcwd(cwd, sizeof(cwd))) {
		if (run && is_under(cwd, run))
			return xstrdup(cwd);
		for (size_t i = 0; i < ndata; i++)
			if (is_under(cwd, data[i]))
				return xstrdup(cwd);
	}
	return run ? xstrdup(run) : NULL;
}

/* HPCTRAIN_PODMAN_ULIMITS, split on ',' (limits hold no commas). */
static size_t podman_ulimits(char ***out)
{
	const char *s = getenv("HPCTRAIN_PODMAN_ULIMITS");
	size_t n = 0;

	*out = NULL;
	while (s && *s) {
		size_t len = strcspn(s, ",");

		if (len) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n++] = xstrndup(s, len);
		}
		s += len + (s[len] == ',');
	}
	return n;
}

/* SLURM_JOB_ID.SLURM_STEP_ID.NODE: the same for a step's ranks on a
 * node.  The node's name too: ch-run keeps a join's state in /dev/shm,
 * and where nodes share one (network-namespace nodes of one host), ranks
 * of another node would join this node's namespaces, and a mixed count
 * leaves the state behind for the next job of that id. */
static char *join_tag(void)
{
	const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
	const char *node = getenv("SLURMD_NODENAME");
	char host[256] = "";

	if (!job || !step)
		return NULL;
	if ((!node || !*node) && !gethostname(host, sizeof(host) - 1))
		node = host;
	return node && *node ? xasprintf("%s.%s.%s", job, step, node) : xasprintf("%s.%s", job, step);
}

/* ch-run mounts onto directories of the image and, the image being
 * read-only, fails to make a missing one with "can't mkdir ... Read-only
 * file system"; name what is missing and what to do instead.  A DST
 * under /tmp needs nothing in the image: ch-run binds the host's /tmp
 * first, so the host's directory is there (and a run directory under
 * /tmp can be named before the image is made, whose digest names it). */
/* A directory of this rank's own (mkdtemp: 0700, a fresh name) for
 * podman's --pidfile, which podman opens as a plain path. */
static const char *podman_tmp(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp == '/' ? tmp : "/tmp";
}

static int podman_pidfile(struct container_run *out, struct sbuf *err)
{
	char *dir = xasprintf("%s/hpctrain-podman-XXXXXX", podman_tmp());

	if (!mkdtemp(dir)) {
		sbuf_addf(err, "cannot make a directory for podman's PID file (%s): %s", dir,
			  strerror(errno));
		free(dir);
		return -1;
	}
	out->podman_dir = dir;
	out->podman_pidfile = xasprintf("%s/pid", dir);
	return 0;
}

static int check_mount_points(const struct container_input *in, struct sbuf *err)
{
	struct job_argv m = { NULL, 0 };
	int rc = 0;

	const char *image = in->squash_dir ? in->squash_dir : in->c->image;

	if (in->runtime != CONTAINER_CHARLIECLOUD || in->c->writable ||
	    (in->kind != CONTAINER_IMAGE_DIR && !in->squash_dir))
		return 0;
	container_argv_mounts(in, &m);
	for (size_t i = 0; i < m.n && !rc; i++) {
		const char *dst = strchr(m.v[i], ':') + 1;
		char *at = xasprintf("%s%s", image, dst);
		struct stat st;

		if (strncmp(dst, "/tmp/", 5) && (stat(at, &st) || !S_ISDIR(st.st_mode))) {
			sbuf_addf(err, "the image %s has no directory %s to mount %.*s on; make it "
				  "in the image (mkdir -p %s): ch-run cannot in a read-only image",
				  in->c->image, dst, (int)(strchr(m.v[i], ':') - m.v[i]), m.v[i], at);
			rc = CONTAINER_WRAP_REFUSED;
		}
		free(at);
	}
	container_argv_release(&m);
	return rc;
}

/* The input's shell-gathered rest, then the command line; a directory
 * image's mount points are looked at unless preview (an image not
 * mounted has none to look at). */
static int build(const struct container_wrap_in *w, struct container_input *in, bool preview,
		 struct job_argv *out, struct sbuf *err)
{
	const struct job_container *c = &w->job->container;
	char *run = w->run ? realpath(w->run, NULL) : NULL, *wd, *tag = join_tag();
	char **data = xcalloc(2 + w->ndirs, sizeof(*data));
	char **names = NULL, **ulimits;
	const char *pr = getenv("HPCTRAIN_PODMAN_RUNTIME");
	int rc;

	in->ndata = data_dirs(w, data);
	wd = workdir(w->job, w->code_dir, run, data, in->ndata);
	in->run_dir = run;
	in->data_dirs = (const char *const *)data;
	in->workdir = wd;
	in->cpus = w->cpus;
	in->mems = w->mems;
	in->gpus = c->gpus == CONTAINER_GPUS_TRUE ||
		   (c->gpus == CONTAINER_GPUS_AUTO && w->job->resources.gpus_per_node > 0);
	in->local_size = w->local_size;
	in->join_tag = tag;
	in->podman_runtime = pr && *pr ? pr : NULL;
	in->nulimits = podman_ulimits(&ulimits);
	in->podman_ulimits = (const char *const *)ulimits;
	in->nenv = env_names(&names);
	in->env_names = (const char *const *)names;
	in->argv = w->argv;
	rc = preview && in->squash_dir ? 0 : check_mount_points(in, err);
	if (!rc && container_argv_build(in, out, err))
		rc = CONTAINER_WRAP_REFUSED;
	for (size_t i = 0; i < in->nenv; i++)
		free(names[i]);
	for (size_t i = 0; i < in->ndata; i++)
		free(data[i]);
	free(data);
	for (size_t i = 0; i < in->nulimits; i++)
		free(ulimits[i]);
	free(ulimits);
	free(names);
	free(run);
	free(wd);
	free(tag);
	return rc;
}

/* hpctrain-JOB.STEP-rRANK-PID, for the supervisor to find. */
static char *podman_name(unsigned rank)
{
	char *tag = join_tag(), *name = xasprintf("hpctrain-%s-r%u-%d", tag ? tag : "local", rank,
						  (int)getpid());

	free(tag);
	return name;
}

/* ch-run and podman start a directory; a SquashFS image is mounted
 * for them once per node (container_squash.c).  Apptainer and enroot
 * read the file themselves. */
static bool mounts_squash(int runtime)
{
	return runtime == CONTAINER_CHARLIECLOUD || runtime == CONTAINER_PODMAN;
}

/* What a SquashFS mount, or an image a runtime reads itself
 * (container_verify), is checked against: container.digest, which
 * names the image's content.  A staged pack of a directory image
 * (container.stage) is a SquashFS file whose own digest is not the
 * directory's: the stage engine verified its bytes against its manifest,
 * and the mount is keyed by its path, with its stat checked as always. */
static const char *mount_key(const struct container_wrap_in *w, const struct job_container *c)
{
	enum container_image_kind source;
	struct sbuf ignored = SBUF_INIT;
	bool pack = w->image && !container_image_kind(w->job->container.image, &source, &ignored) &&
		    source == CONTAINER_IMAGE_DIR;

	sbuf_release(&ignored);
	return pack ? NULL : c->digest;
}

int container_wrap(const struct container_wrap_in *w, struct container_run *out,
		   struct sbuf *err)
{
	struct job_container staged = w->job->container;
	const struct job_container *c = &staged;
	struct container_input in = { .c = c };
	struct container_squash *sq = &out->squash;
	struct sbuf why = SBUF_INIT;
	int rc;

	/* the copy has the content container.digest names, at another path */
	if (w->image)
		staged.image = (char *)w->image;
	if (container_image_runtime(c->runtime, &in.runtime, err))
		return CONTAINER_WRAP_NO_RUNTIME;
	if (container_image_kind(c->image, &in.kind, err))
		return CONTAINER_WRAP_NO_IMAGE;
	/* an image the runtime reads itself is the pinned one, or refused */
	if (container_verify_is_needed(in.runtime, in.kind, c->writable) &&
	    (rc = container_verify(c->image, in.kind, mount_key(w, c), err)))
		return rc > 0 ? CONTAINER_WRAP_REFUSED : CONTAINER_WRAP_NO_IMAGE;
	if (mounts_squash(in.runtime) && in.kind == CONTAINER_IMAGE_SQUASHFS &&
	    !container_squash_mount(c->image, mount_key(w, c), sq, &why))
		in.squash_dir = sq->dir;
	if (in.runtime == CONTAINER_PODMAN) {
		in.name = out->podman_name = podman_name(w->rank);
		if (w->supervised && podman_pidfile(out, err)) {
			container_wrap_release(out);
			return CONTAINER_WRAP_IO;
		}
		in.pidfile = out->podman_pidfile;
	}
	rc = build(w, &in, false, &out->argv, err);
	if (rc && why.len)
		sbuf_addf(err, " (%s)", why.buf); /* why it was not mounted */
	if (rc)
		container_wrap_release(out);
	sbuf_release(&why);
	return rc;
}

void container_wrap_release(struct container_run *r)
{
	container_argv_release(&r->argv);
	container_squash_release(&r->squash);
	free(r->podman_name);
	r->podman_name = NULL;
	if (r->podman_pidfile)
		unlink(r->podman_pidfile);
	if (r->podman_dir)
		rmdir(r->podman_dir);
	free(r->podman_pidfile);
	free(r->podman_dir);
	r->podman_pidfile = r->podman_dir = NULL;
}

int container_wrap_preview(const struct container_wrap_in *w, struct container_preview *out,
			   struct sbuf *err)
{
	struct job_container staged = w->job->container;
	const struct job_container *c = &staged;
	struct container_input in = { .c = c, .runtime = c->runtime };
	char *dir = NULL, *name = NULL, *pidfile = NULL;
	int rc;

	/* as container_wrap: the node's staged copy, when there is one */
	if (w->image)
		staged.image = (char *)w->image;

	if (c->runtime == CONTAINER_AUTO && container_image_runtime(c->runtime, &in.runtime, err))
		return CONTAINER_WRAP_NO_RUNTIME;
	if (container_image_kind(c->image, &in.kind, err))
		return CONTAINER_WRAP_NO_IMAGE;
	if (mounts_squash(in.runtime) && in.kind == CONTAINER_IMAGE_SQUASHFS) {
		in.squash_dir = dir = container_squash_path(c->image, c->digest);
		out->mount.v = xcalloc(4, sizeof(*out->mount.v));
		out->mount.v[0] = xstrdup("squashfuse");
		out->mount.v[1] = xstrdup(c->image);
		out->mount.v[2] = xstrdup(dir);
		out->mount.n = 3;
	}
	if (in.runtime == CONTAINER_PODMAN) {
		in.name = name = podman_name(w->rank);
		/* the directory podman_pidfile would make, not made */
		if (w->supervised)
			in.pidfile = pidfile = xasprintf("%s/hpctrain-podman-XXXXXX/pid", podman_tmp());
	}
	rc = build(w, &in, true, &out->argv, err);
	if (rc)
		container_wrap_preview_release(out);
	free(dir);
	free(name);
	free(pidfile);
	return rc;
}

void container_wrap_preview_release(struct container_preview *p)
{
	container_argv_release(&p->argv);
	container_argv_release(&p->mount);
}
