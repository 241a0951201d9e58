/* cmd_launch.c - `hpctrain launch`: bind one rank, set its environment, exec.
 * Shell: rank discovery (Slurm, Open MPI, else PMIx: launcher/rank/
 * rank_discover.c), probe and plan (the same code as `hpctrain topo
 * plan`), binding, then execvp() with no fork, so signals and the exit
 * status belong to the program; or, with --supervise, fork it and watch
 * it (launcher/supervise/supervise.h).  A job with container.image runs
 * the program through its runtime (launcher/container/container_wrap.h),
 * wrapped after the plan is applied (launch_container.c); what the rank
 * got is checked against the plan first (launch_contract.c).  Each
 * staged data.stage entry's copy on the node reaches the program as
 * HPCTRAIN_DATA_<NAME> (launcher/rank/data_env.h); with container.stage
 * the image's copy is the one started. */
#include "cli/json_print.h" // defines: json_print
#include "cli/builtin.h"      // defines: cmd_launch
#include "cli/launch.h"       // defines: struct launch, launch_contract_check, launch_container_wrap, launch_container_report
#include "common/spec/specfile.h"     // defines: specfile_load, specfile_load_run
#include "common/diag.h"         // defines: struct diag_list, diag_report, diag_report_as
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/fileio.h"       // defines: fileio_write_atomic, fileio_private_dir, fileio_check_owned, fileio_exists
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf, SBUF_CLIP
#include "common/spec/spec.h"         // defines: struct job
#include "launcher/rank/bind.h"    // defines: bind_apply
#include "launcher/rank/data_env.h" // defines: data_env_plan, data_env_local_check, data_env_add
#include "launcher/rank/envplan.h" // defines: envplan_build, envplan_cvd_parse, envplan_cvd_check, envplan_narrow_request
#include "launcher/rank/rank.h"    // defines: rank_discover, struct rank_info
#include "launcher/supervise/supervise.h" // defines: supervise_run, supervise_grace
#include "launcher/container/container_wrap.h" // defines: container_wrap_release, container_wrap_preview_release
#include "launcher/container/container_squash.h" // defines: container_squash_inherit
#include "launcher/stage/stage_cache.h" // defines: stage_cache_hold
#include "topology/plan.h"    // defines: plan_slices, plan_policy_set
#include "launcher/rank/policy.h"  // defines: policy_from_spec
#include "topology/probe.h"   // defines: probe_load
#include "topology/topo.h"    // defines: struct node_topo

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_SPEC = 256, OPT_RUN, OPT_CPU, OPT_GPU, OPT_NIC, OPT_MEMORY, OPT_TOPOLOGY,
       OPT_REPORT, OPT_DRY_RUN, OPT_SOCKET_IFNAME, OPT_SUPERVISE };

static const char *const launch_usage[] = {
	"hpctrain launch [--spec <file> | --run <dir>] [--cpu <p>] [--gpu <p>] [--nic <p>] [--memory <p>]",
	"                [--topology <file.xml>] [--report <dir>] [--supervise] [--dry-run] [--verbose]",
	"                [--] <program> [<args>]",
	NULL,
};

