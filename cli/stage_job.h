/* stage_job.h - a job's data.stage entries as a staging step's entries
 * (cli/stage_job.c).  The job's data section belongs to the spec side
 * (common/spec/spec.h: struct job_data); until it is in this tree the
 * adapter is not built, and `hpctrain stage --run` says so through the
 * stub below.  The integrator defines HPT_SPEC_HAS_DATA (cli/build.mk)
 * when both halves meet. */
#ifndef HPT_CLI_STAGE_JOB_H
#define HPT_CLI_STAGE_JOB_H

#include "common/exitcode.h"          // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"              // defines: struct sbuf, sbuf_addstr
#include "launcher/stage/stage_job.h" // defines: struct stage_job

struct job;

#ifdef HPT_SPEC_HAS_DATA
/* The entries of job->data.stage (name, src, the pinned manifest) into
 * out, with out->cache (stage_cache_dir of data.cache.dir, data.to,
 * preflight.scratch, tmpdir and uid) and out->max_bytes
 * (data.cache.max_gb).  0, or an HPT_EXIT_* status with err. */
int stage_entries_from_job(const struct job *job, const char *tmpdir, unsigned uid,
			   struct stage_job *out, struct sbuf *err);
#else
static inline int stage_entries_from_job(const struct job *job, const char *tmpdir, unsigned uid,
					 struct stage_job *out, struct sbuf *err)
{
	(void)job;
	(void)tmpdir;
	(void)uid;
	(void)out;
	sbuf_addstr(err, "--run needs the job spec's data: section, which this build does not "
		    "have yet; stage by hand with --entry NAME=SRC");
	return HPT_EXIT_USAGE;
}
#endif

#endif
