/* job_prepare.c - load, shape, pin, resolve, hash: see job_prepare.h. */
#include "launcher/job/job_prepare.h" // defines: job_prepare
#include "common/exitcode.h"          // defines: HPT_EXIT_*
#include "common/sbuf.h"              // defines: xcalloc
#include "common/say.h"               // defines: say
#include "common/spec/spec.h"         // defines: spec_load
#include "common/spec/specfile.h"     // defines: specfile_read, SPECFILE_RUN_SPEC
#include "launcher/runs/rundir.h"     // defines: struct rundir
#include "launcher/job/code_pin.h"    // defines: code_pin, code_pin_unchanged
#include "launcher/job/data_pin.h"    // defines: data_pin, data_pin_unchanged
#include "launcher/job/image_pin.h"   // defines: image_pin, image_pin_unchanged
#include "launcher/job/program_check.h" // defines: program_check
#include "launcher/job/venv_pin.h"    // defines: venv_pin, venv_pin_unchanged

#include <stdlib.h>
#include <string.h>

/* A new job: its image, data sets, venv and code pinned by their
 * content now. */
static int pin(const struct job_prepare_request *r, struct attempt *at)
{
	size_t *files = NULL;
	int status = image_pin(&at->job, !!(r->flags & JOB_PREPARE_CHECK_RUNTIME));

	if (status)
		return status;
	/* one slot more: code_pin may add the code snapshot's entry */
	if (r->files)
		files = xcalloc(at->job.data.nstage + 1, sizeof(*files));
	status = data_pin(&at->job, files);
	if (!status)
		status = venv_pin(&at->job, &at->venv);
	if (!status)
		status = code_pin(&at->job, !!(r->flags & JOB_PREPARE_STORE_CODE),
				  r->flags & JOB_PREPARE_STORE_CODE ? &at->code : NULL,
				  files);
	if (r->files)
		*r->files = files;
	else
		free(files);
	return status;
}

/* A run's job: pinned when it was submitted, and still what it pinned;
 * its code is the snapshot it was submitted with, never the tree now. */
static int check_pins(const struct job_prepare_request *r, struct attempt *at)
{
	int status = image_pin_unchanged(&at->job, !!(r->flags & JOB_PREPARE_IMAGE_CHANGED_OK));

	if (!status)
		status = data_pin_unchanged(&at->job, !!(r->flags & JOB_PREPARE_DATA_CHANGED_OK));
	if (!status)
		status = venv_pin_unchanged(&at->job, &at->venv);
	if (!status && r->run)
		status = code_pin_unchanged(&at->job, r->run, &at->code);
	return status;
}

int job_prepare(const struct job_prepare_request *r, struct attempt *at, struct diag_list *dl)
{
	bool run = r->flags & JOB_PREPARE_RUN;
	int status = HPT_EXIT_OK;

	if (spec_load(r->where, r->text, r->len, r->sets, r->nsets, &at->job, dl))
		return HPT_EXIT_BAD_SPEC;
	if (!run && (status = program_check(&at->job, r->where)))
		return status;
	if (r->shape && (status = r->shape(at, dl, r->shape_arg)))
		return status;
	if ((status = run ? check_pins(r, at) : pin(r, at)))
		return status;
	if ((status = attempt_resolve(at)))
		return status;
	if (run && (at->resolved.len != r->len || memcmp(at->resolved.buf, r->text, r->len))) {
		say("%s no longer resolves to itself (edited, or from another hpctrain version); "
		    "submit the spec again instead", r->where);
		return HPT_EXIT_BAD_SPEC;
	}
	return HPT_EXIT_OK;
}

int job_prepare_run(const struct rundir *rd, bool image_changed_ok, bool data_changed_ok,
		    struct attempt *at, struct diag_list *dl)
{
	struct job_prepare_request r = {
		.flags = JOB_PREPARE_RUN | (image_changed_ok ? JOB_PREPARE_IMAGE_CHANGED_OK : 0) |
			 (data_changed_ok ? JOB_PREPARE_DATA_CHANGED_OK : 0),
		.run = rd->run,
	};
	struct sbuf path = SBUF_INIT, text = SBUF_INIT, where = SBUF_INIT;
	int status;

	sbuf_addf(&path, "%s/" SPECFILE_RUN_SPEC, rd->run);
	status = specfile_read(path.buf, &text, &where, dl);
	if (!status) {
		r.where = where.buf;
		r.text = text.buf;
		r.len = text.len;
		status = job_prepare(&r, at, dl);
	}
	sbuf_release(&path);
	sbuf_release(&text);
	sbuf_release(&where);
	return status;
}
