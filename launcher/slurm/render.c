/* render.c - a resolved job spec as a Slurm batch script.
 * Pure core: struct job in, text out (see render.h for the contract and
 * for why the #SBATCH lines and libslurm's job_desc share one list). */
#include "launcher/slurm/render.h" // defines: render_batch_script, struct render_opts
#include "common/bug.h"  // defines: BUG
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/diag.h"        // defines: diag_add
#include "common/exitcode.h"    // defines: HPT_EXIT_PREEMPTED
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/spec/spec.h"        // defines: struct job, preempt_signal_names

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
#define FEATURE_CHARS NAME_CHARS "&|,*[]()!:"
#define NAME_ALLOWED "'.', '_', '-'"
#define FEATURE_ALLOWED "'.', '_', '-' and & | , * [ ] ( ) ! :"

void render_opts_release(struct render_opts *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i].text);
	free(o->v);
	o->v = NULL;
	o->n = 0;
}

const char *render_opt_name(enum render_opt_key key)
{
	static const char *const names[] = {
		[RENDER_OPT_JOB_NAME] = "job-name",
		[RENDER_OPT_NODES] = "nodes",
		[RENDER_OPT_NTASKS_PER_NODE] = "ntasks-per-node",
		[RENDER_OPT_CPUS_PER_TASK] = "cpus-per-task",
		[RENDER_OPT_GPUS_PER_NODE] = "gpus-per-node",
		[RENDER_OPT_MEM] = "mem",
		[RENDER_OPT_TIME] = "time",
		[RENDER_OPT_PARTITION] = "partition",
		[RENDER_OPT_ACCOUNT] = "account",
		[RENDER_OPT_QOS] = "qos",
		[RENDER_OPT_CONSTRAINT] = "constraint",
		[RENDER_OPT_EXCLUDE] = "exclude",
		[RENDER_OPT_EXCLUSIVE] = "exclusive",
		[RENDER_OPT_SIGNAL] = "signal",
		[RENDER_OPT_REQUEUE] = "requeue",
		[RENDER_OPT_NO_REQUEUE] = "no-requeue",
		[RENDER_OPT_NO_KILL] = "no-kill",
		[RENDER_OPT_OPEN_MODE] = "open-mode",
		[RENDER_OPT_OUTPUT] = "output",
		[RENDER_OPT_ARRAY] = "array",
	};

	if ((unsigned)key >= sizeof(names) / sizeof(names[0]) || !names[key])
		BUG("render option %d has no name", (int)key);
	return names[key];
}

const struct render_opt *render_opts_find(const struct render_opts *o, enum render_opt_key key)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].key == key)
			return &o->v[i];
	return NULL;
}

__attribute__((format(printf, 5, 6)))
static void add(struct render_opts *o, enum render_opt_key key, int64_t num, int64_t num2,
		const char *fmt, ...)
{
	struct render_opt *r;
	va_list ap;

	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	r = &o->v[o->n++];
	r->key = key;
	r->name = render_opt_name(key);
	r->num = num;
	r->num2 = num2;
	r->text = NULL;
	if (fmt) {
		struct sbuf sb = SBUF_INIT;

		va_start(ap, fmt);
		sbuf_vaddf(&sb, fmt, ap);
		va_end(ap);
		r->text = sbuf_detach(&sb, NULL);
	}
}

/* A string option goes on an #SBATCH line as is: it must be non-empty and
 * made only of chars, or it is refused here (the spec core checks the
 * same; this is the second lock on the door). */
static int add_word(struct render_opts *o, enum render_opt_key opt, const char *key,
		    const char *value, const char *chars, const char *allowed, struct diag_list *err)
{
	if (!value)
		return 0;
	if (!*value || strspn(value, chars) != strlen(value)) {
		diag_add(err, DIAG_ERROR, "render", 0, 0, key,
			 "cannot be a Slurm %s: only letters, digits and %s are allowed",
			 render_opt_name(opt), allowed);
		return -1;
	}
	add(o, opt, 0, 0, "%s", value);
	return 0;
}

