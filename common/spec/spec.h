/* spec.h - the job spec (schema version 1): struct job and its pipeline.
 *
 *   text --ynode_parse--> tree --template (params, ${p}, --set)--> tree
 *        --spec_load's walk (schema: types, ranges, defaults)--> struct job
 *        --spec_emit_resolved--> canonical YAML --SHA-256--> identity
 *
 * Every field is described once, in the schema table of spec_schema.c;
 * validation, defaults, the canonical form, `validate --fields` and the
 * man page check all read it.  Core: no I/O; callers hand in the text.
 *
 * Invariants of a struct job filled by spec_load(): every field holds a
 * valid, in-range value (defaults filled in); strings are NUL-free UTF-8
 * and owned by the struct; optional strings are NULL when unset;
 * resources.cpus_per_rank == 0 means "auto", resources.memory_mb == 0
 * means "Slurm's default"; command.n == 0 means "run the bundled trainer".
 */
#ifndef HPT_SPEC_H
#define HPT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag_list;
struct sbuf;
struct ynode;

#define SPEC_VERSION 1

enum bind_gpu { BIND_GPU_AUTO, BIND_GPU_NONE };
enum bind_cpu { BIND_CPU_EXCLUSIVE, BIND_CPU_NODE, BIND_CPU_CORE_COMPLEX, BIND_CPU_NONE };
enum bind_mem { BIND_MEM_LOCAL, BIND_MEM_PREFERRED, BIND_MEM_NONE };
enum bind_nic { BIND_NIC_RAIL, BIND_NIC_SINGLE, BIND_NIC_NONE };
/* What launch does when a rank did not get what was planned. */
enum bind_contract { BIND_CONTRACT_WARN, BIND_CONTRACT_FAIL };
enum model_kind { MODEL_MLP, MODEL_CNN, MODEL_HEPCNN, MODEL_RESNET_SMALL };
enum train_precision { PRECISION_FP32, PRECISION_BF16, PRECISION_FP16 };
enum train_batchnorm { BATCHNORM_LOCAL, BATCHNORM_SYNC };
enum train_device { DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA };
enum optimizer_kind { OPTIMIZER_SGD, OPTIMIZER_ADAMW };
enum lr_schedule { SCHEDULE_CONSTANT, SCHEDULE_COSINE, SCHEDULE_STEP };
enum lr_scaling { LR_SCALING_NONE, LR_SCALING_LINEAR };
enum grad_compress { COMPRESS_NONE, COMPRESS_FP16, COMPRESS_BF16 };
enum preempt_signal { PREEMPT_USR2, PREEMPT_TERM, PREEMPT_INT };
/* preempt.signal's number (SIGUSR2, ...): the one map from the spec's
 * names, for the batch script's --signal and launch's supervisor. */
int spec_preempt_signum(enum preempt_signal s);
enum preempt_after { PREEMPT_AFTER_REQUEUE, PREEMPT_AFTER_FAIL };
/* auto is first, then the order `auto` tries them in (launcher/container). */
enum container_runtime { CONTAINER_AUTO, CONTAINER_CHARLIECLOUD, CONTAINER_APPTAINER,
			 CONTAINER_ENROOT, CONTAINER_PODMAN, CONTAINER_NRUNTIMES };
enum container_gpus { CONTAINER_GPUS_AUTO, CONTAINER_GPUS_TRUE, CONTAINER_GPUS_FALSE };

/* The entry name container.stage gives the image in data.stage. */
#define SPEC_STAGE_IMAGE "image"
/* The entry name submit gives the code snapshot in data.stage when the
 * code is on and data.stage stages something (launcher/job/code_stage.h). */
#define SPEC_STAGE_CODE "code"
/* The most data.stage entries a spec, or a resolved form, may list. */
#define SPEC_MAX_STAGE 64
/* The train.dataset prefix naming a data.stage entry: "stage:NAME". */
#define SPEC_STAGE_PREFIX "stage:"

