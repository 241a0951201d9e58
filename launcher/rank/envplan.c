/* envplan.c - compute a rank's environment from its identity and slice.
 * Core: see envplan.h for every variable and the reason it is set. */
#include "launcher/rank/envplan.h" // defines: envplan_build, envplan_cvd_*, envplan_narrow_request
#include "launcher/rank/env_list.h" // defines: struct env_list, env_list_set
#include "common/sbuf.h"         // defines: struct sbuf, x* allocators, sbuf_clip
#include "common/jsonb.h"             // defines: jsonb_append, jsonb_text, jsonb_xdumps
#include "common/spec/spec.h"         // defines: struct job_env (its fields)
#include "launcher/rank/rank.h"    // defines: struct rank_info, rank_master_port
#include "topology/bitmap.h"  // defines: bitmap_*
#include "topology/plan.h"    // defines: struct plan, struct slice, struct plan_request
#include "topology/topo.h"    // defines: struct node_topo, topo_nic_name

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_index(const char *e)
{
	size_t n = strspn(e, "0123456789");

	return n && n < 10 && !e[n];
}

/* The GPU an entry names, as CUDA reads it: a decimal index (PCI bus
 * order, as CUDA_DEVICE_ORDER=PCI_BUS_ID makes it), or "GPU-" and the
 * GPU's UUID or a prefix of it that fits one GPU only; else -1. */
static int gpu_by_entry(const struct node_topo *t, const char *e)
{
	int found = -1;

	if (!strncmp(e, "GPU-", 4)) {
		for (size_t g = 0; g < t->n_gpus; g++)
			if (t->gpus[g].uuid && !strncmp(t->gpus[g].uuid, e, strlen(e))) {
				if (found >= 0 || !e[4])
					return -1;
				found = (int)g;
			}
		return found;
	}
	if (!is_index(e) || strtoul(e, NULL, 10) >= t->n_gpus)
		return -1;
	return (int)strtoul(e, NULL, 10);
}

void envplan_cvd_parse(const struct node_topo *t, const char *cvd, struct envplan_cvd *out)
{
	memset(out, 0, sizeof(*out));
	out->all_mapped = true;
	if (!cvd || !*cvd || !strcmp(cvd, "NoDevFiles"))
		return;
	for (const char *p = cvd; *p;) {
		size_t len = strcspn(p, ",");

		if (len) {
			out->entries = xrealloc(out->entries, (out->n + 1) * sizeof(*out->entries));
			out->gpus = xrealloc(out->gpus, (out->n + 1) * sizeof(*out->gpus));
			out->entries[out->n] = xstrndup(p, len);
			out->gpus[out->n] = gpu_by_entry(t, out->entries[out->n]);
			out->all_mapped &= out->gpus[out->n] >= 0;
			out->n++;
		}
		p += len + (p[len] == ',');
	}
}

void envplan_cvd_release(struct envplan_cvd *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->entries[i]);
	free(m->entries);
	free(m->gpus);
	memset(m, 0, sizeof(*m));
}

void envplan_narrow_request(struct plan_request *req, const struct node_topo *t,
			    const struct envplan_cvd *cvd)
{
	if (cvd->n && cvd->all_mapped && t->n_gpus) {
		/* Slurm narrowed the GPUs: plan over those only, never wider. */
		req->visible_gpus = cvd->gpus;
		req->n_visible_gpus = cvd->n;
	}
}

static bool topo_has_uuids(const struct node_topo *t)
{
	for (size_t g = 0; g < t->n_gpus; g++)
		if (t->gpus[g].uuid)
			return true;
	return false;
}

/* Why entry i cannot be planned over, in why; false when it can (MIG
 * instances, and any index or UUID on a node without GPUs, can only be
 * shared out: envplan_cvd_check). */
static bool entry_refused(const struct node_topo *t, const struct envplan_cvd *m, size_t i,
			  struct sbuf *why)
{
	const char *e = m->entries[i];
	char clip[SBUF_CLIP_SIZE];

	if (m->gpus[i] >= 0) {
		for (size_t j = 0; j < i; j++)
			if (m->gpus[j] == m->gpus[i]) {
				sbuf_addf(why, "%s and %s both name GPU %d", m->entries[j], e, m->gpus[i]);
				return true;
			}
		return false;
	}
	if (!is_index(e) && strncmp(e, "GPU-", 4) && strncmp(e, "MIG-", 4))
		sbuf_addf(why, "\"%s\" is neither a GPU index nor a GPU-/MIG- UUID", sbuf_clip(e, clip));
	else if (!t->n_gpus || !strncmp(e, "MIG-", 4))
		return false;
	else if (is_index(e))
		sbuf_addf(why, "GPU %s is not on this node, which has %zu (0-%zu)", sbuf_clip(e, clip),
			  t->n_gpus, t->n_gpus - 1);
	else if (!topo_has_uuids(t))
		sbuf_addf(why, "%s cannot be placed: the topology records no GPU UUIDs",
			  sbuf_clip(e, clip));
	else
		sbuf_addf(why, "%s is not the UUID (or a unique prefix of one) of any of this "
			  "node's %zu GPUs", sbuf_clip(e, clip), t->n_gpus);
	return true;
}

