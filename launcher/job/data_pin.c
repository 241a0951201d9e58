/* data_pin.c - a job's data.stage entries pinned by their manifests: see
 * data_pin.h.  Calls the stage engine's scan (launcher/stage) and prints.
 * The image of container.stage is one of the entries (spec_load adds
 * it), so it is pinned here too, by its manifest; container.digest
 * still names it for image_pin.  A directory image is packed into one
 * SquashFS file, which is what is pinned and staged.  The code
 * snapshot's entry "code" is not scanned here: code_pin adds and pins
 * it from the code's listing (code_stage.h), and a run's is checked by
 * code_pin_unchanged. */
#include "launcher/job/data_pin.h"                   // defines: data_pin, data_pin_unchanged, data_pin_describe, data_pin_json
#include "common/say.h" // defines: say
#include "common/exitcode.h"                // defines: enum hpt_exit
#include "common/fileio.h"                  // defines: fileio_exists
#include "common/sbuf.h"                    // defines: struct sbuf, xstrdup, xstrndup
#include "launcher/container/container_pack.h" // defines: container_pack, container_pack_dir
#include "launcher/stage/stage_manifest.h"  // defines: struct stage_manifest, stage_manifest_release
#include "launcher/stage/stage_scan.h"      // defines: stage_scan

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A directory image to stage is packed into one SquashFS file first
 * (launcher/container/container_pack.h), named by container.digest,
 * which image_pin has set; e->packed is where.  0, or a status after a
 * line naming the image. */
static int pack_image(const struct job *job, struct job_stage *e)
{
	struct sbuf err = SBUF_INIT;
	struct stat st;
	char *dir, *packed;
	bool made;
	int rc;

	free(e->packed);
	e->packed = NULL;
	if (strcmp(e->name, SPEC_STAGE_IMAGE) || !job->container.stage ||
	    stat(e->src, &st) || !S_ISDIR(st.st_mode))
		return HPT_EXIT_OK; /* a file is staged as it is; a missing one, scan says */
	dir = container_pack_dir(job->output.dir);
	rc = container_pack(e->src, job->container.digest ? job->container.digest : "", dir,
			    &packed, &made, &err);
	if (rc)
		say("container.stage: %s", err.buf);
	else if (made)
		say("packed the directory image %s into %s",
			e->src, packed);
	e->packed = rc ? NULL : packed;
	free(dir);
	sbuf_release(&err);
	return rc ? HPT_EXIT_NO_INPUT : HPT_EXIT_OK;
}

/* One entry's manifest now, or a status after a line naming it. */
static int scan(const struct job_stage *e, struct stage_manifest *m)
{
	struct sbuf err = SBUF_INIT;
	int status;

	memset(m, 0, sizeof(*m));
	status = stage_scan(spec_stage_source(e), m, &err);
	if (status)
		say("data.stage %s: %s", e->name,
			err.len ? err.buf : "cannot read its source");
	sbuf_release(&err);
	return status;
}

int data_pin(struct job *job, size_t *files)
{
	for (size_t i = 0; i < job->data.nstage; i++) {
		struct job_stage *e = &job->data.stage[i];
		struct stage_manifest m;
		int status;

		/* a resolved form's code snapshot: code_pin pins it anew */
		if (spec_code_is_stage_entry(job, e))
			continue;
		status = pack_image(job, e);

		if (!status)
			status = scan(e, &m);
		else
			memset(&m, 0, sizeof(m));
		if (status) {
			stage_manifest_release(&m);
			return status;
		}
		free(e->manifest);
		e->manifest = xstrdup(m.hash);
		e->bytes = m.bytes;
		e->is_file = m.is_file;
		if (files)
			files[i] = m.n;
		stage_manifest_release(&m);
	}
	return HPT_EXIT_OK;
}

/* A run's pack removed since (a cleaned output.dir) is packed again
 * from its directory, reproducibly, so to the same manifest when the
 * image is the same. */
static int repack(const struct job *job, const struct job_stage *e)
{
	struct sbuf err = SBUF_INIT;
	char *dir, *packed = NULL;
	bool made;
	int rc;

	if (!e->packed || fileio_exists(e->packed))
		return HPT_EXIT_OK;
	dir = xstrndup(e->packed, (size_t)(strrchr(e->packed, '/') - e->packed));
	rc = container_pack(e->src, job->container.digest ? job->container.digest : "", dir,
			    &packed, &made, &err);
	if (rc)
		say("container.stage: %s", err.buf);
	else if (made)
		say("packed the directory image %s again into %s",
			e->src, packed);
	free(dir);
	free(packed);
	sbuf_release(&err);
	return rc ? HPT_EXIT_NO_INPUT : HPT_EXIT_OK;
}

/* Other data under the same name would make this attempt another run
 * under the old run's name, as another image would (image_pin.c).  The
 * first changed entry decides; each is named. */
int data_pin_unchanged(const struct job *job, int changed_ok)
{
	int status = HPT_EXIT_OK;

	for (size_t i = 0; i < job->data.nstage && status != HPT_EXIT_NO_INPUT; i++) {
		const struct job_stage *e = &job->data.stage[i];
		const char *was = e->manifest ? e->manifest : "none";
		struct stage_manifest m;
		int rc;

		/* the code snapshot: content-addressed, and code_pin_unchanged's */
		if (spec_code_is_stage_entry(job, e))
			continue;
		rc = repack(job, e);

		if (!rc)
			rc = scan(e, &m);
		else
			memset(&m, 0, sizeof(m));
		if (rc) {
			status = rc;
		} else if (strcmp(m.hash, was) && changed_ok) {
			say("warning: the data %s (%s) changed (the run has "
				"%s, the data now %s); running it anyway", e->name, e->src,
				was, m.hash);
		} else if (strcmp(m.hash, was)) {
			say("the data %s (%s) changed: the run has %s, the "
				"data now %s; submit the spec again for a new run, or pass "
				"--data-changed-ok", e->name, e->src, was, m.hash);
			status = HPT_EXIT_BAD_SPEC;
		}
		stage_manifest_release(&m);
	}
	return status;
}

void data_pin_describe(const struct job *job, const size_t *files, struct sbuf *text)
{
	if (!job->data.nstage)
		return;
	sbuf_addstr(text, "# staged to each node's cache before training:\n");
	for (size_t i = 0; i < job->data.nstage; i++) {
		const struct job_stage *e = &job->data.stage[i];

		sbuf_addf(text, "#   %s  %s  %zu %s, %llu bytes  %s\n", e->name, e->src,
			  files ? files[i] : 0, files && files[i] == 1 ? "file" : "files",
			  (unsigned long long)e->bytes, e->manifest ? e->manifest : "unpinned");
		if (e->packed)
			sbuf_addf(text, "#     packed into %s\n", e->packed);
	}
}

json_t *data_pin_json(const struct job *job, const size_t *files)
{
	json_t *a = json_array();

	for (size_t i = 0; i < job->data.nstage; i++) {
		const struct job_stage *e = &job->data.stage[i];

		if (json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:I, s:I, s:s?, s:s?}",
						       "name", e->name, "src", e->src, "is_file",
						       e->is_file, "files",
						       (json_int_t)(files ? files[i] : 0), "bytes",
						       (json_int_t)e->bytes, "manifest", e->manifest,
						       "packed", e->packed))) {
			json_decref(a); /* an entry left out would lie: none */
			return NULL;
		}
	}
	return a;
}
