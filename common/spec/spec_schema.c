/* spec_schema.c - every key of job spec version 1: type, range, default, help.
 * Core: data and string checks only.  man/hpctrain-job.5 documents this
 * table; tests/cli/docs.bats fails when the two disagree. */
#include "common/spec/spec.h"        // defines: struct job, enum names
#include "common/spec/spec_schema.h" // defines: struct spec_field
#include "common/spec/spec_scalar.h" // defines: spec_format_num, spec_check_path, spec_check_abs_path
#include "common/sbuf.h"        // defines: struct sbuf

#include <ctype.h>
#include <stddef.h>
#include <string.h>

const char *const bind_gpu_names[] = { "auto", "none", NULL };
const char *const bind_cpu_names[] = { "exclusive", "node", "core-complex", "none", NULL };
const char *const bind_mem_names[] = { "local", "preferred", "none", NULL };
const char *const bind_nic_names[] = { "rail", "single", "none", NULL };
const char *const bind_contract_names[] = { "warn", "fail", NULL };
const char *const train_model_names[] = { "mlp", "cnn", "hepcnn", "resnet-small", NULL };
const char *const train_precision_names[] = { "fp32", "bf16", "fp16", NULL };
const char *const train_batchnorm_names[] = { "local", "sync", NULL };
const char *const train_device_names[] = { "auto", "cpu", "cuda", NULL };
const char *const opt_name_names[] = { "sgd", "adamw", NULL };
const char *const lr_schedule_names[] = { "constant", "cosine", "step", NULL };
const char *const lr_scaling_names[] = { "none", "linear", NULL };
const char *const grad_compress_names[] = { "none", "fp16", "bf16", NULL };
const char *const preempt_signal_names[] = { "USR2", "TERM", "INT", NULL };
const char *const preempt_after_names[] = { "requeue", "fail", NULL };
const char *const preflight_mode_names[] = { "auto", "true", "false", NULL };
const char *const container_runtime_names[] = { "auto", "charliecloud", "apptainer", "enroot",
						"podman", NULL };
const char *const container_gpus_names[] = { "auto", "true", "false", NULL };
const char *const code_mode_names[] = { "auto", "true", "false", NULL };
const char *const straggler_action_names[] = { "warn", "exclude", NULL };

/* A job name becomes a Slurm job name and a directory under runs/, so it
 * must be both: no slash, no leading dot or dash, nothing a shell or
 * #SBATCH line could misread. */
static const char *check_job_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64)
		return "must be 1 to 64 characters";
	if (!isalnum((unsigned char)s[0]))
		return "must start with a letter or digit";
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return "may hold only letters, digits, '.', '_' and '-'";
	return NULL;
}

/* Partition, account and QOS names as Slurm accepts them. */
static const char *check_slurm_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64)
		return "must be 1 to 64 characters";
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return "may hold only letters, digits, '.', '_' and '-'";
	return NULL;
}

/* Slurm feature expressions: names joined by & | , * [ ] ( ) and counts. */
static const char *check_constraint(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 256)
		return "must be 1 to 256 characters";
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-&|,*[]()!:") != n)
		return "may hold only feature names and the operators & | , * [ ] ( ) ! :";
	return NULL;
}

/* A module name reaches `module load` as one quoted word.  It must not
 * start with '-' (an option to module) or '/' (a modulefile path, not a
 * name), and holds only what Lmod and Environment Modules names use. */
static const char *check_module(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 256)
		return "must be 1 to 256 characters";
	if (!isalnum((unsigned char)s[0]))
		return "must start with a letter or digit";
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/@:") != n)
		return "may hold only letters, digits and . _ + - / @ :";
	return NULL;
}

/* stage:NAME names a data.stage entry; spec.c checks that it exists. */
static const char *check_dataset(const char *s)
{
	const char *staged = spec_stage_dataset(s);

	if (!strcmp(s, "fashion-mnist") || !strcmp(s, "synthetic") || !strcmp(s, "hep-synthetic"))
		return NULL;
	if (staged)
		return spec_stage_check_name(staged) ? "must be stage: and a data.stage entry's "
						       "name (lowercase letters, digits, '_', '-')"
						     : NULL;
	if (!strchr(s, '/'))
		return "must be fashion-mnist, synthetic, hep-synthetic, stage:NAME, or a path "
		       "containing '/'";
	return spec_check_path(s);
}

