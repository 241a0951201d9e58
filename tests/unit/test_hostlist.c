/* test_hostlist.c - launcher/slurm's hostlists (hpt_slurm_hostlist,
 * through libslurm) at the sizes of the largest sites: 65,536 node
 * names fold to one range, and the check takes it; 8,192 nodes with
 * every other one left out keep every range.  (libslurm merges ranges in
 * quadratic time: 65,536 names in reverse order, each its own range
 * until sorted, take a minute under ASan.) */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"          // defines: struct sbuf
#include "launcher/slurm/slurm.h" // defines: hpt_slurm_hostlist, hpt_slurm_hostlist_check

#include <stdio.h>
#include <stdlib.h>

enum { N = 65536 };

static void hostlist__65536_names_fold_to_one_range(void **state)
{
	char **names = malloc(N * sizeof(*names));
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;

	(void)state;
	for (int i = 0; i < N; i++) {
		names[i] = malloc(16);
		snprintf(names[i], 16, "node%d", i + 1);
	}
	assert_int_equal(hpt_slurm_hostlist(NULL, (const char *const *)names, N, &out), 0);
	assert_string_equal(out.buf, "node[1-65536]");
	assert_int_equal(hpt_slurm_hostlist_check(out.buf, &err), 0);
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(names);
	sbuf_release(&out);
	sbuf_release(&err);
}

/* Every other node of 8,192 (the largest job hpctrain plans for):
 * 4,096 ranges, all kept. */
static void hostlist__every_other_node_of_8192_keeps_every_range(void **state)
{
	enum { M = 8192 };
	char **names = malloc(M / 2 * sizeof(*names));
	struct sbuf out = SBUF_INIT;
	size_t commas = 0;

	(void)state;
	for (int i = 0; i < M / 2; i++) {
		names[i] = malloc(16);
		snprintf(names[i], 16, "node%d", 2 * i + 1);
	}
	assert_int_equal(hpt_slurm_hostlist("node5", (const char *const *)names, M / 2, &out), 0);
	for (size_t i = 0; i < out.len; i++)
		commas += out.buf[i] == ',';
	assert_int_equal(commas, M / 2 - 1);
	assert_true(strncmp(out.buf, "node[1,3,5,7,", 13) == 0);
	for (int i = 0; i < M / 2; i++)
		free(names[i]);
	free(names);
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostlist__65536_names_fold_to_one_range),
		cmocka_unit_test(hostlist__every_other_node_of_8192_keeps_every_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
