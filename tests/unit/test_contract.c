/* test_contract.c - launcher/rank/contract: the planned binding and
 * environment against what a rank got, on a DGX H100 fixture (eight
 * GPUs, each with its own mlx5 HCA).  Each case changes one thing a real
 * node or a user gets wrong and expects exactly the warning that names it. */
#include "tests/unit/topolib.h"
#include "launcher/rank/contract.h" // defines: contract_check
#include "launcher/rank/env_list.h" // defines: struct env_list, env_list_set
#include "topology/plan.h"     // defines: plan_slices
#include "common/spec/spec.h"  // defines: enum bind_contract

#include <string.h>

struct node {
	struct node_topo t;
	struct plan plan;
	struct env_list env;
	struct contract_got got;
	const char *ifnames[3];
};

/* Rank 2 of 8, planned with the spec's defaults; got = the plan. */
static void node_setup(struct node *n)
{
	struct plan_request req = { .ranks = 8, .policy = PLAN_POLICY_INIT };
	struct diag_list dl = DIAG_LIST_INIT;
	const struct slice *s;

	memset(n, 0, sizeof(*n));
	load("224em64t-2n56c2t-dgxh100.xml", &n->t);
	plan_init(&n->plan);
	assert_int_equal(plan_slices(&n->t, &req, &n->plan, &dl), 0);
	s = &n->plan.slices[2];
	env_list_set(&n->env, "CUDA_VISIBLE_DEVICES", "2");
	env_list_set(&n->env, "NCCL_IB_HCA", "=mlx5_2");
	bitmap_init(&n->got.cpus);
	bitmap_init(&n->got.mems);
	bitmap_copy(&n->got.cpus, &s->cpuset);
	bitmap_copy(&n->got.mems, &n->t.nodeset);
	n->got.have_cpus = n->got.have_mems = true;
	n->got.cuda_visible_devices = "2";
	n->got.nccl_ib_hca = "=mlx5_2";
	n->ifnames[0] = "lo", n->ifnames[1] = "eno1", n->ifnames[2] = "ibp26s0";
	n->got.ifnames = n->ifnames;
	n->got.n_ifnames = 3;
	diag_list_release(&dl);
}

static void node_release(struct node *n)
{
	bitmap_release(&n->got.cpus);
	bitmap_release(&n->got.mems);
	env_list_release(&n->env);
	plan_release(&n->plan);
	topo_release(&n->t);
}

/* The warnings, one per line, and the document's JSON form parses. */
static char *warnings_of(struct node *n, bool cpus_bound, bool mems_bound)
{
	struct contract_plan plan = { &n->plan.slices[2], cpus_bound, mems_bound, &n->env };
	json_t *c = contract_check(&n->t, &plan, &n->got), *w = json_object_get(c, "warnings");
	struct sbuf sb = SBUF_INIT;

	assert_non_null(json_object_get(c, "planned"));
	assert_non_null(json_object_get(c, "got"));
	for (size_t i = 0; i < json_array_size(w); i++)
		sbuf_addf(&sb, "%s\n", json_string_value(json_array_get(w, i)));
	json_decref(c);
	return sbuf_detach(&sb, NULL);
}

static void contract__a_launch_as_planned_has_no_warning(void **state)
{
	struct node n;
	char *w;

	(void)state;
	node_setup(&n);
	n.got.nccl_socket_ifname = "^lo,docker";
	n.got.ucx_net_devices = "mlx5_2:1";
	w = warnings_of(&n, true, true);
	assert_string_equal(w, "");
	free(w);
	node_release(&n);
}

static void contract__an_hca_the_node_lacks_is_named(void **state)
{
	struct node n;
	char *w;

	(void)state;
	node_setup(&n);
	n.got.nccl_ib_hca = "mlx5_2,mlx5_19:1"; /* the spec's env overrode the plan */
	w = warnings_of(&n, true, true);
	assert_non_null(strstr(w, "NCCL_IB_HCA=mlx5_2,mlx5_19:1 names mlx5_19, which is no "
				  "InfiniBand/RoCE device of this node (it has mlx5_0, "));
	assert_null(strstr(w, "names mlx5_2"));
	free(w);
	/* A bare name is a prefix, as NCCL reads it; "=" asks for it exactly. */
	n.got.nccl_ib_hca = "mlx5";
	w = warnings_of(&n, true, true);
	assert_string_equal(w, "");
	free(w);
	n.got.nccl_ib_hca = "=mlx5";
	w = warnings_of(&n, true, true);
	assert_non_null(strstr(w, "names mlx5, which is no"));
	free(w);
	node_release(&n);
}

static void contract__interfaces_and_ucx_devices_are_checked(void **state)
{
	struct node n;
	char *w;

	(void)state;
	node_setup(&n);
	n.got.nccl_socket_ifname = "ib";  /* a prefix of ibp26s0 */
	n.got.ucx_net_devices = "eth0,mlx5_3:1";
	w = warnings_of(&n, true, true);
	assert_string_equal(w, "UCX_NET_DEVICES=eth0,mlx5_3:1 names eth0, which is no device or "
			       "interface of this node (it has mlx5_0, mlx5_1, mlx5_2, mlx5_3, "
			       "mlx5_4, mlx5_5, mlx5_8, mlx5_9, mlx5_10, mlx5_11, mlx5_6, mlx5_7, "
			       "lo, eno1, ibp26s0)\n");
	free(w);
	n.got.ucx_net_devices = "all";
	n.got.nccl_socket_ifname = "=eth0";
	w = warnings_of(&n, true, true);
	assert_non_null(strstr(w, "NCCL_SOCKET_IFNAME==eth0 names eth0, which is no network interface"));
	free(w);
	node_release(&n);
}

