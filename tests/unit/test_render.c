/* test_render.c - launcher/slurm/render: job spec -> batch script and Slurm options.
 * Specs go through the real spec core (testlib.h); hostile values the
 * spec core would refuse are put into a struct job by hand, to show the
 * renderer's own checks hold.  Running the scripts is tests/cli/submit.bats. */
#include "tests/unit/testlib.h"

#include "launcher/slurm/render.h" // defines: render_batch_script, render_sbatch_options

#include <signal.h>
#include <stdlib.h>

#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct render_ctx ctx = { "/opt/hpc train/bin/hpctrain", "0.1.0", HASH, NULL };

/* Renders spec; fails the test on any diagnostic. */
static void render_ok(const char *spec, struct sbuf *out)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;

	load(&l, spec);
	if (l.rc)
		fail_msg("spec errors:\n%s", l.text.buf);
	if (render_batch_script(&l.job, &ctx, out, &dl)) {
		struct sbuf t = SBUF_INIT;

		diag_format(&dl.v[0], &t);
		fail_msg("render failed: %s", t.buf);
	}
	diag_list_release(&dl);
	loaded_release(&l);
}

static void assert_has_line(const char *text, const char *line)
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		if (len == strlen(line) && !strncmp(p, line, len))
			return;
		p += len + (p[len] == '\n');
	}
	fail_msg("no line\n  %s\nin\n%s", line, text);
}

static void assert_no_line_starting(const char *text, const char *prefix)
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		if (!strncmp(p, prefix, strlen(prefix)))
			fail_msg("unexpected line starting %s in\n%s", prefix, text);
		p += len + (p[len] == '\n');
	}
}

/* Preflight: on by default for more than one node, off for one, and as
 * the spec says otherwise; doctor runs once per node before the step. */
static void render__asks_for_a_node_range_and_steps_on_the_nodes_granted(void **state)
{
	struct sbuf s = SBUF_INIT, fixed = SBUF_INIT;

	(void)state;
	render_ok("version: 1\nname: a\nresources: {nodes: 1-3, ranks_per_node: 2}\n", &s);
	assert_has_line(s.buf, "#SBATCH --nodes=1-3");
	assert_has_line(s.buf, "srun --mpi=pmix --kill-on-bad-exit=1 --nodes=\"$SLURM_JOB_NUM_NODES\" "
			       "--ntasks=\"$((SLURM_JOB_NUM_NODES*1))\" --ntasks-per-node=1 \\");
	assert_has_line(s.buf, "train_nodes=$SLURM_JOB_NUM_NODES");
	assert_non_null(strstr(s.buf, "--nodes=\"$train_nodes\" "
				      "--ntasks=\"$((train_nodes*2))\" --ntasks-per-node=2"));
	/* spares: asked for on top, every node in preflight, trained on less them */
	sbuf_reset(&s);
	render_ok("version: 1\nname: a\nresources: {nodes: 2-3, spares: 1}\npreflight: true\n", &s);
	assert_has_line(s.buf, "#SBATCH --nodes=3-4");
	assert_has_line(s.buf, "srun --mpi=pmix --kill-on-bad-exit=1 --nodes=\"$SLURM_JOB_NUM_NODES\" "
			       "--ntasks=\"$((SLURM_JOB_NUM_NODES*1))\" --ntasks-per-node=1 \\");
	assert_has_line(s.buf, "train_nodes=$((SLURM_JOB_NUM_NODES - 1))");
	sbuf_reset(&s);
	render_ok("version: 1\nname: a\nresources: {nodes: 1, spares: 1}\n", &s);
	assert_has_line(s.buf, "#SBATCH --nodes=2");
	assert_has_line(s.buf, "#SBATCH --no-kill");
	render_ok("version: 1\nname: a\nresources: {nodes: 3-3}\n", &fixed);
	assert_has_line(fixed.buf, "#SBATCH --nodes=3");
	assert_null(strstr(fixed.buf, "SLURM_JOB_NUM_NODES"));
	sbuf_release(&s);
	sbuf_release(&fixed);
}

