/* launch.c - the steps of one rank's launch that `hpctrain launch`
 * (cli/cmd_launch.c) takes in order: the job loaded, the rank found and
 * its node planned, the data and attempt variables, the environment
 * set, the report written, the program supervised, all released.
 * Shell: files, the environment, hwloc, the node's cache; what a step
 * refuses is said on stderr as "hpctrain launch: ...". */
#include "launcher/launch/launch.h"      // defines: struct launch, launch_*
#include "common/say.h" // defines: say
#include "common/diag.h"                 // defines: struct diag_list, diag_report, diag_report_as
#include "common/exitcode.h"             // defines: enum hpt_exit
#include "common/jsonb.h"                // defines: jsonb_set, jsonb_append, jsonb_text, jsonb_utf8, jsonb_dumps
#include "common/fileio.h"               // defines: fileio_write_atomic, fileio_private_dir, fileio_check_owned, fileio_exists
#include "common/sbuf.h"                 // defines: struct sbuf, xcalloc
#include "common/software.h"             // defines: software_record_add
#include "common/software_modules.h"     // defines: software_modules_json
#include "common/spec/specfile.h"        // defines: specfile_load, specfile_load_run
#include "launcher/container/container_wrap.h" // defines: container_wrap_release, container_wrap_preview_release
#include "launcher/rank/data_env.h"      // defines: data_env_plan, data_env_local_check, data_env_add
#include "launcher/rank/envplan.h"       // defines: envplan_cvd_parse, envplan_cvd_check, envplan_narrow_request, envplan_slice_json
#include "launcher/runs/program_module.h" // defines: program_module_path
#include "launcher/stage/stage_cache.h"  // defines: stage_cache_hold
#include "launcher/supervise/supervise.h" // defines: supervise_run, supervise_grace
#include "topology/probe.h"              // defines: probe_load, probe_load_live, probe_keep_release

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --run: the supervisor writes into the run, and its resolved.yaml sets
 * the rank's environment, so a run another user owns, or one others may
 * write, is refused (HPT_EXIT_IO, as for a run directory train refuses).
 * One that does not exist is left to specfile_load_run to name. */
static int refuse_run(const struct launch *l)
{
	struct sbuf err = SBUF_INIT;
	int status = HPT_EXIT_OK;

	if (l->run && fileio_exists(l->run) && fileio_check_owned(l->run, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_IO;
	}
	sbuf_release(&err);
	return status;
}

int launch_load_job(struct launch *l)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT;
	int status = refuse_run(l);

	if (!status && (l->spec || l->run)) {
		status = l->run ? specfile_load_run(l->run, &l->job, &dl, &where, NULL)
				: specfile_load(l->spec, NULL, &l->job, &dl, &where);
		/* Warnings were shown once, at submit; every rank repeating
		 * them would only fill the rank logs. */
		if (status)
			diag_report(stderr, &dl);
		l->have_job = !status;
	}
	diag_list_release(&dl);
	sbuf_release(&where);
	return status;
}


/* The inherited CUDA_VISIBLE_DEVICES: planned over exactly, or refused
 * when the plan cannot use it (envplan_cvd_check), never passed on while
 * cores and NICs go to other GPUs.  --gpu none leaves it alone. */
static int check_cvd(struct launch *l)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	struct sbuf why = SBUF_INIT;
	int rc;

	envplan_cvd_parse(&l->topo, cvd, &l->cvd);
	if (l->policy.gpu == PLAN_GPU_NONE)
		return HPT_EXIT_OK;
	rc = envplan_cvd_check(&l->topo, &l->cvd, cvd ? cvd : "", &why);
	if (rc < 0)
		say("%s", why.buf);
	else if (rc > 0 && !l->ri.local_rank) /* once per node */
		say("warning: %s", why.buf);
	sbuf_release(&why);
	return rc < 0 ? HPT_EXIT_TOPOLOGY : HPT_EXIT_OK;
}

int launch_discover_and_plan(struct launch *l)
{
	struct plan_request req = { .policy = l->policy };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf why = SBUF_INIT;
	int status = HPT_EXIT_OK;

	if (rank_discover(&l->ri, &dl)) {
		status = HPT_EXIT_USAGE;
		goto out;
	}
	if (l->topology && fileio_check_regular(l->topology, &why)) {
		say("%s", why.buf);
		status = HPT_EXIT_NO_INPUT;
		goto out;
	}
	if (l->topology ? probe_load(l->topology, &l->topo, &dl)
			: probe_load_live(&l->topo, &l->hwloc_topo, &dl)) {
		status = HPT_EXIT_TOPOLOGY;
		goto out;
	}
	if ((status = check_cvd(l)))
		goto out;
	req.ranks = l->ri.local_size;
	envplan_narrow_request(&req, &l->topo, &l->cvd);
	if (plan_slices(&l->topo, &req, &l->plan, &dl))
		status = HPT_EXIT_TOPOLOGY;
out:
	if (status)
		diag_report_as(stderr, "hpctrain launch", &dl);
	diag_list_release(&dl);
	sbuf_release(&why);
	return status;
}


