/* doctor.h - hpctrain doctor: is this allocation fit to train on?
 *
 * Each node runs the same checks and grades each one ok, warn or fail
 * with one line of reason; the nodes' results then meet on one rank,
 * where the comparisons that need every node (GEMM speed against the
 * fastest node, the ring's slowest link, clock offsets) are graded and
 * the table, the JSON and the exclude list are made.
 *
 * Core (doctor_grade.c, pure): grading, cross-node comparison, the
 * table and the JSON.  Node checks (doctor_check.c) read sysfs and /proc
 * below an injectable root, so unit tests feed recorded trees.  The
 * measurements (doctor_probe.h: MPI, oneDNN and munge) are run on each
 * node by doctor_self.h and across nodes by doctor_exchange.h, which
 * only bin/hpctrain-doctor links; the command (cli/cmd_doctor.c) parses,
 * calls them, prints.
 */
#ifndef HPT_DOCTOR_H
#define HPT_DOCTOR_H

#include "topology/bitmap.h" // defines: struct bitmap

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

enum doctor_grade { DOCTOR_SKIP, DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

enum doctor_check {
	DOCTOR_GPUS, DOCTOR_NICS, DOCTOR_BINDING, DOCTOR_COMPUTE, DOCTOR_NETWORK, DOCTOR_FILES,
	DOCTOR_SERVICES, DOCTOR_CONTAINER, DOCTOR_NCHECKS
};

/* One cell of the table.  reason says why in one line ("mlx5_0 port 1
 * is DOWN"); every problem found is kept, joined with "; ". */
struct doctor_cell {
	enum doctor_grade grade;
	char *reason;
};

/* What one node found and measured.  Numbers are < 0 when not measured. */
struct doctor_node {
	char *node;                               /* Slurm node name (or hostname) */
	struct doctor_cell cell[DOCTOR_NCHECKS];
	double gemm_gflops;                       /* one core, fp32 */
	double ring_gbps;                         /* this node to the next in the ring */
	double clock_offset_s;                    /* against the first node */
	double checks_s;                          /* its own checks' time, before the ring */
};

/* Thresholds, from the command line; DOCTOR_LIMITS_INIT has the defaults. */
struct doctor_limits {
	double straggler_warn, straggler_fail; /* GEMM speed / fastest node's */
	double link_warn, link_fail;           /* ring link speed / fastest link's */
	double skew_warn_s, skew_fail_s;       /* |clock offset| */
	double min_free_gb;                    /* less free space fails */
};

#define DOCTOR_LIMITS_INIT { 0.8, 0.5, 0.5, 0.1, 0.1, 2.0, 1.0 }

/* Sets the GEMM ratio below which a node fails (--straggler,
 * preflight.straggler); one below it still warns from 0.8 up. */
void doctor_limits_straggler(struct doctor_limits *lim, double fail);

const char *doctor_check_name(enum doctor_check c);   /* "gpus", "nics", ... */
const char *doctor_grade_name(enum doctor_grade g);   /* "skip", "ok", "warn", "FAIL" */

void doctor_node_init(struct doctor_node *n, const char *name);
void doctor_node_release(struct doctor_node *n);

/* Raises a cell to grade g (never lowers it) and adds the reason. */
void doctor_note(struct doctor_cell *c, enum doctor_grade g, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- node checks (doctor_check.c): root "" or "/" is this machine --- */

/* NICs: every OpenFabrics device in hcas must be in ROOT/sys/class/
 * infiniband with its ports ACTIVE (a down port of a planned HCA, or of
 * one NCCL_IB_HCA picks, fails; of another, warns); every interface in ifnames must be in ROOT/proc/
 * net/dev (the caller's network namespace) and not "down" in ROOT/sys/
 * class/net/IF/operstate.  Then the NCCL/UCX variables (NULL when unset)
 * may name only devices the node has: NCCL_IB_HCA and NCCL_SOCKET_IFNAME
 * in NCCL's syntax (^ excludes, = exact, else a prefix; :port suffixes). */
struct doctor_nic_input {
	const char *const *hcas;   /* planned OpenFabrics devices */
	size_t n_hcas;
	const char *const *ifnames; /* planned network interfaces */
	size_t n_ifnames;
	const char *nccl_ib_hca, *nccl_socket_ifname, *ucx_net_devices;
};
void doctor_check_nics(const char *root, const struct doctor_nic_input *in, struct doctor_cell *out);

/* GPUs: Slurm's grant (SLURM_JOB_GPUS / SLURM_STEP_GPUS, device minor
 * numbers; NULL when none) against the node: each granted GPU's
 * ROOT/dev/nvidiaN must exist and open (a cgroup that hides it refuses
 * the open), and the NVIDIA driver (ROOT/proc/driver/nvidia/gpus) must
 * list at least as many GPUs.  Without a driver the check is skipped,
 * with the reason.  topo_gpus: GPUs hwloc sees on the PCI bus. */
void doctor_check_gpus(const char *root, const char *granted, size_t topo_gpus,
		       struct doctor_cell *out);

/* Files: free space and a test write in dir (what is "the run's output
 * directory" or "scratch"), graded against min_free_gb. */
void doctor_check_space(const char *what, const char *dir, double min_free_gb,
			struct doctor_cell *out);

/* Pure: grades free bytes of total against min_free_gb (fail below it,
 * warn below 5% of the file system or twice min_free_gb). */
enum doctor_grade doctor_grade_space(uint64_t free_bytes, uint64_t total_bytes, double min_free_gb);

/* Pure: the node-local cache's room for the job's data.stage.  needed:
 * the bytes of the entries this node's cache does not hold yet; free:
 * what its file system has for us (f_bavail).  Fails "needs N GB for
 * data.stage, M GB free in DIR" when needed exceeds free (GB: 10^9
 * bytes, as data.cache.max_gb counts them), else notes ok "data.stage
 * needs N GB of the M GB free in DIR" ("...: all cached in DIR" when
 * needed is 0).  Staging would otherwise fail half way through the
 * copy, after the shared file system was read for every node. */
void doctor_grade_stage_space(uint64_t needed, uint64_t free_bytes, const char *dir,
			      struct doctor_cell *out);

/* Binding, one slot: what the plan wanted against what the kernel took
 * when a thread bound itself so (got_* false when it could not read it
 * back).  Pure. */
struct doctor_slot {
	unsigned local_rank;
	const struct bitmap *want_cpus, *want_mems; /* want_mems NULL: memory not bound */
	const struct bitmap *got_cpus, *got_mems;
	const char *bind_error;                     /* the call that refused, or NULL */
};
void doctor_grade_slot(const struct doctor_slot *s, struct doctor_cell *out);

/* --- across nodes (doctor_grade.c, pure) --- */

/* Grades compute, network and the clock of every node against the
 * others (fastest GEMM, fastest link, the first node's clock). */
void doctor_compare(struct doctor_node *nodes, size_t n, const struct doctor_limits *lim);

/* True when any cell of the node is FAIL. */
bool doctor_node_failed(const struct doctor_node *n);

/* The table: one row per node, one column per check, then one line per
 * warning or failure ("node2  nics  FAIL  NCCL_SOCKET_IFNAME=ib0 names
 * ..."); verbose adds the reasons of ok and skipped cells. */
void doctor_table(const struct doctor_node *nodes, size_t n, bool verbose, struct sbuf *out);

/* {"nodes": [{"node":..., "checks": {"gpus": {"grade":..., "reason":...}},
 *  "gemm_gflops":..., ...}], "failed": [...], "exclude": "node[2-3]"}.
 * exclude is the caller's hostlist form of the failed nodes (or "").
 * A new reference. */
json_t *doctor_json(const struct doctor_node *nodes, size_t n, const char *exclude);

/* One node to and from JSON, for the exchange between ranks. */
json_t *doctor_node_json(const struct doctor_node *n);
int doctor_node_from_json(const json_t *j, struct doctor_node *out);

#endif