int render_has_preflight(const struct job *job)
{
	return job->preflight.enabled == PREFLIGHT_ON ||
	       (job->preflight.enabled == PREFLIGHT_AUTO && job->resources.nodes > 1);
}

int render_is_range(const struct job *job)
{
	return job->resources.nodes_min && job->resources.nodes_min < job->resources.nodes;
}

int render_has_stage(const struct job *job)
{
	return job->data.nstage > 0 || job->container.stage;
}

/* A supervised multi-node job that may go on without a node: a failed
 * step is asked whether it lost a node (add_step_loop). */
static bool handles_lost_nodes(const struct job *job)
{
	return job->resources.nodes + job->resources.spares >= 2 && job->supervise.enabled &&
	       job->preflight.max_resubmits;
}

bool render_restarts_in_place(const struct job *job)
{
	return job->supervise.enabled;
}

int render_sbatch_options(const struct job *job, const char *exclude, struct render_opts *out,
			  struct diag_list *err)
{
	const struct job_resources *r = &job->resources;
	int64_t minutes = (r->time_s + 59) / 60; /* Slurm limits are whole minutes: round up */
	int bad = 0;

	out->v = NULL;
	out->n = 0;
	bad |= add_word(out, RENDER_OPT_JOB_NAME, "name", job->name ? job->name : "", NAME_CHARS, NAME_ALLOWED, err);
	/* spares on top of the training nodes, at either end of a range */
	if (r->nodes_min && r->nodes_min < r->nodes)
		add(out, RENDER_OPT_NODES, r->nodes_min + r->spares, r->nodes + r->spares, "%lld-%lld",
		    (long long)(r->nodes_min + r->spares), (long long)(r->nodes + r->spares));
	else
		add(out, RENDER_OPT_NODES, r->nodes + r->spares, 0, "%lld",
		    (long long)(r->nodes + r->spares));
	add(out, RENDER_OPT_NTASKS_PER_NODE, r->ranks_per_node, 0, "%lld", (long long)r->ranks_per_node);
	if (r->cpus_per_rank > 0)
		add(out, RENDER_OPT_CPUS_PER_TASK, r->cpus_per_rank, 0, "%lld", (long long)r->cpus_per_rank);
	if (r->gpus_per_node > 0)
		add(out, RENDER_OPT_GPUS_PER_NODE, r->gpus_per_node, 0, "%lld", (long long)r->gpus_per_node);
	if (r->memory_mb > 0)
		add(out, RENDER_OPT_MEM, r->memory_mb, 0, "%lldM", (long long)r->memory_mb);
	add(out, RENDER_OPT_TIME, minutes, 0, "%lld-%02lld:%02lld:00", (long long)(minutes / 1440),
	    (long long)(minutes / 60 % 24), (long long)(minutes % 60));
	bad |= add_word(out, RENDER_OPT_PARTITION, "resources.partition", r->partition, NAME_CHARS, NAME_ALLOWED, err);
	bad |= add_word(out, RENDER_OPT_ACCOUNT, "resources.account", r->account, NAME_CHARS, NAME_ALLOWED, err);
	bad |= add_word(out, RENDER_OPT_QOS, "resources.qos", r->qos, NAME_CHARS, NAME_ALLOWED, err);
	bad |= add_word(out, RENDER_OPT_CONSTRAINT, "resources.constraint", r->constraint, FEATURE_CHARS,
			FEATURE_ALLOWED, err);
	if (r->exclusive)
		add(out, RENDER_OPT_EXCLUSIVE, 0, 0, NULL);
	/* Hostnames: the characters of names, and a hostlist's [-,] */
	if (exclude)
		bad |= add_word(out, RENDER_OPT_EXCLUDE, "exclude", exclude, NAME_CHARS "[],", NAME_ALLOWED
				" and a hostlist's [ ] ,", err);
	/* No "B:": the signal goes to the ranks (the trainer checkpoints on it),
	 * not to the batch shell.  USR1 stays free for NCCL. */
	if (job->preempt.lead_s > 0) {
		int sig = spec_preempt_signum(job->preempt.signal);

		if (!sig) {
			diag_add(err, DIAG_ERROR, "render", 0, 0, "preempt.signal", "unknown signal");
			bad = 1;
		} else {
			add(out, RENDER_OPT_SIGNAL, sig, job->preempt.lead_s, "%s@%lld",
			    preempt_signal_names[job->preempt.signal], (long long)job->preempt.lead_s);
		}
	}
	/* Requeued attempts append to the logs of the earlier ones. */
	if (job->preempt.requeue) {
		add(out, RENDER_OPT_REQUEUE, 1, 0, NULL);
		add(out, RENDER_OPT_OPEN_MODE, 1, 0, "append");
	} else {
		add(out, RENDER_OPT_NO_REQUEUE, 0, 0, NULL);
	}
	/* A node that stops answering ends only the step on it, not the
	 * job: the batch script lives on to find the node and resubmit the
	 * run without it (the steps, --no-kill not set for them, still end
	 * when one of their nodes fails). */
	if (handles_lost_nodes(job))
		add(out, RENDER_OPT_NO_KILL, 0, 0, NULL);
	add(out, RENDER_OPT_OUTPUT, 0, 0, "%s", RENDER_BATCH_LOG);
	if (bad) {
		render_opts_release(out);
		return -1;
	}
	return 0;
}