static void render__runs_doctor_first_on_multi_node_jobs(void **state)
{
	struct sbuf two = SBUF_INIT, one = SBUF_INIT, off = SBUF_INIT, on = SBUF_INIT;
	const char *doctor = "\t\"$HPT\" doctor --preflight \"$RUN\" || {";

	(void)state;
	render_ok("version: 1\nname: a\nresources: {nodes: 2}\n", &two);
	render_ok("version: 1\nname: a\n", &one);
	render_ok("version: 1\nname: a\nresources: {nodes: 2}\npreflight: false\n", &off);
	render_ok("version: 1\nname: a\npreflight: {enabled: true}\n", &on);
	assert_has_line(two.buf, "srun --mpi=pmix --kill-on-bad-exit=1 --nodes=2 --ntasks=2 --ntasks-per-node=1 \\");
	assert_has_line(two.buf, doctor);
	assert_true(strstr(two.buf, "doctor --preflight") < strstr(two.buf, "launch --supervise"));
	assert_null(strstr(one.buf, "doctor --preflight"));
	assert_null(strstr(off.buf, "doctor --preflight"));
	assert_has_line(on.buf, doctor);
	/* after a failed step, doctor says whether it goes on in this
	 * allocation; not after a preemption, which failed nothing */
	assert_has_line(two.buf, "\t[ \"$status\" -ne 0 ] && [ \"$status\" -ne 75 ] || break");
	assert_has_line(two.buf, "\tnext=$(\"$HPT\" doctor --lost \"$RUN\") && [ -n \"$next\" ] || return 1");
	assert_has_line(one.buf, "\tnext=$(\"$HPT\" doctor --lost \"$RUN\") && [ -n \"$next\" ] || return 1");
	assert_has_line(two.buf, "\tgo_on || break");
	/* the program's failure ends the job with its first failed rank's status */
	assert_has_line(two.buf, "\t\"status \"[0-9]*) status=${next#status }; return 1;;");
	/* what a resubmission prints is said in the log, and no answer */
	assert_has_line(two.buf, "\t*) echo \"$next\"; return 1;;");
	assert_true(strstr(two.buf, "launch --supervise") < strstr(two.buf, "go_on || break"));
	/* a failed preflight asks doctor --lost too: the job may go on here */
	assert_true(strstr(two.buf, "go_on() {") < strstr(two.buf, "doctor --preflight"));
	assert_non_null(strstr(two.buf, "\tstatus=$?\n\tgo_on || {\n\t\techo \"hpctrain: preflight failed"));
	/* --no-kill: a lost node ends the step, not the job */
	assert_has_line(two.buf, "#SBATCH --no-kill");
	assert_null(strstr(one.buf, "--no-kill"));
	sbuf_release(&two);
	sbuf_release(&one);
	sbuf_release(&off);
	sbuf_release(&on);
}

/* The stage step, exactly: after preflight, before the training step,
 * one task per node, and only for a job that stages something. */
