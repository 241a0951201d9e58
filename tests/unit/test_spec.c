/* test_spec.c - the job spec core: types, ranges, defaults, errors, hashes.
 * One test per error kind and per field type; hostile inputs live in
 * test_ynode.c, templates and --set in test_template.c. */
#include "tests/unit/testlib.h"

#include "common/spec/spec_schema.h" // defines: spec_fields, spec_value_set
#include "common/spec/ynode.h"    // defines: ynode_parse

#include <stdlib.h>

static void check_error(const char *spec, const char *want)
{
	struct loaded l;

	load(&l, spec);
	assert_int_equal(l.rc, -1);
	assert_diag(&l, want);
	loaded_release(&l);
}

static void check_ok(const char *spec, struct loaded *l)
{
	load(l, spec);
	if (l->rc)
		fail_msg("unexpected errors:\n%s", l->text.buf);
}

static void resolved_hash(const char *spec, char hash[65], struct sbuf *resolved)
{
	struct loaded l;

	check_ok(spec, &l);
	assert_int_equal(spec_emit_resolved(&l.job, resolved), 0);
	spec_hash(resolved->buf, resolved->len, hash);
	loaded_release(&l);
}

static void spec__reports_a_string_for_gpus_per_node_with_line_and_column(void **state)
{
	(void)state;
	check_error("version: 1\nname: t\n\n# resources follow\n\nresources:\n"
		    "  gpus_per_node: four\n",
		    "job.yaml:7:18: resources.gpus_per_node: expected an integer 0..64, got \"four\"");
}

static void spec__rejects_integers_out_of_range_and_overflowing(void **state)
{
	(void)state;
	check_error(MINIMAL "resources: {gpus_per_node: 65}\n",
		    "job.yaml:3:28: resources.gpus_per_node: expected an integer 0..64, got \"65\"");
	check_error(MINIMAL "resources: {nodes: -1}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range "
		    "MIN-MAX of them, got \"-1\"");
	check_error(MINIMAL "resources: {nodes: 99999999999999999999999}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range "
		    "MIN-MAX of them, got "
		    "\"99999999999999999999999\" (integer overflow)");
	check_error(MINIMAL "train: {seed: 4.5}\n",
		    "job.yaml:3:15: train.seed: expected an integer 0..4294967295, got \"4.5\"");
}

static void spec__reads_nodes_as_a_number_or_a_range(void **state)
{
	struct sbuf resolved = SBUF_INIT;
	struct loaded l;
	char hash[65];

	(void)state;
	check_ok(MINIMAL "resources: {nodes: 3}\n", &l);
	assert_int_equal(l.job.resources.nodes, 3);
	assert_int_equal(l.job.resources.nodes_min, 3);
	loaded_release(&l);
	check_ok(MINIMAL "resources: {nodes: 2-8}\n", &l);
	assert_int_equal(l.job.resources.nodes_min, 2);
	assert_int_equal(l.job.resources.nodes, 8);
	loaded_release(&l);
	check_ok(MINIMAL "resources: {nodes: 4-4}\n", &l);
	assert_int_equal(l.job.resources.nodes_min, 4);
	assert_int_equal(l.job.resources.nodes, 4);
	loaded_release(&l);
	/* the canonical form keeps the range; a plain number stays one */
	resolved_hash(MINIMAL "resources: {nodes: 1-2}\n", hash, &resolved);
	assert_non_null(strstr(resolved.buf, "  nodes: 1-2\n"));
	sbuf_reset(&resolved);
	resolved_hash(MINIMAL "resources: {nodes: 2}\n", hash, &resolved);
	assert_non_null(strstr(resolved.buf, "  nodes: 2\n"));
	sbuf_release(&resolved);
}

/* resources.spares: written only when set, so the hash of every spec
 * without it stays as it was; at most one spare a training node. */
