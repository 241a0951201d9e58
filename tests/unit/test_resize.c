/* test_resize.c - launcher/runs/resize (the next attempt's size, never
 * below the range's MIN) and attempt_size (each attempt's granted size
 * in nodes.json, and what a rank of a later attempt is told).  Works in
 * a fresh directory under $TMPDIR (or /tmp), removed at the end. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"                // defines: struct sbuf
#include "launcher/runs/attempt_size.h" // defines: attempt_size_record, attempt_size_ctx_load
#include "launcher/runs/resize.h"       // defines: resize_next
#include "launcher/runs/rundir.h"       // defines: rundir_create, rundir_new_attempt

#include <stdlib.h>
#include <string.h>

#define HASH "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
#define RESOLVED "version: 1\nname: t\n"

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_resize");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

static void resize__shrinks_to_the_nodes_left_but_never_below_min(void **state)
{
	struct sbuf why = SBUF_INIT;
	int64_t next = -1;

	(void)state;
	assert_int_equal(resize_next(1, 2, 5, &next, &why), 0);
	assert_int_equal(next, 2); /* enough nodes: the range's MAX */
	assert_int_equal(resize_next(1, 2, 1, &next, &why), 0);
	assert_int_equal(next, 1); /* one left after node2 was lost */
	assert_int_equal(resize_next(2, 8, 5, &next, &why), 0);
	assert_int_equal(next, 5);
	assert_int_equal(resize_next(2, 8, -1, &next, &why), 0);
	assert_int_equal(next, 8); /* not known: ask for MAX, Slurm grants what it can */
	assert_int_equal(resize_next(4, 4, 4, &next, &why), 0);
	assert_int_equal(next, 4); /* a fixed size is the range N-N */
	assert_string_equal(why.buf, "");
	assert_int_equal(resize_next(3, 8, 2, &next, &why), -1);
	assert_string_equal(why.buf, "2 nodes left, resources.nodes needs at least 3");
	sbuf_reset(&why);
	assert_int_equal(resize_next(2, 2, 1, &next, &why), -1);
	assert_string_equal(why.buf, "1 node left, resources.nodes needs at least 2");
	sbuf_release(&why);
}

static void attempt_size__tells_a_later_attempt_the_world_size_before_it_unless_fresh(void **state)
{
	struct rundir one = RUNDIR_INIT, two = RUNDIR_INIT, three = RUNDIR_INIT;
	struct attempt_size_ctx c = { 0 };
	struct sbuf err = SBUF_INIT, want = SBUF_INIT;
	int64_t nodes, world;
	char *out = testlib_tmp_at("runs");

	(void)state;
	assert_int_equal(rundir_create(out, "t", HASH, RESOLVED, strlen(RESOLVED), &one, &err), 0);
	free(out);
	assert_int_equal(attempt_size_ctx_load(one.dir, &c, &err), 0);
	assert_int_equal(c.attempt, 1);
	assert_int_equal(c.prev_world_size, 0);
	sbuf_addf(&want, "%s/checkpoints", one.run);
	assert_string_equal(c.checkpoint_dir, want.buf);
	attempt_size_ctx_release(&c);

	assert_int_equal(attempt_size_load(one.dir, &nodes, &world), -1);
	setenv("SLURM_JOB_NUM_NODES", "2", 1);
	assert_int_equal(attempt_size_record(one.dir, 8, &err), 0);
	unsetenv("SLURM_JOB_NUM_NODES");
	assert_int_equal(attempt_size_load(one.dir, &nodes, &world), 0);
	assert_int_equal(nodes, 2);
	assert_int_equal(world, 8);

	/* attempt 2's preflight failed: it recorded no size; 3 looks past
	 * it.  Both resume, as the doctor's resubmissions do. */
	assert_int_equal(rundir_new_attempt(one.run, &two, &err), 0);
	assert_int_equal(rundir_resume(&two, &err), 0);
	assert_int_equal(rundir_new_attempt(one.run, &three, &err), 0);
	assert_int_equal(rundir_resume(&three, &err), 0);
	assert_int_equal(attempt_size_ctx_load(three.dir, &c, &err), 0);
	assert_int_equal(c.attempt, 3);
	assert_int_equal(c.prev_world_size, 8);
	assert_string_equal(c.checkpoint_dir, want.buf);
	attempt_size_ctx_release(&c);

	setenv("SLURM_NNODES", "1", 1);
	assert_int_equal(attempt_size_record(two.dir, 4, &err), 0);
	unsetenv("SLURM_NNODES");
	assert_int_equal(attempt_size_ctx_load(three.dir, &c, &err), 0);
	assert_int_equal(c.prev_world_size, 4);
	attempt_size_ctx_release(&c);
	/* a fresh attempt: checkpoints of its own, nothing before it */
	rundir_release(&two);
	assert_int_equal(rundir_new_attempt(one.run, &two, &err), 0);
	assert_int_equal(attempt_size_ctx_load(two.dir, &c, &err), 0);
	assert_int_equal(c.attempt, 4);
	assert_int_equal(c.prev_world_size, 0);
	sbuf_reset(&want);
	sbuf_addf(&want, "%s/checkpoints", two.dir);
	assert_string_equal(c.checkpoint_dir, want.buf);
	attempt_size_ctx_release(&c);
	assert_int_equal(attempt_size_ctx_load("nowhere", &c, &err), -1);
	attempt_size_ctx_release(&c);
	rundir_release(&one);
	rundir_release(&two);
	rundir_release(&three);
	sbuf_release(&err);
	sbuf_release(&want);
}