static void render__stages_data_after_preflight_and_before_training(void **state)
{
	static const char golden[] =
		"\n# stage: copy the data to each node's cache, one read of the shared file system;\n"
		"# a step ended by a signal (a task that crashed starting MPI) runs again, twice at most\n"
		"for stage_try in 1 2 3; do\n"
		"\tstatus=0\n"
		"\tsrun --mpi=pmix --kill-on-bad-exit=1 --nodes=\"$alloc_nodes\" --ntasks=\"$alloc_nodes\" "
		"--ntasks-per-node=1 \\\n"
		"\t\t${step_exclude:+\"--exclude=$step_exclude\"} \\\n"
		"\t\t\"$HPT\" stage --run \"$RUN\" || status=$?\n"
		"\t[ \"$status\" -gt 128 ] && [ \"$stage_try\" -lt 3 ] || break\n"
		"\techo \"hpctrain: the stage step ended by a signal (status $status); running it again\" >&2\n"
		"done\n"
		"if [ \"$status\" -ne 0 ]; then\n"
		"\techo \"hpctrain: staging failed (status $status): nothing was trained\" >&2\n"
		"\texit \"$status\"\n"
		"fi\n"
		"\nmkdir -p logs\n";
	struct sbuf data = SBUF_INIT, image = SBUF_INIT, none = SBUF_INIT;
	const char *stage;

	(void)state;
	render_ok("version: 1\nname: a\nresources: {nodes: 3}\n"
		  "data: {stage: [{name: fm, src: /shared/fm}]}\n", &data);
	render_ok("version: 1\nname: a\ncommand: [x]\n"
		  "container: {image: /i.sqfs, stage: true}\n", &image);
	render_ok("version: 1\nname: a\nresources: {nodes: 3}\n", &none);
	stage = strstr(data.buf, golden);
	assert_non_null(stage);
	assert_true(strstr(data.buf, "doctor --preflight") < stage);
	assert_true(stage < strstr(data.buf, "launch --supervise"));
	assert_has_line(image.buf, "\t\t\"$HPT\" stage --run \"$RUN\" || status=$?");
	assert_null(strstr(none.buf, " stage "));
	sbuf_release(&data);
	sbuf_release(&image);
	sbuf_release(&none);
}

/* The srun lines of a script, one geometry each: "nodes tasks per-node"
 * from --nodes, --ntasks and --ntasks-per-node, in order. */
static void step_geometries(const char *script, struct sbuf *out)
{
	for (const char *p = script; (p = strstr(p, "srun ")); p++) {
		const char *n = strstr(p, " --nodes="), *t = strstr(p, " --ntasks=");
		const char *k = strstr(p, " --ntasks-per-node="), *end = strchr(p, '\n');

		if (!n || !t || !k || n > end || t > end || k > end)
			fail_msg("a step without its full geometry:\n%.*s", (int)(end - p), p);
		sbuf_addf(out, "%.*s %.*s %.*s\n", (int)strcspn(n + 9, " "), n + 9,
			  (int)strcspn(t + 10, " "), t + 10, (int)strcspn(k + 19, " "), k + 19);
	}
}

/* Every step states nodes, tasks and tasks per node, at every shape:
 * the batch environment's SLURM_NTASKS (nodes x ranks) must not decide
 * how many tasks the one-a-node preflight and stage steps get. */
/* the training step's: the nodes the script counted (train_nodes) */
#define T(r) "\"$train_nodes\" \"$((train_nodes*" #r "))\""
/* the stage step's: the allocation's nodes less those left out (A) */
#define A "\"$alloc_nodes\" \"$alloc_nodes\" 1\n"
static void render__states_every_steps_geometry_at_every_shape(void **state)
{
	static const struct {
		const char *nodes, *rpn, *want;
	} shapes[] = {
		{ "1", "1", "1 1 1\n" A T(1) " 1\n" },
		{ "1", "2", "1 1 1\n" A T(2) " 2\n" },
		{ "2", "1", "2 2 1\n" A T(1) " 1\n" },
		{ "2", "2", "2 2 1\n" A T(2) " 2\n" },
		{ "3", "2", "3 3 1\n" A T(2) " 2\n" },
		{ "1-3", "2", "\"$SLURM_JOB_NUM_NODES\" \"$((SLURM_JOB_NUM_NODES*1))\" 1\n" A T(2) " 2\n" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct sbuf spec = SBUF_INIT, s = SBUF_INIT, got = SBUF_INIT;

		sbuf_addf(&spec, "version: 1\nname: a\nresources: {nodes: %s, ranks_per_node: %s}\n"
				 "preflight: {enabled: true}\n"
				 "data: {stage: [{name: fm, src: /shared/fm}]}\n",
			  shapes[i].nodes, shapes[i].rpn);
		render_ok(spec.buf, &s);
		step_geometries(s.buf, &got);
		if (strcmp(got.buf, shapes[i].want))
			fail_msg("%s x %s: steps (nodes tasks per-node)\n%swant\n%s", shapes[i].nodes,
				 shapes[i].rpn, got.buf, shapes[i].want);
		sbuf_release(&spec);
		sbuf_release(&s);
		sbuf_release(&got);
	}
}

/* --exclude: a hostlist on its #SBATCH line, and nothing else gets there. */
static void render__puts_the_exclude_list_on_its_sbatch_line(void **state)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf s = SBUF_INIT;
	struct render_ctx c = ctx;

	(void)state;
	load(&l, "version: 1\nname: a\n");
	c.exclude = "node[2,7-9],gpu01";
	assert_int_equal(render_batch_script(&l.job, &c, &s, &dl), 0);
	assert_has_line(s.buf, "#SBATCH --exclude=node[2,7-9],gpu01");
	sbuf_reset(&s);
	c.exclude = "node2\n#SBATCH --nodes=99";
	assert_int_equal(render_batch_script(&l.job, &c, &s, &dl), -1);
	assert_int_equal(s.len, 0);
	assert_string_equal(dl.v[0].path, "exclude");
	diag_list_release(&dl);
	loaded_release(&l);
	sbuf_release(&s);
}