/* Every image string becomes one argv element of a runtime, so it may
 * not start with '-' (an option to the runtime); a path is absolute so
 * that every node and every step reads the same file. */
static const char *check_image(const char *s)
{
	size_t n = strlen(s);

	if (s[0] == '/')
		return spec_check_path(s);
	if (!n || n > 1024)
		return "must be an absolute path or an image reference of 1 to 1024 bytes";
	if (!isalnum((unsigned char)s[0]))
		return "must be an absolute path or an image reference starting with a letter or digit";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
			return "must not hold spaces or control characters";
	return NULL;
}

/* SRC or SRC:DST, both absolute: runtimes split on ':' (and apptainer
 * on ','), so neither may appear inside a path. */
static const char *check_mount(const char *s)
{
	const char *colon = strchr(s, ':'), *bad = spec_check_path(s);

	if (bad)
		return bad;
	if (strchr(s, ','))
		return "must not hold ','";
	if (s[0] != '/' || (colon && colon[1] != '/'))
		return "must be SRC or SRC:DST with absolute paths";
	if (colon && strchr(colon + 1, ':'))
		return "must be SRC or SRC:DST with one ':'";
	return NULL;
}

static const char *check_stage_to(const char *s)
{
	if (!strcmp(s, "auto"))
		return NULL;
	if (spec_check_abs_path(s))
		return "must be auto or an absolute path";
	return spec_check_list_path(s, true, true); /* the cache under it is bound */
}

/* Paths pasted into lists (spec_check_list_path): the venv's bin goes
 * on PATH; the run's directory under output.dir on PYTHONPATH and, like
 * the data cache, into a container runtime's binds. */
static const char *check_venv(const char *s)
{
	return spec_check_list_path(s, true, false);
}

static const char *check_output_dir(const char *s)
{
	return spec_check_list_path(s, false, true);
}

static const char *check_cache_dir(const char *s)
{
	return spec_check_list_path(s, true, true);
}

static const char *check_digest(const char *s)
{
	if (!strcmp(s, "unpinned"))
		return NULL;
	if (strncmp(s, "sha256:", 7) || strlen(s) != 71 ||
	    strspn(s + 7, "0123456789abcdef") != 64)
		return "must be sha256: and 64 lowercase hex digits, or unpinned";
	return NULL;
}

/* No spares: the key is left out of the resolved form, so the runs
 * written before it existed keep their hash. */
static bool spares_is_default(const struct job *job)
{
	return !job->resources.spares;
}

/* The same for no restarts after a program's failure. */
static bool max_restarts_is_default(const struct job *job)
{
	return !job->supervise.max_restarts;
}

#define O(m) offsetof(struct job, m)
#define SECTION(p, h) { .path = p, .type = SPEC_SECTION, .help = h }
#define INT(p, m, lo, hi, d, h) \
	{ .path = p, .type = SPEC_INT, .off = O(m), .imin = lo, .imax = hi, .def = d, .help = h }
#define AUTO_INT(p, m, lo, hi, h) \
	{ .path = p, .type = SPEC_AUTO_INT, .off = O(m), .imin = lo, .imax = hi, .def = "auto", .help = h }
#define NUM(p, m, lo, hi, fl, d, h) \
	{ .path = p, .type = SPEC_NUM, .off = O(m), .dmin = lo, .dmax = hi, .flags = fl, .def = d, .help = h }
#define BOOL(p, m, d, h) { .path = p, .type = SPEC_BOOL, .off = O(m), .def = d, .help = h }
#define ENUM(p, m, v, d, h) { .path = p, .type = SPEC_ENUM, .off = O(m), .names = v, .def = d, .help = h }
#define STR(p, m, fl, chk, d, h) \
	{ .path = p, .type = SPEC_STR, .off = O(m), .flags = fl, .check = chk, .def = d, .help = h }