static const struct opt launch_opts[] = {
	{ "spec", required_argument, NULL, OPT_SPEC, "FILE", "take binding and env from this spec or template" },
	{ "run", required_argument, NULL, OPT_RUN, "DIR", "take them from DIR/resolved.yaml (a run directory)" },
	{ "cpu", required_argument, NULL, OPT_CPU, "POLICY", "exclusive, node, core-complex or none" },
	{ "gpu", required_argument, NULL, OPT_GPU, "POLICY", "auto or none" },
	{ "nic", required_argument, NULL, OPT_NIC, "POLICY", "rail, single or none" },
	{ "memory", required_argument, NULL, OPT_MEMORY, "POLICY", "local, preferred or none" },
	{ "socket-ifname", no_argument, NULL, OPT_SOCKET_IFNAME, NULL,
	  "also set NCCL_SOCKET_IFNAME to the nearest interface" },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY, "FILE",
	  "plan from a saved hwloc XML; what this machine lacks is reported, not applied" },
	{ "report", required_argument, NULL, OPT_REPORT, "DIR", "write DIR/rank-NNNNN.json for each rank" },
	{ "supervise", no_argument, NULL, OPT_SUPERVISE, NULL,
	  "fork the program and watch it: forward signals, preemption, liveness, stall autopsy" },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN, NULL, "print the report instead of binding and running" },
	{ "verbose", no_argument, NULL, 'v', NULL, "print one line per rank on what it got, to stderr" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd launch_cmd = {
	.name = "launch",
	.usage = launch_usage,
	.summary = "Run one rank of a job: learn its rank, bind it to its GPU, NICs, cores and memory, "
		"set its environment, and exec the program.",
	.opts = launch_opts,
	.stop_at_operand = 1,
};

/* --run: the supervisor writes into the run, and its resolved.yaml sets
 * the rank's environment, so a run another user owns, or one others may
 * write, is refused (HPT_EXIT_IO, as for a run directory train refuses).
 * One that does not exist is left to specfile_load_run to name. */
static int refuse_run(const struct launch *l)
{
	struct sbuf err = SBUF_INIT;
	int status = HPT_EXIT_OK;

	if (l->run && fileio_exists(l->run) && fileio_check_owned(l->run, &err)) {
		fprintf(stderr, "hpctrain launch: %s\n", err.buf);
		status = HPT_EXIT_IO;
	}
	sbuf_release(&err);
	return status;
}

static int load_job(struct launch *l)
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

/* Spec first, then the command line; names match plan_policy_set(). */
static int resolve_policy(struct launch *l)
{
	static const char *const keys[] = { "cpu", "gpu", "nic", "memory" };

	l->policy = (struct plan_policy)PLAN_POLICY_INIT;
	if (l->have_job) {
		policy_from_spec(&l->policy, &l->job.binding);
		l->socket_ifname |= l->job.binding.socket_ifname;
	}
	for (int i = 0; i < 4; i++)
		if (l->policy_flags[i] && plan_policy_set(&l->policy, keys[i], l->policy_flags[i]))
			return opt_error(&launch_cmd, "--%s: unknown policy '%s'", keys[i],
					 SBUF_CLIP(l->policy_flags[i]));
	return HPT_EXIT_OK;
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
		fprintf(stderr, "hpctrain launch: %s\n", why.buf);
	else if (rc > 0 && !l->ri.local_rank) /* once per node */
		fprintf(stderr, "hpctrain launch: warning: %s\n", why.buf);
	sbuf_release(&why);
	return rc < 0 ? HPT_EXIT_TOPOLOGY : HPT_EXIT_OK;
}

static int discover_and_plan(struct launch *l)
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
		fprintf(stderr, "hpctrain launch: %s\n", why.buf);
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

static json_t *report_json(const struct launch *l, char **argv)
{
	json_t *env = json_object(), *prog = json_array(), *slice, *doc;
	char *slice_text = envplan_slice_json(&l->topo, &l->plan, l->ri.local_rank,
					      env_list_get(&l->env, "CUDA_VISIBLE_DEVICES"));
	struct sbuf policy = SBUF_INIT;

	for (size_t i = 0; i < l->env.n; i++)
		json_object_set_new(env, l->env.v[i].name, json_string(l->env.v[i].value));
	for (size_t i = 0; argv[i]; i++)
		json_array_append_new(prog, json_string(argv[i]));
	slice = json_loads(slice_text, 0, NULL);
	plan_policy_format(&l->policy, &policy);
	doc = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:o*, s:o, s:{s:b, s:s?, s:b, s:s?}, s:o}",
			"source", rank_source_name(l->ri.source), "rank", (int)l->ri.rank,
			"world_size", (int)l->ri.world_size, "local_rank", (int)l->ri.local_rank,
			"local_size", (int)l->ri.local_size, "node_rank", (int)l->ri.node_rank,
			"num_nodes", (int)l->ri.num_nodes, "hostname", l->ri.hostname,
			"master_addr", l->ri.master_addr, "topology", l->topo.source,
			"policy", policy.buf, "slice", slice, "env", env,
			"applied", "cpu", l->bound.cpu_applied, "cpu_note", l->bound.cpu_note,
			"memory", l->bound.mem_applied, "memory_note", l->bound.mem_note,
			"program", prog);
	launch_container_report(l, doc);
	free(slice_text);
	sbuf_release(&policy);
	return doc;
}

