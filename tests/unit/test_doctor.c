/* test_doctor.c - doctor's node checks on a recorded sysfs and /proc tree
 * (tests/fixtures/sysfs/hca-down: an HCA port DOWN, IPoIB down, one
 * granted GPU device missing), its grading across nodes, and the verdict
 * drawn from it (failed nodes, their hostlist, the ledger's events). */
#include "tests/unit/testlib.h"
#include "launcher/doctor/doctor.h"         // defines: doctor_check_*, doctor_compare
#include "launcher/doctor/doctor_verdict.h" // defines: struct doctor_verdict, doctor_verdict_make
#include "launcher/doctor/doctor_container.h" // defines: doctor_container_grade
#include "common/sbuf.h"     // defines: struct sbuf, xasprintf

#include <stdlib.h>
#include <string.h>

static char *root(void)
{
	const char *dir = getenv("HPT_FIXTURES");

	return xasprintf("%s/sysfs/hca-down", dir && *dir ? dir : "tests/fixtures");
}

static void cell_release(struct doctor_cell *c)
{
	free(c->reason);
	memset(c, 0, sizeof(*c));
}

#define assert_reason_has(c, s) \
	do { \
		if (!(c)->reason || !strstr((c)->reason, (s))) \
			fail_msg("no '%s' in reason '%s'", (s), (c)->reason ? (c)->reason : "(none)"); \
	} while (0)