const struct spec_field spec_fields[] = {
	{ .path = "version", .type = SPEC_INT, .off = O(version), .imin = 1, .imax = 1,
	  .flags = F_REQUIRED, .help = "schema version of this file; must be 1" },
	STR("name", name, F_REQUIRED, check_job_name, NULL,
	    "job name: the Slurm job name and the run directory runs/NAME/"),

	SECTION("resources", "what to ask Slurm for"),
	{ .path = "resources.nodes", .type = SPEC_RANGE, .off = O(resources.nodes),
	  .off_min = O(resources.nodes_min), .imin = 1, .imax = 65536, .def = "1",
	  .help = "number of nodes (--nodes), or MIN-MAX: Slurm grants any size in the range" },
	{ .path = "resources.spares", .type = SPEC_INT, .off = O(resources.spares), .imin = 0,
	  .imax = 65536, .def = "0", .omit = spares_is_default,
	  .help = "nodes asked for beyond resources.nodes: preflight and stage run on them, "
		  "then they wait to replace a lost node inside the allocation" },
	INT("resources.ranks_per_node", resources.ranks_per_node, 1, 1024, "1",
	    "processes per node (--ntasks-per-node)"),
	INT("resources.gpus_per_node", resources.gpus_per_node, 0, 64, "0",
	    "GPUs per node (--gpus-per-node); 0 for a CPU-only job"),
	AUTO_INT("resources.cpus_per_rank", resources.cpus_per_rank, 1, 4096,
		 "cores per process (--cpus-per-task); auto lets the binding plan share the node"),
	{ .path = "resources.time", .type = SPEC_TIME, .off = O(resources.time_s), .def = "\"01:00:00\"",
	  .help = "time limit (--time): minutes, [H:]MM:SS, D-HH[:MM[:SS]]" },
	{ .path = "resources.memory", .type = SPEC_MEM, .off = O(resources.memory_mb), .def = "null",
	  .flags = F_NULLABLE, .help = "memory per node (--mem), e.g. 64G; null for Slurm's default" },
	STR("resources.partition", resources.partition, F_NULLABLE, check_slurm_name, "null",
	    "partition (--partition); null for the cluster's default"),
	STR("resources.account", resources.account, F_NULLABLE, check_slurm_name, "null",
	    "account to charge (--account)"),
	STR("resources.qos", resources.qos, F_NULLABLE, check_slurm_name, "null",
	    "quality of service (--qos)"),
	STR("resources.constraint", resources.constraint, F_NULLABLE, check_constraint, "null",
	    "node features (--constraint), e.g. a100&ib"),
	BOOL("resources.exclusive", resources.exclusive, "false",
	     "whole nodes only (--exclusive)"),

	SECTION("binding", "how each rank is pinned to GPUs, NICs, cores and memory"),
	ENUM("binding.gpu", binding.gpu, bind_gpu_names, "auto",
	     "auto: rank r of R gets GPU floor(r*G/R) in PCI bus order; none: no GPU binding"),
	ENUM("binding.cpu", binding.cpu, bind_cpu_names, "exclusive",
	     "exclusive: disjoint whole cores near the GPU; node: its whole NUMA node; "
	     "core-complex: whole L3 groups; none: no CPU binding"),
	ENUM("binding.memory", binding.memory, bind_mem_names, "local",
	     "local: bind memory to the rank's NUMA nodes; preferred: prefer them; none"),
	ENUM("binding.nic", binding.nic, bind_nic_names, "rail",
	     "rail: the NICs closest to the rank's GPU; single: the one nearest; none"),
	BOOL("binding.socket_ifname", binding.socket_ifname, "false",
	     "also set NCCL_SOCKET_IFNAME to the rank's nearest network interface"),
	ENUM("binding.contract", binding.contract, bind_contract_names, "warn",
	     "warn: a rank that did not get its plan says so; fail: it ends before its program, "
	     "or its program is ended"),

	{ .path = "env", .type = SPEC_ENV, .off = O(env), .def = "{}",
	  .help = "environment variables set for every rank, last (NAME: value)" },

	SECTION("environment", "site software loaded before the job's steps, without a container"),
	{ .path = "environment.modules", .type = SPEC_LIST, .off = O(environment.modules), .def = "[]",
	  .check = check_module,
	  .help = "environment modules to load, in order (module load NAME), e.g. [gcc/12.2]" },
	STR("environment.venv", environment.venv, F_NULLABLE, check_venv, "null",
	    "absolute path of a Python virtualenv whose bin/ goes first on PATH"),
	{ .path = "environment.venv_digest", .type = SPEC_STR, .off = O(environment.venv_digest),
	  .flags = F_NULLABLE, .check = spec_code_check_digest, .def = "null",
	  .omit = spec_venv_digest_is_unset,
	  .help = "the digest of the venv's installed packages, filled in by validate and submit" },

	SECTION("train", "the bundled trainer (ignored when command is set)"),
	ENUM("train.model", train.model, train_model_names, "cnn", "model to train"),
	STR("train.dataset", train.dataset, 0, check_dataset, "fashion-mnist",
	    "fashion-mnist, synthetic, hep-synthetic, or a path to a converted data set"),
	STR("train.data_dir", train.data_dir, F_NULLABLE, spec_check_path, "null",
	    "where the data set's files are; null for its default location"),
	INT("train.epochs", train.epochs, 1, 100000, "1", "passes over the training data"),
	INT("train.max_steps", train.max_steps, 0, INT64_C(1) << 40, "0",
	    "stop after this many steps; 0 for no limit"),
	INT("train.batch_per_rank", train.batch_per_rank, 1, 65536, "128",
	    "samples per rank per step; the global batch is ranks times this"),
	ENUM("train.precision", train.precision, train_precision_names, "fp32",
	     "arithmetic: fp32, or bf16/fp16 mixed precision with fp32 master weights"),
	ENUM("train.device", train.device, train_device_names, "auto",
	     "cuda: train on a GPU; cpu; auto: a GPU when one is visible and gpus_per_node > 0"),
	INT("train.seed", train.seed, 0, UINT32_MAX, "42", "seed for initialisation, shuffling and dropout"),
	ENUM("train.batchnorm", train.batchnorm, train_batchnorm_names, "local",
	     "batch-norm statistics per rank (local) or across ranks (sync)"),
	SECTION("train.optimizer", "optimizer and learning-rate schedule"),
	ENUM("train.optimizer.name", train.optimizer.name, opt_name_names, "sgd", "sgd or adamw"),
	NUM("train.optimizer.lr", train.optimizer.lr, 0, 100, F_MIN_EXCL, "0.05",
	    "peak learning rate (before lr_scaling)"),
	NUM("train.optimizer.momentum", train.optimizer.momentum, 0, 1, F_MAX_EXCL, "0.9",
	    "SGD momentum"),
	BOOL("train.optimizer.nesterov", train.optimizer.nesterov, "false", "Nesterov momentum for SGD"),
	NUM("train.optimizer.weight_decay", train.optimizer.weight_decay, 0, 1, 0, "0",
	    "weight decay (decoupled for adamw)"),
	NUM("train.optimizer.beta1", train.optimizer.beta1, 0, 1, F_MAX_EXCL, "0.9", "AdamW beta1"),
	NUM("train.optimizer.beta2", train.optimizer.beta2, 0, 1, F_MAX_EXCL, "0.999", "AdamW beta2"),
	NUM("train.optimizer.eps", train.optimizer.eps, 0, 1, F_MIN_EXCL, "1e-08", "AdamW epsilon"),
	ENUM("train.optimizer.schedule", train.optimizer.schedule, lr_schedule_names, "constant",
	     "learning rate after warm-up: constant, cosine decay to 0, or step decay"),
	NUM("train.optimizer.warmup_epochs", train.optimizer.warmup_epochs, 0, 1000, 0, "0",
	    "linear warm-up from 0 over this many epochs"),
	INT("train.optimizer.step_epochs", train.optimizer.step_epochs, 1, 100000, "30",
	    "step schedule: multiply the rate by step_gamma every this many epochs"),
	NUM("train.optimizer.step_gamma", train.optimizer.step_gamma, 0, 1, F_MIN_EXCL, "0.1",
	    "step schedule: decay factor"),
	ENUM("train.optimizer.lr_scaling", train.optimizer.lr_scaling, lr_scaling_names, "none",
	     "linear: multiply lr by the number of ranks (global batch / batch_per_rank)"),
	SECTION("train.allreduce", "gradient exchange between ranks"),
	NUM("train.allreduce.bucket_mb", train.allreduce.bucket_mb, 0, 4096, F_MIN_EXCL, "25",
	    "gradient bucket size in MiB"),
	BOOL("train.allreduce.overlap", train.allreduce.overlap, "true",
	     "start each bucket's allreduce while backward is still running"),
	BOOL("train.allreduce.delayed", train.allreduce.delayed, "false",
	     "apply step t-1's averaged gradients at step t, hiding all communication"),
	ENUM("train.allreduce.compress", train.allreduce.compress, grad_compress_names, "none",
	     "send gradients as fp16 or bf16, sum in fp32"),
	INT("train.allreduce.stall_timeout_s", train.allreduce.stall_timeout_s, 1, 86400, "300",
	    "abort the job when a collective makes no progress for this long"),
	SECTION("train.checkpoint", "checkpoints in the run directory"),
	INT("train.checkpoint.every_steps", train.checkpoint.every_steps, 0, INT64_C(1) << 40, "500",
	    "write a checkpoint every this many steps; 0 only at the end and on preemption"),
	INT("train.checkpoint.keep", train.checkpoint.keep, 1, 1000, "3", "checkpoints to keep"),

	{ .path = "command", .type = SPEC_ARGV, .off = O(command), .def = "null", .flags = F_NULLABLE,
	  .help = "run this program (a list of arguments) instead of the bundled trainer" },

	{ .path = "code", .type = SPEC_SECTION, .omit = spec_code_is_default,
	  .help = "the program's code, snapshotted at submit and run from the snapshot" },
	ENUM("code.enabled", code.enabled, code_mode_names, "auto",
	     "snapshot the code; auto: when command is set (code: false turns it off)"),
	STR("code.dir", code.dir, F_NULLABLE, spec_check_abs_path, "null",
	    "the directory to snapshot; null: the git work tree holding the program, else "
	    "the submit directory"),
	{ .path = "code.include", .type = SPEC_LIST, .off = O(code.include), .def = "[]",
	  .check = spec_code_check_glob,
	  .help = "globs: snapshot only the files that match one; [] for every file" },
	{ .path = "code.exclude", .type = SPEC_LIST, .off = O(code.exclude), .def = "[]",
	  .check = spec_code_check_glob,
	  .help = "globs left out, as lines of a .gitignore (also read: .gitignore, .hpctrainignore)" },
	INT("code.max_bytes", code.max_bytes, 1, INT64_C(1) << 50, "1073741824",
	    "refuse a snapshot of more bytes than this"),
	INT("code.max_files", code.max_files, 1, 100000000, "100000",
	    "refuse a snapshot of more files than this"),
	STR("code.digest", code.digest, F_NULLABLE, spec_code_check_digest, "null",
	    "the snapshot's content digest, filled in by validate and submit"),

	SECTION("preempt", "what happens when Slurm is about to end the job"),
	ENUM("preempt.signal", preempt.signal, preempt_signal_names, "USR2",
	     "signal Slurm sends lead_s seconds before the end (USR1 is taken by NCCL)"),
	INT("preempt.lead_s", preempt.lead_s, 0, 65535, "120",
	    "seconds of warning before the time limit (--signal=SIG@lead_s)"),
	BOOL("preempt.requeue", preempt.requeue, "true",
	     "requeue the job after a checkpointed preemption"),
	INT("preempt.max_requeues", preempt.max_requeues, 0, 1000, "3",
	    "give up after this many requeues"),
	ENUM("preempt.after_signal", preempt.after_signal, preempt_after_names, "requeue",
	     "a supervised program that exits other than 75 after the signal, or ignores it: "
	     "requeue or fail"),

	SECTION("supervise", "the supervisor that runs each rank's program (launch --supervise)"),
	BOOL("supervise.enabled", supervise.enabled, "true",
	     "run each rank under launch --supervise; false execs the program directly"),
	INT("supervise.stall_timeout_s", supervise.stall_timeout_s, 0, 604800, "0",
	    "end the job with stack traces when no rank makes progress for this long; 0 never"),
	INT("supervise.startup_timeout_s", supervise.startup_timeout_s, 0, 604800, "600",
	    "end the job when no rank reaches its first step (heartbeat; a command's output too) "
	    "within this long of its start; 0 never"),
	{ .path = "supervise.max_restarts", .type = SPEC_INT, .off = O(supervise.max_restarts),
	  .imin = 0, .imax = 1000, .def = "0", .omit = max_restarts_is_default, .help =
	  "after the program's own failure (a rank exited non-zero, crashed or was killed; no "
	    "node lost), start the training step again in its allocation from the last "
	    "checkpoint at most this many times a job; 0 ends the job with the program's status" },

	SECTION("straggler", "slow ranks named while the job trains"),
	NUM("straggler.threshold", straggler.threshold, 1, 100, F_MIN_EXCL, "1.2",
	    "a rank whose time per step stays above this many times the ranks' median is slow"),
	INT("straggler.steps", straggler.steps, 1, 1000000, "50",
	    "steps in a row a rank must be slow before it is named"),
	ENUM("straggler.action", straggler.action, straggler_action_names, "warn",
	     "warn names it; exclude also puts its node in the ledger so the next attempt "
	     "runs without it"),

	SECTION("preflight", "hpctrain doctor on every node before the job runs"),
	ENUM("preflight.enabled", preflight.enabled, preflight_mode_names, "auto",
	     "run doctor as the job's first step; auto: when nodes > 1"),
	INT("preflight.max_resubmits", preflight.max_resubmits, 0, 100, "2",
	    "resubmit without the failed nodes at most this many times"),
	STR("preflight.scratch", preflight.scratch, F_NULLABLE, spec_check_path, "null",
	    "node-local scratch whose free space doctor checks; null for $TMPDIR, else /tmp"),
	NUM("preflight.min_free_gb", preflight.min_free_gb, 0, 1e6, 0, "1",
	    "less free space (GB) in the run directory or scratch fails the node"),
	NUM("preflight.straggler", preflight.straggler, 0, 1, 0, "0.5",
	    "a node whose one-core GEMM runs below this fraction of the fastest node's "
	    "fails; 0 only warns (nodes whose cores others share)"),

	SECTION("container", "the container image each rank's program runs in"),
	STR("container.image", container.image, F_NULLABLE, check_image, "null",
	    "a directory, SquashFS or SIF file (absolute path), or an image reference; "
	    "null runs on the host"),
	ENUM("container.runtime", container.runtime, container_runtime_names, "auto",
	     "auto: the first installed of charliecloud, apptainer, enroot, podman"),
	{ .path = "container.mounts", .type = SPEC_LIST, .off = O(container.mounts), .def = "[]",
	  .check = check_mount,
	  .help = "more directories to mount inside (SRC or SRC:DST); the run directory and the "
		  "data directory always are, at the same path" },
	STR("container.workdir", container.workdir, F_NULLABLE, spec_check_abs_path, "null",
	    "working directory inside; null for the directory launch runs in"),
	ENUM("container.gpus", container.gpus, container_gpus_names, "auto",
	     "make the GPUs visible inside; auto: when resources.gpus_per_node > 0"),
	BOOL("container.writable", container.writable, "false",
	     "let the program write into the image"),
	STR("container.digest", container.digest, F_NULLABLE, check_digest, "null",
	    "the image's content digest, filled in by validate and submit"),
	BOOL("container.stage", container.stage, "false",
	     "copy the image to each node's cache first (data.stage entry \"image\") and run that copy"),

	SECTION("data", "data sets copied once per node to node-local storage before training"),
	{ .path = "data.stage", .type = SPEC_STAGE, .off = O(data), .def = "[]",
	  .help = "entries {name: NAME, src: /abs/path}, a file or directory each; "
		  "the program finds a copy at $HPCTRAIN_DATA_NAME" },
	STR("data.to", data.to, 0, check_stage_to, "auto",
	    "node-local directory holding the cache; auto: preflight.scratch, else $TMPDIR, "
	    "else /dev/shm"),
	SECTION("data.cache", "the node cache later jobs reuse"),
	STR("data.cache.dir", data.cache_dir, F_NULLABLE, check_cache_dir, "null",
	    "the cache directory itself; null: hpctrain-cache-UID under data.to"),
	NUM("data.cache.max_gb", data.cache_max_gb, 0, 1e6, F_MIN_EXCL | F_NULLABLE, "null",
	    "evict the least recently used entries above this size (GB); null: no limit"),

	SECTION("output", "where results go"),
	STR("output.dir", output.dir, 0, check_output_dir, "runs",
	    "directory holding runs/NAME/HASH/, relative to where you submit"),
	INT("output.log_every_steps", output.log_every_steps, 1, INT64_C(1) << 40, "50",
	    "write a metrics line every this many steps"),
	BOOL("output.per_rank_logs", output.per_rank_logs, "true",
	     "one log file per rank (logs/rank-N.out) instead of one for all"),
};