static int write_report(const struct launch *l, char **argv)
{
	json_t *doc = report_json(l, argv);
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	int status = HPT_EXIT_OK;

	if (!text) {
		status = HPT_EXIT_INTERNAL;
		goto out;
	}
	/* The report holds the rank's environment, the spec's env included:
	 * private, as a run is. */
	if (fileio_private_dir(l->report, &err)) {
		fprintf(stderr, "hpctrain launch: %s\n", err.buf);
		status = HPT_EXIT_IO;
		goto out;
	}
	sbuf_addf(&path, "%s/rank-%05u.json", l->report, l->ri.rank);
	if (fileio_write_atomic(path.buf, text, strlen(text), 0600, 0, &err)) {
		fprintf(stderr, "hpctrain launch: %s\n", err.buf);
		status = HPT_EXIT_IO;
	}
out:
	free(text);
	json_decref(doc);
	sbuf_release(&path);
	sbuf_release(&err);
	return status;
}

static void say_verbose(const struct launch *l)
{
	const struct slice *s = &l->plan.slices[l->ri.local_rank];
	const char *dev = env_list_get(&l->env, "CUDA_VISIBLE_DEVICES");
	const char *hca = env_list_get(&l->env, "NCCL_IB_HCA");
	struct sbuf cpus = SBUF_INIT;

	bitmap_format_list(&s->cpuset, &cpus);
	fprintf(stderr, "hpctrain launch: rank %u/%u (local %u/%u, node %u/%u) from %s on %s: "
		"gpu %s, nics %s, cpus %s%s, master %s:%s\n",
		l->ri.rank, l->ri.world_size, l->ri.local_rank, l->ri.local_size, l->ri.node_rank,
		l->ri.num_nodes, rank_source_name(l->ri.source), l->ri.hostname, dev ? dev : "-",
		hca ? hca + 1 : "-", cpus.buf, l->bound.cpu_applied ? "" : " (not applied)",
		l->ri.master_addr, env_list_get(&l->env, "MASTER_PORT"));
	if (l->bound.cpu_note)
		fprintf(stderr, "hpctrain launch: rank %u: cpu %s\n", l->ri.rank, l->bound.cpu_note);
	if (l->bound.mem_note && !l->bound.mem_applied)
		fprintf(stderr, "hpctrain launch: rank %u: memory %s\n", l->ri.rank, l->bound.mem_note);
	for (size_t i = 0; i < l->data.n; i++)
		fprintf(stderr, "hpctrain launch: rank %u: data %s=%s (%s)\n", l->ri.rank,
			l->data.v[i].var, l->data.v[i].path,
			l->data.v[i].path == l->data.v[i].src ? "the source" : "staged");
	sbuf_release(&cpus);
}

static int set_env(const struct launch *l)
{
	for (size_t i = 0; i < l->env.n; i++)
		if (setenv(l->env.v[i].name, l->env.v[i].value, 1)) {
			fprintf(stderr, "hpctrain launch: cannot set %s: %s\n", l->env.v[i].name,
				strerror(errno));
			return HPT_EXIT_INTERNAL;
		}
	return HPT_EXIT_OK;
}

static const int preempt_signals[] = { [PREEMPT_USR2] = SIGUSR2, [PREEMPT_TERM] = SIGTERM,
				       [PREEMPT_INT] = SIGINT };

