/* data_pin.c - a job's data.stage entries pinned by their manifests: see
 * data_pin.h.  Calls the stage engine's scan (launcher/stage) and prints.
 * The image of container.stage is one of the entries (spec_load adds
 * it), so it is pinned here too, by its manifest; container.digest
 * still names it for image_pin. */
#include "cli/data_pin.h"                   // defines: data_pin, data_pin_unchanged, data_pin_describe, data_pin_json
#include "common/exitcode.h"                // defines: enum hpt_exit
#include "common/sbuf.h"                    // defines: struct sbuf, xstrdup
#include "launcher/stage/stage_manifest.h"  // defines: struct stage_manifest, stage_manifest_release
#include "launcher/stage/stage_scan.h"      // defines: stage_scan

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry's manifest now, or a status after a line naming it. */
static int scan(const struct job_stage *e, const char *cmd, struct stage_manifest *m)
{
	struct sbuf err = SBUF_INIT;
	int status;

	memset(m, 0, sizeof(*m));
	status = stage_scan(e->src, m, &err);
	if (status)
		fprintf(stderr, "hpctrain %s: data.stage %s: %s\n", cmd, e->name,
			err.len ? err.buf : "cannot read its source");
	sbuf_release(&err);
	return status;
}

int data_pin(struct job *job, const char *cmd, size_t *files)
{
	for (size_t i = 0; i < job->data.nstage; i++) {
		struct job_stage *e = &job->data.stage[i];
		struct stage_manifest m;
		int status = scan(e, cmd, &m);

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

/* Other data under the same name would make this attempt another run
 * under the old run's name, as another image would (image_pin.c).  The
 * first changed entry decides; each is named. */
int data_pin_unchanged(const struct job *job, const char *cmd, int changed_ok)
{
	int status = HPT_EXIT_OK;

	for (size_t i = 0; i < job->data.nstage && status != HPT_EXIT_NO_INPUT; i++) {
		const struct job_stage *e = &job->data.stage[i];
		const char *was = e->manifest ? e->manifest : "none";
		struct stage_manifest m;
		int rc = scan(e, cmd, &m);

		if (rc) {
			status = rc;
		} else if (strcmp(m.hash, was) && changed_ok) {
			fprintf(stderr, "hpctrain %s: warning: the data %s (%s) changed (the run has "
				"%s, the data now %s); running it anyway\n", cmd, e->name, e->src,
				was, m.hash);
		} else if (strcmp(m.hash, was)) {
			fprintf(stderr, "hpctrain %s: the data %s (%s) changed: the run has %s, the "
				"data now %s; submit the spec again for a new run, or pass "
				"--data-changed-ok\n", cmd, e->name, e->src, was, m.hash);
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
	}
}

json_t *data_pin_json(const struct job *job, const size_t *files)
{
	json_t *a = json_array();

	for (size_t i = 0; i < job->data.nstage; i++) {
		const struct job_stage *e = &job->data.stage[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:I, s:I, s:s?}", "name", e->name,
						   "src", e->src, "is_file", e->is_file, "files",
						   (json_int_t)(files ? files[i] : 0), "bytes",
						   (json_int_t)e->bytes, "manifest", e->manifest));
	}
	return a;
}