/* The string each enum value is spelled as in a spec. */
extern const char *const bind_gpu_names[], *const bind_cpu_names[], *const bind_mem_names[],
	*const bind_nic_names[], *const bind_contract_names[], *const train_model_names[], *const train_precision_names[],
	*const train_batchnorm_names[], *const train_device_names[], *const opt_name_names[],
	*const lr_schedule_names[], *const lr_scaling_names[], *const grad_compress_names[],
	*const preempt_signal_names[], *const preempt_after_names[],
	*const preflight_mode_names[], *const container_runtime_names[],
	*const container_gpus_names[], *const code_mode_names[], *const straggler_action_names[];

struct job_env_var {
	char *name;
	char *value;
};

/* Sorted by name, names unique. */
struct job_env {
	struct job_env_var *v;
	size_t n;
};

struct job_argv {
	char **v;
	size_t n;
};

/* Site software without a container: loaded by the batch script before
 * its first step, so every step (preflight and ranks) runs inside it. */
struct job_environment {
	struct job_argv modules; /* module names in load order; n == 0: none */
	char *venv;              /* absolute virtualenv path; NULL: none */
	/* "sha256:HEX" of venv's installed packages (launcher/job/venv_list.h),
	 * pinned by validate and submit; NULL: not pinned (no venv) */
	char *venv_digest;
};

struct job_resources {
	int64_t nodes;         /* the most nodes (--nodes=N, or MAX of MIN-MAX) */
	int64_t nodes_min;     /* the fewest: == nodes unless a range was asked for */
	int64_t spares;        /* nodes asked for beyond nodes, to train on when one is
				* lost (preflight and stage run on them, then they wait) */
	int64_t ranks_per_node;
	int64_t gpus_per_node;
	int64_t cpus_per_rank; /* 0 = auto */
	int64_t time_s;        /* Slurm time limit in seconds */
	int64_t memory_mb;     /* per node; 0 = Slurm's default */
	char *partition, *account, *qos, *constraint;
	bool exclusive;
};

struct job_binding {
	int gpu, cpu, memory, nic; /* enum bind_* */
	bool socket_ifname;
	int contract;              /* enum bind_contract */
};

struct job_optimizer {
	int name; /* enum optimizer_kind */
	double lr, momentum, weight_decay, beta1, beta2, eps;
	bool nesterov;
	int schedule; /* enum lr_schedule */
	double warmup_epochs;
	int64_t step_epochs;
	double step_gamma;
	int lr_scaling; /* enum lr_scaling */
};

struct job_allreduce {
	double bucket_mb;
	bool overlap, delayed;
	int compress; /* enum grad_compress */
	int64_t stall_timeout_s;
};

struct job_checkpoint {
	int64_t every_steps; /* 0 = only on preemption and at the end */
	int64_t keep;
};

struct job_train {
	int model; /* enum model_kind */
	char *dataset;
	char *data_dir; /* NULL = the dataset's default location */
	int64_t epochs, max_steps, batch_per_rank, seed;
	int precision, batchnorm; /* enum train_precision, train_batchnorm */
	int device; /* enum train_device */
	struct job_optimizer optimizer;
	struct job_allreduce allreduce;
	struct job_checkpoint checkpoint;
};

struct job_preempt {
	int signal; /* enum preempt_signal */
	int64_t lead_s;
	bool requeue;
	int64_t max_requeues;
	int after_signal; /* enum preempt_after: a program's exit other than 75 after the signal */
};

/* launch --supervise: the parent that runs each rank's program. */
struct job_supervise {
	bool enabled;            /* rendered scripts run launch --supervise */
	int64_t stall_timeout_s; /* 0 = never declare the job stalled */
	int64_t startup_timeout_s; /* 0 = no bound on reaching the first step */
	int64_t max_restarts;    /* a program's failures restarted in place a job; 0 = none */
};