static int check_ctx(const struct render_ctx *ctx, struct diag_list *err)
{
	int bad = 0;

	if (!ctx->hpctrain || ctx->hpctrain[0] != '/') {
		diag_add(err, DIAG_ERROR, "render", 0, 0, "", "the hpctrain path must be absolute");
		bad = 1;
	} else {
		for (const char *p = ctx->hpctrain; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				diag_add(err, DIAG_ERROR, "render", 0, 0, "",
					 "the hpctrain path holds a control character");
				bad = 1;
				break;
			}
	}
	if (!ctx->sha256 || strlen(ctx->sha256) != 64 ||
	    strspn(ctx->sha256, "0123456789abcdef") != 64) {
		diag_add(err, DIAG_ERROR, "render", 0, 0, "", "the hash must be 64 lowercase hex digits");
		bad = 1;
	}
	if (!ctx->version || strspn(ctx->version, NAME_CHARS "+") != strlen(ctx->version)) {
		diag_add(err, DIAG_ERROR, "render", 0, 0, "", "the version must be a plain word");
		bad = 1;
	}
	return bad ? -1 : 0;
}

static int is_env_name(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
	       strlen(s);
}

static void add_step_program(const struct job *job, struct sbuf *out)
{
	if (!job->command.n) {
		sbuf_addstr(out, " \\\n\t\"$HPT\" train \"$RUN/" RUNFILE_SPEC "\" --run \"$RUN\"");
		return;
	}
	sbuf_addstr(out, " \\\n\t");
	for (size_t i = 0; i < job->command.n; i++) {
		if (i)
			sbuf_addch(out, ' ');
		sbuf_add_shell_quoted(out, job->command.v[i]);
	}
}

static void add_requeue(const struct job *job, struct sbuf *out)
{
	long long max = (long long)job->preempt.max_requeues;

	if (!job->preempt.requeue) {
		sbuf_addstr(out, "exit \"$status\"\n");
		return;
	}
	sbuf_addf(out,
		  "# %d: the program stopped at a checkpoint on the preemption signal.\n"
		  "# Requeue the job (same id, same directory) at most %lld times; a\n"
		  "# requeue the controller refuses for the moment is tried again.\n"
		  "restarts=${SLURM_RESTART_COUNT:-0}\n"
		  "if [ \"$status\" -eq %d ] && [ \"$restarts\" -lt %lld ]; then\n"
		  "\techo \"hpctrain: preempted; requeueing job $SLURM_JOB_ID"
		  " (restart $((restarts + 1)) of %lld)\" >&2\n"
		  "\tfor try in 1 2 3; do\n"
		  "\t\tscontrol requeue \"$SLURM_JOB_ID\" && { requeued=true; exit 0; }\n"
		  "\t\tsleep 2\n"
		  "\tdone\n"
		  "\techo \"hpctrain: scontrol requeue failed 3 times\" >&2\n"
		  "elif [ \"$status\" -eq %d ]; then\n"
		  "\techo \"hpctrain: preempted, and already requeued $restarts times; giving up\" >&2\n"
		  "fi\n"
		  "exit \"$status\"\n",
		  HPT_EXIT_PREEMPTED, max, HPT_EXIT_PREEMPTED, max, max, HPT_EXIT_PREEMPTED);
}

