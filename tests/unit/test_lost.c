/* test_lost.c - launcher/doctor/lost: a lost node (its rank killed by
 * SIGKILL or SIGBUS) told apart from a program's own failure. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"          // defines: struct sbuf
#include "launcher/doctor/lost.h" // defines: lost_nodes, lost_record_nodes

#include <jansson.h>

static json_t *rec(int rank, const char *node, const char *state, int status, int sig)
{
	return json_pack("{s:i, s:s, s:s, s:i, s:o}", "rank", rank, "node", node, "state", state,
			 "exit_status", status, "signal", sig ? json_integer(sig) : json_null());
}

static void lost__names_the_nodes_of_ranks_killed_by_sigkill_or_sigbus(void **state)
{
	json_t *r[5];
	const char *nodes[5];
	struct sbuf why = SBUF_INIT;
	size_t k;

	(void)state;
	r[0] = rec(0, "node1", "exited", 0, 0);
	r[1] = rec(1, "node2", "exited", 137, 9);
	r[2] = rec(2, "node2", "exited", 137, 9);
	r[3] = rec(3, "node3", "exited", 135, 7);
	r[4] = rec(4, "node4", "running", -1, 0);
	k = lost_nodes(r, 5, nodes, &why);
	assert_int_equal(k, 2);
	assert_string_equal(nodes[0], "node2");
	assert_string_equal(nodes[1], "node3");
	assert_string_equal(why.buf, "rank 1 on node2 killed by signal 9; rank 2 on node2 killed by "
				     "signal 9; rank 3 on node3 killed by signal 7");
	for (size_t i = 0; i < 5; i++)
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

static void lost__leaves_a_program_error_alone(void **state)
{
	json_t *r[3];
	const char *nodes[3];
	struct sbuf why = SBUF_INIT;

	(void)state;
	r[0] = rec(0, "node1", "exited", 1, 0);   /* exit(1) */
	r[1] = rec(1, "node2", "exited", 139, 11); /* its own SIGSEGV */
	r[2] = rec(2, "node3", "exited", 134, 6);  /* abort() */
	assert_int_equal(lost_nodes(r, 3, nodes, &why), 0);
	assert_string_equal(why.buf, "");
	for (size_t i = 0; i < 3; i++)
		json_decref(r[i]);
	sbuf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lost__names_the_nodes_of_ranks_killed_by_sigkill_or_sigbus),
		cmocka_unit_test(lost__leaves_a_program_error_alone),
		cmocka_unit_test(lost__lists_each_node_a_run_had_once_in_rank_order),
	};

	return cmocka_run_group_tests_name("test_lost", tests, NULL, NULL);
}
