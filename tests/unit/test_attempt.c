/* test_attempt.c - launcher/runs/attempt: an attempt is resolved, then
 * rendered once, with its exclude list, into the script and the Slurm
 * options the script was written from; submitting one rendered any
 * other number of times is refused before anything is written; a run's
 * resolved.yaml that no longer resolves to itself is refused.  The
 * submission itself is tests/cli/submit.bats and rerun.bats. */
#include "tests/unit/testlib.h"

#include "common/exitcode.h"        // defines: HPT_EXIT_INTERNAL
#include "launcher/runs/attempt.h"  // defines: struct attempt, attempt_*
#include "launcher/runs/rundir.h"   // defines: rundir_create

#include <jansson.h>
#include <unistd.h>

#define HPCTRAIN "/opt/hpctrain/bin/hpctrain"
#define SPEC MINIMAL "resources: {nodes: 2, ranks_per_node: 1, time: \"00:05:00\"}\n" \
	     "command: [true]\n"

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_attempt");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static void attempt_load(struct attempt *a, const char *spec)
{
	struct diag_list dl = DIAG_LIST_INIT;

	attempt_init(a);
	assert_int_equal(spec_load("job.yaml", spec, strlen(spec), NULL, 0, &a->job, &dl), 0);
	assert_int_equal(attempt_resolve(a), 0);
	diag_list_release(&dl);
}

/* Each option is on an #SBATCH line of the script: one render, both. */
static void attempt__renders_script_and_options_once_with_the_exclude_list(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct attempt a;

	(void)state;
	attempt_load(&a, SPEC);
	assert_int_equal(a.renders, 0);
	a.exclude = xstrdup("node[3,7]");
	assert_int_equal(attempt_render(&a, HPCTRAIN, &dl), 0);
	assert_int_equal(a.renders, 1);
	assert_string_equal(render_opts_find(&a.opts, RENDER_OPT_EXCLUDE)->text, "node[3,7]");
	for (size_t i = 0; i < a.opts.n; i++) {
		char *line = a.opts.v[i].text ? xasprintf("#SBATCH --%s=%s\n", a.opts.v[i].name,
							  a.opts.v[i].text)
					      : xasprintf("#SBATCH --%s\n", a.opts.v[i].name);

		assert_non_null(strstr(a.script.buf, line));
		free(line);
	}
	attempt_release(&a);
	diag_list_release(&dl);
}

/* A range asks for as many of the idle nodes as it can use, never below
 * MIN nor above MAX; the resolved form keeps the spec's range. */
static void attempt__asks_a_range_for_the_idle_nodes_it_can_use(void **state)
{
	static const struct { int64_t idle; const char *want; } cases[] = {
		{ -1, "2-6" }, { 0, "2-6" }, { 1, "2-6" }, { 4, "4-6" }, { 6, "6" }, { 9, "6" },
	};
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct attempt a;

		attempt_load(&a, "version: 1\nname: r\nresources: {nodes: 2-6}\n");
		a.nodes_idle = cases[i].idle;
		assert_int_equal(attempt_render(&a, HPCTRAIN, &dl), 0);
		assert_string_equal(render_opts_find(&a.opts, RENDER_OPT_NODES)->text, cases[i].want);
		assert_non_null(strstr(a.resolved.buf, "nodes: 2-6\n"));
		attempt_release(&a);
	}
	diag_list_release(&dl);
}

/* What the script says is what Slurm is asked for: an attempt rendered
 * twice (the exclude list learnt too late) or never is a bug, refused
 * before the run directory is touched. */
static void attempt__submit_refuses_an_attempt_not_rendered_exactly_once(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct rundir rd = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT, warn = SBUF_INIT;
	struct attempt a;
	json_t *rec = NULL;

	(void)state;
	attempt_load(&a, SPEC);
	assert_int_equal(attempt_submit(&a, &rd, &rec, &err, &warn), HPT_EXIT_INTERNAL);
	assert_non_null(strstr(err.buf, "an attempt rendered 0 times"));
	assert_int_equal(attempt_render(&a, HPCTRAIN, &dl), 0);
	assert_int_equal(attempt_render(&a, HPCTRAIN, &dl), 0);
	sbuf_reset(&err);
	assert_int_equal(attempt_submit(&a, &rd, &rec, &err, &warn), HPT_EXIT_INTERNAL);
	assert_non_null(strstr(err.buf, "an attempt rendered 2 times"));
	assert_null(rec);
	attempt_release(&a);
	sbuf_release(&err);
	sbuf_release(&warn);
	diag_list_release(&dl);
}

/* A run directory whose path is not UTF-8 cannot be named in submit.json
 * (JSON is UTF-8): refused, naming it escaped, before Slurm has the job,
 * and the fresh directory taken away; never a job left without its
 * record ("submitted, but its record was not written"). */
static void attempt__submit_refuses_a_run_directory_not_utf8_before_slurm(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct rundir rd = RUNDIR_INIT;
	struct sbuf err = SBUF_INIT, warn = SBUF_INIT;
	struct attempt a;
	json_t *rec = NULL;
	char *run, *out;

	(void)state;
	attempt_load(&a, SPEC);
	assert_int_equal(attempt_render(&a, HPCTRAIN, &dl), 0);
	out = testlib_tmp_at("out-\xff");
	assert_int_equal(rundir_create(out, a.job.name, a.sha256, a.resolved.buf, a.resolved.len,
				       &rd, &err), 0);
	run = xstrdup(rd.dir);
	assert_int_equal(attempt_submit(&a, &rd, &rec, &err, &warn), HPT_EXIT_NO_INPUT);
	assert_non_null(strstr(err.buf, "the run directory '"));
	assert_non_null(strstr(err.buf, "/out-\\xff/"));
	assert_non_null(strstr(err.buf, "' is not UTF-8 (its bytes shown as \\xHH): submit.json "
					"must name it exactly; rename it"));
	assert_null(rec);
	assert_int_equal(access(run, F_OK), -1); /* abandoned, as any refused attempt */
	free(run);
	free(out);
	rundir_release(&rd);
	attempt_release(&a);
	sbuf_release(&err);
	sbuf_release(&warn);
	diag_list_release(&dl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attempt__renders_script_and_options_once_with_the_exclude_list),
		cmocka_unit_test(attempt__asks_a_range_for_the_idle_nodes_it_can_use),
		cmocka_unit_test(attempt__submit_refuses_an_attempt_not_rendered_exactly_once),
		cmocka_unit_test(attempt__submit_refuses_a_run_directory_not_utf8_before_slurm),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