static void spec__keeps_spares_out_of_the_hash_unless_set_and_bounds_them(void **state)
{
	struct sbuf with = SBUF_INIT, without = SBUF_INIT, zero = SBUF_INIT;
	char h1[65], h2[65], h3[65];

	(void)state;
	resolved_hash(MINIMAL "resources: {nodes: 2, spares: 1}\n", h1, &with);
	resolved_hash(MINIMAL "resources: {nodes: 2}\n", h2, &without);
	resolved_hash(MINIMAL "resources: {nodes: 2, spares: 0}\n", h3, &zero);
	assert_non_null(strstr(with.buf, "  spares: 1\n"));
	assert_null(strstr(without.buf, "spares"));
	assert_string_equal(h2, h3);
	assert_string_not_equal(h1, h2);
	check_error(MINIMAL "resources: {nodes: 1-2, spares: 3}\n",
		    "job.yaml:1:1: resources.spares: 3 spares for at most 2 training nodes: at most "
		    "one spare a node");
	check_error(MINIMAL "resources: {spares: -1}\n",
		    "job.yaml:3:21: resources.spares: expected an integer 0..65536, got \"-1\"");
	sbuf_release(&with);
	sbuf_release(&without);
	sbuf_release(&zero);
}

/* No restarts after a program's failure: the key is left out, and a
 * run written before it keeps its hash. */
static void spec__keeps_max_restarts_out_of_the_hash_unless_set_and_bounds_it(void **state)
{
	struct sbuf with = SBUF_INIT, without = SBUF_INIT, zero = SBUF_INIT;
	char h1[65], h2[65], h3[65];

	(void)state;
	resolved_hash(MINIMAL "supervise: {max_restarts: 2}\n", h1, &with);
	resolved_hash(MINIMAL, h2, &without);
	resolved_hash(MINIMAL "supervise: {max_restarts: 0}\n", h3, &zero);
	assert_non_null(strstr(with.buf, "  max_restarts: 2\n"));
	assert_null(strstr(without.buf, "max_restarts"));
	assert_string_equal(h2, h3);
	assert_string_not_equal(h1, h2);
	check_error(MINIMAL "supervise: {max_restarts: 1001}\n",
		    "job.yaml:3:27: supervise.max_restarts: expected an integer 0..1000, got \"1001\"");
	sbuf_release(&with);
	sbuf_release(&without);
	sbuf_release(&zero);
}

static void spec__rejects_node_ranges_out_of_order_or_range(void **state)
{
	(void)state;
	check_error(MINIMAL "resources: {nodes: 3-2}\n",
		    "job.yaml:3:20: resources.nodes: expected a range MIN-MAX with MIN <= MAX, "
		    "got \"3-2\"");
	check_error(MINIMAL "resources: {nodes: 0-2}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range "
		    "MIN-MAX of them, got \"0-2\"");
	check_error(MINIMAL "resources: {nodes: 1-70000}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range "
		    "MIN-MAX of them, got \"1-70000\"");
	check_error(MINIMAL "resources: {nodes: 1-}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range "
		    "MIN-MAX of them, got \"1-\"");
	check_error(MINIMAL "resources: {nodes: 1--2}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range "
		    "MIN-MAX of them, got \"1--2\"");
}

static void spec__treats_a_quoted_number_as_a_string(void **state)
{
	(void)state;
	check_error(MINIMAL "resources: {nodes: \"4\"}\n",
		    "job.yaml:3:20: resources.nodes: expected an integer 1..65536 or a range MIN-MAX of "
		    "them, got the string \"4\"");
}

static void spec__accepts_auto_or_an_integer_for_cpus_per_rank(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "resources: {cpus_per_rank: auto}\n", &l);
	assert_int_equal(l.job.resources.cpus_per_rank, 0);
	loaded_release(&l);
	check_ok(MINIMAL "resources: {cpus_per_rank: 8}\n", &l);
	assert_int_equal(l.job.resources.cpus_per_rank, 8);
	loaded_release(&l);
	check_error(MINIMAL "resources: {cpus_per_rank: many}\n",
		    "job.yaml:3:28: resources.cpus_per_rank: expected auto or an integer 1..4096, got \"many\"");
}

static void spec__checks_numbers_with_open_and_closed_ends(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "train: {optimizer: {lr: 0.1, momentum: 0, eps: 1e-6}}\n", &l);
	assert_true(l.job.train.optimizer.lr == 0.1);
	assert_true(l.job.train.optimizer.momentum == 0);
	assert_true(l.job.train.optimizer.eps == 1e-6);
	loaded_release(&l);
	check_error(MINIMAL "train: {optimizer: {lr: 0}}\n",
		    "job.yaml:3:25: train.optimizer.lr: expected a number in (0, 100], got \"0\"");
	check_error(MINIMAL "train: {optimizer: {momentum: 1}}\n",
		    "job.yaml:3:31: train.optimizer.momentum: expected a number in [0, 1), got \"1\"");
	check_error(MINIMAL "train: {optimizer: {lr: .inf}}\n",
		    "job.yaml:3:25: train.optimizer.lr: expected a number in (0, 100], got \".inf\"");
	check_error(MINIMAL "train: {optimizer: {lr: 0x1p3}}\n",
		    "job.yaml:3:25: train.optimizer.lr: expected a number in (0, 100], got \"0x1p3\"");
}