static void render__makes_an_array_that_runs_each_task_in_its_point_run(void **state)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;
	struct render_opts point, array;
	struct sbuf s = SBUF_INIT, key = SBUF_INIT;

	(void)state;
	load(&l, "version: 1\nname: a\nresources: {nodes: 2}\n");
	assert_int_equal(render_sbatch_options(&l.job, NULL, &point, &dl), 0);
	render_opts_key(&point, &key);
	assert_non_null(strstr(key.buf, "--nodes=2\n"));
	render_array_options(&point, 6, 2, &array);
	assert_int_equal(array.n, point.n + 1);
	assert_string_equal(render_opts_find(&array, RENDER_OPT_ARRAY)->text, "0-5%2");
	assert_string_equal(render_opts_find(&array, RENDER_OPT_OUTPUT)->text, "%a/logs/batch-%j.out");
	assert_int_equal(render_array_script(&array, "sweep-0123456789ab", "1.0", &s), 0);
	assert_has_line(s.buf, "#SBATCH --array=0-5%2");
	assert_has_line(s.buf, "#SBATCH --nodes=2");
	assert_has_line(s.buf, "cd -P -- \"$SLURM_ARRAY_TASK_ID\" || {");
	assert_has_line(s.buf, "exec /bin/bash ./job.sbatch");
	sbuf_reset(&s);
	/* no cap when it does not bind; a sweep name is one word */
	render_opts_release(&array);
	render_array_options(&point, 3, 3, &array);
	assert_string_equal(render_opts_find(&array, RENDER_OPT_ARRAY)->text, "0-2");
	assert_int_equal(render_array_script(&array, "sweep-x\n#SBATCH --nodes=9", "1.0", &s), -1);
	render_opts_release(&array);
	render_opts_release(&point);
	diag_list_release(&dl);
	loaded_release(&l);
	sbuf_release(&s);
	sbuf_release(&key);
}

static void render__gives_identical_bytes_for_equal_jobs(void **state)
{
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "resources: {nodes: 2, ranks_per_node: 4}\nenv: {B: x, A: y}\n", &a);
	render_ok(MINIMAL "env: {A: y, B: x}\nresources: {ranks_per_node: 4, nodes: 2}\n", &b);
	assert_string_equal(a.buf, b.buf);
	sbuf_release(&a);
	sbuf_release(&b);
}

