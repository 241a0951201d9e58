/* image_pin.c - a job's container image pinned by its content digest:
 * see image_pin.h.  Calls launcher/container and prints. */
#include "launcher/job/image_pin.h"                        // defines: image_pin, image_pin_digest, image_pin_unchanged
#include "common/say.h"                           // defines: say, say_lines
#include "common/exitcode.h"                      // defines: enum hpt_exit
#include "common/fileio.h"                        // defines: fileio_exists
#include "common/sbuf.h"                          // defines: struct sbuf, xstrdup
#include "launcher/container/container_digest.h"  // defines: container_digest, container_digest_cache_path
#include "launcher/container/container_argv.h"    // defines: container_argv_build
#include "launcher/container/container_image.h"   // defines: container_image_kind, container_image_runtime

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int image_pin_digest(const struct job *job, char out[CONTAINER_DIGEST_SIZE])
{
	const char *image = job->container.image;
	struct sbuf note = SBUF_INIT, err = SBUF_INIT;
	enum container_image_kind kind;
	char *cache = NULL;
	int status = HPT_EXIT_OK;

	out[0] = '\0';
	if (!image)
		return HPT_EXIT_OK;
	if (container_image_kind(image, &kind, &err)) {
		status = HPT_EXIT_NO_INPUT;
	} else {
		cache = container_digest_cache_path();
		if (container_digest(image, kind, cache, out, &note, &err))
			status = HPT_EXIT_NO_INPUT;
	}
	say_lines(note.buf);
	if (status)
		say("%s", err.buf);
	free(cache);
	sbuf_release(&note);
	sbuf_release(&err);
	return status;
}

static void check_runtime(const struct job *job)
{
	struct sbuf err = SBUF_INIT;
	int got;

	if (container_image_runtime(job->container.runtime, &got, &err))
		say("note: not checked: %s on this host; it must be on "
			"the compute nodes", err.buf);
	if (job->container.image[0] != '/')
		say("note: not checked: the image reference %s is "
			"pulled by the runtime, not here", job->container.image);
	sbuf_release(&err);
}

/* A runtime named in the spec that cannot start this kind of image (a
 * SquashFS under charliecloud, say) would be refused by every rank at
 * launch; the builder launch uses says so now, before a run exists. */
static int check_runtime_takes_image(const struct job *job)
{
	static char *const prog[] = { "true", NULL };
	/* launch mounts a SquashFS image for ch-run (squashfuse) and
	 * refuses it on a node without squashfuse: not knowable here */
	struct container_input in = { .c = &job->container, .runtime = job->container.runtime,
				      .squash_dir = job->container.image, .argv = prog };
	struct job_argv argv = { NULL, 0 };
	struct sbuf err = SBUF_INIT;
	int status = HPT_EXIT_OK;

	if (job->container.runtime == CONTAINER_AUTO ||
	    container_image_kind(job->container.image, &in.kind, &err))
		goto out; /* a missing image is image_pin_digest's to report */
	if (container_argv_build(&in, &argv, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_BAD_SPEC;
	}
	container_argv_release(&argv);
out:
	sbuf_release(&err);
	return status;
}

/* "images/torch" is a reference by the schema's rule (a path is
 * absolute), but when it names something here the user meant a path,
 * which every node would read relative to another directory. */
static int check_not_relative(const struct job *job)
{
	const char *image = job->container.image;

	if (image[0] == '/' || !fileio_exists(image))
		return HPT_EXIT_OK;
	say("container.image %s names a file or directory here, but a "
		"path image must be absolute; a relative one is read as a reference", image);
	return HPT_EXIT_BAD_SPEC;
}

/* A mount's target must be in a directory image for ch-run, which binds
 * only onto what the image has (-b DST): every rank would fail at its
 * start.  Read from here, as the digest is; a SquashFS image's listing
 * is not read.  An error under charliecloud, a warning under auto (a
 * runtime that makes the target may be the one the nodes pick). */
static int check_mount_targets(const struct job *job)
{
	const struct job_container *c = &job->container;
	enum container_image_kind kind;
	struct sbuf err = SBUF_INIT, path = SBUF_INIT;
	int status = HPT_EXIT_OK;

	if ((c->runtime != CONTAINER_CHARLIECLOUD && c->runtime != CONTAINER_AUTO) ||
	    container_image_kind(c->image, &kind, &err) || kind != CONTAINER_IMAGE_DIR)
		goto out;
	for (size_t i = 0; i < c->mounts.n; i++) {
		const char *colon = strchr(c->mounts.v[i], ':');
		const char *dst = colon ? colon + 1 : c->mounts.v[i];

		sbuf_reset(&path);
		sbuf_addf(&path, "%s%s", c->image, dst);
		/* ch-run binds the host's /tmp: what is under it is there */
		if (fileio_exists(path.buf) || !strcmp(dst, "/tmp") || !strncmp(dst, "/tmp/", 5))
			continue;
		say("%scontainer.mounts[%zu] '%s': %s is not in the image %s, and charliecloud "
		    "binds only onto what the image has; make it there (mkdir -p %s) or bind "
		    "elsewhere", c->runtime == CONTAINER_AUTO ? "warning: " : "", i, c->mounts.v[i],
		    dst, c->image, path.buf);
		if (c->runtime == CONTAINER_CHARLIECLOUD)
			status = HPT_EXIT_BAD_SPEC;
	}
out:
	sbuf_release(&err);
	sbuf_release(&path);
	return status;
}

int image_pin(struct job *job, int check)
{
	char digest[CONTAINER_DIGEST_SIZE];
	int status = job->container.image ? check_not_relative(job) : HPT_EXIT_OK;

	if (!status && job->container.image)
		status = check_runtime_takes_image(job);
	if (!status && job->container.image)
		status = check_mount_targets(job);

	if (!status)
		status = image_pin_digest(job, digest);

	if (status || !job->container.image)
		return status;
	if (check)
		check_runtime(job);
	free(job->container.digest);
	job->container.digest = xstrdup(digest);
	return HPT_EXIT_OK;
}

/* The run's image must still be the one its hash names: another image
 * at the same path would make this attempt another run under the old
 * name.  The run keeps its recorded digest either way. */
int image_pin_unchanged(const struct job *job, int changed_ok)
{
	char now[CONTAINER_DIGEST_SIZE];
	const char *was = job->container.digest ? job->container.digest : "none";
	int status = image_pin_digest(job, now);

	if (status || !job->container.image || !strcmp(now, was))
		return status;
	if (changed_ok) {
		say("warning: the image %s changed (the run has %s, the "
			"image now %s); running it anyway", job->container.image, was, now);
		return HPT_EXIT_OK;
	}
	say("the image %s changed: the run has %s, the image now %s; "
		"submit the spec again for a new run, or pass --image-changed-ok",
		job->container.image, was, now);
	return HPT_EXIT_BAD_SPEC;
}
