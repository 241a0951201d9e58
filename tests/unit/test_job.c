/* test_job.c - the logic that moved out of cli/ into the library
 * folders, tested where it now lives: a candidate shape loaded as plan
 * weighs it (launcher/job/plan_shapes), a job and its run as status
 * --json shows them (launcher/job/status_json), a job's data.stage
 * turned into a stage step's entries (launcher/stage/stage_job),
 * doctor's ledger commands (launcher/doctor/ledger_file), a run
 * prepared again for rerun (launcher/job/job_prepare), and a completed
 * run trained again only fresh or resumed as asked (launcher/job/again). */
#include "testlib.h"

#include "common/exitcode.h"            // defines: HPT_EXIT_*
#include "common/runfile.h"             // defines: RUNFILE_*
#include "launcher/doctor/ledger.h"     // defines: ledger_forget_node, ledger_reset, ledger_update
#include "launcher/job/again.h"         // defines: job_again_create, job_again_attempt
#include "launcher/job/job_prepare.h"   // defines: job_prepare, job_prepare_run
#include "launcher/job/plan_shapes.h"   // defines: plan_shapes_load
#include "launcher/runs/rundir.h"       // defines: rundir_create
#include "common/spec/specfile.h"       // defines: SPECFILE_RUN_SPEC
#include "launcher/job/status_json.h"   // defines: status_json_job, status_task_run, status_json_size
#include "launcher/stage/stage_job.h"   // defines: stage_job_from_spec

#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>

/* code: false: these jobs' code is not what they test (test_code.c's is) */
#define SHAPED MINIMAL "resources: {nodes: 1, ranks_per_node: 1}\ncommand: [true]\ncode: false\n"

static void job__a_shape_is_loaded_at_its_nodes_and_ranks_after_the_users_sets(void **state)
{
	struct spec_override sets[] = { { .arg = "env.K=v" } };
	struct plan_shapes_request r = { .where = "job.yaml", .text = SHAPED,
					  .len = strlen(SHAPED), .sets = sets, .nsets = 1 };
	struct shape_candidate c = { .nodes = 4, .ranks_per_node = 2 };
	struct diag_list dl = DIAG_LIST_INIT;
	struct job job;

	(void)state;
	memset(&job, 0, sizeof(job));
	assert_int_equal(plan_shapes_load(&r, &c, &job, &dl), 0);
	assert_int_equal(job.resources.nodes, 4);
	assert_int_equal(job.resources.ranks_per_node, 2);
	assert_int_equal(job.env.n, 1);
	assert_string_equal(job.env.v[0].name, "K");
	job_release(&job);
	diag_list_release(&dl);
}

static void job__a_shape_with_a_bad_set_is_a_bad_spec(void **state)
{
	struct spec_override sets[] = { { .arg = "resources.ranks_per_node=four" },
					{ .arg = "resources.time=soon" } };
	struct plan_shapes_request r = { .where = "job.yaml", .text = SHAPED,
					  .len = strlen(SHAPED), .sets = sets, .nsets = 2 };
	struct shape_candidate c = { .nodes = 2, .ranks_per_node = 1 };
	struct diag_list dl = DIAG_LIST_INIT;
	struct job job;

	(void)state;
	memset(&job, 0, sizeof(job));
	/* the candidate's own sets come last and win over the user's (its
	 * ranks_per_node here); the user's others still count */
	assert_int_equal(plan_shapes_load(&r, &c, &job, &dl), HPT_EXIT_BAD_SPEC);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].path, "resources.time");
	job_release(&job);
	diag_list_release(&dl);
}

static void job__an_array_tasks_status_names_its_point_and_its_run(void **state)
{
	char *dir = testlib_tmp_at("array"), *run = testlib_tmp_at("point-run"), *link, *got;
	struct hpt_slurm_job j = { .job_id = 17, .name = "sweep", .state = "RUNNING", .reason = "",
				   .nodes = "n1", .partition = "p", .work_dir = dir,
				   .array_job_id = 16, .array_task = 1, .array_pending = "" };
	json_t *o;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(run, 0700), 0);
	link = xasprintf(RUNFILE_TASK_LINK, dir, 1LL);
	assert_int_equal(symlink(run, link), 0);
	got = status_task_run(&j);
	assert_non_null(got);
	assert_string_equal(got, run);
	o = status_json_job(&j);
	assert_int_equal(json_integer_value(json_object_get(o, "job_id")), 16);
	assert_int_equal(json_integer_value(json_object_get(o, "array_task_id")), 1);
	assert_string_equal(json_string_value(json_object_get(o, "run")), run);
	assert_true(json_is_null(json_object_get(o, "exit_code")));
	json_decref(o);
	/* not an array task: no run of its own, the working directory */
	j.array_job_id = 0;
	j.array_task = -1;
	assert_null(status_task_run(&j));
	/* a run whose ranks never started has no size yet */
	o = status_json_size(run);
	assert_true(json_is_null(o));
	json_decref(o);
	free(got);
	free(link);
	free(dir);
	free(run);
}

