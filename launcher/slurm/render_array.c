/* render_array.c - the Slurm array job that runs the points of a sweep.
 * Pure core: the points' options in, the array's options and script out.
 *
 * One array per resource shape: its task I runs in the directory the link
 * I (in the array's working directory) names, which is the run directory
 * of one point, and execs that point's own job.sbatch there.  So a task
 * is exactly the job `hpctrain submit` would have made of its point, its
 * batch log lands in its run's logs/, and a requeued task (same index)
 * comes back to its own run and checkpoint. */
#include "launcher/slurm/render.h" // defines: render_array_options, render_array_script
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/sbuf.h"     // defines: struct sbuf, x* allocators

#include <stdlib.h>
#include <string.h>

void render_opts_key(const struct render_opts *o, struct sbuf *out)
{
	for (size_t i = 0; i < o->n; i++)
		sbuf_addf(out, "--%s%s%s\n", o->v[i].name, o->v[i].text ? "=" : "",
			  o->v[i].text ? o->v[i].text : "");
}

static void push(struct render_opts *o, const struct render_opt *r, char *text)
{
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n] = *r;
	o->v[o->n++].text = text;
}

void render_array_options(const struct render_opts *point, size_t ntasks, int64_t max_parallel,
			  struct render_opts *out)
{
	struct render_opt array = { RENDER_OPT_ARRAY, render_opt_name(RENDER_OPT_ARRAY), NULL,
				   (int64_t)ntasks, max_parallel };
	struct sbuf spec = SBUF_INIT;

	out->v = NULL;
	out->n = 0;
	for (size_t i = 0; i < point->n; i++) {
		const struct render_opt *r = &point->v[i];

		if (r->key == RENDER_OPT_OUTPUT)
			push(out, r, xstrdup(RENDER_ARRAY_LOG));
		else
			push(out, r, r->text ? xstrdup(r->text) : NULL);
	}
	sbuf_addf(&spec, "0-%zu", ntasks - 1);
	if (max_parallel > 0 && (size_t)max_parallel < ntasks)
		sbuf_addf(&spec, "%%%lld", (long long)max_parallel);
	push(out, &array, sbuf_detach(&spec, NULL));
}

int render_array_script(const struct render_opts *opts, const char *sweep, const char *version,
			struct sbuf *out)
{
	/* the sweep's name reaches a comment only: it must stay one word */
	if (!sweep || !*sweep || strspn(sweep, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
					 strlen(sweep))
		return -1;
	sbuf_addf(out,
		  "#!/bin/bash\n"
		  "# array.sbatch - one array of %s, written by hpctrain %s.\n"
		  "# Task I runs in the run directory that the link I here names, and\n"
		  "# runs that point's own job.sbatch: the job its point alone would be.\n",
		  sweep, version);
	for (size_t i = 0; i < opts->n; i++) {
		sbuf_addf(out, "#SBATCH --%s", opts->v[i].name);
		if (opts->v[i].text)
			sbuf_addf(out, "=%s", opts->v[i].text);
		sbuf_addch(out, '\n');
	}
	sbuf_addstr(out,
		    "\ncd -P -- \"$SLURM_ARRAY_TASK_ID\" || {\n"
		    "\techo \"hpctrain: array task $SLURM_ARRAY_TASK_ID has no run directory in"
		    " $(pwd)\" >&2\n"
		    "\texit 4\n"
		    "}\n"
		    "exec /bin/bash ./" RUNFILE_SCRIPT "\n");
	return 0;
}