/* Preemption needs the spec (its signal, lead_s, after_signal); without
 * one the supervisor only forwards signals.  A podman program is found
 * by its container's name, checked inside, and its container removed. */
static int supervise_program(const struct launch *l, json_t *contract, char **argv)
{
	struct supervise_target target = { launch_container_find, launch_container_end, (void *)l };
	struct supervise_inside inside = { launch_contract_inside, (void *)l };
	struct supervise_opts o = { .run_dir = l->run, .rank = l->ri.rank,
				    .world = l->ri.world_size, .host = l->ri.hostname,
				    .contract = contract };

	if (l->wrapped.podman_name) {
		o.target = &target;
		o.inside = &inside;
	}

	if (l->have_job) {
		o.preempt_signal = preempt_signals[l->job.preempt.signal];
		o.grace_s = supervise_grace(l->job.preempt.lead_s);
		o.after_requeue = l->job.preempt.after_signal == PREEMPT_AFTER_REQUEUE;
		o.stall_s = l->job.supervise.stall_timeout_s;
	}
	return supervise_run(&o, argv);
}

static int exec_program(char **argv)
{
	fflush(stdout);
	fflush(stderr);
	execvp(argv[0], argv);
	if (errno == ENOENT) {
		fprintf(stderr, "hpctrain launch: %s: command not found\n", argv[0]);
		return HPT_EXIT_NOTFOUND;
	}
	fprintf(stderr, "hpctrain launch: cannot execute %s: %s\n", argv[0], strerror(errno));
	return HPT_EXIT_NOEXEC;
}

