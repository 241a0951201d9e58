/* data_env.c - each data.stage entry's copy in the node's cache, and the
 * variables that name it: see data_env.h.  Pure core: the paths come
 * from launcher/stage/stage_path.h, which the stage step writes by, so
 * launch and the step cannot disagree on where a copy is. */
#include "launcher/rank/data_env.h"      // defines: struct data_env, data_env_plan, data_env_add
#include "common/sbuf.h"                 // defines: xcalloc, xstrdup
#include "common/spec/spec.h"            // defines: struct job, SPEC_STAGE_IMAGE,
                                         //          spec_code_is_stage_entry
#include "launcher/stage/stage_path.h"   // defines: stage_job_cache_dir, stage_entry_data_path

#include <stdlib.h>
#include <string.h>

void data_env_plan(const struct job *job, const char *tmpdir, unsigned uid, struct data_env *out)
{
	const struct job_data *d = &job->data;

	if (!d->nstage)
		return;
	out->cache = stage_job_cache_dir(job, tmpdir, uid);
	out->v = xcalloc(d->nstage, sizeof(*out->v));
	for (size_t i = 0; i < d->nstage; i++) {
		const struct job_stage *s = &d->stage[i];
		struct data_env_entry *e = &out->v[out->n++];

		e->name = xstrdup(s->name);
		e->var = spec_stage_env_name(s->name);
		e->src = xstrdup(s->src);
		/* an unpinned entry (a spec launched by hand) has no copy */
		e->staged = s->manifest && out->cache
				    ? stage_entry_data_path(out->cache, s->manifest,
							    spec_stage_source(s), s->is_file)
				    : NULL;
		e->path = e->staged ? e->staged : e->src;
		if (job->container.stage && !strcmp(s->name, SPEC_STAGE_IMAGE))
			out->image = e->path;
		if (spec_code_is_stage_entry(job, s))
			out->code = e->path;
	}
}

void data_env_add(const struct data_env *d, struct env_list *out)
{
	for (size_t i = 0; i < d->n; i++)
		env_list_set(out, d->v[i].var, d->v[i].path);
}

void data_env_release(struct data_env *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].var);
		free(d->v[i].src);
		free(d->v[i].staged);
	}
	free(d->v);
	free(d->cache);
	*d = (struct data_env)DATA_ENV_INIT;
}
