/* doctor_self.c - the checks one task of `hpctrain doctor` makes of its
 * own node (see doctor_self.h): the binding plan for the job's ranks,
 * tried slot by slot; the planned NICs and the NCCL/UCX names; the
 * granted GPUs; free space; munge; a one-core GEMM; the job's container.
 * Shell: hwloc, the environment, and doctor_probe.c's measurements. */
#include "launcher/doctor/doctor_self.h"  // defines: struct doctor_self, doctor_self_check
#include "common/diag.h"                  // defines: struct diag_list
#include "common/monoclock.h"             // defines: monoclock_s
#include "common/sbuf.h"                  // defines: struct sbuf, xrealloc, xstrdup
#include "common/spec/spec.h"             // defines: struct job
#include "launcher/doctor/doctor_container.h" // defines: doctor_container_check
#include "launcher/doctor/doctor_env.h"   // defines: doctor_env_get, doctor_env_slurm_ready
#include "launcher/doctor/doctor_probe.h" // defines: doctor_probe_bind, doctor_probe_gemm
#include "launcher/rank/envplan.h"        // defines: envplan_cvd_parse, envplan_cvd_check, envplan_narrow_request
#include "launcher/rank/policy.h"         // defines: policy_from_spec
#include "launcher/slurm/slurm.h"         // defines: hpt_slurm_munge_socket
#include "launcher/stage/stage_path.h"    // defines: stage_cache_dir, stage_entry_dir
#include "topology/probe.h"               // defines: probe_load_live, probe_keep_release

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

void doctor_self_init(struct doctor_self *s)
{
	memset(s, 0, sizeof(*s));
	topo_init(&s->topo);
	plan_init(&s->plan);
}

void doctor_self_release(struct doctor_self *s)
{
	if (!s)
		return;
	plan_release(&s->plan);
	topo_release(&s->topo);
	probe_keep_release(s->hwloc);
	doctor_node_release(&s->me);
	free(s->munge_socket);
	memset(s, 0, sizeof(*s));
}

/* The inherited CUDA_VISIBLE_DEVICES as launch takes it (cmd_launch.c):
 * one the plan cannot use fails the binding check with the reason, MIG
 * instances warn; binding.gpu none leaves it alone.  -1 when refused. */
static int plan_cvd(struct doctor_self *s, const struct plan_request *req,
		    struct envplan_cvd *cvd)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	struct sbuf why = SBUF_INIT;
	int rc;

	envplan_cvd_parse(&s->topo, v, cvd);
	if (req->policy.gpu == PLAN_GPU_NONE)
		return 0;
	rc = envplan_cvd_check(&s->topo, cvd, v ? v : "", &why);
	if (rc)
		doctor_note(&s->me.cell[DOCTOR_BINDING], rc < 0 ? DOCTOR_FAIL : DOCTOR_WARN, "%s",
			    why.buf);
	sbuf_release(&why);
	return rc < 0 ? -1 : 0;
}

static void plan_node(struct doctor_self *s, const struct doctor_self_opts *o)
{
	struct plan_request req = { .policy = PLAN_POLICY_INIT };
	struct diag_list dl = DIAG_LIST_INIT;
	struct envplan_cvd cvd = { 0 };
	struct doctor_cell *c = &s->me.cell[DOCTOR_BINDING];

	if (probe_load_live(&s->topo, &s->hwloc, &dl)) {
		doctor_note(c, DOCTOR_FAIL, "cannot read the topology: %s",
			    dl.n ? dl.v[0].msg : "hwloc failed");
		goto out;
	}
	if (o->job)
		policy_from_spec(&req.policy, &o->job->binding);
	req.ranks = o->ranks_per_node > 0 ? (unsigned)o->ranks_per_node
		    : o->job ? (unsigned)o->job->resources.ranks_per_node : 1;
	if (plan_cvd(s, &req, &cvd))
		goto out;
	envplan_narrow_request(&req, &s->topo, &cvd);
	if (plan_slices(&s->topo, &req, &s->plan, &dl))
		doctor_note(c, DOCTOR_FAIL, "no binding plan for %u rank(s): %s", req.ranks,
			    dl.n ? dl.v[0].msg : "?");
	else
		s->have_plan = true;
out:
	envplan_cvd_release(&cvd);
	diag_list_release(&dl);
}

