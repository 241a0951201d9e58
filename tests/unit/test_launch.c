/* test_launch.c - rank discovery from the environment and a rank's env. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/diag.h"
#include "common/sbuf.h"
#include "common/spec/spec.h"
#include "launcher/rank/envplan.h"
#include "launcher/rank/rank.h"
#include "topology/plan.h"
#include "topology/probe.h"
#include "topology/topo.h"

/* A fake environment: NULL-terminated "NAME=value" strings. */
static const char *fake_get(void *ctx, const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = ctx; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static void launch__reads_slurm_step_variables(void **state)
{
	const char *env[] = { "SLURM_STEP_ID=3", "SLURM_PROCID=13", "SLURM_LOCALID=5",
			      "SLURM_NODEID=1", "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_NUM_TASKS=16",
			      "SLURM_STEP_TASKS_PER_NODE=8(x2)", "SLURM_JOB_ID=42",
			      "SLURM_STEP_NODELIST=dgx[07-08]", "SLURMD_NODENAME=dgx08", NULL };
	struct diag_list dl = DIAG_LIST_INIT;
	struct rank_info ri;

	(void)state;
	assert_int_equal(rank_from_env(fake_get, env, "host", &ri, &dl), 0);
	assert_int_equal(ri.source, RANK_SOURCE_SLURM);
	assert_int_equal(ri.rank, 13);
	assert_int_equal(ri.world_size, 16);
	assert_int_equal(ri.local_rank, 5);
	assert_int_equal(ri.local_size, 8);
	assert_int_equal(ri.node_rank, 1);
	assert_int_equal(ri.num_nodes, 2);
	assert_string_equal(ri.hostname, "dgx08");
	assert_string_equal(ri.master_addr, "dgx07");
	assert_string_equal(ri.job_key, "slurm:42.3");
	rank_info_release(&ri);
	diag_list_release(&dl);
}

/* The last rank of 8,192 nodes of 8 tasks (65,536 ranks), in a layout
 * Slurm compresses unevenly (one node short of a task): every count
 * holds, and the tasks-per-node list is read at its far end. */
static void launch__reads_the_last_rank_of_65536_on_8192_nodes(void **state)
{
	const char *env[] = { "SLURM_STEP_ID=0", "SLURM_PROCID=65534", "SLURM_LOCALID=7",
			      "SLURM_NODEID=8191", "SLURM_STEP_NUM_NODES=8192",
			      "SLURM_STEP_NUM_TASKS=65535",
			      "SLURM_STEP_TASKS_PER_NODE=8(x4095),7,8(x4096)", "SLURM_JOB_ID=7",
			      "SLURM_STEP_NODELIST=nid[000001-008192]", "SLURMD_NODENAME=nid008192",
			      NULL };
	struct diag_list dl = DIAG_LIST_INIT;
	struct rank_info ri;

	(void)state;
	assert_int_equal(rank_from_env(fake_get, env, "host", &ri, &dl), 0);
	assert_int_equal(ri.rank, 65534);
	assert_int_equal(ri.world_size, 65535);
	assert_int_equal(ri.local_rank, 7);
	assert_int_equal(ri.local_size, 8);
	assert_int_equal(ri.node_rank, 8191);
	assert_int_equal(ri.num_nodes, 8192);
	assert_string_equal(ri.master_addr, "nid000001");
	assert_int_equal(rank_tasks_on_node("8(x4095),7,8(x4096)", 4095), 7);
	assert_int_equal(rank_tasks_on_node("8(x4095),7,8(x4096)", 8191), 8);
	assert_int_equal(rank_tasks_on_node("8(x4095),7,8(x4096)", 8192), 0);
	assert_int_equal(rank_tasks_on_node("8(x65536)", 65535), 8);
	rank_info_release(&ri);
	diag_list_release(&dl);
}

static void launch__ignores_slurm_variables_outside_a_step(void **state)
{
	/* A batch script has SLURM_PROCID=0 but is no rank of a step. */
	const char *env[] = { "SLURM_PROCID=0", "SLURM_NTASKS=8", "SLURM_JOB_ID=1", NULL };
	struct diag_list dl = DIAG_LIST_INIT;
	struct rank_info ri;

	(void)state;
	assert_int_equal(rank_from_env(fake_get, env, "h", &ri, &dl), 0);
	assert_int_equal(ri.source, RANK_SOURCE_SINGLE);
	assert_int_equal(ri.world_size, 1);
	rank_info_release(&ri);
}

static void launch__refuses_inconsistent_slurm_variables(void **state)
{
	const char *env[] = { "SLURM_STEP_ID=0", "SLURM_PROCID=9", "SLURM_STEP_NUM_TASKS=8", NULL };
	struct diag_list dl = DIAG_LIST_INIT;
	struct rank_info ri;
	struct sbuf msg = SBUF_INIT;

	(void)state;
	assert_int_equal(rank_from_env(fake_get, env, "h", &ri, &dl), -1);
	diag_format(&dl.v[0], &msg);
	assert_string_equal(msg.buf, "SLURM_PROCID: 9 is not below SLURM_STEP_NUM_TASKS (8)");
	sbuf_release(&msg);
	rank_info_release(&ri);
	diag_list_release(&dl);
}

/* Every malformed number is named with its value, and a malformed
 * SLURM_STEP_NUM_TASKS is not replaced by SLURM_NTASKS (nor blamed on it). */
static void launch__names_each_malformed_rank_variable(void **state)
{
	const char *env[] = { "SLURM_STEP_ID=0", "SLURM_PROCID=-1", "SLURM_STEP_NUM_TASKS=8x",
			      "SLURM_NTASKS=8", "SLURM_LOCALID= 1", "SLURM_NODEID=0",
			      "SLURM_NNODES=99999999999999999999", "SLURM_TASKS_PER_NODE=8", NULL };
	const char *ompi[] = { "OMPI_COMM_WORLD_RANK=0x1", "OMPI_COMM_WORLD_SIZE=2",
			       "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=0", NULL };
	struct diag_list dl = DIAG_LIST_INIT;
	struct rank_info ri;
	struct sbuf msg = SBUF_INIT;

	(void)state;
	assert_int_equal(rank_from_env(fake_get, env, "h", &ri, &dl), -1);
	assert_int_equal(dl.n, 4);
	diag_format(&dl.v[0], &msg);
	assert_string_equal(msg.buf, "SLURM_PROCID: expected an integer 0..1073741824, got \"-1\"");
	sbuf_reset(&msg);
	diag_format(&dl.v[1], &msg);
	assert_string_equal(msg.buf, "SLURM_STEP_NUM_TASKS: expected an integer 1..1073741824, "
			    "got \"8x\"");
	sbuf_reset(&msg);
	diag_format(&dl.v[3], &msg);
	assert_string_equal(msg.buf, "SLURM_NNODES: expected an integer 1..1073741824, "
			    "got \"99999999999999999999\"");
	diag_list_release(&dl);
	rank_info_release(&ri);
	assert_int_equal(rank_from_env(fake_get, ompi, "h", &ri, &dl), -1);
	assert_int_equal(dl.n, 2);
	sbuf_reset(&msg);
	diag_format(&dl.v[1], &msg);
	assert_string_equal(msg.buf, "OMPI_COMM_WORLD_LOCAL_SIZE: expected an integer "
			    "1..1073741824, got \"0\"");
	sbuf_release(&msg);
	rank_info_release(&ri);
	diag_list_release(&dl);
}

static void launch__reads_open_mpi_variables(void **state)
{
	const char *env[] = { "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8",
			      "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=4",
			      "PMIX_NAMESPACE=1234", NULL };
	struct diag_list dl = DIAG_LIST_INIT;
	struct rank_info ri;

	(void)state;
	assert_int_equal(rank_from_env(fake_get, env, "h", &ri, &dl), 0);
	assert_int_equal(ri.source, RANK_SOURCE_OMPI);
	assert_int_equal(ri.node_rank, 1);
	assert_int_equal(ri.num_nodes, 2);
	assert_string_equal(ri.master_addr, "");
	assert_string_equal(ri.job_key, "ompi:1234");
	rank_info_release(&ri);
}

static void launch__parses_slurm_host_and_task_lists(void **state)
{
	static const struct { const char *in, *want; } hosts[] = {
		{ "dgx[07-08]", "dgx07" }, { "node[001-004,9],gpu1", "node001" },
		{ "a,b", "a" }, { "rack[1-2]n[3-4]", "rack1n" }, { "solo", "solo" },
	};
	char *h;

	(void)state;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		h = rank_first_host(hosts[i].in);
		assert_non_null(h);
		assert_string_equal(h, hosts[i].want);
		free(h);
	}
	assert_null(rank_first_host(""));
	assert_null(rank_first_host("x[a-b]"));
	assert_int_equal(rank_tasks_on_node("2(x3),1", 0), 2);
	assert_int_equal(rank_tasks_on_node("2(x3),1", 2), 2);
	assert_int_equal(rank_tasks_on_node("2(x3),1", 3), 1);
	assert_int_equal(rank_tasks_on_node("2(x3),1", 4), 0);
	assert_int_equal(rank_tasks_on_node("x", 0), 0);
	/* what strtoul would take: a sign, blanks, counts beyond any step */
	assert_int_equal(rank_tasks_on_node("-1", 0), 0);
	assert_int_equal(rank_tasks_on_node(" 2", 0), 0);
	assert_int_equal(rank_tasks_on_node("2(x-1),1", 0), 0);
	assert_int_equal(rank_tasks_on_node("18446744073709551617", 0), 0);
	assert_int_equal(rank_tasks_on_node("2(x4294967296),1", 5), 0);
}

