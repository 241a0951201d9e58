/* envplan.h - the environment a rank's program starts with.
 *
 * Core (pure): rank identity, the node's topology and this rank's slice
 * of the plan in; a list of NAME=value out, in the order they are set.
 * The shell (cmd_launch.c) applies them with setenv() and execs.  What is
 * set, and why:
 *
 *   CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER   the rank's GPU, in PCI bus order;
 *       an inherited list (Slurm's) is mapped into, never widened, and
 *       refused when the plan cannot use it (envplan_cvd_check)
 *   NCCL_IB_HCA      "=mlx5_0,mlx5_1": the rank's rail, exact names (a bare
 *                    mlx5_1 would also match mlx5_10)
 *   UCX_NET_DEVICES  the nearest port, "mlx5_0:1" (or an interface name)
 *   NCCL_SOCKET_IFNAME  "=ib0", only when binding.socket_ifname is set
 *   OMP_NUM_THREADS, OMP_PLACES=cores, OMP_PROC_BIND=close
 *   RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK, GROUP_RANK,
 *   MASTER_ADDR, MASTER_PORT   as torchrun sets them
 *   HPCTRAIN_RANK, HPCTRAIN_LOCAL_RANK, HPCTRAIN_SLICE (JSON)
 *   HPCTRAIN_DATA_<NAME>   each staged entry's path on the node (data_env.h)
 *   HPCTRAIN_ATTEMPT, HPCTRAIN_PREV_WORLD_SIZE, HPCTRAIN_CHECKPOINT_DIR
 *                    with a run (launch --run): its attempt number (1 first),
 *                    the previous attempt's world size (0 on the first, or
 *                    when no earlier attempt recorded one) and the run's
 *                    checkpoint directory, shared by every attempt
 *   HPCTRAIN_PREEMPT_SIGNAL   the spec's preempt.signal (USR2), with a spec
 *   PYTHONPATH       hpctrain's Python module first (launcher/runs/program_module.h),
 *                    then what the rank inherited
 *   PYTHONPYCACHEPREFIX  with a code snapshot, unless the rank inherited one:
 *                    a private node-local directory (stage_pycache_dir), so
 *                    the imports of a program run from the snapshot write
 *                    no __pycache__ into it; PYTHONDONTWRITEBYTECODE=1 in its
 *                    place when that directory cannot be made private
 *   then the spec's env:, last, so the user always wins.
 */
#ifndef HPT_ENVPLAN_H
#define HPT_ENVPLAN_H

#include "launcher/rank/env_list.h" // defines: struct env_list, env_list_*

#include <stdbool.h>
#include <stddef.h>

struct job_env;
struct sbuf;
struct node_topo;
struct plan;
struct plan_request;
struct rank_info;

/* An inherited CUDA_VISIBLE_DEVICES split into entries, each mapped to a
 * GPU of the topology (index into topo->gpus) when possible: a decimal
 * number is the GPU's PCI-order index, "GPU-<uuid>" matches its UUID or
 * a prefix of it that fits one GPU only (as CUDA reads them). */
struct envplan_cvd {
	char **entries;
	int *gpus;     /* -1 where an entry names no GPU of the topology */
	size_t n;
	bool all_mapped;
};

/* cvd NULL or "" gives an empty map.  NoDevFiles (Slurm's word for none)
 * too. */
void envplan_cvd_parse(const struct node_topo *t, const char *cvd, struct envplan_cvd *out);
void envplan_cvd_release(struct envplan_cvd *m);

/* Whether the plan can honour an inherited list (cvd is its text, for
 * the message).  0: every entry names a GPU of the topology, once (the
 * plan then covers exactly those), or the topology shows no GPU (hwloc
 * may not see the devices Slurm hands out: ranks share the entries out,
 * and no core or NIC is planned for a GPU).  1: it names MIG instances,
 * which no topology places: ranks share them out while cores and NICs
 * are planned over every GPU, which why says, for a warning.  -1: the
 * plan cannot use it, and why says which entry and why: not a GPU index
 * or UUID ("garbage"), an index beyond the node's GPUs ("99"), a UUID
 * none of them has or that the topology cannot tell (no UUIDs recorded),
 * one GPU named twice.  Such a list would reach the program while cores
 * and NICs were planned for other GPUs; launch refuses it (status 7),
 * doctor fails its binding check. */
int envplan_cvd_check(const struct node_topo *t, const struct envplan_cvd *m, const char *cvd,
		      struct sbuf *why);

/* Plans only over the GPUs an inherited list allows: when Slurm narrowed
 * CUDA_VISIBLE_DEVICES to GPUs the topology knows (every entry mapped),
 * req's visible_gpus borrow cvd's, so cvd must outlive the planning;
 * else req is left alone: the plan covers every GPU, and envplan_build
 * shares out the entries it cannot map (those envplan_cvd_check lets
 * pass: MIG instances, or a topology without GPUs). */
void envplan_narrow_request(struct plan_request *req, const struct node_topo *t,
			    const struct envplan_cvd *cvd);

struct envplan_input {
	const struct rank_info *ri;
	const struct node_topo *topo;
	const struct plan *plan;      /* the node's plan; slice ri->local_rank is ours */
	const struct envplan_cvd *cvd;    /* the inherited device list, or NULL */
	bool gpu_none;                /* binding.gpu: none: leave GPU variables alone */
	bool nic_none;                /* binding.nic: none */
	bool socket_ifname;
	bool nccl_net_set;            /* the caller's environment has NCCL_NET */
	const struct env_list *data;  /* HPCTRAIN_DATA_* (data_env_add), or NULL */
	int attempt;                  /* the run's attempt; 0: no run, none of the three */
	long long prev_world_size;    /* HPCTRAIN_PREV_WORLD_SIZE */
	const char *checkpoint_dir;   /* HPCTRAIN_CHECKPOINT_DIR, or NULL */
	const char *preempt_signal;   /* HPCTRAIN_PREEMPT_SIGNAL's name, or NULL */
	const char *python_path;      /* PYTHONPATH, whole, or NULL: left alone */
	const char *code_dir;         /* HPCTRAIN_CODE_DIR: the code snapshot, or NULL */
	const char *run_dir;          /* HPCTRAIN_RUN_DIR, set with code_dir, or NULL */
	const char *pycache_prefix;   /* PYTHONPYCACHEPREFIX, or NULL: left alone */
	bool no_bytecode;             /* PYTHONDONTWRITEBYTECODE=1 */
	const struct job_env *user;   /* the spec's env:, or NULL */
};

/* Appends every variable to out.  Never fails on valid input. */
void envplan_build(const struct envplan_input *in, struct env_list *out);

/* HPCTRAIN_SLICE's JSON text for one slice (compact, one line). */
char *envplan_slice_json(const struct node_topo *t, const struct plan *p, size_t slice,
			 const char *cuda_visible);

#endif
