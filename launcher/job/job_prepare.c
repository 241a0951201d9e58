/* job_prepare.c - load, shape, pin, resolve, hash: see job_prepare.h. */
#include "launcher/job/job_prepare.h" // defines: job_prepare
#include "common/exitcode.h"          // defines: HPT_EXIT_*
#include "common/sbuf.h"              // defines: xcalloc
#include "common/spec/spec.h"         // defines: spec_load
#include "launcher/job/data_pin.h"    // defines: data_pin
#include "launcher/job/image_pin.h"   // defines: image_pin

#include <stdlib.h>

int job_prepare(const struct job_prepare_request *r, struct attempt *at, struct diag_list *dl)
{
	size_t *files = NULL;
	int status = HPT_EXIT_OK;

	if (spec_load(r->where, r->text, r->len, r->sets, r->nsets, &at->job, dl))
		return HPT_EXIT_BAD_SPEC;
	if (r->shape && (status = r->shape(at, dl, r->shape_arg)))
		return status;
	if ((status = image_pin(&at->job, !!(r->flags & JOB_PREPARE_CHECK_RUNTIME))))
		return status;
	if (r->files)
		files = xcalloc(at->job.data.nstage + 1, sizeof(*files));
	status = data_pin(&at->job, files);
	if (!status)
		status = attempt_resolve(at);
	if (r->files)
		*r->files = files;
	else
		free(files);
	return status;
}