static void launch__derives_an_unprivileged_port_from_the_job(void **state)
{
	static bool seen[32000];
	int distinct = 0;

	(void)state;
	assert_int_not_equal(rank_master_port("slurm:42.0"), rank_master_port("slurm:43.0"));
	/* jobs that share a node get different ports: 1000 job keys land on
	 * nearly 1000 ports of the 12000 (a birthday bound of about 40
	 * collisions) */
	for (int i = 0; i < 1000; i++) {
		char key[32];
		unsigned p;

		snprintf(key, sizeof(key), "pmix:%d", i);
		p = rank_master_port(key);
		assert_true(p >= 20000 && p < 32000);
		distinct += !seen[p];
		seen[p] = true;
	}
	assert_true(distinct > 900);
}

struct dgx {
	struct node_topo topo;
	struct plan plan;
	struct envplan_cvd cvd;
	struct rank_info ri;
	struct env_list env;
};

/* The run's attempt dgx_env passes on (attempt 0: launch without a run). */
static struct {
	int attempt;
	long long prev_world_size;
	const char *checkpoint_dir;
} dgx_attempt;

/* Where a rank run from a code snapshot has Python write bytecode. */
static struct {
	const char *prefix;
	bool no_bytecode;
} dgx_pycache;

static void dgx_env(struct dgx *d, unsigned local_rank, const char *cvd, int gpu_none,
		    const struct job_env *user)
{
	const char *dir = getenv("HPT_FIXTURES") ? getenv("HPT_FIXTURES") : "tests/fixtures";
	char *path = xasprintf("%s/256amd64-8n16c2t-dgxa100.xml", dir);
	struct diag_list dl = DIAG_LIST_INIT;
	struct plan_request req = { .ranks = 8, .policy = PLAN_POLICY_INIT };
	struct envplan_input in = { 0 };

	memset(d, 0, sizeof(*d));
	topo_init(&d->topo);
	plan_init(&d->plan);
	assert_int_equal(probe_load(path, &d->topo, &dl), 0);
	envplan_cvd_parse(&d->topo, cvd, &d->cvd);
	if (d->cvd.n && d->cvd.all_mapped) {
		req.visible_gpus = d->cvd.gpus;
		req.n_visible_gpus = d->cvd.n;
		req.ranks = (unsigned)d->cvd.n;
	}
	assert_int_equal(plan_slices(&d->topo, &req, &d->plan, &dl), 0);
	d->ri = (struct rank_info){ RANK_SOURCE_SLURM, 8 + local_rank, 16, local_rank, req.ranks, 1, 2,
				    xstrdup("dgx08"), xstrdup("dgx07"), xstrdup("slurm:42.0") };
	in.ri = &d->ri;
	in.topo = &d->topo;
	in.plan = &d->plan;
	in.cvd = &d->cvd;
	in.gpu_none = gpu_none;
	in.user = user;
	in.attempt = dgx_attempt.attempt;
	in.prev_world_size = dgx_attempt.prev_world_size;
	in.checkpoint_dir = dgx_attempt.checkpoint_dir;
	in.pycache_prefix = dgx_pycache.prefix;
	in.no_bytecode = dgx_pycache.no_bytecode;
	envplan_build(&in, &d->env);
	free(path);
	diag_list_release(&dl);
}