json_t *launch_report_json(const struct launch *l, char **argv)
{
	json_t *env = json_object(), *prog = json_array(), *slice, *doc;
	char *slice_text = envplan_slice_json(&l->topo, &l->plan, l->ri.local_rank,
					      env_list_get(&l->env, "CUDA_VISIBLE_DEVICES"));
	struct sbuf policy = SBUF_INIT, name = SBUF_INIT;

	/* the program's arguments and environment are bytes: one that is not
	 * UTF-8 is carried escaped (\xHH), never dropped from the report */
	for (size_t i = 0; i < l->env.n; i++)
		jsonb_set(&env, jsonb_utf8(l->env.v[i].name, &name), jsonb_text(l->env.v[i].value));
	for (size_t i = 0; argv[i]; i++)
		jsonb_append(&prog, jsonb_text(argv[i]));
	slice = slice_text ? json_loads(slice_text, 0, NULL) : NULL;
	plan_policy_format(&l->policy, &policy);
	doc = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:s, s:o, s:o, s:{s:b, s:s?, s:b, s:s?}, s:o}",
			"source", rank_source_name(l->ri.source), "rank", (int)l->ri.rank,
			"world_size", (int)l->ri.world_size, "local_rank", (int)l->ri.local_rank,
			"local_size", (int)l->ri.local_size, "node_rank", (int)l->ri.node_rank,
			"num_nodes", (int)l->ri.num_nodes, "hostname", jsonb_text(l->ri.hostname),
			"master_addr", jsonb_text(l->ri.master_addr), "topology", jsonb_text(l->topo.source),
			"policy", policy.buf, "slice", slice, "env", env,
			"applied", "cpu", l->bound.cpu_applied, "cpu_note", l->bound.cpu_note,
			"memory", l->bound.mem_applied, "memory_note", l->bound.mem_note,
			"program", prog);
	launch_container_report(l, &doc);
	free(slice_text);
	sbuf_release(&policy);
	sbuf_release(&name);
	return doc;
}