static void spec__accepts_only_true_and_false_as_booleans(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "resources: {exclusive: True}\n", &l);
	assert_true(l.job.resources.exclusive);
	loaded_release(&l);
	check_error(MINIMAL "resources: {exclusive: yes}\n",
		    "job.yaml:3:24: resources.exclusive: expected true or false, got \"yes\"");
	check_error(MINIMAL "resources: {exclusive: \"true\"}\n",
		    "job.yaml:3:24: resources.exclusive: expected true or false, got the string \"true\"");
}

static void spec__suggests_the_nearest_enum_value(void **state)
{
	(void)state;
	check_error(MINIMAL "train: {precision: bf61}\n",
		    "job.yaml:3:20: train.precision: expected one of fp32, bf16, fp16, got \"bf61\"; "
		    "did you mean \"bf16\"?");
	check_error(MINIMAL "binding: {cpu: [a]}\n",
		    "job.yaml:3:16: binding.cpu: expected one of exclusive, node, core-complex, none, got a list");
}

static void spec__takes_binding_contract_warn_or_fail_only(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "binding: {contract: fail}\n", &l);
	assert_int_equal(l.job.binding.contract, BIND_CONTRACT_FAIL);
	loaded_release(&l);
	check_error(MINIMAL "binding: {contract: error}\n",
		    "job.yaml:3:21: binding.contract: expected one of warn, fail, got \"error\"");
}

static void spec__refuses_names_that_are_not_job_names_or_paths(void **state)
{
	(void)state;
	check_error("version: 1\nname: ../etc\n",
		    "job.yaml:2:7: name: \"../etc\" must start with a letter or digit");
	check_error("version: 1\nname: \"a;rm -rf /\"\n",
		    "job.yaml:2:7: name: \"a;rm -rf /\" may hold only letters, digits, '.', '_' and '-'");
	check_error(MINIMAL "resources: {partition: \"gpu\\nx\"}\n",
		    "job.yaml:3:24: resources.partition: \"gpu\\x0ax\" may hold only letters, digits, "
		    "'.', '_' and '-'");
	check_error(MINIMAL "train: {dataset: mnist}\n",
		    "job.yaml:3:18: train.dataset: \"mnist\" must be fashion-mnist, synthetic, "
		    "hep-synthetic, stage:NAME, or a path containing '/'");
}