static void dgx_release(struct dgx *d)
{
	topo_release(&d->topo);
	plan_release(&d->plan);
	envplan_cvd_release(&d->cvd);
	rank_info_release(&d->ri);
	env_list_release(&d->env);
}

static void launch__gives_each_dgx_a100_rank_its_gpu_rail_and_cores(void **state)
{
	static const struct { const char *gpu, *hca, *ucx, *cpus; } want[8] = {
		{ "0", "=mlx5_0", "mlx5_0:1", "48-55,176-183" },
		{ "1", "=mlx5_1", "mlx5_1:1", "56-63,184-191" },
		{ "2", "=mlx5_2", "mlx5_2:1", "16-23,144-151" },
		{ "3", "=mlx5_3", "mlx5_3:1", "24-31,152-159" },
		{ "4", "=mlx5_6", "mlx5_6:1", "112-119,240-247" },
		{ "5", "=mlx5_7", "mlx5_7:1", "120-127,248-255" },
		{ "6", "=mlx5_8", "mlx5_8:1", "80-87,208-215" },
		{ "7", "=mlx5_9", "mlx5_9:1", "88-95,216-223" },
	};

	(void)state;
	for (unsigned r = 0; r < 8; r++) {
		struct dgx d;
		char cpus[64];

		dgx_env(&d, r, NULL, 0, NULL);
		assert_string_equal(env_list_get(&d.env, "CUDA_VISIBLE_DEVICES"), want[r].gpu);
		assert_string_equal(env_list_get(&d.env, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
		assert_string_equal(env_list_get(&d.env, "NCCL_IB_HCA"), want[r].hca);
		assert_string_equal(env_list_get(&d.env, "UCX_NET_DEVICES"), want[r].ucx);
		assert_string_equal(env_list_get(&d.env, "OMP_NUM_THREADS"), "8");
		snprintf(cpus, sizeof(cpus), "\"cpus\":\"%s\"", want[r].cpus);
		assert_non_null(strstr(env_list_get(&d.env, "HPCTRAIN_SLICE"), cpus));
		snprintf(cpus, sizeof(cpus), "%u", 8 + r);
		assert_string_equal(env_list_get(&d.env, "RANK"), cpus);
		assert_string_equal(env_list_get(&d.env, "LOCAL_RANK"), want[r].gpu);
		assert_string_equal(env_list_get(&d.env, "WORLD_SIZE"), "16");
		assert_string_equal(env_list_get(&d.env, "NODE_RANK"), "1");
		assert_string_equal(env_list_get(&d.env, "MASTER_ADDR"), "dgx07");
		dgx_release(&d);
	}
}

static void launch__tells_each_rank_its_attempt_and_the_world_before_it(void **state)
{
	struct dgx d;

	(void)state;
	dgx_env(&d, 0, NULL, 0, NULL); /* no run: none of the three */
	assert_null(env_list_get(&d.env, "HPCTRAIN_ATTEMPT"));
	assert_null(env_list_get(&d.env, "HPCTRAIN_PREV_WORLD_SIZE"));
	assert_null(env_list_get(&d.env, "HPCTRAIN_CHECKPOINT_DIR"));
	dgx_release(&d);
	dgx_attempt.attempt = 1;
	dgx_attempt.checkpoint_dir = "/runs/t/abc/checkpoints";
	dgx_env(&d, 0, NULL, 0, NULL);
	assert_string_equal(env_list_get(&d.env, "HPCTRAIN_ATTEMPT"), "1");
	assert_string_equal(env_list_get(&d.env, "HPCTRAIN_PREV_WORLD_SIZE"), "0");
	assert_string_equal(env_list_get(&d.env, "HPCTRAIN_CHECKPOINT_DIR"), "/runs/t/abc/checkpoints");
	dgx_release(&d);
	dgx_attempt.attempt = 2;
	dgx_attempt.prev_world_size = 24;
	dgx_env(&d, 3, NULL, 0, NULL);
	assert_string_equal(env_list_get(&d.env, "HPCTRAIN_ATTEMPT"), "2");
	assert_string_equal(env_list_get(&d.env, "HPCTRAIN_PREV_WORLD_SIZE"), "24");
	assert_string_equal(env_list_get(&d.env, "WORLD_SIZE"), "16");
	dgx_release(&d);
	memset(&dgx_attempt, 0, sizeof(dgx_attempt));
}

static void launch__maps_into_a_gpu_list_slurm_narrowed(void **state)
{
	struct dgx d;

	(void)state;
	/* Slurm gave this job GPUs 6 and 7: rank 1 gets 7, never outside. */
	dgx_env(&d, 1, "6,7", 0, NULL);
	assert_string_equal(env_list_get(&d.env, "CUDA_VISIBLE_DEVICES"), "7");
	assert_string_equal(env_list_get(&d.env, "NCCL_IB_HCA"), "=mlx5_9");
	dgx_release(&d);
}

static void launch__forces_nccl_onto_the_planned_hcas_unless_the_user_chose(void **state)
{
	struct job_env_var vars[] = { { "NCCL_NET", "Socket" } };
	struct job_env user = { vars, 1 };
	struct dgx d;

	(void)state;
	/* HCAs planned: NCCL_NET=IB, so NCCL fails rather than use sockets */
	dgx_env(&d, 0, NULL, 0, NULL);
	assert_non_null(env_list_get(&d.env, "NCCL_IB_HCA"));
	assert_string_equal(env_list_get(&d.env, "NCCL_NET"), "IB");
	dgx_release(&d);
	/* the spec's env wins */
	dgx_env(&d, 0, NULL, 0, &user);
	assert_string_equal(env_list_get(&d.env, "NCCL_NET"), "Socket");
	dgx_release(&d);
}

static void launch__moves_python_bytecode_out_of_the_snapshot_unless_the_spec_says(void **state)
{
	struct job_env_var vars[] = { { "PYTHONPYCACHEPREFIX", "/mine" } };
	struct job_env user = { vars, 1 };
	struct dgx d;

	(void)state;
	dgx_env(&d, 0, NULL, 0, NULL);
	assert_null(env_list_get(&d.env, "PYTHONPYCACHEPREFIX"));
	assert_null(env_list_get(&d.env, "PYTHONDONTWRITEBYTECODE"));
	dgx_release(&d);
	dgx_pycache.prefix = "/dev/shm/hpctrain-cache-1000/pycache";
	dgx_env(&d, 0, NULL, 0, NULL);
	assert_string_equal(env_list_get(&d.env, "PYTHONPYCACHEPREFIX"), dgx_pycache.prefix);
	dgx_release(&d);
	dgx_env(&d, 0, NULL, 0, &user);
	assert_string_equal(env_list_get(&d.env, "PYTHONPYCACHEPREFIX"), "/mine");
	dgx_release(&d);
	/* no private directory for it: no bytecode at all */
	dgx_pycache.prefix = NULL;
	dgx_pycache.no_bytecode = true;
	dgx_env(&d, 0, NULL, 0, NULL);
	assert_null(env_list_get(&d.env, "PYTHONPYCACHEPREFIX"));
	assert_string_equal(env_list_get(&d.env, "PYTHONDONTWRITEBYTECODE"), "1");
	dgx_release(&d);
	dgx_pycache.no_bytecode = false;
}

static void launch__lets_the_spec_env_win_and_gpu_none_leave_cuda_alone(void **state)
{
	struct job_env_var vars[] = { { "OMP_NUM_THREADS", "3" }, { "NCCL_DEBUG", "INFO" } };
	struct job_env user = { vars, 2 };
	struct dgx d;

	(void)state;
	dgx_env(&d, 0, NULL, 1, &user);
	assert_null(env_list_get(&d.env, "CUDA_VISIBLE_DEVICES"));
	assert_string_equal(env_list_get(&d.env, "OMP_NUM_THREADS"), "3");
	assert_string_equal(env_list_get(&d.env, "NCCL_DEBUG"), "INFO");
	dgx_release(&d);
}

static void launch__splits_an_unresolvable_device_list_among_ranks(void **state)
{
	struct dgx d;

	(void)state;
	dgx_env(&d, 5, "MIG-a,MIG-b,MIG-c,MIG-d", 0, NULL);
	assert_string_equal(env_list_get(&d.env, "CUDA_VISIBLE_DEVICES"), "MIG-c");
	dgx_release(&d);
}

static void launch__plans_only_over_the_gpus_slurm_allowed(void **state)
{
	const char *dir = getenv("HPT_FIXTURES") ? getenv("HPT_FIXTURES") : "tests/fixtures";
	char *path = xasprintf("%s/256amd64-8n16c2t-dgxa100.xml", dir);
	struct diag_list dl = DIAG_LIST_INIT;
	struct plan_request req = { .ranks = 8 };
	struct envplan_cvd cvd, gpuless = { 0 };
	struct node_topo t, none;

	(void)state;
	topo_init(&t);
	topo_init(&none);
	assert_int_equal(probe_load(path, &t, &dl), 0);
	/* Slurm gave GPUs 6 and 7: the plan sees those two, in that order */
	envplan_cvd_parse(&t, "7,6", &cvd);
	envplan_narrow_request(&req, &t, &cvd);
	assert_ptr_equal(req.visible_gpus, cvd.gpus);
	assert_int_equal(req.n_visible_gpus, 2);
	assert_int_equal(req.visible_gpus[0], 7);
	assert_int_equal(req.visible_gpus[1], 6);
	envplan_cvd_release(&cvd);
	/* entries the topology cannot map, or none: every GPU */
	req = (struct plan_request){ .ranks = 8 };
	envplan_cvd_parse(&t, "MIG-a,MIG-b", &cvd);
	envplan_narrow_request(&req, &t, &cvd);
	assert_null(req.visible_gpus);
	assert_int_equal(req.n_visible_gpus, 0);
	envplan_cvd_release(&cvd);
	envplan_cvd_parse(&t, "", &cvd);
	envplan_narrow_request(&req, &t, &cvd);
	assert_null(req.visible_gpus);
	envplan_cvd_release(&cvd);
	/* a node whose topology shows no GPU: nothing to narrow */
	envplan_cvd_parse(&t, "0,1", &gpuless);
	envplan_narrow_request(&req, &none, &gpuless);
	assert_null(req.visible_gpus);
	envplan_cvd_release(&gpuless);
	topo_release(&t);
	topo_release(&none);
	diag_list_release(&dl);
	free(path);
}

static void load_fixture(const char *name, struct node_topo *t)
{
	const char *dir = getenv("HPT_FIXTURES") ? getenv("HPT_FIXTURES") : "tests/fixtures";
	char *path = xasprintf("%s/%s", dir, name);
	struct diag_list dl = DIAG_LIST_INIT;

	topo_init(t);
	assert_int_equal(probe_load(path, t, &dl), 0);
	diag_list_release(&dl);
	free(path);
}

/* cvd against t: envplan_cvd_check's answer, and its words in why. */
static int check_cvd(const struct node_topo *t, const char *cvd, struct sbuf *why)
{
	struct envplan_cvd m;
	int rc;

	sbuf_reset(why);
	envplan_cvd_parse(t, cvd, &m);
	rc = envplan_cvd_check(t, &m, cvd, why);
	envplan_cvd_release(&m);
	return rc;
}

static void launch__refuses_a_device_list_the_plan_cannot_use(void **state)
{
	struct node_topo a100, h100, none;
	struct sbuf why = SBUF_INIT;

	(void)state;
	load_fixture("256amd64-8n16c2t-dgxa100.xml", &a100); /* no GPU UUIDs recorded */
	load_fixture("224em64t-2n56c2t-dgxh100.xml", &h100); /* UUIDs GPU-5eed000N-... */
	topo_init(&none);
	assert_int_equal(check_cvd(&a100, "garbage", &why), -1);
	assert_string_equal(why.buf, "CUDA_VISIBLE_DEVICES=garbage: \"garbage\" is neither a GPU "
			    "index nor a GPU-/MIG- UUID");
	assert_int_equal(check_cvd(&a100, "99,100", &why), -1);
	assert_string_equal(why.buf, "CUDA_VISIBLE_DEVICES=99,100: GPU 99 is not on this node, "
			    "which has 8 (0-7)");
	assert_int_equal(check_cvd(&a100, "1,+2", &why), -1);
	assert_int_equal(check_cvd(&a100, "3,3", &why), -1);
	assert_string_equal(why.buf, "CUDA_VISIBLE_DEVICES=3,3: 3 and 3 both name GPU 3");
	assert_int_equal(check_cvd(&a100, "GPU-5eed0000-1f2e-4d3c-8b4a-000100000000", &why), -1);
	assert_non_null(strstr(why.buf, "the topology records no GPU UUIDs"));
	assert_int_equal(check_cvd(&h100, "GPU-5eed0000-1f2e-4d3c-8b4a-000100000000,GPU-ffff", &why),
			 -1);
	assert_string_equal(why.buf + strlen(why.buf) - strlen("GPU-ffff is not the UUID (or a unique "
			    "prefix of one) of any of this node's 8 GPUs"), "GPU-ffff is not the UUID "
			    "(or a unique prefix of one) of any of this node's 8 GPUs");
	/* "GPU-5eed000" fits all eight: ambiguous, as CUDA finds it */
	assert_int_equal(check_cvd(&h100, "GPU-5eed000", &why), -1);
	/* usable: exact GPUs, by index or UUID (a unique prefix too) */
	assert_int_equal(check_cvd(&a100, "6,7", &why), 0);
	assert_int_equal(check_cvd(&h100, "GPU-5eed0003-1f2e-4d3c-8b4a-000100000003,GPU-5eed0005", &why),
			 0);
	assert_int_equal(check_cvd(&a100, "", &why), 0);
	assert_int_equal(check_cvd(&a100, "NoDevFiles", &why), 0);
	/* MIG instances: shared out, with the warning; a GPU-less topology shares any */
	assert_int_equal(check_cvd(&a100, "MIG-a,MIG-b", &why), 1);
	assert_non_null(strstr(why.buf, "MIG instances cannot be placed"));
	assert_int_equal(check_cvd(&none, "0,1,GPU-abc,MIG-x", &why), 0);
	assert_int_equal(check_cvd(&none, "0,garbage", &why), -1);
	topo_release(&a100);
	topo_release(&h100);
	topo_release(&none);
	sbuf_release(&why);
}

static void launch__plans_over_exactly_the_gpus_a_uuid_list_names(void **state)
{
	struct node_topo h100;
	struct envplan_cvd m;
	struct plan_request req = { .ranks = 2 };

	(void)state;
	load_fixture("224em64t-2n56c2t-dgxh100.xml", &h100);
	envplan_cvd_parse(&h100, "GPU-5eed0006,GPU-5eed0002-1f2e-4d3c-8b4a-000100000002", &m);
	envplan_narrow_request(&req, &h100, &m);
	assert_int_equal(req.n_visible_gpus, 2);
	assert_int_equal(req.visible_gpus[0], 6);
	assert_int_equal(req.visible_gpus[1], 2);
	envplan_cvd_release(&m);
	topo_release(&h100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(launch__reads_slurm_step_variables),
		cmocka_unit_test(launch__reads_the_last_rank_of_65536_on_8192_nodes),
		cmocka_unit_test(launch__ignores_slurm_variables_outside_a_step),
		cmocka_unit_test(launch__refuses_inconsistent_slurm_variables),
		cmocka_unit_test(launch__names_each_malformed_rank_variable),
		cmocka_unit_test(launch__reads_open_mpi_variables),
		cmocka_unit_test(launch__parses_slurm_host_and_task_lists),
		cmocka_unit_test(launch__derives_an_unprivileged_port_from_the_job),
		cmocka_unit_test(launch__gives_each_dgx_a100_rank_its_gpu_rail_and_cores),
		cmocka_unit_test(launch__maps_into_a_gpu_list_slurm_narrowed),
		cmocka_unit_test(launch__forces_nccl_onto_the_planned_hcas_unless_the_user_chose),
		cmocka_unit_test(launch__lets_the_spec_env_win_and_gpu_none_leave_cuda_alone),
		cmocka_unit_test(launch__moves_python_bytecode_out_of_the_snapshot_unless_the_spec_says),
		cmocka_unit_test(launch__tells_each_rank_its_attempt_and_the_world_before_it),
		cmocka_unit_test(launch__splits_an_unresolvable_device_list_among_ranks),
		cmocka_unit_test(launch__plans_only_over_the_gpus_slurm_allowed),
		cmocka_unit_test(launch__refuses_a_device_list_the_plan_cannot_use),
		cmocka_unit_test(launch__plans_over_exactly_the_gpus_a_uuid_list_names),
	};

	return cmocka_run_group_tests_name("test_launch", tests, NULL, NULL);
}