static void contract__narrowed_cpus_and_memory_nodes_are_named(void **state)
{
	struct node n;
	char *w;

	(void)state;
	node_setup(&n);
	bitmap_clr(&n.got.cpus, (unsigned)bitmap_first(&n.got.cpus));
	bitmap_zero(&n.got.mems);
	bitmap_set(&n.got.mems, 1);
	w = warnings_of(&n, true, true);
	assert_non_null(strstr(w, "the program runs on CPUs "));
	assert_non_null(strstr(w, "not the planned "));
	assert_non_null(strstr(w, "memory was planned on NUMA nodes 0, but the process may use only 1"));
	free(w);
	/* Nothing was to be bound (policy none): nothing to compare. */
	w = warnings_of(&n, false, false);
	assert_string_equal(w, "");
	free(w);
	node_release(&n);
}

static void contract__a_changed_gpu_is_named(void **state)
{
	struct node n;
	char *w;

	(void)state;
	node_setup(&n);
	n.got.cuda_visible_devices = "5";
	w = warnings_of(&n, true, true);
	assert_non_null(strstr(w, "CUDA_VISIBLE_DEVICES=2 was planned (GPU "));
	assert_non_null(strstr(w, "but the program gets 5"));
	free(w);
	node_release(&n);
}

/* The host's HCAs and their uverbs nodes; a container passed only some. */
static char *hca_warnings(const char *nccl_ib_hca)
{
	static const struct contract_hca_dev devs[] = {
		{ "mlx5_0", "uverbs0" }, { "mlx5_1", "uverbs1" }, { "mlx5_2", NULL },
	};
	static const char *const inside[] = { "rdma_cm", "uverbs1" };
	json_t *w = json_array();
	struct sbuf sb = SBUF_INIT;

	contract_check_hca_devices(nccl_ib_hca, devs, 3, inside, 2, w);
	for (size_t i = 0; i < json_array_size(w); i++)
		sbuf_addf(&sb, "%s\n", json_string_value(json_array_get(w, i)));
	json_decref(w);
	return sbuf_detach(&sb, NULL);
}

static void contract__an_hca_whose_device_is_not_inside_the_container_is_named(void **state)
{
	char *w;

	(void)state;
	w = hca_warnings("=mlx5_0,mlx5_1:1");
	assert_string_equal(w, "NCCL_IB_HCA names mlx5_0, but its device /dev/infiniband/uverbs0 "
			       "is not inside the container: NCCL cannot use it\n");
	free(w);
	w = hca_warnings("=mlx5_2");
	assert_string_equal(w, "NCCL_IB_HCA names mlx5_2, which has no /dev/infiniband/uverbs* "
			       "device on this node to pass into the container\n");
	free(w);
	/* a prefix one of whose HCAs is inside, an exclusion, a name the
	 * node lacks (contract_check's to name): nothing */
	w = hca_warnings("mlx5");
	assert_string_equal(w, "");
	free(w);
	w = hca_warnings("^mlx5_0");
	assert_string_equal(w, "");
	free(w);
	w = hca_warnings("=mlx5_9");
	assert_string_equal(w, "");
	free(w);
}

static void contract__only_warnings_nothing_put_right_break_a_failing_contract(void **state)
{
	json_t *c = json_pack("{s:[s, s]}", "warnings", "moved", "no hca");
	json_t *after = json_pack("{s:[s]}", "warnings", "no hca");
	json_t *none = json_pack("{s:[]}", "warnings");

	(void)state;
	assert_false(contract_is_broken(NULL, BIND_CONTRACT_FAIL));
	assert_false(contract_is_broken(none, BIND_CONTRACT_FAIL));
	assert_true(contract_is_broken(c, BIND_CONTRACT_FAIL));
	assert_false(contract_is_broken(c, BIND_CONTRACT_WARN));
	contract_mark_fixed(c, after);
	assert_false(contract_warning_holds(c, 0));
	assert_true(contract_warning_holds(c, 1));
	assert_false(contract_warning_holds(c, 2));
	assert_true(contract_is_broken(c, BIND_CONTRACT_FAIL));
	contract_mark_fixed(c, none);
	assert_int_equal(json_array_size(json_object_get(c, "fixed")), 2);
	assert_false(contract_is_broken(c, BIND_CONTRACT_FAIL));
	json_decref(c);
	json_decref(after);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(contract__a_launch_as_planned_has_no_warning),
		cmocka_unit_test(contract__an_hca_the_node_lacks_is_named),
		cmocka_unit_test(contract__interfaces_and_ucx_devices_are_checked),
		cmocka_unit_test(contract__narrowed_cpus_and_memory_nodes_are_named),
		cmocka_unit_test(contract__a_changed_gpu_is_named),
		cmocka_unit_test(contract__an_hca_whose_device_is_not_inside_the_container_is_named),
		cmocka_unit_test(contract__only_warnings_nothing_put_right_break_a_failing_contract),
	};

	return cmocka_run_group_tests_name("test_contract", tests, NULL, NULL);
}