static void spec__parses_and_normalises_slurm_time_limits(void **state)
{
	static const struct { const char *in; int64_t s; } ok[] = {
		{ "90", 5400 }, { "\"30:15\"", 1815 }, { "\"1:30:00\"", 5400 },
		{ "\"2-0\"", 172800 }, { "\"1-12:30\"", 131400 }, { "\"1-00:00:01\"", 86401 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct loaded l;
		char text[128];

		snprintf(text, sizeof(text), MINIMAL "resources: {time: %s}\npreempt: {lead_s: 0}\n", ok[i].in);
		check_ok(text, &l);
		assert_int_equal(l.job.resources.time_s, ok[i].s);
		loaded_release(&l);
	}
	check_error(MINIMAL "resources: {time: \"1:75:00\"}\n",
		    "job.yaml:3:19: resources.time: expected a time limit of 1 minute to 365 days like "
		    "90, 1:30:00 or 2-00:00:00, got the string \"1:75:00\"");
	check_error(MINIMAL "resources: {time: 0}\n",
		    "job.yaml:3:19: resources.time: expected a time limit of 1 minute to 365 days like "
		    "90, 1:30:00 or 2-00:00:00, got \"0\"");
}

static void spec__parses_memory_sizes_in_slurm_units(void **state)
{
	static const struct { const char *in; int64_t mb; } ok[] = {
		{ "4000", 4000 }, { "64G", 65536 }, { "1T", 1048576 }, { "2048K", 2 }, { "16gb", 16384 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct loaded l;
		char text[128];

		snprintf(text, sizeof(text), MINIMAL "resources: {memory: %s}\n", ok[i].in);
		check_ok(text, &l);
		assert_int_equal(l.job.resources.memory_mb, ok[i].mb);
		loaded_release(&l);
	}
	check_error(MINIMAL "resources: {memory: 1.5G}\n",
		    "job.yaml:3:21: resources.memory: expected a size of 1M to 1024T like 4000M, 64G or 1T, "
		    "got \"1.5G\"");
}

static void spec__reads_env_as_sorted_strings(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "env: {ZED: 1, A_B: \"x y\", EMPTY: \"\"}\n", &l);
	assert_int_equal(l.job.env.n, 3);
	assert_string_equal(l.job.env.v[0].name, "A_B");
	assert_string_equal(l.job.env.v[0].value, "x y");
	assert_string_equal(l.job.env.v[1].name, "EMPTY");
	assert_string_equal(l.job.env.v[2].value, "1");
	loaded_release(&l);
	check_error(MINIMAL "env: {1BAD: x}\n",
		    "job.yaml:3:7: env: 1BAD is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
	check_error(MINIMAL "env: {X: {y: 1}}\n",
		    "job.yaml:3:10: env: X: expected a string value (quote \"\" for an empty one), got a mapping");
}

static void spec__reads_command_as_an_argument_list(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "command: python3  train.py --lr=0.1\n", &l);
	assert_int_equal(l.job.command.n, 3);
	assert_string_equal(l.job.command.v[1], "train.py");
	assert_null(l.job.command.v[3]);
	loaded_release(&l);
	check_ok(MINIMAL "command: [\"my prog\", \"$(rm -rf ~)\", \"`id`\"]\n", &l);
	assert_int_equal(l.job.command.n, 3);
	assert_string_equal(l.job.command.v[1], "$(rm -rf ~)");
	loaded_release(&l);
	check_error(MINIMAL "command: []\n",
		    "job.yaml:3:10: command: the command is empty; use null to run the bundled trainer");
	check_error(MINIMAL "command: [a, {b: c}]\n",
		    "job.yaml:3:14: command: argument 2: expected a string, got a mapping");
}

static void spec__reads_environment_modules_as_checked_names_and_venv_as_an_absolute_path(
	void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL, &l);
	assert_int_equal(l.job.environment.modules.n, 0);
	assert_null(l.job.environment.venv);
	loaded_release(&l);
	check_ok(MINIMAL "environment: {modules: [gcc/12.2, py-torch/2.1+cuda@x], venv: /opt/v}\n", &l);
	assert_int_equal(l.job.environment.modules.n, 2);
	assert_string_equal(l.job.environment.modules.v[1], "py-torch/2.1+cuda@x");
	assert_string_equal(l.job.environment.venv, "/opt/v");
	loaded_release(&l);
	check_ok(MINIMAL "environment: {modules: gcc/12.2  openmpi}\n", &l);
	assert_int_equal(l.job.environment.modules.n, 2);
	assert_string_equal(l.job.environment.modules.v[1], "openmpi");
	loaded_release(&l);
	/* Nothing a shell or `module` could read as more than a name. */
	check_error(MINIMAL "environment: {modules: [gcc, \"$(id)\"]}\n",
		    "job.yaml:3:30: environment.modules: item 2, \"$(id)\", must start with a letter or digit");
	check_error(MINIMAL "environment: {modules: [\"gcc'x\"]}\n",
		    "job.yaml:3:25: environment.modules: item 1, \"gcc'x\", "
		    "may hold only letters, digits and . _ + - / @ :");
	check_error(MINIMAL "environment: {modules: [\"gcc\\nx\"]}\n",
		    "job.yaml:3:25: environment.modules: item 1, \"gcc\\nx\", "
		    "may hold only letters, digits and . _ + - / @ :");
	check_error(MINIMAL "environment: {modules: \"--force gcc\"}\n",
		    "job.yaml:3:24: environment.modules: item 1, \"--force\", must start with a letter or digit");
	check_error(MINIMAL "environment: {modules: [{a: b}]}\n",
		    "job.yaml:3:25: environment.modules: item 1: expected a string, got a mapping");
	check_error(MINIMAL "environment: {venv: venvs/torch}\n",
		    "job.yaml:3:21: environment.venv: \"venvs/torch\" must be an absolute path");
	/* pasted into PATH: "/opt/a:b" would add /opt/a and a relative b/bin */
	check_error(MINIMAL "environment: {venv: \"/opt/a:b\"}\n",
		    "job.yaml:3:21: environment.venv: \"/opt/a:b\" must not hold ':', which splits "
		    "PATH, PYTHONPATH and a container's binds");
	/* the run's directory goes on PYTHONPATH and into a runtime's binds */
	check_error(MINIMAL "output: {dir: \"runs:x\"}\n",
		    "job.yaml:3:15: output.dir: \"runs:x\" must not hold ':', which splits "
		    "PATH, PYTHONPATH and a container's binds");
	check_error(MINIMAL "output: {dir: \"runs,x\"}\n",
		    "job.yaml:3:15: output.dir: \"runs,x\" must not hold ',', which splits a "
		    "container runtime's binds");
}