int envplan_cvd_check(const struct node_topo *t, const struct envplan_cvd *m, const char *cvd,
		      struct sbuf *why)
{
	struct sbuf entry = SBUF_INIT;
	char clip[SBUF_CLIP_SIZE];
	size_t mig = 0;
	int rc = 0;

	for (size_t i = 0; i < m->n && !rc; i++) {
		if (entry_refused(t, m, i, &entry)) {
			sbuf_addf(why, "CUDA_VISIBLE_DEVICES=%s: %s", sbuf_clip(cvd, clip), entry.buf);
			rc = -1;
		}
		mig += !strncmp(m->entries[i], "MIG-", 4);
	}
	if (!rc && mig && t->n_gpus) {
		sbuf_addf(why, "CUDA_VISIBLE_DEVICES=%s: MIG instances cannot be placed on this "
			  "node's GPUs; ranks share the entries out, and cores and NICs are planned "
			  "over every GPU", sbuf_clip(cvd, clip));
		rc = 1;
	}
	sbuf_release(&entry);
	return rc;
}

/* Whole cores inside s; hyperthreads do not make OpenMP threads faster. */
static size_t cores_in(const struct node_topo *t, const struct bitmap *s)
{
	size_t n = 0;

	for (size_t c = 0; c < t->n_cores; c++)
		n += bitmap_is_subset(&t->cores[c].pus, s);
	return n;
}

/* Ranks given the very same CPUs (cpu: node, none, or a shared complex)
 * share its cores between their thread pools. */
static size_t sharers(const struct plan *p, const struct slice *s)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += bitmap_equal(&p->slices[i].cpuset, &s->cpuset);
	return n ? n : 1;
}

static void set_uint(struct env_list *out, const char *name, unsigned long v)
{
	char buf[24];

	/* encode-ok: an unsigned long's 20 digits in 24 */
	snprintf(buf, sizeof(buf), "%lu", v);
	env_list_set(out, name, buf);
}

/* The device string the rank's CUDA will see: the inherited entry for its
 * GPU when Slurm narrowed the list, else the GPU's PCI-order index.  With
 * an inherited list that the topology cannot resolve (no GPU visible to
 * hwloc, MIG UUIDs), ranks share its entries as floor(r * k / R). */
static char *cuda_device(const struct envplan_input *in, const struct slice *s)
{
	const struct envplan_cvd *m = in->cvd;

	if (m && m->n && (!m->all_mapped || !in->topo->n_gpus)) {
		size_t k = m->n, r = in->ri->local_rank, R = in->ri->local_size;

		return xstrdup(m->entries[r * k / (R ? R : 1)]);
	}
	if (s->gpu < 0)
		return NULL;
	if (m && m->n) {
		for (size_t i = 0; i < m->n; i++)
			if (m->gpus[i] == s->gpu)
				return xstrdup(m->entries[i]);
		return NULL;
	}
	return xasprintf("%d", s->gpu);
}

static void set_nics(const struct envplan_input *in, const struct slice *s, struct env_list *out)
{
	const struct node_topo *t = in->topo;
	const struct topo_nic *first;
	struct sbuf hca = SBUF_INIT;

	if (in->nic_none || !s->n_nics)
		return;
	for (size_t i = 0; i < s->n_nics; i++) {
		const struct topo_nic *nic = &t->nics[s->nics[i]];

		if (nic->n_ofed)
			sbuf_addf(&hca, "%s%s", hca.len ? "," : "=", nic->ofed[0]);
	}
	if (hca.len) {
		env_list_set(out, "NCCL_IB_HCA", hca.buf);
		/* planned HCAs: NCCL must fail, not fall back to sockets
		 * without a word; a user's NCCL_NET (caller, or the spec's
		 * env, set after this) says otherwise */
		if (!in->nccl_net_set)
			env_list_set(out, "NCCL_NET", "IB");
	}
	first = &t->nics[s->nics[0]];
	sbuf_reset(&hca);
	if (first->n_ofed)
		sbuf_addf(&hca, "%s:1", first->ofed[0]);
	else if (first->n_net)
		sbuf_addstr(&hca, first->net[0]);
	if (hca.len)
		env_list_set(out, "UCX_NET_DEVICES", hca.buf);
	if (in->socket_ifname && first->n_net) {
		sbuf_reset(&hca);
		sbuf_addf(&hca, "=%s", first->net[0]);
		env_list_set(out, "NCCL_SOCKET_IFNAME", hca.buf);
	}
	sbuf_release(&hca);
}