/* Slow ranks named (common/straggler.h, trainer/comm/straggle.c). */
enum straggler_action { STRAGGLER_WARN, STRAGGLER_EXCLUDE };
struct job_straggler {
	double threshold; /* > 1: slow above threshold x the ranks' median */
	int64_t steps;    /* slow this many steps in a row before named */
	int action;       /* enum straggler_action */
};

/* Preflight: hpctrain doctor on every node before the job's step. */
enum preflight_mode { PREFLIGHT_AUTO, PREFLIGHT_ON, PREFLIGHT_OFF };
struct job_preflight {
	int enabled;             /* enum preflight_mode; auto: on when nodes > 1 */
	int64_t max_resubmits;   /* new attempts without failed nodes, at most */
	char *scratch;           /* node-local scratch to check; NULL: $TMPDIR, else /tmp */
	double min_free_gb;      /* less free space fails the files check */
	double straggler;        /* a one-core GEMM below this fraction of the
				  * fastest node's fails the node; 0 only warns */
};

/* The container each rank's program runs in; image NULL: none.  digest
 * is the image's content ("sha256:HEX", or "unpinned" for a reference
 * without one), filled in by validate and submit so that the run's hash
 * names the image's content, not its path. */
struct job_container {
	char *image;          /* an absolute path, or a reference for a runtime that pulls */
	int runtime;          /* enum container_runtime */
	struct job_argv mounts; /* "SRC" or "SRC:DST", absolute paths; n == 0: none */
	char *workdir;        /* NULL: the caller's working directory */
	int gpus;             /* enum container_gpus */
	bool writable;
	char *digest;
	bool stage;           /* copy the image to node-local storage (data.stage "image") */
};

/* One data.stage entry: a file or directory on the shared file system
 * that the job's stage step copies once to each node's cache.  The
 * pinned fields are filled in by validate and submit (launcher/job/data_pin.c)
 * from the source's manifest, so that the run's hash names the data's
 * content; a resolved form holds all three or none. */
struct job_stage {
	char *name;     /* [a-z0-9_-]+, unique; HPCTRAIN_DATA_<NAME> at launch */
	char *src;      /* absolute path on the shared file system */
	char *manifest; /* "sha256:<hex>" of the manifest; NULL before pinning */
	uint64_t bytes; /* pinned with the manifest */
	bool is_file;   /* pinned with the manifest */
	char *packed;   /* the SquashFS file a directory image was packed into
			 * (container.stage), which is what is staged; NULL
			 * for every other entry.  Pinned with the manifest. */
};

/* Data staged to node-local storage before the training step.  With
 * container.stage, spec_load appends the image as the entry "image";
 * with the code on, submit appends its snapshot as the entry "code"
 * (launcher/job/code_stage.h). */
struct job_data {
	struct job_stage *stage; /* in the spec's order */
	size_t nstage;
	char *to;                /* "auto" or an absolute path */
	char *cache_dir;         /* data.cache.dir; NULL: the default under `to` */
	double cache_max_gb;     /* 0: no limit */
};

/* The program's code, snapshotted at submit (launcher/job/code_pin.c)
 * and run from the snapshot, so that the run's hash names the code.
 * Off for the bundled trainer unless enabled is true; on for a
 * command unless it is false (spec_code_is_on).  dir and digest are
 * pinned: dir the absolute directory snapshotted (filled in when the
 * spec leaves it null), digest "sha256:<hex>" of its listing; a
 * resolved form holds both or neither. */
enum code_mode { CODE_AUTO, CODE_ON, CODE_OFF };
#define SPEC_CODE_MAX_BYTES (INT64_C(1) << 30) /* code.max_bytes's default */
#define SPEC_CODE_MAX_FILES INT64_C(100000)    /* code.max_files's default */
struct job_code {
	int enabled;              /* enum code_mode */
	char *dir;                /* absolute; NULL: the program's git work tree, else here */
	struct job_argv include;  /* globs: only what matches one (n == 0: everything) */
	struct job_argv exclude;  /* globs: left out, as .gitignore lines */
	int64_t max_bytes, max_files;
	char *digest;             /* NULL before pinning */
};