static void render__writes_an_sbatch_line_for_every_resource_field(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "resources: {nodes: 4, ranks_per_node: 4, gpus_per_node: 4, "
			  "cpus_per_rank: 12, time: \"1-02:03:04\", memory: 64G, partition: gpu, "
			  "account: proj1, qos: high, constraint: \"a100&ib\", exclusive: true}\n"
			  "preempt: {lead_s: 120, requeue: true}\n",
		  &s);
	assert_has_line(s.buf, "#SBATCH --job-name=t");
	assert_has_line(s.buf, "#SBATCH --nodes=4");
	assert_has_line(s.buf, "#SBATCH --ntasks-per-node=4");
	assert_has_line(s.buf, "#SBATCH --cpus-per-task=12");
	assert_has_line(s.buf, "#SBATCH --gpus-per-node=4");
	assert_has_line(s.buf, "#SBATCH --mem=65536M");
	assert_has_line(s.buf, "#SBATCH --time=1-02:04:00"); /* 1-02:03:04 rounded up */
	assert_has_line(s.buf, "#SBATCH --partition=gpu");
	assert_has_line(s.buf, "#SBATCH --account=proj1");
	assert_has_line(s.buf, "#SBATCH --qos=high");
	assert_has_line(s.buf, "#SBATCH --constraint=a100&ib");
	assert_has_line(s.buf, "#SBATCH --exclusive");
	assert_has_line(s.buf, "#SBATCH --signal=USR2@120");
	assert_has_line(s.buf, "#SBATCH --requeue");
	assert_has_line(s.buf, "#SBATCH --output=logs/batch-%j.out");
	assert_has_line(s.buf, "train_nodes=4");
	assert_has_line(s.buf, "\tsrun --mpi=pmix --kill-on-bad-exit=1 --nodes=\"$train_nodes\" "
			       "--ntasks=\"$((train_nodes*4))\" --ntasks-per-node=4 --cpus-per-task=12 \\");
	sbuf_release(&s);
}

static void render__leaves_out_what_the_spec_leaves_to_slurm(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "preempt: {lead_s: 0, requeue: false}\n", &s);
	assert_no_line_starting(s.buf, "#SBATCH --partition");
	assert_no_line_starting(s.buf, "#SBATCH --mem");
	assert_no_line_starting(s.buf, "#SBATCH --gpus-per-node");
	assert_no_line_starting(s.buf, "#SBATCH --cpus-per-task");
	assert_no_line_starting(s.buf, "#SBATCH --signal");
	assert_no_line_starting(s.buf, "#SBATCH --requeue");
	assert_has_line(s.buf, "#SBATCH --no-requeue");
	assert_null(strstr(s.buf, "scontrol requeue"));
	sbuf_release(&s);
}

static void render__single_quotes_every_env_value_and_command_argument(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "env:\n  X: \"$(touch p)`id`;echo 'q' \\\"d\\\"\\n#SBATCH --nodes=99\"\n"
			  "command: [\"/bin/echo\", \"$HOME\", \"it's\", \"\"]\n",
		  &s);
	assert_non_null(strstr(s.buf, "export X='$(touch p)`id`;echo '\\''q'\\'' \"d\"\n"
				      "#SBATCH --nodes=99'\n"));
	assert_non_null(strstr(s.buf, "\t'/bin/echo' '$HOME' 'it'\\''s' '' || status=$?\n"));
	assert_non_null(strstr(s.buf, "HPT='/opt/hpc train/bin/hpctrain'\n"));
	sbuf_release(&s);
}

/* The block environment renders, from its comment to its set -u. */
static const char *environment_block(const char *script, struct sbuf *out)
{
	const char *a = strstr(script, "\n# environment:"), *b = a ? strstr(a, "\nset -u\n") : NULL;

	if (!a || !b)
		fail_msg("no environment block in\n%s", script);
	sbuf_add(out, a + 1, (size_t)(b - a) + 7);
	return out->buf;
}

/* Golden: the module command found (the site's function first), each
 * module loaded and confirmed on its own so the failure names it, the
 * venv's bin first on PATH with nothing sourced, all before any step
 * and before the spec's env, which may override what a module set. */