char *envplan_slice_json(const struct node_topo *t, const struct plan *p, size_t i,
			 const char *cuda_visible)
{
	const struct slice *s = &p->slices[i];
	struct sbuf cpus = SBUF_INIT, numa = SBUF_INIT;
	json_t *nics = json_array(), *doc;
	char *text;

	/* CUDA_VISIBLE_DEVICES comes from the environment and a NIC's name
	 * from the node: bytes, carried escaped when not UTF-8 (jsonb_text),
	 * so the slice is never "{}" for want of one string */
	for (size_t k = 0; k < s->n_nics; k++)
		jsonb_append(&nics, jsonb_text(topo_nic_name(&t->nics[s->nics[k]])));
	bitmap_format_list(&s->cpuset, &cpus);
	bitmap_format_list(&s->nodeset, &numa);
	doc = json_pack("{s:i, s:i, s:s?, s:o, s:o, s:s, s:s, s:s, s:s?}",
			"local_rank", (int)s->local_rank, "gpu", s->gpu,
			"pci_bus_id", *s->busid ? s->busid : NULL,
			"cuda_visible_devices", cuda_visible ? jsonb_text(cuda_visible) : json_null(),
			"nics", nics, "cpus", cpus.buf, "numa", numa.buf,
			"memory", plan_policy_memory_name(s->memory), "cpu_note", s->cpu_note);
	text = jsonb_xdumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	sbuf_release(&cpus);
	sbuf_release(&numa);
	return text;
}

void envplan_build(const struct envplan_input *in, struct env_list *out)
{
	const struct rank_info *ri = in->ri;
	const struct slice *s = &in->plan->slices[ri->local_rank];
	char *dev = in->gpu_none ? NULL : cuda_device(in, s), *slice;
	size_t threads = cores_in(in->topo, &s->cpuset) / sharers(in->plan, s);

	if (dev) {
		env_list_set(out, "CUDA_VISIBLE_DEVICES", dev);
		env_list_set(out, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	}
	set_nics(in, s, out);
	set_uint(out, "OMP_NUM_THREADS", threads ? threads : 1);
	env_list_set(out, "OMP_PLACES", "cores");
	env_list_set(out, "OMP_PROC_BIND", "close");
	set_uint(out, "RANK", ri->rank);
	set_uint(out, "LOCAL_RANK", ri->local_rank);
	set_uint(out, "WORLD_SIZE", ri->world_size);
	set_uint(out, "LOCAL_WORLD_SIZE", ri->local_size);
	set_uint(out, "NODE_RANK", ri->node_rank);
	set_uint(out, "GROUP_RANK", ri->node_rank);
	if (*ri->master_addr)
		env_list_set(out, "MASTER_ADDR", ri->master_addr);
	set_uint(out, "MASTER_PORT", rank_master_port(ri->job_key));
	set_uint(out, "HPCTRAIN_RANK", ri->rank);
	set_uint(out, "HPCTRAIN_LOCAL_RANK", ri->local_rank);
	slice = envplan_slice_json(in->topo, in->plan, ri->local_rank, dev);
	env_list_set(out, "HPCTRAIN_SLICE", slice);
	free(slice);
	free(dev);
	if (in->attempt > 0) {
		set_uint(out, "HPCTRAIN_ATTEMPT", (unsigned long)in->attempt);
		set_uint(out, "HPCTRAIN_PREV_WORLD_SIZE",
			 in->prev_world_size > 0 ? (unsigned long)in->prev_world_size : 0);
		if (in->checkpoint_dir)
			env_list_set(out, "HPCTRAIN_CHECKPOINT_DIR", in->checkpoint_dir);
	}
	if (in->preempt_signal)
		env_list_set(out, "HPCTRAIN_PREEMPT_SIGNAL", in->preempt_signal);
	if (in->python_path)
		env_list_set(out, "PYTHONPATH", in->python_path);
	if (in->code_dir)
		env_list_set(out, "HPCTRAIN_CODE_DIR", in->code_dir);
	if (in->run_dir)
		env_list_set(out, "HPCTRAIN_RUN_DIR", in->run_dir);
	if (in->pycache_prefix)
		env_list_set(out, "PYTHONPYCACHEPREFIX", in->pycache_prefix);
	if (in->no_bytecode)
		env_list_set(out, "PYTHONDONTWRITEBYTECODE", "1");
	for (size_t i = 0; in->data && i < in->data->n; i++)
		env_list_set(out, in->data->v[i].name, in->data->v[i].value);
	for (size_t i = 0; in->user && i < in->user->n; i++)
		env_list_set(out, in->user->v[i].name, in->user->v[i].value);
}