struct job_output {
	char *dir;
	int64_t log_every_steps;
	bool per_rank_logs;
};

struct job {
	int64_t version;
	char *name;
	struct job_resources resources;
	struct job_binding binding;
	struct job_env env;
	struct job_environment environment;
	struct job_train train;
	struct job_argv command;
	struct job_code code;
	struct job_preempt preempt;
	struct job_supervise supervise;
	struct job_straggler straggler;
	struct job_preflight preflight;
	struct job_container container;
	struct job_data data;
	struct job_output output;
};

/* One --set KEY=VALUE override: arg is "KEY=VALUE" as typed; where names
 * it in diagnostics ("--set KEY=VALUE"); NULL means arg itself.  A sweep
 * point's override also carries its value as parsed from the file (value,
 * a scalar) and the key it is listed under (key_at), so that a problem
 * with it is reported at FILE:LINE:COL; then only arg's KEY is read.
 * All must outlive spec_load(). */
struct spec_override {
	const char *arg;
	const char *where;
	const struct ynode *value, *key_at;
};

/* Parses, resolves (template params, ${param}, overrides) and validates
 * one spec.  A top-level `sweep:` section is set aside (common/spec/sweep.h
 * reads it): each point of a sweep is this spec with overrides.  `where` names the input in diagnostics.  Returns 0 and fills
 * *job, or returns -1 after appending every problem found to dl (warnings
 * may be appended on success too).  *job is always safe to release. */
int spec_load(const char *where, const char *text, size_t len,
	      const struct spec_override *sets, size_t nsets,
	      struct job *job, struct diag_list *dl);

void job_release(struct job *job);

/* The canonical resolved form: schema order, defaults filled in, values
 * normalised (times, sizes, numbers), so equal jobs give equal bytes. */
int spec_emit_resolved(const struct job *job, struct sbuf *out);

/* Lowercase hex SHA-256 of text; out must hold 65 bytes. */
void spec_hash(const char *text, size_t len, char out[65]);

/* The variable that names data.stage entry NAME's path on a node, for
 * launch to set and any program (the bundled trainer's stage:NAME) to
 * read: "HPCTRAIN_DATA_" + NAME upper-cased, every byte not [A-Z0-9] as
 * '_'.  Malloc'd (spec_stage.c). */
char *spec_stage_env_name(const char *name);
/* The data.stage entry called name, or NULL (spec_stage.c). */
const struct job_stage *spec_stage_find(const struct job_data *d, const char *name);
/* The entry name a train.dataset of the form stage:NAME gives, pointing
 * into dataset; NULL for any other dataset. */
const char *spec_stage_dataset(const char *dataset);
/* What the stage step reads for the entry: its packed image, else src. */
const char *spec_stage_source(const struct job_stage *e);

/* Whether the job snapshots its code: code.enabled true, or auto with
 * a command (spec_code.c). */
bool spec_code_is_on(const struct job *job);
/* Whether e is the entry submit adds for job's code snapshot: named
 * SPEC_STAGE_CODE, with the code on and pinned (code.digest), and its
 * source the snapshot of that digest, ".../.code/<hex>" (spec_code.c). */
bool spec_code_is_stage_entry(const struct job *job, const struct job_stage *e);
/* Whether job->code holds nothing but its defaults (then the resolved
 * form leaves the section out, so a spec that never heard of code:
 * keeps its hash). */
bool spec_code_is_default(const struct job *job);
/* Whether environment.venv_digest is unset, so the resolved form leaves
 * it out and a spec without a venv keeps the hash it had (spec_code.c). */
bool spec_venv_digest_is_unset(const struct job *job);

/* The field table, for `validate --fields` and documentation checks. */
struct spec_field;
size_t spec_field_count(void);
const struct spec_field *spec_field_at(size_t i);
/* Writes "path<TAB>type<TAB>default<TAB>help" lines. */
void spec_describe_fields(struct sbuf *out);

#endif