static void render__loads_each_module_then_the_venv_before_any_step(void **state)
{
	struct sbuf s = SBUF_INIT, block = SBUF_INIT;
	const char *want =
		"# environment: site software for every step (preflight and ranks)\n"
		"set +u\n"
		"if ! declare -F module >/dev/null; then\n"
		"\tfor init in \"${LMOD_PKG:+$LMOD_PKG/init/bash}\" \"${MODULESHOME:+$MODULESHOME/init/bash}\" \\\n"
		"\t\t/usr/share/lmod/lmod/init/bash; do\n"
		"\t\t[ -n \"$init\" ] && [ -r \"$init\" ] && . \"$init\" && break\n"
		"\tdone\n"
		"fi\n"
		"if ! declare -F module >/dev/null; then\n"
		"\techo 'hpctrain: environment.modules is set but this node has no module command' >&2\n"
		"\texit 5\n"
		"fi\n"
		"module load 'gcc/12.2' && module is-loaded 'gcc/12.2' || {\n"
		"\tprintf 'hpctrain: module %s did not load\\n' 'gcc/12.2' >&2\n"
		"\texit 4\n"
		"}\n"
		"module load 'py-torch/2.1+cuda@12:x' && module is-loaded 'py-torch/2.1+cuda@12:x' || {\n"
		"\tprintf 'hpctrain: module %s did not load\\n' 'py-torch/2.1+cuda@12:x' >&2\n"
		"\texit 4\n"
		"}\n"
		"export VIRTUAL_ENV='/opt/v e/it'\\''s$(id)`id`'\n"
		"if [ ! -d \"$VIRTUAL_ENV/bin\" ]; then\n"
		"\tprintf 'hpctrain: environment.venv %s has no bin directory\\n' \"$VIRTUAL_ENV\" >&2\n"
		"\texit 4\n"
		"fi\n"
		"export PATH=\"$VIRTUAL_ENV/bin:$PATH\"\n"
		"unset PYTHONHOME\n"
		"set -u\n";

	(void)state;
	render_ok("version: 1\nname: a\nresources: {nodes: 2}\nenv: {X: y}\n"
		  "environment:\n  modules: [gcc/12.2, \"py-torch/2.1+cuda@12:x\"]\n"
		  "  venv: \"/opt/v e/it's$(id)`id`\"\n",
		  &s);
	assert_string_equal(environment_block(s.buf, &block), want);
	assert_true(strstr(s.buf, "# environment:") < strstr(s.buf, "export X="));
	assert_true(strstr(s.buf, "export X=") < strstr(s.buf, "doctor --preflight"));
	assert_true(strstr(s.buf, "doctor --preflight") < strstr(s.buf, "launch --supervise"));
	assert_null(strstr(s.buf, "activate"));
	sbuf_release(&block);
	sbuf_release(&s);
}

/* Only what is set: no module lines for a venv alone, and nothing at all
 * (the scripts of existing specs unchanged) without either. */
static void render__writes_environment_lines_only_for_what_is_set(void **state)
{
	struct sbuf none = SBUF_INIT, venv = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "environment: {modules: [], venv: null}\n", &none);
	assert_null(strstr(none.buf, "environment"));
	assert_null(strstr(none.buf, "set +u"));
	render_ok(MINIMAL "environment: {venv: /opt/v}\n", &venv);
	assert_null(strstr(venv.buf, "module"));
	assert_has_line(venv.buf, "export VIRTUAL_ENV='/opt/v'");
	sbuf_release(&none);
	sbuf_release(&venv);
}

/* Values the spec core refuses, put in by hand: the renderer's own
 * check keeps them from changing what a line means. */
static void render__refuses_a_module_read_as_an_option_and_a_relative_venv(void **state)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf s = SBUF_INIT;

	(void)state;
	load(&l, MINIMAL "environment: {modules: [gcc]}\n");
	assert_int_equal(l.rc, 0);
	free(l.job.environment.modules.v[0]);
	l.job.environment.modules.v[0] = strdup("--force");
	assert_int_equal(render_batch_script(&l.job, &ctx, &s, &dl), -1);
	assert_int_equal(s.len, 0);
	assert_string_equal(dl.v[0].path, "environment.modules");
	diag_list_release(&dl);
	loaded_release(&l);
	load(&l, MINIMAL "environment: {venv: /v}\n");
	free(l.job.environment.venv);
	l.job.environment.venv = strdup("v");
	assert_int_equal(render_batch_script(&l.job, &ctx, &s, &dl), -1);
	assert_int_equal(s.len, 0);
	assert_string_equal(dl.v[0].path, "environment.venv");
	sbuf_release(&s);
	diag_list_release(&dl);
	loaded_release(&l);
}

