/* cmd_launch.c - `hpctrain launch`: bind one rank, set its environment, exec.
 * Shell: rank discovery (Slurm, Open MPI, else PMIx: launcher/rank/
 * rank_discover.c), probe and plan (the same code as `hpctrain topo
 * plan`), binding, then execvp() with no fork, so signals and the exit
 * status belong to the program; or, with --supervise, fork it and watch
 * it (launcher/supervise/supervise.h).  A job with container.image runs
 * the program through its runtime (launcher/container/container_wrap.h),
 * wrapped after the plan is applied (launcher/launch/launch_container.c);
 * what the rank got is checked against the plan first (launch_contract.c).  Each
 * staged data.stage entry's copy on the node reaches the program as
 * HPCTRAIN_DATA_<NAME> (launcher/rank/data_env.h); with container.stage
 * the image's copy is the one started. */
#include "common/json_print.h" // defines: json_print
#include "common/say.h" // defines: say
#include "cli/builtin.h"      // defines: cmd_launch
#include "launcher/launch/launch.h"       // defines: struct launch, launch_*
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf, SBUF_CLIP
#include "common/spec/spec.h"         // defines: struct job
#include "launcher/rank/bind.h"    // defines: bind_apply
#include "launcher/rank/envplan.h" // defines: envplan_build
#include "launcher/rank/rank.h"    // defines: rank_discover, struct rank_info
#include "launcher/container/container_squash.h" // defines: container_squash_inherit
#include "topology/plan.h"    // defines: plan_slices, plan_policy_set
#include "launcher/rank/policy.h"  // defines: policy_from_spec
#include "topology/probe.h"   // defines: probe_keep_release
#include "topology/topo.h"    // defines: struct node_topo

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void say_verbose(const struct launch *l)
{
	const struct slice *s = &l->plan.slices[l->ri.local_rank];
	const char *dev = env_list_get(&l->env, "CUDA_VISIBLE_DEVICES");
	const char *hca = env_list_get(&l->env, "NCCL_IB_HCA");
	struct sbuf cpus = SBUF_INIT;

	bitmap_format_list(&s->cpuset, &cpus);
	say("rank %u/%u (local %u/%u, node %u/%u) from %s on %s: "
		"gpu %s, nics %s, cpus %s%s, master %s:%s",
		l->ri.rank, l->ri.world_size, l->ri.local_rank, l->ri.local_size, l->ri.node_rank,
		l->ri.num_nodes, rank_source_name(l->ri.source), l->ri.hostname, dev ? dev : "-",
		hca ? hca + 1 : "-", cpus.buf, l->bound.cpu_applied ? "" : " (not applied)",
		l->ri.master_addr, env_list_get(&l->env, "MASTER_PORT"));
	if (l->bound.cpu_note)
		say("rank %u: cpu %s", l->ri.rank, l->bound.cpu_note);
	if (l->bound.mem_note && !l->bound.mem_applied)
		say("rank %u: memory %s", l->ri.rank, l->bound.mem_note);
	for (size_t i = 0; i < l->data.n; i++)
		say("rank %u: data %s=%s (%s)", l->ri.rank,
			l->data.v[i].var, l->data.v[i].path,
			l->data.v[i].path == l->data.v[i].src ? "the source" : "staged");
	sbuf_release(&cpus);
}

static int exec_program(char **argv, const char *workdir)
{
	fflush(stdout);
	fflush(stderr);
	if (workdir && chdir(workdir)) {
		say("cannot enter %s: %s", workdir, strerror(errno));
		return HPT_EXIT_NO_INPUT;
	}
	execvp(argv[0], argv);
	if (errno == ENOENT) {
		say("%s: command not found", argv[0]);
		return HPT_EXIT_NOTFOUND;
	}
	say("cannot execute %s: %s", argv[0], strerror(errno));
	return HPT_EXIT_NOEXEC;
}

static int run(struct launch *l, char **argv)
{
	const struct slice *s;
	json_t *contract;
	bool broken;
	struct envplan_input in = { 0 };
	int status = launch_load_job(l);

	if (!status)
		status = resolve_policy(l);
	if (!status)
		status = launch_discover_and_plan(l);
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
		launch_plan_data(l);
	in.data = &l->data_env;
	if (l->run && l->have_job)
		launch_attempt_env(l, &in);
	launch_program_env(l, &in);
	if ((status = launch_code_dir(l, &in)))
		return status;
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
		say("rank %u: %s", l->ri.rank, l->bound.cpu_note);
		return HPT_EXIT_TOPOLOGY;
	}
	/* a dry run's too: its runtime's command line names the variables
	 * (enroot), and the environment is launch's own, gone at its exit */
	if ((status = launch_set_env(l)))
		return status;
	if (l->have_job && l->job.container.image && (status = launch_container_wrap(l, argv)))
		return status;
	if (l->report && (status = launch_write_report(l, argv)))
		return status;
	if (l->dry_run)
		return json_print(launch_report_json(l, argv));
	/* The exec'd program needs none of our memory; dropping the hwloc
	 * topology first only keeps its file descriptors from leaking. */
	probe_keep_release(l->hwloc_topo);
	l->hwloc_topo = NULL;
	if (l->wrapped.argv.n)
		argv = l->wrapped.argv.v;
	contract = launch_contract_check(l, &broken);
	if (broken) {
		say("rank %u: binding.contract is fail: the program "
			"is not started", l->ri.rank);
		status = HPT_EXIT_TOPOLOGY;
	} else if (l->supervise) {
		status = launch_supervise(l, contract, argv);
	} else {
		/* the program, in launch's place, holds the mounted image */
		container_squash_inherit(&l->wrapped.squash);
		status = exec_program(argv, launch_workdir(l));
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