/* The attempt's end, written by the script as it exits, whichever way
 * (0600, renamed into place): status, logs and report read it once the
 * controller has forgotten the job, and submit tells a run that
 * completed from one that did not (launcher/runs/attempt_end.h).  A
 * requeue exits 0 but ends nothing: requeued says so.  Numbers only:
 * printf's %d refuses anything else. */
static void add_end_record(struct sbuf *s)
{
	sbuf_addstr(s, "\n# the attempt's end, for when Slurm has forgotten the job\n"
		       "requeued=false\n"
		       "end_record() {\n"
		       "\tlocal st=$?\n"
		       "\t(umask 077 && printf '{\"exit_status\": %d, \"requeued\": %s, \"job_id\": %d, "
		       "\"restart\": %d}\\n' \\\n"
		       "\t\t\"$st\" \"$requeued\" \"${SLURM_JOB_ID:-0}\" \"${SLURM_RESTART_COUNT:-0}\" "
		       ">" RUNFILE_END ".tmp &&\n"
		       "\t\tmv -f " RUNFILE_END ".tmp " RUNFILE_END ") || true\n"
		       "}\n"
		       "trap end_record EXIT\n");
}

/* The #SBATCH lines, then what every line below relies on. */
static void add_header(const struct job *job, const struct render_ctx *ctx,
		       const struct render_opts *opts, struct sbuf *s)
{
	sbuf_addf(s,
		  "#!/bin/bash\n"
		  "# job.sbatch - job %s, run sha256:%s, written by hpctrain %s.\n"
		  "# The job's working directory is its run directory (resolved.yaml sits\n"
		  "# beside this file); every path below is relative to it.  Every value\n"
		  "# taken from the job spec is single-quoted: the shell expands none of it.\n",
		  job->name, ctx->sha256, ctx->version);
	for (size_t i = 0; i < opts->n; i++) {
		sbuf_addf(s, "#SBATCH --%s", opts->v[i].name);
		if (opts->v[i].text)
			sbuf_addf(s, "=%s", opts->v[i].text);
		sbuf_addch(s, '\n');
	}
	sbuf_addstr(s, "\nset -u\nRUN=$(pwd -P)\nHPT=");
	sbuf_add_shell_quoted(s, ctx->hpctrain);
	sbuf_addch(s, '\n');
	add_end_record(s);
}