/* Each slot bound on a thread of its own, then read back. */
static void check_binding(struct doctor_self *s)
{
	struct doctor_cell *c = &s->me.cell[DOCTOR_BINDING];

	if (!s->have_plan)
		return;
	if (s->plan.policy.cpu == PLAN_CPU_NONE) {
		doctor_note(c, DOCTOR_SKIP, "binding.cpu is none");
		return;
	}
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct slice *sl = &s->plan.slices[i];
		bool mem = sl->memory != PLAN_MEMORY_NONE;
		struct doctor_bind_result r;
		struct doctor_slot slot = {
			.local_rank = sl->local_rank, .want_cpus = &sl->cpuset,
			.want_mems = mem ? &sl->nodeset : NULL,
		};

		doctor_probe_bind(&sl->cpuset, mem ? &sl->nodeset : NULL,
				  sl->memory == PLAN_MEMORY_PREFERRED, &r);
		slot.got_cpus = r.have_cpus ? &r.cpus : NULL;
		slot.got_mems = r.have_mems ? &r.mems : NULL;
		slot.bind_error = r.error[0] ? r.error : NULL;
		doctor_grade_slot(&slot, c);
		doctor_bind_result_release(&r);
	}
	if (c->grade == DOCTOR_OK)
		doctor_note(c, DOCTOR_OK, "%zu slot(s) bound as planned (%s memory)", s->plan.n,
			    plan_policy_memory_name(s->plan.slices[0].memory));
}

/* The planned NICs' names: OpenFabrics devices, else interfaces. */
static void check_nics(struct doctor_self *s, const struct doctor_self_opts *o)
{
	const char **hcas = NULL, **ifs = NULL;
	struct doctor_nic_input in = {
		.nccl_ib_hca = doctor_env_get(o->job, "NCCL_IB_HCA"),
		.nccl_socket_ifname = doctor_env_get(o->job, "NCCL_SOCKET_IFNAME"),
		.ucx_net_devices = doctor_env_get(o->job, "UCX_NET_DEVICES"),
	};

	for (size_t i = 0; s->have_plan && i < s->plan.n; i++)
		for (size_t k = 0; k < s->plan.slices[i].n_nics; k++) {
			const struct topo_nic *nic = &s->topo.nics[s->plan.slices[i].nics[k]];

			for (size_t j = 0; j < nic->n_ofed; j++) {
				hcas = xrealloc(hcas, (in.n_hcas + 1) * sizeof(*hcas));
				hcas[in.n_hcas++] = nic->ofed[j];
			}
			for (size_t j = 0; !nic->n_ofed && j < nic->n_net; j++) {
				ifs = xrealloc(ifs, (in.n_ifnames + 1) * sizeof(*ifs));
				ifs[in.n_ifnames++] = nic->net[j];
			}
		}
	in.hcas = hcas;
	in.ifnames = ifs;
	doctor_check_nics(o->root, &in, &s->me.cell[DOCTOR_NICS]);
	free(hcas);
	free(ifs);
}

/* statvfs of dir, or of its nearest existing parent: the cache may not
 * exist yet on a node that never staged. */
static int free_bytes_under(const char *dir, uint64_t *free_b)
{
	char *p = xstrdup(dir), *slash;
	struct statvfs st;
	int rc, e;

	for (;;) {
		if (!(rc = statvfs(p, &st))) {
			*free_b = (uint64_t)st.f_bavail * st.f_frsize;
			break;
		}
		if (errno != ENOENT || !strcmp(p, "/") || !(slash = strrchr(p, '/')))
			break;
		slash[slash == p] = '\0'; /* "/a/b" to "/a", "/a" to "/" */
	}
	e = errno;
	free(p);
	errno = e;
	return rc;
}

/* data.stage on this node: the bytes of the entries its cache lacks
 * (an entry is there when its published directory is; the stage step
 * verifies it) against the free space of the cache's file system. */