static void render__runs_the_bundled_trainer_without_a_command(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL, &s);
	assert_non_null(strstr(s.buf, "\"$HPT\" launch --supervise --run \"$RUN\" -- \\\n"
				      "\t\"$HPT\" train \"$RUN/resolved.yaml\" --run \"$RUN\" || "
				      "status=$?\n"));
	assert_has_line(s.buf, "\t\t--output=logs/rank-%t.out --open-mode=append \\");
	assert_has_line(s.buf, "if [ \"$status\" -eq 75 ] && [ \"$restarts\" -lt 3 ]; then");
	sbuf_release(&s);
}

static void render__execs_the_program_directly_when_supervise_is_off(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "supervise: {enabled: false}\n", &s);
	assert_non_null(strstr(s.buf, "\t\"$HPT\" launch --run \"$RUN\" -- \\\n"));
	assert_null(strstr(s.buf, "--supervise"));
	sbuf_reset(&s);
	/* no records to go on from: a failed preflight's doctor resubmits */
	render_ok("version: 1\nname: a\nresources: {nodes: 2}\nsupervise: {enabled: false}\n", &s);
	assert_non_null(strstr(s.buf, "\"$HPT\" doctor --preflight \"$RUN\" || {\n\tstatus=$?\n"
				      "\techo \"hpctrain: preflight failed"));
	assert_null(strstr(s.buf, "go_on"));
	sbuf_release(&s);
}

static void render__labels_one_log_when_per_rank_logs_is_off(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	render_ok(MINIMAL "output: {per_rank_logs: false}\npreempt: {requeue: false}\n", &s);
	assert_has_line(s.buf, "\t\t--label --output=logs/ranks.out \\");
	sbuf_release(&s);
}

static void render__gives_libslurm_units_in_the_options(void **state)
{
	struct loaded l;
	struct render_opts o;
	struct diag_list dl = DIAG_LIST_INIT;
	const struct render_opt *r;

	(void)state;
	load(&l, MINIMAL "resources: {time: \"90:30\", memory: 2G}\n"
			 "preempt: {signal: TERM, lead_s: 30}\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(render_sbatch_options(&l.job, NULL, &o, &dl), 0);
	assert_non_null(r = render_opts_find(&o, RENDER_OPT_TIME));
	assert_int_equal(r->num, 91); /* minutes, rounded up */
	assert_string_equal(r->text, "0-01:31:00");
	assert_non_null(r = render_opts_find(&o, RENDER_OPT_MEM));
	assert_int_equal(r->num, 2048);
	assert_non_null(r = render_opts_find(&o, RENDER_OPT_SIGNAL));
	assert_int_equal(r->num, SIGTERM);
	assert_int_equal(r->num2, 30);
	assert_string_equal(r->text, "TERM@30");
	assert_null(render_opts_find(&o, RENDER_OPT_PARTITION));
	render_opts_release(&o);
	diag_list_release(&dl);
	loaded_release(&l);
}

/* The spec core refuses these; render must too, on its own. */
static void render__refuses_option_values_that_could_break_an_sbatch_line(void **state)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf s = SBUF_INIT, t = SBUF_INIT;

	(void)state;
	load(&l, MINIMAL);
	assert_int_equal(l.rc, 0);
	l.job.resources.partition = strdup("debug\n#SBATCH --uid=0");
	l.job.resources.qos = strdup("a b");
	assert_int_equal(render_batch_script(&l.job, &ctx, &s, &dl), -1);
	assert_int_equal(s.len, 0);
	assert_int_equal(dl.n, 2);
	diag_format(&dl.v[0], &t);
	assert_string_equal(t.buf, "render: resources.partition: cannot be a Slurm partition: only "
				   "letters, digits and '.', '_', '-' are allowed");
	sbuf_release(&t);
	sbuf_release(&s);
	diag_list_release(&dl);
	loaded_release(&l);
}

