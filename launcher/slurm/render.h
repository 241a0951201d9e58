/* render.h - a resolved job spec as a Slurm batch script.
 *
 * Core (pure): struct job in, text out; no Slurm, no files, no getenv,
 * no clock.  The same job, context and version give the same bytes, which
 * is what lets a run's hash name its script too.
 *
 * Two products, one source of truth:
 * - render_sbatch_options(): the job's Slurm options as a list of
 *   (long option, value) records, e.g. {"nodes", "2", 2};
 * - render_batch_script(): the script, whose #SBATCH lines are exactly
 *   those records.  launcher/slurm/slurm.c fills its job_desc_msg_t from the
 *   same records (libslurm does not read #SBATCH lines; only sbatch does),
 *   so what the script says is what was asked for.
 *
 * Quoting: every string that came from the spec reaches the script inside
 * single quotes (sbuf_add_shell_quoted), where bash expands nothing; a
 * newline inside quotes cannot start a new #SBATCH line because sbatch
 * stops reading directives at the first command.  Option values go on
 * #SBATCH lines unquoted, so they are checked again here against the
 * characters Slurm allows, whatever the spec core let through.
 */
#ifndef HPT_RENDER_H
#define HPT_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;
struct sbuf;
struct diag_list;

/* One #SBATCH --name[=text] line.  num holds the value in the unit
 * libslurm wants (nodes, tasks, MB, minutes, the signal number); num2 the
 * second number of a pair (--signal's lead time in seconds, --nodes's
 * MAX when it is a range MIN-MAX: num is then MIN); both 0 when unused.  text is NULL for a flag (--exclusive, --requeue). */
/* The Slurm options a job is asked with, one key each.  render writes
 * them as #SBATCH lines, and slurm.c sets libslurm's job description from
 * them in a switch over this enum, so the compiler names an option that
 * one side lacks (-Wswitch). */
enum render_opt_key {
	RENDER_OPT_JOB_NAME,
	RENDER_OPT_NODES,
	RENDER_OPT_NTASKS_PER_NODE,
	RENDER_OPT_CPUS_PER_TASK,
	RENDER_OPT_GPUS_PER_NODE,
	RENDER_OPT_MEM,
	RENDER_OPT_TIME,
	RENDER_OPT_PARTITION,
	RENDER_OPT_ACCOUNT,
	RENDER_OPT_QOS,
	RENDER_OPT_CONSTRAINT,
	RENDER_OPT_EXCLUDE,
	RENDER_OPT_EXCLUSIVE,
	RENDER_OPT_SIGNAL,
	RENDER_OPT_REQUEUE,
	RENDER_OPT_NO_REQUEUE,
	RENDER_OPT_NO_KILL,
	RENDER_OPT_OPEN_MODE,
	RENDER_OPT_OUTPUT,
	RENDER_OPT_ARRAY,
};

/* Its long option: "job-name" for RENDER_OPT_JOB_NAME. */
const char *render_opt_name(enum render_opt_key key);

struct render_opt {
	enum render_opt_key key;
	const char *name; /* render_opt_name(key) */
	char *text;
	int64_t num, num2;
};

/* In option order; n == 0 and v == NULL when empty. */
struct render_opts {
	struct render_opt *v;
	size_t n;
};

/* What the script needs besides the job. */
struct render_ctx {
	const char *hpctrain; /* absolute path of the hpctrain the step runs */
	const char *version;  /* hpctrain version, for the header comment */
	const char *sha256;   /* 64 hex digits: the resolved spec's hash */
	const char *exclude;  /* nodes the job must not run on (--exclude, a
			       * Slurm hostlist), or NULL */
};

/* The batch log, relative to the run directory (the job's working
 * directory); %j is the job id. */
#define RENDER_BATCH_LOG "logs/batch-%j.out"

/* Fills out with the job's Slurm options (exclude: a hostlist or NULL).  Returns 0, or -1 with one
 * DIAG_ERROR per unusable value (where "render", path the spec key);
 * out is then released.  Caller releases out. */
int render_sbatch_options(const struct job *job, const char *exclude, struct render_opts *out,
			  struct diag_list *err);
/* Does the job run hpctrain doctor as its first step?  preflight.enabled,
 * with auto meaning "when it spans more than one node". */
int render_has_preflight(const struct job *job);
/* Whether resources.nodes is a range MIN-MAX (MIN < MAX): the job asks
 * for --nodes=MIN-MAX and its steps span the nodes Slurm granted. */
int render_is_range(const struct job *job);
/* Whether the script stages data (data.stage not empty, or
 * container.stage) in a step of its own before training. */
int render_has_stage(const struct job *job);
/* Whether a failed preflight or training step may go on inside the
 * allocation (supervised ranks leave the records doctor --lost decides
 * from): the script then asks doctor --lost after either, and the
 * preflight step leaves the resubmission to it. */
bool render_restarts_in_place(const struct job *job);
void render_opts_release(struct render_opts *o);
/* The record named name, or NULL. */
const struct render_opt *render_opts_find(const struct render_opts *o, enum render_opt_key key);

/* Fills opts with the job's Slurm options (render_sbatch_options, with
 * ctx->exclude) and appends the whole batch script, written from those
 * same records, to out: one render gives what Slurm is asked for and
 * the script that says it.  Returns 0, or -1 with diagnostics (a bad
 * option value, a relative or control-character hpctrain path, a
 * malformed hash); out is then unchanged and opts empty.  Caller
 * releases opts. */
int render_job(const struct job *job, const struct render_ctx *ctx, struct render_opts *opts,
	       struct sbuf *out, struct diag_list *err);
/* render_job without the options. */
int render_batch_script(const struct job *job, const struct render_ctx *ctx, struct sbuf *out,
			struct diag_list *err);

/* The lines that load environment.modules and put environment.venv
 * first on PATH (render_environment.c), appended to out; nothing when
 * the job has neither.  render_job places them before the first step.
 * Returns 0, or -1 with a diagnostic for a module name that starts with
 * '-' or a relative venv (which the spec core refuses first). */
int render_environment(const struct job *job, struct sbuf *out, struct diag_list *err);

/* A sweep's array job (render_array.c).  Its tasks' batch logs, relative
 * to the array's working directory, whose entry %a links to the task's run. */
#define RENDER_ARRAY_LOG "%a/logs/batch-%j.out"

/* One line per option: points whose keys are equal fit one array. */
void render_opts_key(const struct render_opts *o, struct sbuf *out);
/* The array's options: a point's, with the batch log under each task's
 * run, and --array=0-(ntasks-1)[%max_parallel] (num = ntasks, num2 = the
 * cap; no cap when max_parallel is 0 or not below ntasks). */
void render_array_options(const struct render_opts *point, size_t ntasks, int64_t max_parallel,
			  struct render_opts *out);
/* The array's script (opts from render_array_options; sweep names it, a
 * word of [a-z0-9-]).  0, or -1 for a bad sweep name. */
int render_array_script(const struct render_opts *opts, const char *sweep, const char *version,
			struct sbuf *out);

#endif