static void check_stage_space(struct doctor_self *s, const struct doctor_self_opts *o)
{
	const struct job_data *d = &o->job->data;
	struct doctor_cell *c = &s->me.cell[DOCTOR_FILES];
	char *cache = stage_job_cache_dir(o->job, getenv("TMPDIR"), (unsigned)getuid());
	uint64_t needed = 0, free_b = 0;
	struct stat st;

	for (size_t i = 0; i < d->nstage; i++) {
		char *dir = d->stage[i].manifest ? stage_entry_dir(cache, d->stage[i].manifest) : NULL;

		if (!dir || stat(dir, &st) || !S_ISDIR(st.st_mode))
			needed += d->stage[i].bytes;
		free(dir);
	}
	if (free_bytes_under(cache, &free_b))
		doctor_note(c, DOCTOR_FAIL, "data.stage cache %s: %s", cache, strerror(errno));
	else
		doctor_grade_stage_space(needed, free_b, cache, c);
	free(cache);
}

static void check_files(struct doctor_self *s, const struct doctor_self_opts *o)
{
	const char *scratch = o->scratch;
	struct doctor_cell *c = &s->me.cell[DOCTOR_FILES];
	char cwd[PATH_MAX];

	if (!scratch && o->job)
		scratch = o->job->preflight.scratch;
	if (!scratch)
		scratch = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (o->run)
		doctor_check_space("run directory", o->run, o->min_free_gb, c);
	else if (o->job && o->job->output.dir && !access(o->job->output.dir, F_OK))
		doctor_check_space("output directory", o->job->output.dir, o->min_free_gb, c);
	else if (getcwd(cwd, sizeof(cwd)))
		doctor_check_space("working directory", cwd, o->min_free_gb, c);
	doctor_check_space("scratch", scratch, o->min_free_gb, c);
	if (o->job && o->job->data.nstage)
		check_stage_space(s, o);
}

/* munge on this node: a credential made and read back. */
static void check_munge_local(struct doctor_self *s)
{
	struct sbuf err = SBUF_INIT, sock = SBUF_INIT;
	struct doctor_cell *c = &s->me.cell[DOCTOR_SERVICES];
	char *cred;

	if (getenv("SLURM_JOB_ID") && !doctor_env_slurm_ready(&err) &&
	    !hpt_slurm_munge_socket(&sock, &err))
		s->munge_socket = sock.len ? xstrdup(sock.buf) : NULL;
	sbuf_reset(&err);
	cred = doctor_munge_encode(s->munge_socket, &err);
	/* outside a job (a login node, a workstation) munge may rightly be absent */
	if (!cred || doctor_munge_decode(s->munge_socket, cred, &err))
		doctor_note(c, getenv("SLURM_JOB_ID") ? DOCTOR_FAIL : DOCTOR_WARN, "munge%s%s: %s",
			    s->munge_socket ? " at " : "", s->munge_socket ? s->munge_socket : "", err.buf);
	else
		doctor_note(c, DOCTOR_OK, "munge credential made and read back");
	free(cred);
	sbuf_release(&err);
	sbuf_release(&sock);
}

void doctor_self_check(struct doctor_self *s, const struct doctor_self_opts *o)
{
	double t0 = monoclock_s();

	doctor_node_init(&s->me, doctor_env_node_name());
	plan_node(s, o);
	doctor_check_gpus(o->root, getenv("SLURM_STEP_GPUS") ? getenv("SLURM_STEP_GPUS")
				  : getenv("SLURM_JOB_GPUS"), s->topo.n_gpus, &s->me.cell[DOCTOR_GPUS]);
	check_nics(s, o);
	check_binding(s);
	check_files(s, o);
	check_munge_local(s);
	doctor_container_check(o->job, o->run, getenv("SLURM_STEP_GPUS") ? getenv("SLURM_STEP_GPUS")
			       : getenv("SLURM_JOB_GPUS"), o->timeout_s, &s->me.cell[DOCTOR_CONTAINER]);
	s->me.gemm_gflops = doctor_probe_gemm(512, 3, 0.15);
	if (s->me.gemm_gflops < 0)
		doctor_note(&s->me.cell[DOCTOR_COMPUTE], DOCTOR_FAIL, "oneDNN's sgemm failed");
	s->me.checks_s = monoclock_s() - t0;
}