static void spec__reads_the_container_section_and_checks_each_field(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL "container: {image: /srv/img, runtime: podman, mounts: [/d, \"/a:/b\"],"
		 " workdir: /w, gpus: false, writable: true}\n", &l);
	assert_string_equal(l.job.container.image, "/srv/img");
	assert_int_equal(l.job.container.runtime, CONTAINER_PODMAN);
	assert_int_equal(l.job.container.mounts.n, 2);
	assert_string_equal(l.job.container.mounts.v[1], "/a:/b");
	assert_int_equal(l.job.container.gpus, CONTAINER_GPUS_FALSE);
	assert_true(l.job.container.writable);
	assert_null(l.job.container.digest);
	loaded_release(&l);
	load(&l, MINIMAL "container: {image: /srv/img}\n");
	assert_int_equal(l.rc, 0);
	assert_diag(&l, "job.yaml:1:1: warning: container.image: the bundled trainer is started "
		    "inside the image by its path on the host, so the image must hold hpctrain "
		    "there; or set command");
	loaded_release(&l);
	check_error(MINIMAL "container: {image: -x}\n",
		    "job.yaml:3:20: container.image: \"-x\" must be an absolute path or an image "
		    "reference starting with a letter or digit");
	check_error(MINIMAL "container: {image: /i, mounts: [/a, \"/b:c\"]}\n",
		    "job.yaml:3:37: container.mounts: item 2, \"/b:c\", must be SRC or SRC:DST "
		    "with absolute paths");
	/* a string is split on blanks, as command's and environment.modules' are */
	check_ok(MINIMAL "container: {image: /i, mounts: /a /b:/c}\n", &l);
	assert_int_equal(l.job.container.mounts.n, 2);
	assert_string_equal(l.job.container.mounts.v[1], "/b:/c");
	loaded_release(&l);
	check_error(MINIMAL "container: {image: /i, digest: sha256:12}\n",
		    "job.yaml:3:32: container.digest: \"sha256:12\" must be sha256: and 64 "
		    "lowercase hex digits, or unpinned");
}

static void spec__suggests_the_key_that_was_meant(void **state)
{
	(void)state;
	check_error(MINIMAL "resources: {gpus_per_nod: 4}\n",
		    "job.yaml:3:13: resources: unknown key \"gpus_per_nod\"; did you mean \"gpus_per_node\"?");
	check_error(MINIMAL "trian: {}\n", "job.yaml:3:1: unknown key \"trian\"; did you mean \"train\"?");
	check_error(MINIMAL "train: {optimiser: {}}\n",
		    "job.yaml:3:9: train: unknown key \"optimiser\"; did you mean \"optimizer\"?");
}

static void spec__reports_duplicate_keys_with_the_first_position(void **state)
{
	(void)state;
	check_error(MINIMAL "train:\n  epochs: 1\n  epochs: 2\n",
		    "job.yaml:5:3: duplicate key \"epochs\" (first at 4:3)");
}

static void spec__requires_version_and_name(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "resources: {nodes: 1}\n");
	assert_int_equal(l.rc, -1);
	assert_diag(&l, "job.yaml:1:1: missing required key \"version\"");
	assert_diag(&l, "job.yaml:1:1: missing required key \"name\"");
	loaded_release(&l);
	check_error("version: 2\nname: t\n",
		    "job.yaml:1:10: version: unsupported schema version \"2\"; this hpctrain reads version 1");
}