static void launch_release(struct launch *l)
{
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
static void plan_data(struct launch *l)
{
	struct sbuf missing = SBUF_INIT;

	data_env_plan(&l->job, getenv("TMPDIR"), (unsigned)getuid(), &l->data);
	data_env_local_check(&l->data, &missing);
	if (!l->dry_run)
		hold_data(l, &missing);
	if (missing.len)
		fprintf(stderr, "hpctrain launch: rank %u: warning: not staged on this node (no "
			"stage step ran?): %s; reading the source on the shared file system\n",
			l->ri.rank, missing.buf);
	data_env_add(&l->data, &l->data_env);
	sbuf_release(&missing);
}

/* A run's attempt, for HPCTRAIN_ATTEMPT and friends; rank 0 of a real
 * launch records the size Slurm granted this attempt.  Neither stops
 * the rank: a program that ignores them still trains. */
static void attempt_env(struct launch *l, struct envplan_input *in)
{
	struct sbuf err = SBUF_INIT;

	if (attempt_size_ctx_load(l->run, &l->attempt, &err)) {
		fprintf(stderr, "hpctrain launch: warning: rank %u: no attempt record: %s\n",
			l->ri.rank, err.buf);
		goto out;
	}
	in->attempt = l->attempt.attempt;
	in->prev_world_size = l->attempt.prev_world_size;
	in->checkpoint_dir = l->attempt.checkpoint_dir;
	if (l->ri.rank == 0 && !l->dry_run &&
	    attempt_size_record(l->run, l->ri.world_size, &err))
		fprintf(stderr, "hpctrain launch: warning: the attempt's size was not recorded: %s\n",
			err.buf);
out:
	sbuf_release(&err);
}

static int run(struct launch *l, char **argv)
{
	const struct slice *s;
	json_t *contract;
	bool broken;
	struct envplan_input in = { 0 };
	int status = load_job(l);

	if (!status)
		status = resolve_policy(l);
	if (!status)
		status = discover_and_plan(l);
	if (status)
		return status;
	s = &l->plan.slices[l->ri.local_rank];
	in.ri = &l->ri;
	in.topo = &l->topo;
	in.plan = &l->plan;
	in.cvd = &l->cvd;
	in.gpu_none = l->policy.gpu == PLAN_GPU_NONE;
	in.nic_none = l->policy.nic == PLAN_NIC_NONE;
	in.socket_ifname = l->socket_ifname;
	in.nccl_net_set = getenv("NCCL_NET") != NULL;
	if (l->have_job)
		plan_data(l);
	in.data = &l->data_env;
	if (l->run && l->have_job)
		attempt_env(l, &in);
	envplan_build(&in, &l->planned_env);
	in.user = l->have_job ? &l->job.env : NULL;
	envplan_build(&in, &l->env);
	if (l->dry_run) {
		l->bound.cpu_note = xstrdup("not applied: dry run");
		l->bound.mem_note = xstrdup("not applied: dry run");
	} else {
		bind_apply(s, l->policy.cpu == PLAN_CPU_NONE, l->policy.memory == PLAN_MEMORY_NONE,
			   l->hwloc_topo, &l->bound);
	}
	if (l->verbose)
		say_verbose(l);
	if (l->bound.cpu_failed) {
		fprintf(stderr, "hpctrain launch: rank %u: %s\n", l->ri.rank, l->bound.cpu_note);
		return HPT_EXIT_TOPOLOGY;
	}
	/* a dry run's too: its runtime's command line names the variables
	 * (enroot), and the environment is launch's own, gone at its exit */
	if ((status = set_env(l)))
		return status;
	if (l->have_job && l->job.container.image && (status = launch_container_wrap(l, argv)))
		return status;
	if (l->report && (status = write_report(l, argv)))
		return status;
	if (l->dry_run)
		return json_print(report_json(l, argv));
	/* The exec'd program needs none of our memory; dropping the hwloc
	 * topology first only keeps its file descriptors from leaking. */
	probe_keep_release(l->hwloc_topo);
	l->hwloc_topo = NULL;
	if (l->wrapped.argv.n)
		argv = l->wrapped.argv.v;
	contract = launch_contract_check(l, &broken);
	if (broken) {
		fprintf(stderr, "hpctrain launch: rank %u: binding.contract is fail: the program "
			"is not started\n", l->ri.rank);
		status = HPT_EXIT_TOPOLOGY;
	} else if (l->supervise) {
		status = supervise_program(l, contract, argv);
	} else {
		/* the program, in launch's place, holds the mounted image */
		container_squash_inherit(&l->wrapped.squash);
		status = exec_program(argv);
	}
	json_decref(contract);
	return status;
}

int cmd_launch(int argc, char **argv)
{
	struct launch l;
	int c, status;

	memset(&l, 0, sizeof(l));
	l.wrapped = (struct container_run)CONTAINER_RUN_INIT;
	l.preview = (struct container_preview)CONTAINER_PREVIEW_INIT;
	topo_init(&l.topo);
	plan_init(&l.plan);
	l.topology = getenv("HPCTRAIN_TOPOLOGY");
	if (l.topology && !*l.topology)
		l.topology = NULL;
	opt_reset();
	while ((c = opt_next(&launch_cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_SPEC:
			l.spec = optarg;
			break;
		case OPT_RUN:
			l.run = optarg;
			break;
		case OPT_CPU:
		case OPT_GPU:
		case OPT_NIC:
		case OPT_MEMORY:
			l.policy_flags[c - OPT_CPU] = optarg;
			break;
		case OPT_SOCKET_IFNAME:
			l.socket_ifname = 1;
			break;
		case OPT_TOPOLOGY:
			l.topology = optarg;
			break;
		case OPT_REPORT:
			l.report = optarg;
			break;
		case OPT_SUPERVISE:
			l.supervise = 1;
			break;
		case OPT_DRY_RUN:
			l.dry_run = 1;
			break;
		case 'v':
			l.verbose = 1;
			break;
		case 'h':
			opt_usage(stdout, &launch_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (l.spec && l.run)
		return opt_error(&launch_cmd, "--spec and --run exclude each other");
	if (optind >= argc)
		return opt_error(&launch_cmd, "no program given");
	status = run(&l, argv + optind);
	launch_release(&l);
	return status;
}