const size_t spec_nfields = sizeof(spec_fields) / sizeof(spec_fields[0]);

const struct spec_field *spec_field_find(const char *path)
{
	for (size_t i = 0; i < spec_nfields; i++)
		if (!strcmp(spec_fields[i].path, path))
			return &spec_fields[i];
	return NULL;
}

size_t spec_field_count(void)
{
	return spec_nfields;
}

const struct spec_field *spec_field_at(size_t i)
{
	return i < spec_nfields ? &spec_fields[i] : NULL;
}

static void describe_type(const struct spec_field *f, struct sbuf *out)
{
	switch (f->type) {
	case SPEC_SECTION:
		sbuf_addstr(out, "mapping");
		break;
	case SPEC_INT:
		sbuf_addf(out, "integer %lld..%lld", (long long)f->imin, (long long)f->imax);
		break;
	case SPEC_RANGE:
		sbuf_addf(out, "integer|range %lld..%lld", (long long)f->imin, (long long)f->imax);
		break;
	case SPEC_AUTO_INT:
		sbuf_addf(out, "auto|integer %lld..%lld", (long long)f->imin, (long long)f->imax);
		break;
	case SPEC_NUM:
		sbuf_addf(out, "number %c", f->flags & F_MIN_EXCL ? '(' : '[');
		spec_format_num(f->dmin, out);
		sbuf_addstr(out, ", ");
		spec_format_num(f->dmax, out);
		sbuf_addch(out, f->flags & F_MAX_EXCL ? ')' : ']');
		break;
	case SPEC_BOOL:
		sbuf_addstr(out, "boolean");
		break;
	case SPEC_ENUM:
		for (size_t i = 0; f->names[i]; i++)
			sbuf_addf(out, "%s%s", i ? "|" : "", f->names[i]);
		break;
	case SPEC_STR:
		sbuf_addstr(out, "string");
		break;
	case SPEC_TIME:
		sbuf_addstr(out, "time");
		break;
	case SPEC_MEM:
		sbuf_addstr(out, "size");
		break;
	case SPEC_ENV:
		sbuf_addstr(out, "mapping of strings");
		break;
	case SPEC_ARGV:
	case SPEC_LIST:
		sbuf_addstr(out, "list of strings");
		break;
	case SPEC_STAGE:
		sbuf_addstr(out, "list of mappings");
		break;
	}
	if (f->flags & F_NULLABLE)
		sbuf_addstr(out, "|null");
}

void spec_describe_fields(struct sbuf *out)
{
	for (size_t i = 0; i < spec_nfields; i++) {
		const struct spec_field *f = &spec_fields[i];

		sbuf_addf(out, "%s\t", f->path);
		describe_type(f, out);
		sbuf_addf(out, "\t%s\t%s\n",
			  f->flags & F_REQUIRED ? "(required)" : f->def ? f->def : "-", f->help);
	}
}
