/* test_contract_inside.c - launcher/rank/contract_inside: the contract
 * read from a process by its PID, as the supervisor reads a container's
 * program.  The process is this test's own: planned on the CPUs it has,
 * nothing is said; planned on fewer, it is re-pinned and a warning says
 * so (its affinity is given back after); a PID that is gone reads as
 * NULL.  The plan is rank 2 of 8 on the DGX H100 fixture, its CPUs
 * replaced by this machine's. */
#include "tests/unit/topolib.h"
#include "launcher/rank/contract.h" // defines: contract_inside_check
#include "launcher/rank/env_list.h" // defines: struct env_list
#include "topology/plan.h"     // defines: plan_slices
#include "common/spec/spec.h"  // defines: enum bind_contract

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct node {
	struct node_topo t;
	struct plan plan;
	struct env_list env; /* empty: the environment is not what is tested */
	cpu_set_t had;
};

static void node_setup(struct node *n)
{
	struct plan_request req = { .ranks = 8, .policy = PLAN_POLICY_INIT };
	struct diag_list dl = DIAG_LIST_INIT;
	struct bitmap *cpus;

	memset(n, 0, sizeof(*n));
	load("224em64t-2n56c2t-dgxh100.xml", &n->t);
	plan_init(&n->plan);
	assert_int_equal(plan_slices(&n->t, &req, &n->plan, &dl), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(n->had), &n->had), 0);
	cpus = &n->plan.slices[2].cpuset;
	bitmap_zero(cpus);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &n->had))
			bitmap_set(cpus, (unsigned)i);
	diag_list_release(&dl);
}

static void node_release(struct node *n)
{
	assert_int_equal(sched_setaffinity(0, sizeof(n->had), &n->had), 0);
	env_list_release(&n->env);
	plan_release(&n->plan);
	topo_release(&n->t);
}

static json_t *check(struct node *n, pid_t pid)
{
	struct contract_plan plan = { &n->plan.slices[2], true, false, &n->env };

	return contract_inside_check(&n->t, &plan, pid);
}

static void contract_inside__a_process_on_its_planned_cpus_is_left_alone(void **state)
{
	struct node n;
	json_t *c;

	(void)state;
	node_setup(&n);
	c = check(&n, getpid());
	assert_non_null(c);
	assert_int_equal(json_integer_value(json_object_get(c, "pid")), getpid());
	assert_true(json_is_false(json_object_get(c, "repinned")));
	assert_int_equal(json_array_size(json_object_get(c, "warnings")), 0);
	json_decref(c);
	node_release(&n);
}

static void contract_inside__a_process_moved_off_its_cpus_is_repinned_and_warned_of(void **state)
{
	struct node n;
	struct sbuf want = SBUF_INIT;
	cpu_set_t now;
	json_t *c, *w;
	int first;

	(void)state;
	node_setup(&n);
	if (CPU_COUNT(&n.had) < 2) {
		node_release(&n);
		skip(); /* one CPU: nothing to be moved off */
	}
	/* planned on the first CPU alone; the process has them all */
	first = bitmap_first(&n.plan.slices[2].cpuset);
	bitmap_zero(&n.plan.slices[2].cpuset);
	bitmap_set(&n.plan.slices[2].cpuset, (unsigned)first);
	c = check(&n, getpid());
	assert_true(json_is_true(json_object_get(c, "repinned")));
	w = json_object_get(c, "warnings");
	assert_int_equal(json_array_size(w), 2);
	sbuf_addf(&want, "re-pinned to the planned %d", first);
	assert_non_null(strstr(json_string_value(json_array_get(w, 1)), want.buf));
	/* re-pinned: both warnings put right, no failing contract broken */
	assert_int_equal(json_array_size(json_object_get(c, "fixed")), 2);
	assert_false(contract_is_broken(c, BIND_CONTRACT_FAIL));
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	assert_int_equal(CPU_COUNT(&now), 1);
	assert_true(CPU_ISSET(first, &now));
	json_decref(c);
	sbuf_release(&want);
	node_release(&n);
}

static void contract_inside__a_process_that_is_gone_reads_as_null(void **state)
{
	struct node n;
	pid_t pid = fork();

	(void)state;
	if (!pid)
		_exit(0);
	assert_true(pid > 0);
	waitpid(pid, NULL, 0);
	node_setup(&n);
	assert_null(check(&n, pid));
	node_release(&n);
}

/* mkdir -p ROOT/PATH: sysfs and /dev entries, as names in folders. */
static void make(const char *root, const char *path)
{
	char *cmd = xasprintf("mkdir -p '%s/%s'", root, path);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void contract_inside__an_hca_whose_uverbs_device_is_not_inside_is_named(void **state)
{
	char root[] = "/tmp/test_contract_inside.XXXXXX", *dev, *rm;
	struct node n;
	json_t *w = json_array();

	(void)state;
	node_setup(&n);
	assert_non_null(mkdtemp(root));
	/* the host: mlx5_0 is uverbs0, mlx5_1 is uverbs1; inside: uverbs1 */
	make(root, "sys/class/infiniband/mlx5_0/device/infiniband_verbs/uverbs0");
	make(root, "sys/class/infiniband/mlx5_1/device/infiniband_verbs/uverbs1");
	make(root, "inside/dev/infiniband/uverbs1");
	dev = xasprintf("%s/inside/dev/infiniband", root);
	contract_inside_check_hcas(&n.t, "=mlx5_0,mlx5_1", root, dev, w);
	assert_int_equal(json_array_size(w), 1);
	assert_string_equal(json_string_value(json_array_get(w, 0)),
			    "NCCL_IB_HCA names mlx5_0, but its device /dev/infiniband/uverbs0 "
			    "is not inside the container: NCCL cannot use it");
	json_array_clear(w);
	contract_inside_check_hcas(&n.t, "=mlx5_1", root, dev, w);
	assert_int_equal(json_array_size(w), 0);
	rm = xasprintf("rm -rf '%s'", root);
	assert_int_equal(system(rm), 0);
	free(rm);
	free(dev);
	json_decref(w);
	node_release(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(contract_inside__a_process_on_its_planned_cpus_is_left_alone),
		cmocka_unit_test(contract_inside__a_process_moved_off_its_cpus_is_repinned_and_warned_of),
		cmocka_unit_test(contract_inside__a_process_that_is_gone_reads_as_null),
		cmocka_unit_test(contract_inside__an_hca_whose_uverbs_device_is_not_inside_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
