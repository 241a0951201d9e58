/* stage_job.c - a job's data.stage entries as a staging step's entries
 * (see cli/stage_job.h).  Pure adapter: struct job in, struct stage_job
 * out. */
#include "cli/stage_job.h"             // defines: stage_entries_from_job
#include "common/exitcode.h"           // defines: HPT_EXIT_*
#include "common/sbuf.h"               // defines: struct sbuf
#include "common/spec/spec.h"          // defines: struct job, struct job_data
#include "launcher/stage/stage_job.h"  // defines: struct stage_job, stage_job_add
#include "launcher/stage/stage_path.h" // defines: stage_cache_dir

int stage_entries_from_job(const struct job *job, const char *tmpdir, unsigned uid,
			   struct stage_job *out, struct sbuf *err)
{
	const struct job_data *d = &job->data;

	for (size_t i = 0; i < d->nstage; i++) {
		const struct job_stage *s = &d->stage[i];

		if (!s->manifest) {
			sbuf_addf(err, "data.stage %s: no pinned manifest; run the job through "
				  "hpctrain submit", s->name);
			return HPT_EXIT_BAD_SPEC;
		}
		stage_job_add(out, s->name, spec_stage_source(s), s->manifest, s->is_file);
	}
	/* container.stage's image is one of the entries already: spec_load
	 * adds it as "image" (SPEC_STAGE_IMAGE), and submit pins it */
	out->cache = stage_cache_dir(d->cache_dir, d->to, job->preflight.scratch, tmpdir, uid);
	out->max_bytes = d->cache_max_gb > 0 ? (uint64_t)(d->cache_max_gb * 1e9) : 0;
	return 0;
}