static void nics__fail_on_a_planned_port_that_is_down(void **state)
{
	const char *planned[] = { "mlx5_1" };
	struct doctor_nic_input in = { .hcas = planned, .n_hcas = 1 };
	struct doctor_cell c = { 0 };
	char *r = root();

	(void)state;
	doctor_check_nics(r, &in, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_reason_has(&c, "mlx5_1 port 1 is DOWN");
	cell_release(&c);
	free(r);
}

/* A down HCA the job does not use is worth a word, not the node. */
static void nics__warn_on_an_unplanned_port_that_is_down(void **state)
{
	const char *planned[] = { "mlx5_0" };
	struct doctor_nic_input in = { .hcas = planned, .n_hcas = 1 };
	struct doctor_cell c = { 0 };
	char *r = root();

	(void)state;
	doctor_check_nics(r, &in, &c);
	assert_int_equal(c.grade, DOCTOR_WARN);
	assert_reason_has(&c, "mlx5_1 port 1 is DOWN");
	assert_null(strstr(c.reason, "mlx5_0"));
	cell_release(&c);
	/* ... unless NCCL_IB_HCA picks it: then NCCL's traffic goes there */
	in.nccl_ib_hca = "=mlx5_1:1";
	doctor_check_nics(r, &in, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	cell_release(&c);
	in.nccl_ib_hca = "^mlx5_1";
	doctor_check_nics(r, &in, &c);
	assert_int_equal(c.grade, DOCTOR_WARN);
	cell_release(&c);
	free(r);
}

static void nics__fail_on_names_the_node_does_not_have(void **state)
{
	struct doctor_nic_input in = { .nccl_ib_hca = "mlx5_0,mlx5_5:1", .nccl_socket_ifname = "eth",
				       .ucx_net_devices = "mlx5_0:1,ib1" };
	struct doctor_cell c = { 0 };
	char *r = root();

	(void)state;
	doctor_check_nics(r, &in, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_reason_has(&c, "NCCL_IB_HCA=mlx5_0,mlx5_5:1 names mlx5_5");
	assert_reason_has(&c, "UCX_NET_DEVICES=mlx5_0:1,ib1 names ib1");
	assert_null(strstr(c.reason, "NCCL_SOCKET_IFNAME")); /* "eth" matches eth0 as a prefix */
	assert_null(strstr(c.reason, "names mlx5_0"));
	cell_release(&c);
	free(r);
}

static void nics__fail_on_a_planned_interface_that_is_down_or_absent(void **state)
{
	const char *ifs[] = { "ib0", "eth0", "ib1" };
	struct doctor_nic_input in = { .ifnames = ifs, .n_ifnames = 3 };
	struct doctor_cell c = { 0 };
	char *r = root();

	(void)state;
	doctor_check_nics(r, &in, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_reason_has(&c, "interface ib0 is down");
	assert_reason_has(&c, "interface ib1 is not in this node's network");
	assert_null(strstr(c.reason, "eth0"));
	cell_release(&c);
	free(r);
}

static void gpus__granted_against_driver_and_devices(void **state)
{
	struct doctor_cell c = { 0 };
	char *r = root();

	(void)state;
	doctor_check_gpus(r, "0", 2, &c);
	assert_int_equal(c.grade, DOCTOR_OK);
	assert_reason_has(&c, "1 granted, 2 seen by the driver");
	cell_release(&c);
	doctor_check_gpus(r, "0-1", 2, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_reason_has(&c, "granted GPU 1: cannot open /dev/nvidia1");
	cell_release(&c);
	doctor_check_gpus(r, "0,1,2", 2, &c);
	assert_reason_has(&c, "Slurm granted 3 GPU(s), the driver sees 2");
	cell_release(&c);
	/* what strtoul would read: "x", a sign, a blank, a backward range */
	for (size_t i = 0; i < 5; i++) {
		doctor_check_gpus(r, (const char *[]){ "0,x", "-1", "0, 1", "3-1", "0,1," }[i], 2, &c);
		assert_int_equal(c.grade, DOCTOR_WARN);
		assert_reason_has(&c, "cannot read Slurm's GPU list");
		cell_release(&c);
	}
	/* no driver: skipped, with the reason */
	doctor_check_gpus("/nonexistent-root", "0,1", 2, &c);
	assert_int_equal(c.grade, DOCTOR_SKIP);
	assert_reason_has(&c, "no NVIDIA driver");
	cell_release(&c);
	free(r);
}

static void space__grades_free_bytes(void **state)
{
	const uint64_t gib = 1024ull * 1024 * 1024;

	(void)state;
	assert_int_equal(doctor_grade_space(gib / 2, 100 * gib, 1), DOCTOR_FAIL);
	assert_int_equal(doctor_grade_space(gib + 1, 100 * gib, 1), DOCTOR_WARN);
	assert_int_equal(doctor_grade_space(4 * gib, 100 * gib, 1), DOCTOR_WARN); /* under 5% */
	assert_int_equal(doctor_grade_space(50 * gib, 100 * gib, 1), DOCTOR_OK);
	assert_int_equal(doctor_grade_space(0, 0, 0), DOCTOR_OK);
}

static void space__fails_data_stage_that_does_not_fit_naming_both_sizes(void **state)
{
	struct doctor_cell c = { 0 };

	(void)state;
	doctor_grade_stage_space(66000000, 8000000, "/local/cache", &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_string_equal(c.reason, "needs 0.07 GB for data.stage, 0.01 GB free in /local/cache");
	free(c.reason);
}

static void space__passes_data_stage_that_fits_or_is_cached(void **state)
{
	struct doctor_cell c = { 0 }, d = { 0 };

	(void)state;
	doctor_grade_stage_space(8000000, 8000000, "/c", &c); /* exactly fits */
	assert_int_equal(c.grade, DOCTOR_OK);
	assert_string_equal(c.reason, "data.stage needs 0.01 GB of the 0.01 GB free in /c");
	doctor_grade_stage_space(0, 0, "/c", &d);
	assert_int_equal(d.grade, DOCTOR_OK);
	assert_string_equal(d.reason, "data.stage: all cached in /c");
	free(c.reason);
	free(d.reason);
}

static void binding__names_the_slot_and_both_sets(void **state)
{
	struct bitmap want = BITMAP_INIT, got = BITMAP_INIT, mems = BITMAP_INIT;
	struct doctor_slot s = { .local_rank = 3, .want_cpus = &want, .got_cpus = &got };
	struct doctor_cell c = { 0 };

	(void)state;
	bitmap_set_range(&want, 8, 15);
	bitmap_set_range(&got, 8, 15);
	doctor_grade_slot(&s, &c);
	assert_int_equal(c.grade, DOCTOR_OK);
	bitmap_clr(&got, 15);
	bitmap_set(&mems, 1);
	s.want_mems = &mems;
	s.got_mems = NULL; /* not read back: nothing to say about memory */
	doctor_grade_slot(&s, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_reason_has(&c, "slot 3: planned CPUs 8-15, the kernel gave 8-14");
	cell_release(&c);
	s.bind_error = "set_mempolicy: Invalid argument";
	doctor_grade_slot(&s, &c);
	assert_reason_has(&c, "slot 3: set_mempolicy: Invalid argument");
	cell_release(&c);
	bitmap_release(&want);
	bitmap_release(&got);
	bitmap_release(&mems);
}

static void make_nodes(struct doctor_node *n, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		char name[32];

		snprintf(name, sizeof(name), "node%zu", i + 1);
		doctor_node_init(&n[i], name);
		n[i].gemm_gflops = 100;
		n[i].ring_gbps = 10;
	}
}

static void release_nodes(struct doctor_node *n, size_t count)
{
	for (size_t i = 0; i < count; i++)
		doctor_node_release(&n[i]);
}

static void compare__flags_the_straggler_against_the_fastest_node(void **state)
{
	struct doctor_node n[4];
	struct doctor_limits lim = DOCTOR_LIMITS_INIT;

	(void)state;
	make_nodes(n, 4);
	n[1].gemm_gflops = 21;  /* a cgroup's 20% CPU quota */
	n[2].gemm_gflops = 70;  /* slower, not useless */
	n[3].gemm_gflops = 104;
	doctor_compare(n, 4, &lim);
	assert_int_equal(n[0].cell[DOCTOR_COMPUTE].grade, DOCTOR_OK);
	assert_int_equal(n[1].cell[DOCTOR_COMPUTE].grade, DOCTOR_FAIL);
	assert_reason_has(&n[1].cell[DOCTOR_COMPUTE], "0.20 of the fastest node (node4): a straggler");
	assert_int_equal(n[2].cell[DOCTOR_COMPUTE].grade, DOCTOR_WARN);
	assert_true(doctor_node_failed(&n[1]));
	assert_false(doctor_node_failed(&n[2]));
	release_nodes(n, 4);
}

/* Link i runs from node i to node i+1: a node whose links in and out
 * are both slow fails, its neighbours with one slow link are warned. */
static void compare__names_the_slow_pair_and_blames_the_common_end(void **state)
{
	struct doctor_node n[4];
	struct doctor_limits lim = DOCTOR_LIMITS_INIT;

	(void)state;
	make_nodes(n, 4);
	n[1].ring_gbps = 0.2;  /* node2 -> node3 */
	n[0].ring_gbps = 0.3;  /* node1 -> node2 */
	doctor_compare(n, 4, &lim);
	assert_int_equal(n[1].cell[DOCTOR_NETWORK].grade, DOCTOR_FAIL);
	assert_int_equal(n[0].cell[DOCTOR_NETWORK].grade, DOCTOR_WARN);
	assert_int_equal(n[2].cell[DOCTOR_NETWORK].grade, DOCTOR_WARN);
	assert_int_equal(n[3].cell[DOCTOR_NETWORK].grade, DOCTOR_OK);
	assert_reason_has(&n[2].cell[DOCTOR_NETWORK], "link node2 -> node3: 0.20 GB/s");
	release_nodes(n, 4);
}

static void compare__grades_clock_offsets(void **state)
{
	struct doctor_node n[3];
	struct doctor_limits lim = DOCTOR_LIMITS_INIT;

	(void)state;
	make_nodes(n, 3);
	n[1].clock_offset_s = -0.5;
	n[2].clock_offset_s = 3.25;
	doctor_compare(n, 3, &lim);
	assert_int_equal(n[1].cell[DOCTOR_SERVICES].grade, DOCTOR_WARN);
	assert_int_equal(n[2].cell[DOCTOR_SERVICES].grade, DOCTOR_FAIL);
	assert_reason_has(&n[2].cell[DOCTOR_SERVICES], "clock +3.250 s off node1's");
	release_nodes(n, 3);
}

/* A node name or a reason from outside cannot redraw the terminal. */
static void output__table_escapes_control_characters(void **state)
{
	struct doctor_node n[1];
	struct sbuf t = SBUF_INIT;

	(void)state;
	make_nodes(n, 1);
	free(n[0].node);
	n[0].node = xstrdup("n\x1b[2J");
	doctor_note(&n[0].cell[DOCTOR_NICS], DOCTOR_FAIL, "interface e\rth0\x07 is down");
	doctor_table(n, 1, false, &t);
	assert_string_equal(t.buf,
		"node      gpus      nics      binding   compute   network   files     services  container\n"
		"n\\x1b[2J  skip      FAIL      skip      skip      skip      skip      skip      skip\n"
		"\n"
		"n\\x1b[2J  nics      FAIL  interface e\\rth0\\x07 is down\n");
	release_nodes(n, 1);
	sbuf_release(&t);
}

static void output__table_and_json_round_trip(void **state)
{
	struct doctor_node n[2], back;
	struct sbuf t = SBUF_INIT;
	json_t *doc, *one;

	(void)state;
	make_nodes(n, 2);
	n[1].checks_s = 31.5;
	doctor_note(&n[1].cell[DOCTOR_NICS], DOCTOR_FAIL, "mlx5_1 port 1 is DOWN");
	doctor_note(&n[0].cell[DOCTOR_FILES], DOCTOR_OK, "scratch /tmp: 80.0 GB free of 100.0");
	doctor_table(n, 2, false, &t);
	assert_string_equal(t.buf,
		"node   gpus      nics      binding   compute   network   files     services  container\n"
		"node1  skip      skip      skip      skip      skip      ok        skip      skip\n"
		"node2  skip      FAIL      skip      skip      skip      skip      skip      skip\n"
		"\n"
		"node2  nics      FAIL  mlx5_1 port 1 is DOWN\n");
	doc = doctor_json(n, 2, "node2");
	assert_string_equal(json_string_value(json_object_get(doc, "exclude")), "node2");
	assert_true(json_is_false(json_object_get(doc, "ok")));
	one = json_array_get(json_object_get(doc, "nodes"), 1);
	memset(&back, 0, sizeof(back));
	assert_int_equal(doctor_node_from_json(one, &back), 0);
	assert_string_equal(back.node, "node2");
	assert_int_equal(back.cell[DOCTOR_NICS].grade, DOCTOR_FAIL);
	assert_string_equal(back.cell[DOCTOR_NICS].reason, "mlx5_1 port 1 is DOWN");
	assert_null(back.cell[DOCTOR_GPUS].reason);
	assert_true(back.gemm_gflops == 100);
	/* how long its checks took: the others waited that long at the ring */
	assert_true(back.checks_s == 31.5);
	/* a result that is not one is refused, not half-read */
	assert_int_equal(doctor_node_from_json(json_object_get(doc, "exclude"), &back), -1);
	doctor_node_release(&back);
	json_decref(doc);
	sbuf_release(&t);
	release_nodes(n, 2);
}

static void verdict__names_the_failed_nodes_and_their_hostlist(void **state)
{
	struct doctor_node n[4];
	struct doctor_verdict v;

	(void)state;
	make_nodes(n, 4);
	doctor_note(&n[1].cell[DOCTOR_NICS], DOCTOR_FAIL, "mlx5_1 port 1 is DOWN");
	doctor_note(&n[2].cell[DOCTOR_FILES], DOCTOR_FAIL, "scratch /tmp: 0.1 GB free");
	doctor_note(&n[3].cell[DOCTOR_GPUS], DOCTOR_WARN, "a warning fails nothing");
	doctor_verdict_make(n, 4, &v);
	assert_int_equal(v.n_failed, 2);
	assert_string_equal(v.failed[0], "node2");
	assert_string_equal(v.failed[1], "node3");
	assert_null(v.failed[2]);
	assert_string_equal(v.exclude.buf, "node[2-3]");
	assert_int_equal(v.n, 4);
	assert_false(v.events[0].failed);
	assert_null(v.events[0].reason);
	assert_true(v.events[1].failed);
	assert_string_equal(v.events[1].reason, "nics: mlx5_1 port 1 is DOWN");
	assert_false(v.events[3].failed);
	assert_null(v.events[3].reason);
	doctor_verdict_release(&v);
	release_nodes(n, 4);
}

/* Every node failing one check first is the job's doing (a munge
 * replay, a missing image): no node failed, excluded or recorded.  A
 * node alone, or nodes failing different checks, are the nodes'. */
static void verdict__blames_the_job_when_every_node_failed_the_same_check(void **state)
{
	struct doctor_node n[3];
	struct doctor_verdict v;

	(void)state;
	make_nodes(n, 3);
	for (int i = 0; i < 3; i++)
		doctor_note(&n[i].cell[DOCTOR_SERVICES], DOCTOR_FAIL, "munge: Replayed credential");
	doctor_note(&n[2].cell[DOCTOR_CONTAINER], DOCTOR_FAIL, "later in the table: not first");
	doctor_verdict_make(n, 3, &v);
	assert_string_equal(v.job_fault.buf,
			    "every node failed services first; node1: services: munge: Replayed credential");
	assert_int_equal(v.n_failed, 0);
	assert_null(v.failed[0]);
	assert_string_equal(v.exclude.buf, "");
	assert_int_equal(v.n, 0);
	doctor_verdict_release(&v);
	/* one node failing another check first: the nodes' */
	doctor_note(&n[1].cell[DOCTOR_FILES], DOCTOR_FAIL, "scratch /tmp: 0.1 GB free");
	doctor_verdict_make(n, 3, &v);
	assert_string_equal(v.job_fault.buf, "");
	assert_int_equal(v.n_failed, 3);
	doctor_verdict_release(&v);
	release_nodes(n, 3);
	/* one node alone: the node's */
	make_nodes(n, 1);
	doctor_note(&n[0].cell[DOCTOR_SERVICES], DOCTOR_FAIL, "munge: no socket");
	doctor_verdict_make(n, 1, &v);
	assert_string_equal(v.job_fault.buf, "");
	assert_int_equal(v.n_failed, 1);
	doctor_verdict_release(&v);
	release_nodes(n, 1);
}

static void verdict__of_healthy_nodes_excludes_nothing(void **state)
{
	struct doctor_node n[2];
	struct doctor_verdict v;

	(void)state;
	make_nodes(n, 2);
	doctor_verdict_make(n, 2, &v);
	assert_int_equal(v.n_failed, 0);
	assert_null(v.failed[0]);
	assert_string_equal(v.exclude.buf, "");
	doctor_verdict_release(&v);
	doctor_verdict_release(&v); /* a released verdict is a zeroed one */
	release_nodes(n, 2);
}

/* The ledger keeps one reason per failure: the first failed check in
 * the table's order, not the first noted nor the worst-sounding. */
static void verdict__gives_a_node_that_failed_two_checks_its_first_failed_check(void **state)
{
	struct doctor_node n[1];
	struct doctor_verdict v;

	(void)state;
	make_nodes(n, 1);
	doctor_note(&n[0].cell[DOCTOR_SERVICES], DOCTOR_FAIL, "munge: no socket");
	doctor_note(&n[0].cell[DOCTOR_GPUS], DOCTOR_WARN, "driver lists 1 GPU");
	doctor_note(&n[0].cell[DOCTOR_BINDING], DOCTOR_FAIL, "slot 0 got cpus 0-3");
	doctor_verdict_make(n, 1, &v);
	assert_true(v.events[0].failed);
	assert_string_equal(v.events[0].reason, "binding: slot 0 got cpus 0-3");
	assert_string_equal(v.exclude.buf, "node1");
	doctor_verdict_release(&v);
	release_nodes(n, 1);
}

static void verdict__scores_gemm_against_the_fastest_node(void **state)
{
	struct doctor_node n[3];
	struct doctor_verdict v;

	(void)state;
	make_nodes(n, 3);
	n[0].gemm_gflops = 50;
	n[1].gemm_gflops = 200;
	n[2].gemm_gflops = -1; /* not measured: oneDNN refused */
	doctor_verdict_make(n, 3, &v);
	assert_true(v.events[0].score == 0.25);
	assert_true(v.events[1].score == 1);
	assert_true(v.events[2].score < 0);
	assert_string_equal(v.events[2].node, "node3");
	doctor_verdict_release(&v);
	release_nodes(n, 3);
}

static void verdict__has_no_score_when_the_best_gemm_is_0(void **state)
{
	struct doctor_node n[2];
	struct doctor_verdict v;

	(void)state;
	make_nodes(n, 2);
	n[0].gemm_gflops = 0;
	n[1].gemm_gflops = -1;
	doctor_verdict_make(n, 2, &v);
	assert_true(v.events[0].score < 0);
	assert_true(v.events[1].score < 0);
	doctor_verdict_release(&v);
	release_nodes(n, 2);
}

/* --- the container cell (doctor_container_grade.c) --- */

static const char *const ctr_want[] = { "/dev/nvidia0", "/dev/infiniband/uverbs0",
					"env:PMIX_RANK", "/var/spool/slurmd/pmix.7.0" };

static struct doctor_container_run ctr_run(const char *output)
{
	struct doctor_container_run r = {
		.runtime = "ch-run", .image = "/img", .timeout_s = 5, .output = output,
		.want = ctr_want, .n_want = 4,
	};
	return r;
}

static void container__passes_when_every_device_and_pmix_is_seen_inside(void **state)
{
	struct doctor_container_run r = ctr_run("+/dev/nvidia0\n+/dev/infiniband/uverbs0\n"
						"+env:PMIX_RANK\n+/var/spool/slurmd/pmix.7.0\n");
	struct doctor_cell c = { 0 };

	(void)state;
	doctor_container_grade(&r, &c);
	assert_int_equal(c.grade, DOCTOR_OK);
	assert_string_equal(c.reason, "ch-run started /bin/sh in /img; 2 device(s) and PMIx "
			    "visible inside");
	free(c.reason);
}

static void container__names_each_device_and_pmix_part_not_seen_inside(void **state)
{
	struct doctor_container_run r = ctr_run("-/dev/nvidia0\n+/dev/infiniband/uverbs0\n"
						"-env:PMIX_RANK\n");
	struct doctor_cell c = { 0 };

	(void)state;
	doctor_container_grade(&r, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_reason_has(&c, "not visible inside: device /dev/nvidia0 of this node");
	assert_reason_has(&c, "not visible inside: PMIx variable PMIX_RANK");
	assert_reason_has(&c, "the probe said nothing of PMIx rendezvous directory "
			  "/var/spool/slurmd/pmix.7.0 (bind it: container.mounts)");
	free(c.reason);
}

static void container__fails_a_probe_cut_at_the_timeout(void **state)
{
	struct doctor_container_run r = ctr_run("+/dev/nvidia0\n");
	struct doctor_cell c = { 0 };

	(void)state;
	r.timed_out = true;
	doctor_container_grade(&r, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_string_equal(c.reason, "ch-run did not finish /bin/sh in /img within 5 s: killed "
			    "at --timeout");
	free(c.reason);
}

static void container__fails_a_probe_that_exits_nonzero_with_its_first_line(void **state)
{
	struct doctor_container_run r = ctr_run("ch-run[9]: error: can't execve(2): /bin/sh: No "
						"such file or directory (ch-run.c:1)\nmore\n");
	struct doctor_cell c = { 0 };

	(void)state;
	r.status = 1;
	doctor_container_grade(&r, &c);
	assert_int_equal(c.grade, DOCTOR_FAIL);
	assert_string_equal(c.reason, "ch-run could not run /bin/sh in /img (exit 1): ch-run[9]: "
			    "error: can't execve(2): /bin/sh: No such file or directory "
			    "(ch-run.c:1)");
	free(c.reason);
}

static void container__with_nothing_to_look_for_passes_on_the_start_alone(void **state)
{
	struct doctor_container_run r = ctr_run("");
	struct doctor_cell c = { 0 };

	(void)state;
	r.n_want = 0;
	doctor_container_grade(&r, &c);
	assert_int_equal(c.grade, DOCTOR_OK);
	assert_string_equal(c.reason, "ch-run started /bin/sh in /img; 0 device(s) visible inside");
	free(c.reason);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nics__fail_on_a_planned_port_that_is_down),
		cmocka_unit_test(nics__warn_on_an_unplanned_port_that_is_down),
		cmocka_unit_test(nics__fail_on_names_the_node_does_not_have),
		cmocka_unit_test(nics__fail_on_a_planned_interface_that_is_down_or_absent),
		cmocka_unit_test(gpus__granted_against_driver_and_devices),
		cmocka_unit_test(space__grades_free_bytes),
		cmocka_unit_test(space__fails_data_stage_that_does_not_fit_naming_both_sizes),
		cmocka_unit_test(space__passes_data_stage_that_fits_or_is_cached),
		cmocka_unit_test(binding__names_the_slot_and_both_sets),
		cmocka_unit_test(compare__flags_the_straggler_against_the_fastest_node),
		cmocka_unit_test(compare__names_the_slow_pair_and_blames_the_common_end),
		cmocka_unit_test(compare__grades_clock_offsets),
		cmocka_unit_test(output__table_and_json_round_trip),
		cmocka_unit_test(output__table_escapes_control_characters),
		cmocka_unit_test(verdict__names_the_failed_nodes_and_their_hostlist),
		cmocka_unit_test(verdict__of_healthy_nodes_excludes_nothing),
		cmocka_unit_test(verdict__blames_the_job_when_every_node_failed_the_same_check),
		cmocka_unit_test(verdict__gives_a_node_that_failed_two_checks_its_first_failed_check),
		cmocka_unit_test(verdict__scores_gemm_against_the_fastest_node),
		cmocka_unit_test(verdict__has_no_score_when_the_best_gemm_is_0),
		cmocka_unit_test(container__passes_when_every_device_and_pmix_is_seen_inside),
		cmocka_unit_test(container__names_each_device_and_pmix_part_not_seen_inside),
		cmocka_unit_test(container__fails_a_probe_cut_at_the_timeout),
		cmocka_unit_test(container__fails_a_probe_that_exits_nonzero_with_its_first_line),
		cmocka_unit_test(container__with_nothing_to_look_for_passes_on_the_start_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