/* A requeue runs the same attempt again: its ranks learn the size of
 * the run before it from the attempt's own record, before and after
 * this run's rank 0 rewrites it. */
static void attempt_size__tells_a_requeued_run_the_world_size_before_the_requeue(void **state)
{
	struct rundir one = RUNDIR_INIT;
	struct attempt_size_ctx c = { 0 };
	struct sbuf err = SBUF_INIT;
	int64_t nodes, world;
	char *out = testlib_tmp_at("runs");

	(void)state;
	assert_int_equal(rundir_create(out, "t", HASH, RESOLVED, strlen(RESOLVED), &one, &err), 0);
	free(out);
	setenv("SLURM_JOB_NUM_NODES", "2", 1);
	assert_int_equal(attempt_size_record(one.dir, 2, &err), 0);

	/* node2 failed; Slurm requeued the job on node1 alone */
	setenv("SLURM_RESTART_COUNT", "1", 1);
	setenv("SLURM_JOB_NUM_NODES", "1", 1);
	assert_int_equal(attempt_size_ctx_load(one.dir, &c, &err), 0);
	assert_int_equal(c.attempt, 1);
	assert_int_equal(c.prev_world_size, 2);
	attempt_size_ctx_release(&c);
	assert_int_equal(attempt_size_record(one.dir, 1, &err), 0);
	assert_int_equal(attempt_size_ctx_load(one.dir, &c, &err), 0);
	assert_int_equal(c.prev_world_size, 2);
	attempt_size_ctx_release(&c);
	assert_int_equal(attempt_size_load(one.dir, &nodes, &world), 0);
	assert_int_equal(nodes, 1);
	assert_int_equal(world, 1);

	/* preempted and requeued again, at 1 rank as before */
	setenv("SLURM_RESTART_COUNT", "2", 1);
	assert_int_equal(attempt_size_ctx_load(one.dir, &c, &err), 0);
	assert_int_equal(c.prev_world_size, 1);
	attempt_size_ctx_release(&c);
	unsetenv("SLURM_RESTART_COUNT");
	unsetenv("SLURM_JOB_NUM_NODES");
	rundir_release(&one);
	sbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resize__shrinks_to_the_nodes_left_but_never_below_min),
		cmocka_unit_test_setup_teardown(attempt_size__tells_a_later_attempt_the_world_size_before_it_unless_fresh,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			attempt_size__tells_a_requeued_run_the_world_size_before_the_requeue, setup,
			teardown),
	};

	return cmocka_run_group_tests_name("test_resize", tests, NULL, NULL);
}