int launch_write_report(const struct launch *l, char **argv)
{
	json_t *doc = launch_report_json(l, argv);
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	char *text = jsonb_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS, "the rank's launch report",
				 &err);
	int status = HPT_EXIT_OK;

	if (!text) {
		say("%s", err.buf);
		status = HPT_EXIT_INTERNAL;
		goto out;
	}
	/* The report holds the rank's environment, the spec's env included:
	 * private, as a run is. */
	if (fileio_private_dir(l->report, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_IO;
		goto out;
	}
	sbuf_addf(&path, "%s/rank-%05u.json", l->report, l->ri.rank);
	if (fileio_write_atomic(path.buf, text, strlen(text), 0600, 0, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_IO;
	}
out:
	free(text);
	json_decref(doc);
	sbuf_release(&path);
	sbuf_release(&err);
	return status;
}


int launch_set_env(const struct launch *l)
{
	for (size_t i = 0; i < l->env.n; i++)
		if (setenv(l->env.v[i].name, l->env.v[i].value, 1)) {
			say("cannot set %s: %s", l->env.v[i].name,
				strerror(errno));
			return HPT_EXIT_INTERNAL;
		}
	return HPT_EXIT_OK;
}

/* Preemption needs the spec (its signal, lead_s, after_signal); without
 * one the supervisor only forwards signals.  A podman program is found
 * by its container's name, checked inside, and its container removed. */
int launch_supervise(const struct launch *l, json_t *contract, char **argv)
{
	struct supervise_target target = { launch_container_find, launch_container_end, (void *)l };
	struct supervise_inside inside = { launch_contract_inside, (void *)l };
	struct supervise_opts o = { .run_dir = l->run, .workdir = launch_workdir(l),
				    .rank = l->ri.rank,
				    .world = l->ri.world_size, .host = l->ri.hostname,
				    .contract = contract };

	if (l->wrapped.podman_name) {
		o.target = &target;
		o.inside = &inside;
	}

	if (l->have_job) {
		o.preempt_signal = spec_preempt_signum(l->job.preempt.signal);
		o.grace_s = supervise_grace(l->job.preempt.lead_s);
		o.after_requeue = l->job.preempt.after_signal == PREEMPT_AFTER_REQUEUE;
		o.stall_s = l->job.supervise.stall_timeout_s;
		o.startup_s = l->job.supervise.startup_timeout_s;
		/* the bundled trainer touches the heartbeat after each step, and
		 * may print before MPI is up: only its heartbeat counts */
		o.output_starts = l->job.command.n > 0;
	}
	return supervise_run(&o, argv);
}


void launch_release(struct launch *l)
{
	free(l->code_dir);
	free(l->run_dir);
	free(l->pycache_dir);
	l->code_dir = l->run_dir = l->pycache_dir = NULL;
	l->code_staged = false;
	job_release(&l->job);
	rank_info_release(&l->ri);
	topo_release(&l->topo);
	probe_keep_release(l->hwloc_topo);
	plan_release(&l->plan);
	envplan_cvd_release(&l->cvd);
	env_list_release(&l->env);
	env_list_release(&l->planned_env);
	for (size_t i = 0; i < l->ndata_holds; i++)
		if (l->data_holds[i] >= 0)
			close(l->data_holds[i]);
	free(l->data_holds);
	data_env_release(&l->data);
	env_list_release(&l->data_env);
	attempt_size_ctx_release(&l->attempt);
	bind_result_release(&l->bound);
	free(l->python_path);
	/* after the program: the node's last rank unmounts the image */
	container_wrap_release(&l->wrapped);
	container_wrap_preview_release(&l->preview);
}

/* Each copy the rank reads is held (a shared flock on its use lock) for
 * the rank's life, so that no other job's eviction or --clear removes it
 * meanwhile: by the supervisor, or, exec'd, by the program itself, which
 * inherits the descriptor.  A copy gone since the check (evicted) sends
 * the rank to its source, as a missing one does. */
static void hold_data(struct launch *l, struct sbuf *missing)
{
	l->data_holds = xcalloc(l->data.n ? l->data.n : 1, sizeof(*l->data_holds));
	for (size_t i = 0; i < l->data.n; i++) {
		struct data_env_entry *e = &l->data.v[i];
		int fd;

		l->data_holds[i] = -1;
		if (e->path != e->staged)
			continue;
		fd = stage_cache_hold(l->data.cache, l->job.data.stage[i].manifest);
		if (fd < 0) {
			e->path = e->src;
			sbuf_addf(missing, "%s%s", missing->len ? ", " : "", e->name);
			continue;
		}
		if (!l->supervise)
			fcntl(fd, F_SETFD, 0);
		l->data_holds[i] = fd;
	}
	l->ndata_holds = l->data.n;
}

/* Where each staged entry is on this node; a copy that is not there
 * (no stage step ran) leaves the rank on its source, said once. */
void launch_plan_data(struct launch *l)
{
	struct sbuf missing = SBUF_INIT;

	data_env_plan(&l->job, getenv("TMPDIR"), (unsigned)getuid(), &l->data);
	data_env_local_check(&l->data, &missing);
	if (!l->dry_run)
		hold_data(l, &missing);
	if (missing.len)
		say("rank %u: warning: not staged on this node (no "
			"stage step ran?): %s; reading the source on the shared file system",
			l->ri.rank, missing.buf);
	data_env_add(&l->data, &l->data_env);
	sbuf_release(&missing);
}

void launch_program_env(struct launch *l, struct envplan_input *in)
{
	struct sbuf path = SBUF_INIT;
	const char *inherited = getenv("PYTHONPATH");

	if (l->have_job)
		in->preempt_signal = preempt_signal_names[l->job.preempt.signal];
	if (program_module_path(l->run, &path)) {
		sbuf_release(&path);
		return; /* not installed: a program that imports it says so itself */
	}
	if (inherited && *inherited)
		sbuf_addf(&path, ":%s", inherited);
	free(l->python_path);
	l->python_path = sbuf_detach(&path, NULL);
	in->python_path = l->python_path;
}

/* A run's attempt, for HPCTRAIN_ATTEMPT and friends; rank 0 of a real
 * launch records the size Slurm granted this attempt.  Neither stops
 * the rank: a program that ignores them still trains. */
void launch_attempt_env(struct launch *l, struct envplan_input *in)
{
	struct sbuf err = SBUF_INIT;

	if (attempt_size_ctx_load(l->run, &l->attempt, &err)) {
		say("warning: rank %u: no attempt record: %s",
			l->ri.rank, err.buf);
		goto out;
	}
	in->attempt = l->attempt.attempt;
	in->prev_world_size = l->attempt.prev_world_size;
	in->checkpoint_dir = l->attempt.checkpoint_dir;
	if (l->ri.rank == 0 && !l->dry_run &&
	    attempt_size_record(l->run, l->ri.world_size, &err))
		say("warning: the attempt's size was not recorded: %s",
			err.buf);
	/* the modules the batch script loaded, as `module list` would
	 * name them: known only now, on a node */
	sbuf_reset(&err);
	if (l->ri.rank == 0 && !l->dry_run &&
	    software_record_add(l->run, json_pack("{s:o}", "modules",
						  software_modules_json(getenv("LOADEDMODULES"),
									getenv("_LMFILES_"))),
				&err))
		say("warning: the modules loaded were not recorded: %s", err.buf);
out:
	sbuf_release(&err);
}