static void spec__requires_mappings_where_sections_are(void **state)
{
	(void)state;
	check_error(MINIMAL "resources: 4\n",
		    "job.yaml:3:12: resources: expected a mapping of keys, got a scalar");
	check_error("- version: 1\n", "job.yaml:1:1: a job spec is a mapping of keys, not a list");
	check_error("", "job.yaml:1:1: empty job spec");
	check_error("# only a comment\n", "job.yaml:1:1: empty job spec");
}

static void spec__reports_every_error_in_a_file(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "version: 1\nname: t\nresources: {nodes: x, gpus_per_node: y}\n"
		 "binding: {cpu: z}\ntrain: {epochs: 0, precision: q}\nbogus: 1\n");
	assert_int_equal(l.rc, -1);
	assert_int_equal(diag_count(&l.dl, DIAG_ERROR), 6);
	/* Sorted by position, whatever pass found them. */
	assert_int_equal(l.dl.v[0].line, 3);
	assert_int_equal(l.dl.v[5].line, 6);
	loaded_release(&l);
}

static void spec__checks_keys_that_depend_on_each_other(void **state)
{
	struct loaded l;

	(void)state;
	check_error(MINIMAL "resources: {time: 2}\npreempt: {lead_s: 120}\n",
		    "job.yaml:1:1: preempt.lead_s: the warning (120 s) must be shorter than "
		    "resources.time (120 s)");
	check_ok(MINIMAL "resources: {gpus_per_node: 4}\nbinding: {gpu: none}\n", &l);
	assert_diag(&l, "job.yaml:1:1: warning: binding.gpu: 4 GPUs per node are requested but "
			"binding.gpu is none");
	loaded_release(&l);
}

static void spec__fills_every_default(void **state)
{
	struct loaded l;

	(void)state;
	check_ok(MINIMAL, &l);
	assert_int_equal(l.job.resources.nodes, 1);
	assert_int_equal(l.job.resources.time_s, 3600);
	assert_int_equal(l.job.resources.memory_mb, 0);
	assert_null(l.job.resources.partition);
	assert_int_equal(l.job.binding.cpu, BIND_CPU_EXCLUSIVE);
	assert_int_equal(l.job.binding.contract, BIND_CONTRACT_WARN);
	assert_string_equal(l.job.train.dataset, "fashion-mnist");
	assert_true(l.job.train.optimizer.lr == 0.05);
	assert_true(l.job.train.allreduce.bucket_mb == 25);
	assert_int_equal(l.job.command.n, 0);
	assert_int_equal(l.job.preempt.signal, PREEMPT_USR2);
	assert_string_equal(l.job.output.dir, "runs");
	loaded_release(&l);
}

static void spec__schema_defaults_all_convert(void **state)
{
	(void)state;
	assert_true(spec_field_count() < 128); /* spec.c's seen[] */
	for (size_t i = 0; i < spec_nfields; i++) {
		const struct spec_field *f = &spec_fields[i];
		struct diag_list dl = DIAG_LIST_INIT;
		struct sbuf why = SBUF_INIT;
		struct ynode *def = NULL;
		struct job job;

		if (!f->def)
			continue;
		memset(&job, 0, sizeof(job));
		assert_int_equal(ynode_parse("default", f->def, strlen(f->def), &def, &dl), 0);
		if (spec_value_set(f, def, (char *)&job + f->off, &why, NULL))
			fail_msg("default of %s: %s", f->path, why.buf);
		job_release(&job);
		ynode_free(def);
		sbuf_release(&why);
		diag_list_release(&dl);
	}
}

static void spec__gives_the_same_hash_for_the_same_job_however_written(void **state)
{
	static const char *const same[] = {
		MINIMAL "resources: {time: 60, nodes: 2}\ntrain: {optimizer: {lr: 0.050}}\n",
		"name: t\nversion: 1\nresources:\n  nodes: 2\n  time: \"01:00:00\"\n",
		"{version: 1, name: \"t\", resources: {nodes: 0x2, time: \"0-1\"}, env: {}, command: ~}\n",
	};
	char first[65], hash[65];
	struct sbuf r0 = SBUF_INIT;

	(void)state;
	resolved_hash(same[0], first, &r0);
	for (size_t i = 1; i < sizeof(same) / sizeof(same[0]); i++) {
		struct sbuf r = SBUF_INIT;

		resolved_hash(same[i], hash, &r);
		assert_string_equal(r.buf, r0.buf);
		assert_string_equal(hash, first);
		sbuf_release(&r);
	}
	resolved_hash(MINIMAL "resources: {nodes: 3}\n", hash, &r0);
	assert_string_not_equal(hash, first);
	sbuf_release(&r0);
}