static void render__refuses_an_env_name_that_is_not_a_variable(void **state)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf s = SBUF_INIT;

	(void)state;
	load(&l, MINIMAL "env: {A: x}\n");
	assert_int_equal(l.rc, 0);
	free(l.job.env.v[0].name);
	l.job.env.v[0].name = strdup("A;rm -rf ~;B");
	assert_int_equal(render_batch_script(&l.job, &ctx, &s, &dl), -1);
	assert_int_equal(s.len, 0);
	sbuf_release(&s);
	diag_list_release(&dl);
	loaded_release(&l);
}

static void render__refuses_a_relative_hpctrain_path_and_a_bad_hash(void **state)
{
	struct loaded l;
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf s = SBUF_INIT;
	struct render_ctx bad = { "bin/hpctrain", "0.1.0", "xyz", NULL };

	(void)state;
	load(&l, MINIMAL);
	assert_int_equal(render_batch_script(&l.job, &bad, &s, &dl), -1);
	assert_int_equal(dl.n, 2);
	assert_string_equal(dl.v[0].msg, "the hpctrain path must be absolute");
	assert_string_equal(dl.v[1].msg, "the hash must be 64 lowercase hex digits");
	sbuf_release(&s);
	diag_list_release(&dl);
	loaded_release(&l);
}

static void render__shell_quote_keeps_every_byte(void **state)
{
	struct sbuf s = SBUF_INIT;

	(void)state;
	sbuf_add_shell_quoted(&s, "");
	assert_string_equal(s.buf, "''");
	sbuf_reset(&s);
	sbuf_add_shell_quoted(&s, "''");
	assert_string_equal(s.buf, "''\\'''\\'''");
	sbuf_reset(&s);
	sbuf_add_shell_quoted(&s, "a\nb\\c$d");
	assert_string_equal(s.buf, "'a\nb\\c$d'");
	sbuf_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(render__gives_identical_bytes_for_equal_jobs),
		cmocka_unit_test(render__asks_for_a_node_range_and_steps_on_the_nodes_granted),
		cmocka_unit_test(render__states_every_steps_geometry_at_every_shape),
		cmocka_unit_test(render__writes_an_sbatch_line_for_every_resource_field),
		cmocka_unit_test(render__leaves_out_what_the_spec_leaves_to_slurm),
		cmocka_unit_test(render__single_quotes_every_env_value_and_command_argument),
		cmocka_unit_test(render__runs_the_bundled_trainer_without_a_command),
		cmocka_unit_test(render__execs_the_program_directly_when_supervise_is_off),
		cmocka_unit_test(render__labels_one_log_when_per_rank_logs_is_off),
		cmocka_unit_test(render__gives_libslurm_units_in_the_options),
		cmocka_unit_test(render__refuses_option_values_that_could_break_an_sbatch_line),
		cmocka_unit_test(render__refuses_an_env_name_that_is_not_a_variable),
		cmocka_unit_test(render__refuses_a_relative_hpctrain_path_and_a_bad_hash),
		cmocka_unit_test(render__shell_quote_keeps_every_byte),
		cmocka_unit_test(render__runs_doctor_first_on_multi_node_jobs),
		cmocka_unit_test(render__stages_data_after_preflight_and_before_training),
		cmocka_unit_test(render__loads_each_module_then_the_venv_before_any_step),
		cmocka_unit_test(render__writes_environment_lines_only_for_what_is_set),
		cmocka_unit_test(render__refuses_a_module_read_as_an_option_and_a_relative_venv),
		cmocka_unit_test(render__puts_the_exclude_list_on_its_sbatch_line),
		cmocka_unit_test(render__makes_an_array_that_runs_each_task_in_its_point_run),
	};

	return cmocka_run_group_tests_name("test_render", tests, NULL, NULL);
}