static void job__a_stage_entry_without_a_pinned_manifest_is_refused(void **state)
{
	struct loaded l;
	struct stage_job sj;
	struct sbuf err = SBUF_INIT;

	(void)state;
	memset(&sj, 0, sizeof(sj));
	load(&l, MINIMAL "data:\n  stage:\n  - {name: fmnist, src: /shared/fmnist}\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(stage_job_from_spec(&l.job, "/tmp", 1000, &sj, &err), HPT_EXIT_BAD_SPEC);
	assert_string_equal(err.buf, "data.stage fmnist: no pinned manifest; run the job through "
				     "hpctrain submit");
	stage_job_release(&sj);
	/* pinned, as submit does: the step gets the entry and a cache */
	memset(&sj, 0, sizeof(sj));
	l.job.data.stage[0].manifest = xstrdup("sha256:00");
	sbuf_reset(&err);
	assert_int_equal(stage_job_from_spec(&l.job, "/tmp", 1000, &sj, &err), 0);
	assert_int_equal(sj.n, 1);
	assert_string_equal(sj.v[0].name, "fmnist");
	assert_non_null(sj.cache);
	stage_job_release(&sj);
	loaded_release(&l);
	sbuf_release(&err);
}

static int add_node(json_t *doc, void *arg)
{
	struct ledger_event ev = { .node = arg, .failed = true, .score = -1, .reason = "test" };

	ledger_record(doc, "c", &ev, 1, 1000);
	return 0;
}

static void job__doctor_forgets_one_node_and_resets_the_ledger(void **state)
{
	char *path = testlib_tmp_at("ledger.json");
	struct sbuf note = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	assert_int_equal(ledger_update(path, add_node, "n1", &err), 0);
	assert_int_equal(ledger_update(path, add_node, "n2", &err), 0);
	assert_int_equal(ledger_forget_node(path, "n1", &note, &err), 0);
	/* gone now: forgetting it again is "not in the ledger" */
	assert_int_equal(ledger_forget_node(path, "n1", &note, &err), 1);
	assert_int_equal(ledger_forget_node(path, "n2", &note, &err), 0);
	assert_int_equal(note.len, 0);
	assert_int_equal(ledger_reset(path, &note, &err), 0);
	assert_non_null(strstr(note.buf, ".reset-"));
	sbuf_release(&note);
	sbuf_release(&err);
	free(path);
}

/* A run's job prepared again (rerun): as it was, or refused when its
 * resolved.yaml was edited. */
static void job__a_run_is_prepared_again_only_while_it_resolves_to_itself(void **state)
{
	static const char spec[] = SHAPED;
	struct job_prepare_request r = { .where = "job.yaml", .text = spec, .len = sizeof(spec) - 1 };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	struct attempt a, b;
	char *path = NULL;
	FILE *f;

	(void)state;
	attempt_init(&a);
	assert_int_equal(job_prepare(&r, &a, &dl), 0);
	assert_int_equal(rundir_create(testlib_tmp, a.job.name, a.sha256, a.resolved.buf,
				       a.resolved.len, &rd, &err), 0);
	attempt_init(&b);
	assert_int_equal(job_prepare_run(&rd, false, false, &b, &dl), 0);
	assert_string_equal(b.sha256, a.sha256);
	assert_int_equal(b.renders, 0);
	attempt_release(&b);
	path = xasprintf("%s/" SPECFILE_RUN_SPEC, rd.run);
	chmod(path, 0600);
	f = fopen(path, "a");
	assert_non_null(f);
	fputs("# edited\n", f);
	fclose(f);
	attempt_init(&b);
	assert_int_equal(job_prepare_run(&rd, false, false, &b, &dl), HPT_EXIT_BAD_SPEC);
	attempt_release(&b);
	attempt_release(&a);
	rundir_release(&rd);
	free(path);
	sbuf_release(&err);
	diag_list_release(&dl);
}

/* A file in an attempt directory, as its writer would leave it. */
static void put(const struct rundir *rd, const char *file, const char *text)
{
	char *path = xasprintf("%s/%s", rd->dir, file);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void job__a_completed_run_is_trained_again_only_fresh_or_resumed_as_asked(void **state)
{
	static const char spec[] = SHAPED;
	struct job_prepare_request r = { .where = "job.yaml", .text = spec, .len = sizeof(spec) - 1 };
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf err = SBUF_INIT;
	struct rundir first = RUNDIR_INIT, rd = RUNDIR_INIT;
	struct stat st;
	struct attempt a;
	char *link;

	(void)state;
	attempt_init(&a);
	assert_int_equal(job_prepare(&r, &a, &dl), 0);
	free(a.job.output.dir);
	a.job.output.dir = xasprintf("%s/again", testlib_tmp);
	/* a new run, whatever was asked */
	assert_int_equal(job_again_create(&a, JOB_AGAIN_ASK, "submit", &first, &err), 0);
	assert_int_equal(first.attempt, 1);
	put(&first, RUNFILE_SUBMIT, "{\"job_id\": 41}\n");
	/* requeued, then failed: not completed, a new attempt is fresh */
	put(&first, RUNFILE_END, "{\"exit_status\": 0, \"requeued\": true, \"job_id\": 41, \"restart\": 0}\n");
	assert_int_equal(job_again_create(&a, JOB_AGAIN_ASK, "submit", &rd, &err), 0);
	assert_int_equal(rd.attempt, 2);
	put(&rd, RUNFILE_SUBMIT, "{\"job_id\": 42}\n");
	put(&rd, RUNFILE_END, "{\"exit_status\": 1, \"requeued\": false, \"job_id\": 42, \"restart\": 0}\n");
	rundir_release(&rd);
	assert_int_equal(job_again_attempt(first.run, JOB_AGAIN_ASK, "rerun", &rd, &err), 0);
	assert_int_equal(rd.attempt, 3);
	/* completed: asked which, naming the attempt and both options */
	put(&rd, RUNFILE_SUBMIT, "{\"job_id\": 43}\n");
	put(&rd, RUNFILE_END, "{\"exit_status\": 0, \"requeued\": false, \"job_id\": 43, \"restart\": 1}\n");
	rundir_release(&rd);
	assert_int_equal(job_again_create(&a, JOB_AGAIN_ASK, "submit", &rd, &err), HPT_EXIT_USAGE);
	assert_non_null(strstr(err.buf, "/attempts/3 completed (attempt 3, job 43): submit --fresh "
					"trains it again from step 0 into new checkpoints, submit "
					"--resume goes on from its last checkpoint"));
	sbuf_reset(&err);
	assert_int_equal(job_again_attempt(first.run, JOB_AGAIN_ASK, "rerun", &rd, &err), HPT_EXIT_USAGE);
	assert_non_null(strstr(err.buf, "rerun --fresh"));
	/* fresh: checkpoints of its own; resume: a link to the run's */
	assert_int_equal(job_again_create(&a, JOB_AGAIN_FRESH, "submit", &rd, &err), 0);
	link = xasprintf("%s/" RUNFILE_CHECKPOINTS, rd.dir);
	assert_int_not_equal(lstat(link, &st), 0);
	free(link);
	rundir_release(&rd);
	assert_int_equal(job_again_attempt(first.run, JOB_AGAIN_RESUME, "rerun", &rd, &err), 0);
	link = xasprintf("%s/" RUNFILE_CHECKPOINTS, rd.dir);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	free(link);
	rundir_release(&rd);
	rundir_release(&first);
	attempt_release(&a);
	sbuf_release(&err);
	diag_list_release(&dl);
}

static int group_setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_job");
}

static int group_teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(job__a_shape_is_loaded_at_its_nodes_and_ranks_after_the_users_sets),
		cmocka_unit_test(job__a_shape_with_a_bad_set_is_a_bad_spec),
		cmocka_unit_test(job__an_array_tasks_status_names_its_point_and_its_run),
		cmocka_unit_test(job__a_stage_entry_without_a_pinned_manifest_is_refused),
		cmocka_unit_test(job__doctor_forgets_one_node_and_resets_the_ledger),
		cmocka_unit_test(job__a_run_is_prepared_again_only_while_it_resolves_to_itself),
		cmocka_unit_test(job__a_completed_run_is_trained_again_only_fresh_or_resumed_as_asked),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