static void spec__resolves_to_a_fixed_point(void **state)
{
	static const char spec[] =
		MINIMAL "resources: {memory: 65536, time: \"36:00:00\", constraint: \"a100&ib\"}\n"
		"env: {B: \"multi\\nline \\\"quoted\\\" \\u00e9\", A: \"1\", C: \"$${X} $$${Y}\"}\n"
		"train: {optimizer: {lr: 0.1, eps: 1e-8, warmup_epochs: 0.3333333333333333}}\n"
		"command: [\"a b\", \"yes\", \"1\", \"#SBATCH --x\"]\n";
	struct sbuf r1 = SBUF_INIT, r2 = SBUF_INIT;
	char h1[65], h2[65];

	(void)state;
	resolved_hash(spec, h1, &r1);
	resolved_hash(r1.buf, h2, &r2);
	assert_string_equal(r1.buf, r2.buf);
	assert_string_equal(h1, h2);
	assert_non_null(strstr(r1.buf, "memory: \"64G\"\n"));
	assert_non_null(strstr(r1.buf, "time: \"1-12:00:00\"\n"));
	assert_non_null(strstr(r1.buf, "  A: \"1\"\n  B: \"multi\\nline \\\"quoted\\\" \xc3\xa9\"\n"));
	assert_non_null(strstr(r1.buf, "  C: \"$${X} $$${Y}\"\n"));
	sbuf_release(&r1);
	sbuf_release(&r2);
}

static void spec__hashes_with_sha256(void **state)
{
	char hash[65];

	(void)state;
	spec_hash("abc", 3, hash);
	assert_string_equal(hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spec__reports_a_string_for_gpus_per_node_with_line_and_column),
		cmocka_unit_test(spec__rejects_integers_out_of_range_and_overflowing),
		cmocka_unit_test(spec__reads_nodes_as_a_number_or_a_range),
		cmocka_unit_test(spec__rejects_node_ranges_out_of_order_or_range),
		cmocka_unit_test(spec__treats_a_quoted_number_as_a_string),
		cmocka_unit_test(spec__accepts_auto_or_an_integer_for_cpus_per_rank),
		cmocka_unit_test(spec__checks_numbers_with_open_and_closed_ends),
		cmocka_unit_test(spec__accepts_only_true_and_false_as_booleans),
		cmocka_unit_test(spec__suggests_the_nearest_enum_value),
		cmocka_unit_test(spec__takes_binding_contract_warn_or_fail_only),
		cmocka_unit_test(spec__refuses_names_that_are_not_job_names_or_paths),
		cmocka_unit_test(spec__parses_and_normalises_slurm_time_limits),
		cmocka_unit_test(spec__parses_memory_sizes_in_slurm_units),
		cmocka_unit_test(spec__reads_env_as_sorted_strings),
		cmocka_unit_test(spec__reads_command_as_an_argument_list),
		cmocka_unit_test(spec__reads_environment_modules_as_checked_names_and_venv_as_an_absolute_path),
		cmocka_unit_test(spec__reads_the_container_section_and_checks_each_field),
		cmocka_unit_test(spec__suggests_the_key_that_was_meant),
		cmocka_unit_test(spec__reports_duplicate_keys_with_the_first_position),
		cmocka_unit_test(spec__requires_version_and_name),
		cmocka_unit_test(spec__requires_mappings_where_sections_are),
		cmocka_unit_test(spec__reports_every_error_in_a_file),
		cmocka_unit_test(spec__checks_keys_that_depend_on_each_other),
		cmocka_unit_test(spec__fills_every_default),
		cmocka_unit_test(spec__schema_defaults_all_convert),
		cmocka_unit_test(spec__gives_the_same_hash_for_the_same_job_however_written),
		cmocka_unit_test(spec__resolves_to_a_fixed_point),
		cmocka_unit_test(spec__hashes_with_sha256),
		cmocka_unit_test(spec__keeps_spares_out_of_the_hash_unless_set_and_bounds_them),
		cmocka_unit_test(spec__keeps_max_restarts_out_of_the_hash_unless_set_and_bounds_it),
	};

	return cmocka_run_group_tests_name("test_spec", tests, NULL, NULL);
}
