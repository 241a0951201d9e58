/* launch.h - one rank's launch as `hpctrain launch` (cli/cmd_launch.c)
 * carries it: its steps (launch.c), the contract said and decided on
 * (launch_contract.c), the program wrapped in its container
 * (launch_container.c).  Shell state: no core takes it.
 */
#ifndef HPT_LAUNCH_H
#define HPT_LAUNCH_H

#include "common/spec/spec.h"                  // defines: struct job
#include "launcher/container/container_wrap.h" // defines: struct container_run
#include "launcher/rank/bind.h"                // defines: struct bind_result
#include "launcher/rank/data_env.h"            // defines: struct data_env
#include "launcher/rank/env_list.h"            // defines: struct env_list
#include "launcher/rank/envplan.h"             // defines: struct envplan_cvd
#include "launcher/rank/rank.h"                // defines: struct rank_info
#include "launcher/runs/attempt_size.h"        // defines: struct attempt_size_ctx
#include "topology/plan.h"                     // defines: struct plan, struct plan_policy
#include "topology/topo.h"                     // defines: struct node_topo

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* Filled in order by cmd_launch.c's run(): the options, the job, the
 * rank, its node's topology and plan, the environment, the binding, the
 * wrapped program; released by its launch_release. */
struct launch {
	const char *spec, *run, *topology, *report;
	int dry_run, verbose, socket_ifname, supervise;
	struct plan_policy policy;
	const char *policy_flags[4]; /* cpu, gpu, nic, memory from the command line */
	struct job job;
	int have_job;
	struct rank_info ri;
	struct node_topo topo;
	void *hwloc_topo; /* the live probe's, kept for binding */
	struct plan plan;
	struct envplan_cvd cvd;
	struct env_list env;         /* what the program gets: the plan's, then the spec's env */
	struct env_list planned_env; /* the plan's alone, for the contract */
	struct data_env data;        /* the staged entries' paths on this node */
	struct env_list data_env;    /* their HPCTRAIN_DATA_* variables */
	struct attempt_size_ctx attempt; /* with --run: HPCTRAIN_ATTEMPT and friends */
	int *data_holds;             /* per entry, its copy's hold (stage_cache_hold), or -1 */
	size_t ndata_holds;
	struct bind_result bound;
	struct container_run wrapped; /* the program in the job's container, when it has one */
	struct container_preview preview; /* the same, as a dry run would run it */
	char *python_path;           /* PYTHONPATH: the Python module's directory first */
	char *code_dir;              /* the code snapshot the program runs in, or NULL */
	bool code_staged;            /* code_dir is the node's copy, in data.cache */
	char *run_dir;               /* --run made absolute, with code_dir */
	char *pycache_dir;           /* PYTHONPYCACHEPREFIX set for code_dir, or NULL */
};

/* The job from --spec or --run, when one is given (l->have_job); a run
 * another user owns, or others may write, is refused (HPT_EXIT_IO).
 * 0 or the exit status, the reason said. */
int launch_load_job(struct launch *l);
/* The rank (PMIx, Slurm, Open MPI), its node's topology (live, or
 * l->topology), the inherited CUDA_VISIBLE_DEVICES checked, and the
 * node's plan.  0 or the exit status, the reason said. */
int launch_discover_and_plan(struct launch *l);
/* Where each staged entry is on this node, each copy held for the
 * rank's life (not in a dry run); a copy that is not there leaves the
 * rank on its source, said once.  Fills l->data and l->data_env. */
void launch_plan_data(struct launch *l);
/* The run's attempt into in (HPCTRAIN_ATTEMPT and friends); rank 0 of a
 * real launch records the size Slurm granted.  Failures are warnings. */
struct envplan_input;
void launch_attempt_env(struct launch *l, struct envplan_input *in);
/* What a program learns beyond the plan (HPCTRAIN_PREEMPT_SIGNAL, and
 * PYTHONPATH with hpctrain's Python module first) into in; in keeps
 * pointers into l. */
void launch_program_env(struct launch *l, struct envplan_input *in);
/* In launch_code.c: a job with code (code.digest) run from --run: the
 * snapshot its code.json names, checked against the digest (or this
 * node's copy of it, when it was staged with the data: call
 * launch_plan_data first), into
 * l->code_dir and in->code_dir (HPCTRAIN_CODE_DIR), the run directory
 * into in->run_dir, and Python's bytecode away from the snapshot (into
 * in->pycache_prefix: the node cache's stage_pycache_dir, made private
 * unless a dry run; or in->no_bytecode, said, when it cannot be; neither
 * when the rank inherited PYTHONPYCACHEPREFIX).  0, or HPT_EXIT_NO_INPUT
 * naming what is gone: a rank never runs the live tree in the
 * snapshot's place. */
int launch_code_dir(struct launch *l, struct envplan_input *in);
/* The program's working directory: the snapshot, else NULL (launch's). */
const char *launch_workdir(const struct launch *l);

/* l->env into this process's environment: 0 or HPT_EXIT_INTERNAL. */
int launch_set_env(const struct launch *l);
/* The rank's report (--report, --dry-run): a new reference. */
json_t *launch_report_json(const struct launch *l, char **argv);
/* It written as l->report/rank-NNNNN.json, 0600 in a private directory. */
int launch_write_report(const struct launch *l, char **argv);
/* argv forked and watched (launch --supervise); its exit status. */
int launch_supervise(const struct launch *l, json_t *contract, char **argv);
/* Everything l holds; the node's last rank unmounts the image. */
void launch_release(struct launch *l);

/* In launch_contract.c: the plan next to what this process got, once
 * the binding and the environment are in place; each difference said in
 * the rank's log (and, supervised, kept in its liveness file).  A new
 * reference, and *broken when it breaks binding.contract: fail. */
json_t *launch_contract_check(const struct launch *l, bool *broken);

/* In launch_contract.c: the supervisor's inside check (struct
 * supervise_inside), arg a const struct launch *. */
json_t *launch_contract_inside(void *arg, pid_t pid, int *end_status);

/* In launch_container.c: the program inside the job's container into
 * l->wrapped (l->preview in a dry run): 0, or the exit status, the
 * reason said. */
int launch_container_wrap(struct launch *l, char **argv);

/* In launch_container.c: "container_argv" (the runtime's command line)
 * and, in a dry run of a SquashFS image under Charliecloud,
 * "container_mount" (the squashfuse command first), into the report. */
void launch_container_report(const struct launch *l, json_t **doc);

/* In launch_container.c: podman's program found and its container
 * removed, for the supervisor (struct supervise_target), arg a const
 * struct launch *. */
pid_t launch_container_find(void *arg);
void launch_container_end(void *arg);

#endif
