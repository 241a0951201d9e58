/* stage_job.h - a job's data.stage entries as a staging step's entries
 * (cli/stage_job.c).  The job's data section belongs to the spec side
 * (common/spec/spec.h: struct job_data). */
#ifndef HPT_CLI_STAGE_JOB_H
#define HPT_CLI_STAGE_JOB_H

#include "launcher/stage/stage_job.h" // defines: struct stage_job

struct job;
struct sbuf;

/* The entries of job->data.stage (name, src, the pinned manifest) into
 * out, with out->cache (stage_cache_dir of data.cache.dir, data.to,
 * preflight.scratch, tmpdir and uid) and out->max_bytes
 * (data.cache.max_gb).  0, or an HPT_EXIT_* status with err. */
int stage_entries_from_job(const struct job *job, const char *tmpdir, unsigned uid,
			   struct stage_job *out, struct sbuf *err);

#endif
