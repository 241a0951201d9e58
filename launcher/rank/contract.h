/* contract.h - the launch contract, checked: what a rank was planned to
 * get (CPUs, NUMA nodes, GPU, NICs, the NCCL/UCX environment) next to
 * what it really got, and a warning for each difference.
 *
 * Core (pure, contract.c): its shell (contract_got.c, which `hpctrain
 * launch` calls after binding) reads what the process got
 * (sched_getaffinity, Mems_allowed_list, the environment after the
 * spec's env) and the names the node really has; the warnings
 * go to the rank's log and, under --supervise, into its liveness file,
 * where `hpctrain status RUN --ranks` shows them.  By default
 * (binding.contract: warn) a mismatch never stops a launch: a site may
 * have reasons, and the program may still run; it is said, once, where
 * the user looks.  With binding.contract: fail, contract_is_broken says
 * when launch must end the rank instead.
 */
#ifndef HPT_CONTRACT_H
#define HPT_CONTRACT_H

#include "topology/bitmap.h" // defines: struct bitmap

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct env_list;
struct node_topo;
struct slice;

/* What was planned beyond the slice: whether the CPU and memory binding
 * were to be applied (policy not none, and bind_apply did), and the
 * environment envplan set (NULL values for names it left alone). */
struct contract_plan {
	const struct slice *slice;
	bool cpus_bound, mems_bound;
	const struct env_list *env;
};

/* What the process has, read after binding and set_env. */
struct contract_got {
	struct bitmap cpus;   /* sched_getaffinity */
	bool have_cpus;
	struct bitmap mems;   /* Mems_allowed_list */
	bool have_mems;
	const char *cuda_visible_devices, *nccl_ib_hca, *nccl_socket_ifname, *ucx_net_devices;
	const char *const *ifnames; /* the node's network interfaces (if_nameindex) */
	size_t n_ifnames;
};

/* In contract_got.c (shell): fills got from this process, after
 * binding and after the program's environment was set; the env values
 * point into the environment.  Release with contract_got_release. */
void contract_got_read(struct contract_got *got);
/* The network interfaces this process sees, into got->ifnames (also
 * for a program inside a container sharing the host's network). */
void contract_got_read_ifnames(struct contract_got *got);
void contract_got_release(struct contract_got *got);

/* In contract_inside.c (shell): the same check on process pid, the
 * program a container runtime started (its /proc/PID/status, environ
 * and root), re-pinning it to the planned CPUs where the runtime moved
 * it and the kernel allows: contract_check's object with "pid" and
 * "repinned" added, a warning saying what was done, and, when the
 * re-pinning worked, "fixed" (contract_mark_fixed) naming the warnings
 * it put right; NULL when pid cannot be read.  A new reference. */
json_t *contract_inside_check(const struct node_topo *t, const struct contract_plan *plan,
			      pid_t pid);

/* In contract_inside.c (shell): the device check of
 * contract_check_hca_devices for t's HCAs, their uverbs devices read
 * from SYS_ROOT/sys/class/infiniband/HCA/device/infiniband_verbs (sys_root
 * "" for the host's own) and the names inside from dev_dir (the
 * program's /proc/PID/root/dev/infiniband). */
void contract_inside_check_hcas(const struct node_topo *t, const char *nccl_ib_hca,
				const char *sys_root, const char *dev_dir, json_t *warnings);

/* An HCA and its user verbs device on the host ("uverbs0"; NULL: none). */
struct contract_hca_dev {
	const char *hca, *uverbs;
};

/* Appends to warnings one line for each HCA the NCCL-style list
 * nccl_ib_hca selects among devs (the node's) whose uverbs device is not
 * among the n_inside names of /dev/infiniband inside a container: NCCL
 * cannot open it there.  A "^" list excludes and is not checked; a name
 * that selects no HCA of devs is contract_check's to name. */
void contract_check_hca_devices(const char *nccl_ib_hca, const struct contract_hca_dev *devs,
				size_t n_devs, const char *const *inside, size_t n_inside,
				json_t *warnings);

/* Adds to c's "fixed" list each warning of c that after (the same check
 * once something was put right: a re-pinned program) no longer has. */
void contract_mark_fixed(json_t *c, const json_t *after);

/* Whether warning i of c (contract_check's or contract_inside_check's)
 * still holds: it exists and is not in c's "fixed". */
bool contract_warning_holds(const json_t *c, size_t i);

/* Whether c breaks the contract under mode (enum bind_contract, the
 * spec's binding.contract): with fail, when any warning holds; never
 * with warn, nor for a NULL c (nothing could be read). */
bool contract_is_broken(const json_t *c, int mode);

/* {"planned": {...}, "got": {...}, "warnings": ["...", ...]}; the node's
 * HCA names are t's NICs' OpenFabrics names.  A new reference. */
json_t *contract_check(const struct node_topo *t, const struct contract_plan *plan,
		       const struct contract_got *got);

/* Appends to warnings one line for each entry of an NCCL-style list
 * (NCCL_IB_HCA, NCCL_SOCKET_IFNAME; UCX_NET_DEVICES with nccl_syntax
 * false: exact names, "all") that names none of the n names, which are
 * the node's devices of kind what ("network interface").  Doctor uses
 * it too. */
void contract_check_names(const char *var, const char *value, const char *what,
			  const char *const *names, size_t n, bool nccl_syntax, json_t *warnings);

#endif
