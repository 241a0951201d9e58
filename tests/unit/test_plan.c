/* test_plan.c - the binding planner on every fixture.
 *
 * Golden plans for 1, 2, 4 and 8 ranks on every fixture (default policy,
 * tests/fixtures/plan-goldens.txt, which says how they were made),
 * exact slices for the DGX A100 node, property tests over fixtures x rank
 * counts x policies, restrictions (cgroup cpusets, Slurm-narrowed GPUs)
 * and infeasible requests.  Fixtures come from $HPT_FIXTURES (default
 * "tests/fixtures").
 */
#include "topology/probe.h"  // defines: probe_load
#include "topology/plan.h"   // defines: plan_slices, struct slice, plan_policy_*
#include "topology/show.h"   // defines: show_plan_table, show_json_plan
#include "common/diag.h"        // defines: struct diag_list
#include "common/sbuf.h"        // defines: struct sbuf

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static const char *const files[] = {
	"256amd64-8n16c2t-dgxa100.xml", "224em64t-2n56c2t-dgxh100.xml",
	"80em64t-2n20c2t-4v100-1hca.xml", "144em64t-4n18c2t-snc2-cpuonly.xml",
	"nvidiaDGX2.xml", "32em64t-2n8c2t-pci-wholeio.xml", "24em64t-2n6c2t-pci.xml",
	"192em64t-12gr2n8c2t.xml", "16intel64-manyVFs.xml",
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

static struct node_topo topos[N_FILES];

static char *fixture_path(const char *file)
{
	const char *dir = getenv("HPT_FIXTURES");

	return xasprintf("%s/%s", dir && *dir ? dir : "tests/fixtures", file);
}

static int load_all(void **state)
{
	(void)state;
	for (size_t f = 0; f < N_FILES; f++) {
		struct diag_list err = DIAG_LIST_INIT;
		char *path = fixture_path(files[f]);

		if (probe_load(path, &topos[f], &err)) {
			diag_report(stderr, &err);
			diag_list_release(&err);
			free(path);
			return -1;
		}
		free(path);
	}
	return 0;
}

static int release_all(void **state)
{
	(void)state;
	for (size_t f = 0; f < N_FILES; f++)
		topo_release(&topos[f]);
	return 0;
}

static const struct node_topo *topo_named(const char *file)
{
	for (size_t f = 0; f < N_FILES; f++)
		if (!strcmp(files[f], file))
			return &topos[f];
	fail_msg("no fixture %s", file);
	return NULL;
}

static void render(const struct node_topo *t, const struct plan *p, struct sbuf *out)
{
	for (size_t r = 0; r < p->n; r++) {
		const struct slice *s = &p->slices[r];

		sbuf_addf(out, "%s%d ", r ? "\n" : "", s->gpu);
		for (size_t i = 0; i < s->n_nics; i++)
			sbuf_addf(out, "%s%s", i ? "," : "", topo_nic_name(&t->nics[s->nics[i]]));
		if (s->n_nics)
			sbuf_addf(out, "/%s", pathclass_name(s->nic_class));
		else
			sbuf_addstr(out, "-");
		sbuf_addch(out, ' ');
		bitmap_format_list(&s->cpuset, out);
		sbuf_addch(out, ' ');
		bitmap_format_list(&s->nodeset, out);
	}
}

/* Plans and renders; "error: <msg>" when the planner refuses. */
static void plan_text(const struct node_topo *t, const struct plan_request *req, struct sbuf *out)
{
	struct diag_list err = DIAG_LIST_INIT;
	struct plan p;

	if (plan_slices(t, req, &p, &err)) {
		assert_int_equal(err.n, 1);
		assert_int_equal(p.n, 0);
		sbuf_addf(out, "error: %s", err.v[0].msg);
	} else {
		assert_int_equal(err.n, 0);
		render(t, &p, out);
	}
	plan_release(&p);
	diag_list_release(&err);
}

static void plan__gives_rank0_the_first_gpu_by_pci_bus_id(void **state)
{
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct plan_request req = { 8, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct diag_list err = DIAG_LIST_INIT;
	struct plan p;

	(void)state;
	assert_int_equal(plan_slices(t, &req, &p, &err), 0);
	assert_int_equal(p.slices[0].gpu, 0);
	assert_int_equal(p.slices[0].gpu_ordinal, 0);
	assert_string_equal(p.slices[0].busid, "0000:05:00.0");
	for (size_t r = 1; r < p.n; r++)
		assert_true(strcmp(p.slices[r - 1].busid, p.slices[r].busid) < 0);
	plan_release(&p);
	diag_list_release(&err);
}

static void plan__matches_the_dgx_a100_reference_for_8_ranks(void **state)
{
	static const char *const want[8][4] = {
		{ "0000:05:00.0", "mlx5_0", "48-55,176-183", "3" },
		{ "0000:06:00.0", "mlx5_1", "56-63,184-191", "3" },
		{ "0000:45:00.0", "mlx5_2", "16-23,144-151", "1" },
		{ "0000:46:00.0", "mlx5_3", "24-31,152-159", "1" },
		{ "0000:85:00.0", "mlx5_6", "112-119,240-247", "7" },
		{ "0000:86:00.0", "mlx5_7", "120-127,248-255", "7" },
		{ "0000:b5:00.0", "mlx5_8", "80-87,208-215", "5" },
		{ "0000:b6:00.0", "mlx5_9", "88-95,216-223", "5" },
	};
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct plan_request req = { 8, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct diag_list err = DIAG_LIST_INIT;
	struct sbuf sb = SBUF_INIT;
	struct plan p;

	(void)state;
	assert_int_equal(plan_slices(t, &req, &p, &err), 0);
	assert_int_equal(p.n, 8);
	for (size_t r = 0; r < 8; r++) {
		const struct slice *s = &p.slices[r];

		assert_int_equal(s->local_rank, r);
		assert_int_equal(s->gpu, (int)r);
		assert_string_equal(s->busid, want[r][0]);
		assert_int_equal(s->n_nics, 1);
		assert_string_equal(topo_nic_name(&t->nics[s->nics[0]]), want[r][1]);
		assert_int_equal(s->nic_class, PATHCLASS_PXB);
		sbuf_reset(&sb);
		bitmap_format_list(&s->cpuset, &sb);
		assert_string_equal(sb.buf, want[r][2]);
		sbuf_reset(&sb);
		bitmap_format_list(&s->nodeset, &sb);
		assert_string_equal(sb.buf, want[r][3]);
		assert_null(s->cpu_note);
		assert_int_equal(s->memory, PLAN_MEMORY_LOCAL);
	}
	assert_string_equal(p.slices[0].why, "PXB to gpu 0; gpus 0-1 split 2 nics");
	sbuf_reset(&sb);
	show_plan_table(t, &p, &sb);
	assert_non_null(strstr(sb.buf, "rank  gpu  pci id        nics          cpus             numa  why\n"));
	assert_non_null(strstr(sb.buf, "\n7     7    0000:b6:00.0  mlx5_9 (PXB)  88-95,216-223    5     PXB to gpu 7; gpus 6-7 split 2 nics\n"));
	plan_release(&p);
	sbuf_release(&sb);
	diag_list_release(&err);
}

/* Checks the plan the planner gives for "= FILE RANKS" against want. */
static void check_golden(const char *head, const char *want, int *checked)
{
	struct plan_request req = { 0, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct sbuf sb = SBUF_INIT;
	char file[128];

	if (sscanf(head, "= %127s %u", file, &req.ranks) != 2)
		fail_msg("plan-goldens.txt: bad header \"%s\"", head);
	plan_text(topo_named(file), &req, &sb);
	if (strcmp(sb.buf, want))
		fail_msg("%s, %u ranks:\n%s\nwant:\n%s", file, req.ranks, sb.buf, want);
	sbuf_release(&sb);
	(*checked)++;
}

static void plan__matches_the_golden_plans_for_1_2_4_and_8_ranks_on_every_fixture(void **state)
{
	char *path = fixture_path("plan-goldens.txt"), line[512], head[512] = "";
	struct sbuf want = SBUF_INIT;
	FILE *f = fopen(path, "r");
	int checked = 0;

	(void)state;
	if (!f)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[0] == '=') {
			if (head[0])
				check_golden(head, want.buf, &checked);
			snprintf(head, sizeof(head), "%s", line);
			sbuf_reset(&want);
			continue;
		}
		if (want.len)
			sbuf_addch(&want, '\n');
		sbuf_add(&want, line, strcspn(line, "\n"));
	}
	if (head[0])
		check_golden(head, want.buf, &checked);
	fclose(f);
	assert_int_equal(checked, 36); /* 9 fixtures x 1, 2, 4, 8 ranks */
	sbuf_release(&want);
	free(path);
}

static bool exclusive_is_feasible(const struct node_topo *t, unsigned ranks, const struct plan_policy *pol)
{
	size_t g = pol->gpu == PLAN_GPU_NONE ? 0 : t->n_gpus;

	if (pol->cpu == PLAN_CPU_EXCLUSIVE && ranks > t->n_cores)
		return false;
	return !(g && ranks > g && ranks % g);
}

static void check_properties(const struct node_topo *t, unsigned ranks, const struct plan_policy *pol,
			     const char *file)
{
	struct plan_request req = { ranks, *pol, NULL, NULL, 0 };
	struct diag_list err = DIAG_LIST_INIT;
	struct plan p;
	int rc = plan_slices(t, &req, &p, &err);

	if (!exclusive_is_feasible(t, ranks, pol)) {
		if (rc != -1 || err.n != 1)
			fail_msg("%s, %u ranks: infeasible request accepted", file, ranks);
		diag_list_release(&err);
		return;
	}
	if (rc)
		fail_msg("%s, %u ranks, cpu %s: %s", file, ranks, plan_policy_cpu_name(pol->cpu),
			 err.v[0].msg);
	assert_int_equal(p.n, ranks);
	for (size_t r = 0; r < p.n; r++) {
		const struct slice *s = &p.slices[r];

		assert_false(bitmap_is_empty(&s->cpuset));
		assert_true(bitmap_is_subset(&s->cpuset, &t->allowed));
		assert_false(bitmap_is_empty(&s->nodeset));
		assert_non_null(s->why);
		if (pol->gpu == PLAN_GPU_AUTO && t->n_gpus)
			assert_int_equal(s->gpu, (int)((size_t)r * t->n_gpus / ranks));
		else
			assert_int_equal(s->gpu, -1);
		for (size_t i = 0; i < s->n_nics; i++)
			assert_true(s->nics[i] >= 0 && (size_t)s->nics[i] < t->n_nics);
		if (pol->nic == PLAN_NIC_NONE || !t->n_nics)
			assert_int_equal(s->n_nics, 0);
		else
			assert_true(s->n_nics >= 1);
		if (pol->nic == PLAN_NIC_SINGLE)
			assert_true(s->n_nics <= 1);
		/* hyperthreads follow their core: whole cores' allowed PUs only */
		for (size_t c = 0; c < t->n_cores && pol->cpu != PLAN_CPU_NONE; c++)
			if (bitmap_intersects(&t->cores[c].pus, &s->cpuset))
				assert_true(bitmap_is_subset(&t->cores[c].pus, &s->cpuset));
		if (pol->cpu == PLAN_CPU_EXCLUSIVE)
			for (size_t q = 0; q < r; q++)
				if (bitmap_intersects(&s->cpuset, &p.slices[q].cpuset))
					fail_msg("%s, %u ranks: ranks %zu and %zu overlap", file, ranks, q, r);
	}
	/* Deterministic: the same request again gives the same bytes. */
	{
		struct plan_request again = req;
		json_t *j = show_json_plan(t, &p);
		char *s1 = json_dumps(j, JSON_SORT_KEYS), *s2;
		struct plan p2;

		assert_int_equal(plan_slices(t, &again, &p2, &err), 0);
		json_decref(j);
		j = show_json_plan(t, &p2);
		s2 = json_dumps(j, JSON_SORT_KEYS);
		assert_string_equal(s1, s2);
		free(s1);
		free(s2);
		json_decref(j);
		plan_release(&p2);
	}
	plan_release(&p);
	diag_list_release(&err);
}

static void plan__slices_are_nonempty_allowed_disjoint_and_repeatable_for_all_fixtures_ranks_and_policies(void **state)
{
	(void)state;
	/* 9 fixtures x 16 rank counts x 24 policies: ~3,500 plans, < 1 s. */
	for (size_t f = 0; f < N_FILES; f++)
		for (unsigned ranks = 1; ranks <= 16; ranks++)
			for (int gpu = 0; gpu < 2; gpu++)
				for (int cpu = 0; cpu < 4; cpu++)
					for (int nic = 0; nic < 3; nic++) {
						struct plan_policy pol = {
							(enum plan_gpu_policy)gpu, (enum plan_cpu_policy)cpu,
							(enum plan_nic_policy)nic, PLAN_MEMORY_LOCAL,
						};

						check_properties(&topos[f], ranks, &pol, files[f]);
					}
}

static void plan__ranks_sharing_a_gpu_split_its_numa_share(void **state)
{
	const struct node_topo *t = topo_named("224em64t-2n56c2t-dgxh100.xml");
	struct plan_request req = { 16, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	plan_text(t, &req, &sb);
	assert_non_null(strstr(sb.buf, "0 mlx5_0/PIX 0-6,112-118 0\n0 mlx5_0/PIX 7-13,119-125 0\n"
				       "1 mlx5_1/PIX 14-20,126-132 0\n"));
	sbuf_release(&sb);
}

static void plan__gives_whole_l3_groups_with_cpu_core_complex(void **state)
{
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct plan_request req = { 16, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	req.policy.cpu = PLAN_CPU_CORE_COMPLEX;
	/* NUMA 3 has four 4-core CCXs and hosts 4 ranks: one CCX each */
	plan_text(t, &req, &sb);
	assert_true(!strncmp(sb.buf, "0 mlx5_0/PXB 48-51,176-179 3\n0 mlx5_0/PXB 52-55,180-183 3\n"
				     "1 mlx5_1/PXB 56-59,184-187 3\n", 87));
	sbuf_release(&sb);
}

static void plan__cpu_node_gives_the_whole_numa_node_and_none_the_allowed_set(void **state)
{
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct plan_request req = { 8, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	req.policy.cpu = PLAN_CPU_NODE;
	plan_text(t, &req, &sb);
	assert_true(!strncmp(sb.buf, "0 mlx5_0/PXB 48-63,176-191 3\n1 mlx5_1/PXB 48-63,176-191 3\n", 58));
	sbuf_reset(&sb);
	req.policy.cpu = PLAN_CPU_NONE;
	req.ranks = 1;
	plan_text(t, &req, &sb);
	assert_string_equal(sb.buf, "0 mlx5_0,mlx5_1/PXB 0-255 0-7");
	sbuf_release(&sb);
}

static void plan__nic_single_keeps_one_nic_and_none_keeps_none(void **state)
{
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct plan_request req = { 4, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	req.policy.nic = PLAN_NIC_SINGLE;
	plan_text(t, &req, &sb);
	assert_true(!strncmp(sb.buf, "0 mlx5_0/PXB 48-63,176-191 3\n2 mlx5_2/PXB", 41));
	sbuf_reset(&sb);
	req.policy.nic = PLAN_NIC_NONE;
	plan_text(t, &req, &sb);
	assert_true(!strncmp(sb.buf, "0 - 48-63,176-191 3\n", 20));
	sbuf_release(&sb);
}

static void plan__shares_one_hca_among_all_gpus_that_tie(void **state)
{
	const struct node_topo *t = topo_named("80em64t-2n20c2t-4v100-1hca.xml");
	struct plan_request req = { 4, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct diag_list err = DIAG_LIST_INIT;
	struct plan p;

	(void)state;
	/* Ethernet ports eno1/eno2 are NODE to GPU0 too, but an HCA exists:
	 * only OpenFabrics devices are candidates. */
	assert_int_equal(plan_slices(t, &req, &p, &err), 0);
	for (size_t r = 0; r < 4; r++) {
		assert_int_equal(p.slices[r].n_nics, 1);
		assert_string_equal(topo_nic_name(&t->nics[p.slices[r].nics[0]]), "mlx5_0");
	}
	assert_string_equal(p.slices[0].why, "NODE to gpu 0; shared by gpus 0-1");
	assert_string_equal(p.slices[3].why, "SYS to gpu 3; shared by gpus 2-3");
	plan_release(&p);
	diag_list_release(&err);
}

static void plan__honours_an_allowed_cpuset_narrower_than_the_node(void **state)
{
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct plan_request req = { 8, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct diag_list err = DIAG_LIST_INIT;
	struct bitmap allowed = BITMAP_INIT;
	struct plan p;

	(void)state;
	/* a cgroup holding NUMA nodes 1 and 3 only: GPUs 4-7 (NUMA 7, 5) must
	 * borrow, and say so; every slice stays inside and disjoint */
	assert_int_equal(bitmap_parse_list(&allowed, "16-31,48-63,144-159,176-191"), 0);
	req.allowed = &allowed;
	assert_int_equal(plan_slices(t, &req, &p, &err), 0);
	for (size_t r = 0; r < 8; r++) {
		assert_true(bitmap_is_subset(&p.slices[r].cpuset, &allowed));
		assert_false(bitmap_is_empty(&p.slices[r].cpuset));
		for (size_t q = 0; q < r; q++)
			assert_false(bitmap_intersects(&p.slices[r].cpuset, &p.slices[q].cpuset));
		if (r < 4)
			assert_null(p.slices[r].cpu_note);
		else
			assert_non_null(strstr(p.slices[r].cpu_note, "nearest allowed cores"));
	}
	plan_release(&p);
	/* an allowed set of 3 cores for 8 exclusive ranks is infeasible */
	bitmap_parse_list(&allowed, "0-2");
	assert_int_equal(plan_slices(t, &req, &p, &err), -1);
	assert_string_equal(err.v[0].path, "ranks");
	bitmap_release(&allowed);
	diag_list_release(&err);
}

static void plan__uses_only_the_gpus_slurm_left_visible(void **state)
{
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	static const int visible[] = { 4, 5 };
	struct plan_request req = { 2, PLAN_POLICY_INIT, NULL, visible, 2 };
	struct diag_list err = DIAG_LIST_INIT;
	struct sbuf sb = SBUF_INIT;
	struct plan p;

	(void)state;
	assert_int_equal(plan_slices(t, &req, &p, &err), 0);
	assert_int_equal(p.slices[1].gpu, 5);
	assert_int_equal(p.slices[1].gpu_ordinal, 1);
	plan_release(&p);
	plan_text(t, &req, &sb);
	assert_string_equal(sb.buf, "4 mlx5_6/PXB 112-119,240-247 7\n5 mlx5_7/PXB 120-127,248-255 7");
	/* no GPU left visible: a CPU plan, one rank per package; the storage
	 * HCAs mlx5_4/5 (NUMA 2) are local to package 0 too */
	sbuf_reset(&sb);
	req.n_visible_gpus = 0;
	plan_text(t, &req, &sb);
	assert_string_equal(sb.buf, "-1 mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5/NODE 0-63,128-191 0-3\n"
				    "-1 mlx5_6,mlx5_7,mlx5_8,mlx5_9/NODE 64-127,192-255 4-7");
	sbuf_release(&sb);
	diag_list_release(&err);
}

static void plan__refuses_infeasible_requests_with_a_clear_error(void **state)
{
	static const int bad_gpu[] = { 8 }, twice[] = { 1, 1 }, pair[] = { 4, 5 };
	const struct node_topo *t = topo_named("256amd64-8n16c2t-dgxa100.xml");
	struct {
		unsigned ranks;
		const int *visible;
		size_t n_visible;
		const char *path, *msg;
	} cases[] = {
		{ 0, NULL, 0, "ranks", "ranks per node must be 1..4096, got 0" },
		{ 5000, NULL, 0, "ranks", "ranks per node must be 1..4096, got 5000" },
		{ 12, NULL, 0, "ranks", "12 ranks cannot share 8 gpus evenly; use a multiple of 8 ranks, at most 8, or gpu: none" },
		{ 256, NULL, 0, "ranks", "256 ranks need 256 allowed cores with cpu: exclusive, but only 128 are allowed" },
		{ 1, bad_gpu, 1, "visible_gpus", "gpu 8 is not on this node, which has 8 gpus" },
		{ 2, twice, 2, "visible_gpus", "gpu 1 is listed twice" },
		{ 3, pair, 2, "ranks", "3 ranks cannot share 2 gpus evenly; use a multiple of 2 ranks, at most 2, or gpu: none" },
	};
	struct bitmap elsewhere = BITMAP_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct plan_request req = { cases[i].ranks, PLAN_POLICY_INIT, NULL,
					    cases[i].visible, cases[i].n_visible };
		struct diag_list err = DIAG_LIST_INIT;
		struct plan p;

		assert_int_equal(plan_slices(t, &req, &p, &err), -1);
		assert_int_equal(err.n, 1);
		assert_string_equal(err.v[0].where, "plan");
		assert_string_equal(err.v[0].path, cases[i].path);
		assert_string_equal(err.v[0].msg, cases[i].msg);
		assert_int_equal(p.n, 0);
		plan_release(&p);
		diag_list_release(&err);
	}
	{
		struct plan_request req = { 1, PLAN_POLICY_INIT, &elsewhere, NULL, 0 };
		struct diag_list err = DIAG_LIST_INIT;
		struct plan p;

		bitmap_parse_list(&elsewhere, "4000-4001");
		assert_int_equal(plan_slices(t, &req, &p, &err), -1);
		assert_string_equal(err.v[0].msg, "no allowed cpu is on this node (allowed \"4000-4001\")");
		diag_list_release(&err);
	}
	bitmap_release(&elsewhere);
}

static void plan__spreads_cpu_only_ranks_over_numa_nodes_in_contiguous_blocks(void **state)
{
	const struct node_topo *t = topo_named("144em64t-4n18c2t-snc2-cpuonly.xml");
	struct plan_request req = { 3, PLAN_POLICY_INIT, NULL, NULL, 0 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	/* 3 ranks over 4 SNC nodes: rank r takes nodes [r*4/3, (r+1)*4/3) */
	plan_text(t, &req, &sb);
	assert_string_equal(sb.buf, "-1 mlx5_0/NODE 0-17,72-89 0\n"
				    "-1 mlx5_0/SYS 18-35,90-107 1\n"
				    "-1 mlx5_0/SYS 36-71,108-143 2-3");
	sbuf_release(&sb);
}

static void plan__policy_spellings_round_trip(void **state)
{
	struct plan_policy p = PLAN_POLICY_INIT;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	plan_policy_format(&p, &sb);
	assert_string_equal(sb.buf, "gpu=auto cpu=exclusive nic=rail memory=local");
	assert_int_equal(plan_policy_set(&p, "cpu", "core-complex"), 0);
	assert_int_equal(plan_policy_set(&p, "nic", "single"), 0);
	assert_int_equal(plan_policy_set(&p, "memory", "preferred"), 0);
	assert_int_equal(plan_policy_set(&p, "gpu", "none"), 0);
	sbuf_reset(&sb);
	plan_policy_format(&p, &sb);
	assert_string_equal(sb.buf, "gpu=none cpu=core-complex nic=single memory=preferred");
	assert_int_equal(plan_policy_set(&p, "cpu", "socket"), -1);
	assert_int_equal(plan_policy_set(&p, "disk", "none"), -1);
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan__gives_rank0_the_first_gpu_by_pci_bus_id),
		cmocka_unit_test(plan__matches_the_dgx_a100_reference_for_8_ranks),
		cmocka_unit_test(plan__matches_the_golden_plans_for_1_2_4_and_8_ranks_on_every_fixture),
		cmocka_unit_test(plan__slices_are_nonempty_allowed_disjoint_and_repeatable_for_all_fixtures_ranks_and_policies),
		cmocka_unit_test(plan__ranks_sharing_a_gpu_split_its_numa_share),
		cmocka_unit_test(plan__gives_whole_l3_groups_with_cpu_core_complex),
		cmocka_unit_test(plan__cpu_node_gives_the_whole_numa_node_and_none_the_allowed_set),
		cmocka_unit_test(plan__nic_single_keeps_one_nic_and_none_keeps_none),
		cmocka_unit_test(plan__shares_one_hca_among_all_gpus_that_tie),
		cmocka_unit_test(plan__honours_an_allowed_cpuset_narrower_than_the_node),
		cmocka_unit_test(plan__uses_only_the_gpus_slurm_left_visible),
		cmocka_unit_test(plan__refuses_infeasible_requests_with_a_clear_error),
		cmocka_unit_test(plan__spreads_cpu_only_ranks_over_numa_nodes_in_contiguous_blocks),
		cmocka_unit_test(plan__policy_spellings_round_trip),
	};

	return cmocka_run_group_tests_name("test_plan", tests, load_all, release_all);
}