/* export NAME='value' for the spec's env; -1 for a name that is not one. */
static int add_env(const struct job *job, struct sbuf *s, struct diag_list *err)
{
	if (!job->env.n)
		return 0;
	sbuf_addstr(s, "\n# env: from the spec, for every rank\n");
	for (size_t i = 0; i < job->env.n; i++) {
		/* names are [A-Za-z_][A-Za-z0-9_]* (spec core); re-checked, as a
		 * name is the one thing that cannot be quoted */
		const char *name = job->env.v[i].name;

		if (!is_env_name(name)) {
			diag_add(err, DIAG_ERROR, "render", 0, 0, "env",
				 "not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
			return -1;
		}
		sbuf_addf(s, "export %s=", name);
		sbuf_add_shell_quoted(s, job->env.v[i].value);
		sbuf_addch(s, '\n');
	}
	return 0;
}

/* A step's geometry in full: nodes, tasks and tasks per node.  Each is
 * said, none left to the batch environment: a job of 2 nodes x 2 ranks
 * exports SLURM_NTASKS=4, and a one-task-a-node step that gave only
 * --nodes and --ntasks-per-node would get 4 tasks, 2 on a node.  For a
 * range the nodes are the number Slurm granted (SLURM_JOB_NUM_NODES). */
static void add_step_geometry(const struct job *job, long long per_node, struct sbuf *s)
{
	if (render_is_range(job) || job->resources.spares)
		sbuf_addf(s, " --nodes=\"$SLURM_JOB_NUM_NODES\""
			     " --ntasks=\"$((SLURM_JOB_NUM_NODES*%lld))\"", per_node);
	else
		sbuf_addf(s, " --nodes=%lld --ntasks=%lld", (long long)job->resources.nodes,
			  (long long)job->resources.nodes * per_node);
	sbuf_addf(s, " --ntasks-per-node=%lld", per_node);
}

/* The first step, when the job has one: hpctrain doctor on every node.
 * A failing node ends this attempt before anything trains on it: doctor
 * records it in the ledger.  A job that restarts in place asks doctor
 * --lost next (go_on), which starts a new attempt here without the node
 * when the allocation still meets resources.nodes, else resubmits; any
 * other job's doctor resubmits by itself.  Either way without the node,
 * at most preflight.max_resubmits times. */
static void add_preflight(const struct job *job, struct sbuf *s)
{
	const char *in = render_restarts_in_place(job) ? "\t" : "";

	if (!render_has_preflight(job))
		return;
	sbuf_addstr(s, "\n# preflight: doctor checks every node before anything trains on it\n"
		    "srun --mpi=pmix --kill-on-bad-exit=1");
	add_step_geometry(job, 1, s);
	sbuf_addstr(s, " \\\n\t\"$HPT\" doctor --preflight \"$RUN\" || {\n\tstatus=$?\n");
	if (*in)
		sbuf_addstr(s, "\tgo_on || {\n");
	sbuf_addf(s,
		  "%s\techo \"hpctrain: preflight failed on this allocation (status $status):"
		  " nothing was trained\" >&2\n"
		  "%s\texit \"$status\"\n"
		  "%s}\n", in, in, in);
	if (*in)
		sbuf_addstr(s, "}\n");
}

/* After preflight, before training: hpctrain stage on every node, one
 * task each, copies data.stage (the image among them, with
 * container.stage) into the node's cache.  A failure ends the job with
 * its status: training on a node without its data would only fail
 * later, one rank at a time.  Its time is the job's time.
 *
 * A step that ends by a signal (status above 128; the step's own
 * statuses are below) runs again, twice at most.  Open MPI 4.1 over
 * Slurm's PMIx can crash a task inside MPI_Init: a peer that left
 * MPI_Init first sends to a rank still in its modex, before that rank
 * can take the message.  Under load it crashed two tries in a row (one
 * make check in five on a 2-core machine).  The caches keep what a try
 * published, so the next copies only the rest. */
static void add_stage(const struct job *job, struct sbuf *s)
{
	if (!render_has_stage(job))
		return;
	sbuf_addstr(s, "\n# stage: copy the data to each node's cache, one read of the shared file system;\n"
		    "# a step ended by a signal (a task that crashed starting MPI) runs again, twice at most\n"
		    "for stage_try in 1 2 3; do\n"
		    "\tstatus=0\n"
		    "\tsrun --mpi=pmix --kill-on-bad-exit=1");
	/* after a failed preflight, the allocation less its failed nodes */
	if (render_restarts_in_place(job))
		sbuf_addstr(s, " --nodes=\"$alloc_nodes\" --ntasks=\"$alloc_nodes\" --ntasks-per-node=1"
			       " \\\n\t\t${step_exclude:+\"--exclude=$step_exclude\"}");
	else
		add_step_geometry(job, 1, s);
	sbuf_addstr(s,
		  " \\\n"
		  "\t\t\"$HPT\" stage --run \"$RUN\" || status=$?\n"
		  "\t[ \"$status\" -gt 128 ] && [ \"$stage_try\" -lt 3 ] || break\n"
		  "\techo \"hpctrain: the stage step ended by a signal (status $status); running it again\" >&2\n"
		  "done\n"
		  "if [ \"$status\" -ne 0 ]; then\n"
		  "\techo \"hpctrain: staging failed (status $status): nothing was trained\" >&2\n"
		  "\texit \"$status\"\n"
		  "fi\n");
}

/* The training step's srun: hpctrain launch on every rank. */
static void add_srun(const struct job *job, const struct render_opts *opts, const char *indent,
		     struct sbuf *s)
{
	const struct render_opt *o;
	long long per_node = (long long)job->resources.ranks_per_node;

	sbuf_addf(s, "%sstatus=0\n%ssrun --mpi=pmix --kill-on-bad-exit=1", indent, indent);
	if (render_restarts_in_place(job))
		sbuf_addf(s, " --nodes=\"$train_nodes\" --ntasks=\"$((train_nodes*%lld))\""
			     " --ntasks-per-node=%lld", per_node, per_node);
	else
		add_step_geometry(job, per_node, s);
	/* srun in 22.05 no longer reads SLURM_CPUS_PER_TASK: say it again. */
	if ((o = render_opts_find(opts, RENDER_OPT_CPUS_PER_TASK)))
		sbuf_addf(s, " --cpus-per-task=%s", o->text);
	if (render_restarts_in_place(job))
		sbuf_addf(s, " \\\n%s\t${step_exclude:+\"--exclude=$step_exclude\"}", indent);
	if (job->output.per_rank_logs)
		sbuf_addf(s, " \\\n%s\t--output=logs/rank-%%t.out", indent);
	else
		sbuf_addf(s, " \\\n%s\t--label --output=logs/ranks.out", indent);
	if (job->preempt.requeue)
		sbuf_addstr(s, " --open-mode=append");
	/* Supervised ranks forward signals, turn preemption into a requeue
	 * for any program, and end a stalled job with its stacks. */
	sbuf_addf(s, " \\\n%s\t\"$HPT\" launch%s --run \"$RUN\" --", indent,
		  job->supervise.enabled ? " --supervise" : "");
	add_step_program(job, s);
	sbuf_addstr(s, " || status=$?\n");
}

/* The nodes the training step starts on: the spec's, or for a range
 * (or with spares) what Slurm granted less the spares. */
static void add_train_nodes(const struct job *job, struct sbuf *s)
{
	if (job->resources.spares)
		sbuf_addf(s, "train_nodes=$((SLURM_JOB_NUM_NODES - %lld))\n",
			  (long long)job->resources.spares);
	else if (render_is_range(job))
		sbuf_addstr(s, "train_nodes=$SLURM_JOB_NUM_NODES\n");
	else
		sbuf_addf(s, "train_nodes=%lld\n", (long long)job->resources.nodes);
}

/* What a job that restarts in place knows before its first step: the
 * nodes it trains on, those it leaves out (none yet) and those of the
 * allocation it may use, and go_on, which a failed step (preflight or
 * training; its status in $status) calls.  go_on asks doctor --lost
 * (launcher/doctor/doctor_lost.h) whether to go on in this allocation:
 * a lost node or one whose preflight failed left out (a spare in its
 * place, or fewer nodes within the range), a crash before the first
 * step, a program's failure while supervise.max_restarts allows.  Each
 * new step is a new attempt: doctor made its directory (its
 * resolved.yaml, checkpoints linked to the run's) and prints the step's
 * nodes, the nodes to leave out, the directory and the allocation's
 * nodes left, one a line; go_on ends the old attempt's record and
 * moves into the new one, whose logs and records land there.  An empty
 * answer (resubmitted through the queue, or nothing to restart) or a
 * failing doctor: go_on fails, and the step's status ends the job;
 * "status N" (the program's failure, not started again): the job ends
 * with N, the first failed rank's status, not srun's (which is the
 * highest, often a peer's 143 from srun's own SIGTERM).  Anything else
 * (the resubmission's "submitted job N: DIR") is no answer: it goes to
 * the log, and go_on fails. */
static void add_go_on(const struct job *job, struct sbuf *s)
{
	sbuf_addstr(s, "\n");
	add_train_nodes(job, s);
	if (render_is_range(job) || job->resources.spares)
		sbuf_addstr(s, "alloc_nodes=$SLURM_JOB_NUM_NODES\n");
	else
		sbuf_addf(s, "alloc_nodes=%lld\n", (long long)job->resources.nodes);
	sbuf_addstr(s, "step_exclude=\n"
		       "go_on() {\n"
		       "\tlocal next\n"
		       "\tnext=$(\"$HPT\" doctor --lost \"$RUN\") && [ -n \"$next\" ] || return 1\n"
		       "\tcase $next in\n"
		       "\t\"status \"[0-9]*) status=${next#status }; return 1;;\n"
		       "\t[0-9]*) ;;\n"
		       "\t*) echo \"$next\"; return 1;;\n"
		       "\tesac\n"
		       "\t{ read -r train_nodes; read -r step_exclude; IFS= read -r next_dir;"
		       " read -r alloc_nodes; } <<<\"$next\"\n"
		       "\t(exit \"$status\"); end_record\n"
		       "\tcd \"$next_dir\" && RUN=$(pwd -P) && mkdir -p logs || return 1\n"
		       "\techo \"hpctrain: training again in this job on $train_nodes"
		       " node(s) in $RUN\" >&2\n"
		       "}\n");
}

/* The training step, run again inside the allocation while go_on
 * says so. */
static void add_step_loop(const struct job *job, const struct render_opts *opts, struct sbuf *s)
{
	sbuf_addstr(s, "\nmkdir -p logs\nwhile :; do\n");
	add_srun(job, opts, "\t", s);
	sbuf_addf(s,
		  "\t[ \"$status\" -ne 0 ] && [ \"$status\" -ne %d ] || break\n"
		  "\t# a lost node, a crash before the first step, a program's failure:\n"
		  "\t# go on here, or resubmit\n"
		  "\tgo_on || break\n"
		  "done\n\n", HPT_EXIT_PREEMPTED);
}

/* The one job step: srun starting hpctrain launch on every rank. */
static void add_step(const struct job *job, const struct render_opts *opts, struct sbuf *s)
{
	if (render_restarts_in_place(job)) {
		add_step_loop(job, opts, s);
		return;
	}
	sbuf_addstr(s, "\nmkdir -p logs\n");
	add_srun(job, opts, "", s);
	sbuf_addch(s, '\n');
}

int render_job(const struct job *job, const struct render_ctx *ctx, struct render_opts *opts,
	       struct sbuf *out, struct diag_list *err)
{
	struct sbuf s = SBUF_INIT;
	int bad = check_ctx(ctx, err);

	if (render_sbatch_options(job, ctx->exclude, opts, err))
		return -1;
	if (bad)
		goto fail;
	add_header(job, ctx, opts, &s);
	/* Modules and venv first, the spec's env after them: env is "set
	 * last" and may override what a module set. */
	if (render_environment(job, &s, err) || add_env(job, &s, err))
		goto fail;
	if (render_restarts_in_place(job))
		add_go_on(job, &s);
	add_preflight(job, &s);
	add_stage(job, &s);
	add_step(job, opts, &s);
	add_requeue(job, &s);
	/* Nothing reaches out unless all of it rendered. */
	sbuf_add(out, s.buf, s.len);
	sbuf_release(&s);
	return 0;
fail:
	render_opts_release(opts);
	sbuf_release(&s);
	return -1;
}

int render_batch_script(const struct job *job, const struct render_ctx *ctx, struct sbuf *out,
			struct diag_list *err)
{
	struct render_opts opts;
	int rc = render_job(job, ctx, &opts, out, err);

	if (!rc)
		render_opts_release(&opts);
	return rc;
}
