/* test_lost.c - launcher/doctor/lost: a failed step's nodes, and the
 * program's failure said in one line, SIGKILL and the OOM killer's
 * included. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"          // defines: struct sbuf
#include "launcher/doctor/lost.h" // defines: lost_program_failure, lost_first_status, lost_record_nodes

#include <jansson.h>

static json_t *rec(int rank, const char *node, const char *state, int status, int sig)
{
	return json_pack("{s:i, s:s, s:s, s:i, s:o}", "rank", rank, "node", node, "state", state,
			 "exit_status", status, "signal", sig ? json_integer(sig) : json_null());
}

static json_t *at(json_t *r, double updated)
{
	json_object_set_new(r, "updated", json_real(updated));
	return r;
}

/* A SIGKILL is the program's: the OOM killer's when its memory cgroup
 * counted one, else a person's, Slurm's or another process's. */
static void lost__says_what_ended_the_failed_ranks_first_failed_first(void **state)
{
	json_t *r[5];
	struct sbuf why = SBUF_INIT;

	(void)state;
	r[0] = at(rec(0, "node1", "exited", 143, 15), 30);
	r[1] = at(rec(1, "node2", "exited", 137, 9), 10);
	json_object_set_new(r[1], "oom_kills", json_integer(1));
	r[2] = at(rec(2, "node2", "exited", 137, 9), 20);
	json_object_set_new(r[2], "oom_kills", json_integer(0));
	r[3] = at(rec(3, "node3", "exited", 0, 0), 5);
	r[4] = at(rec(4, "node4", "running", -1, 0), 1);
	assert_int_equal(lost_program_failure(r, 5, &why), 3);
	assert_string_equal(why.buf, "rank 1 on node2 killed by the OOM killer (signal 9); "
				     "rank 2 on node2 killed by signal 9, not by the OOM killer; "
				     "rank 0 on node1 killed by signal 15 (SIGTERM)");
	/* the job ends with the first failure's status, not srun's TERM of the rest */
	assert_int_equal(lost_first_status(r, 5), 137);
	assert_int_equal(lost_first_status(r + 3, 2), -1);
	/* a stalled rank's launcher killed the program (137) and exited 76:
	 * the job's status is the launcher's, as without a restart loop */
	json_object_set_new(r[1], "state", json_string("stalled"));
	assert_int_equal(lost_first_status(r, 5), 76);
	json_object_set_new(r[1], "state", json_string("unstarted"));
	assert_int_equal(lost_first_status(r, 5), 77);
	for (size_t i = 0; i < 5; i++)
		json_decref(r[i]);
	sbuf_release(&why);
}

static void lost__names_three_failed_ranks_and_counts_the_rest(void **state)
{
	json_t *r[6];
	struct sbuf why = SBUF_INIT;

	(void)state;
	for (int i = 0; i < 6; i++)
		r[i] = at(rec(i, "node1", "exited", 1, 0), 7);
	json_object_set_new(r[5], "state", json_string("stalled"));
	json_object_set_new(r[5], "updated", json_real(1));
	assert_int_equal(lost_program_failure(r, 6, &why), 6);
	assert_string_equal(why.buf, "rank 5 on node1 stalled; rank 0 on node1 exited 1; "
				     "rank 1 on node1 exited 1; 3 more ranks");
	for (size_t i = 0; i < 6; i++)
		json_decref(r[i]);
	sbuf_release(&why);
}

static void lost__lists_each_node_a_run_had_once_in_rank_order(void **state)
{
	json_t *r[4];
	const char *nodes[4];

	(void)state;
	r[0] = rec(0, "node2", "exited", 0, 0);
	r[1] = rec(1, "node1", "running", -1, 0);
	r[2] = rec(2, "node2", "exited", 0, 0);
	r[3] = json_pack("{s:i}", "rank", 3);
	assert_int_equal(lost_record_nodes(r, 4, nodes), 2);
	assert_string_equal(nodes[0], "node2");
	assert_string_equal(nodes[1], "node1");
	for (size_t i = 0; i < 4; i++)
		json_decref(r[i]);
}

static void lost__finds_no_failure_where_every_rank_ended_well(void **state)
{
	json_t *r[2];
	struct sbuf why = SBUF_INIT;

	(void)state;
	r[0] = rec(0, "node1", "exited", 0, 0);
	r[1] = rec(1, "node2", "running", -1, 0);
	assert_int_equal(lost_program_failure(r, 2, &why), 0);
	assert_string_equal(why.buf, "");
	for (size_t i = 0; i < 2; i++)
		json_decref(r[i]);
	sbuf_release(&why);
}

/* A crash at start-up: a signal of the rank's own before any heartbeat;
 * never a SIGKILL or SIGTERM, never once a rank has stepped, never the
 * supervisors' own abort after a stall or no start. */
static void lost__tells_a_crash_at_start_up_from_a_failure_after_it(void **state)
{
	json_t *r[2];
	struct sbuf why = SBUF_INIT;

	(void)state;
	r[0] = rec(0, "node1", "exited", 143, 15);
	r[1] = rec(1, "node2", "exited", 139, 11);
	assert_true(lost_startup_crash(r, 2, &why));
	assert_string_equal(why.buf, "rank 1 on node2 killed by signal 11 (SIGSEGV)");
	sbuf_reset(&why);
	json_object_set_new(r[0], "last_heartbeat", json_real(12.5));
	assert_false(lost_startup_crash(r, 2, &why));
	json_object_set_new(r[0], "last_heartbeat", json_null());
	json_object_set_new(r[1], "signal", json_integer(9));
	assert_false(lost_startup_crash(r, 2, &why));
	assert_int_equal(why.len, 0);
	/* a stall's autopsy aborts a Python rank for its traceback */
	json_object_set_new(r[1], "signal", json_integer(6));
	json_object_set_new(r[1], "state", json_string("stalled"));
	assert_false(lost_startup_crash(r, 2, &why));
	json_object_set_new(r[1], "state", json_string("unstarted"));
	assert_false(lost_startup_crash(r, 2, &why));
	assert_int_equal(why.len, 0);
	json_decref(r[0]);
	json_decref(r[1]);
	sbuf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lost__says_what_ended_the_failed_ranks_first_failed_first),
		cmocka_unit_test(lost__names_three_failed_ranks_and_counts_the_rest),
		cmocka_unit_test(lost__finds_no_failure_where_every_rank_ended_well),
		cmocka_unit_test(lost__lists_each_node_a_run_had_once_in_rank_order),
		cmocka_unit_test(lost__tells_a_crash_at_start_up_from_a_failure_after_it),
	};

	return cmocka_run_group_tests_name("test_lost", tests, NULL, NULL);
}
