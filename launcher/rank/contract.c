/* contract.c - the planned binding and environment against what a rank
 * got.  Core: see contract.h. */
#include "launcher/rank/contract.h" // defines: contract_check, struct contract_plan, struct contract_got
#include "launcher/rank/env_list.h" // defines: struct env_list, env_list_get
#include "topology/plan.h"     // defines: struct slice, plan_policy_memory_name
#include "topology/topo.h"     // defines: struct node_topo, topo_nic_name
#include "common/sbuf.h"       // defines: struct sbuf, xstrndup
#include "common/spec/spec.h"  // defines: enum bind_contract
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NCCL/UCX variables whose names must exist on the node. */
static const char *const watched[] = {
	"CUDA_VISIBLE_DEVICES", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "UCX_NET_DEVICES",
};

static json_t *list_of(const struct bitmap *b)
{
	struct sbuf sb = SBUF_INIT;
	json_t *s;

	bitmap_format_list(b, &sb);
	s = json_string(sb.buf);
	sbuf_release(&sb);
	return s;
}

static void warn(json_t *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *warnings, const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	/* a warning quotes what the program's environment holds: bytes,
	 * carried escaped, so no warning is lost to a value not UTF-8 */
	json_array_append_new(warnings, jsonb_text(sb.buf)); /* fails only out of memory */
	sbuf_release(&sb);
}

/* Does any of the n names match want: exactly, or (prefix) as NCCL
 * matches a bare name, by its start ("mlx5" takes mlx5_0). */
static bool matches(const char *want, size_t len, const char *const *names, size_t n, bool prefix)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(names[i], want, len) && (prefix || !names[i][len]))
			return true;
	return false;
}

/* "a, b, c", or "none". */
static void join(struct sbuf *out, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_addf(out, "%s%s", i ? ", " : "", names[i]);
	if (!n)
		sbuf_addstr(out, "none");
}

/* "^" lists exclude, which cannot go wrong; "=" asks for exact names;
 * ":port" suffixes are not names. */
void contract_check_names(const char *var, const char *value, const char *what,
			  const char *const *names, size_t n, bool nccl_syntax, json_t *warnings)
{
	bool exact = !nccl_syntax;
	const char *p = value;

	if (!value || !*value)
		return;
	if (nccl_syntax && *p == '^')
		return;
	if (nccl_syntax && *p == '=')
		exact = true, p++;
	if (!nccl_syntax && !strcmp(value, "all"))
		return;
	while (*p) {
		size_t len = strcspn(p, ",:");

		if (len && !matches(p, len, names, n, !exact)) {
			struct sbuf have = SBUF_INIT;

			join(&have, names, n);
			warn(warnings, "%s=%s names %.*s, which is no %s of this node (it has %s)", var,
			     value, (int)len, p, what, have.buf);
			sbuf_release(&have);
		}
		p += len;
		if (*p == ':')
			p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
}

static json_t *planned_json(const struct node_topo *t, const struct contract_plan *plan)
{
	const struct slice *s = plan->slice;
	json_t *nics = json_array(), *env = json_object();

	for (size_t i = 0; i < s->n_nics; i++)
		jsonb_append(&nics, jsonb_text(topo_nic_name(&t->nics[s->nics[i]])));
	for (size_t i = 0; i < sizeof(watched) / sizeof(*watched); i++) {
		const char *v = env_list_get(plan->env, watched[i]);

		jsonb_set(&env, watched[i], jsonb_text(v));
	}
	return json_pack("{s:o, s:b, s:o, s:s, s:s?, s:o, s:o}", "cpus", list_of(&s->cpuset),
			 "cpus_bound", plan->cpus_bound, "mems", list_of(&s->nodeset), "memory",
			 plan->mems_bound ? plan_policy_memory_name(s->memory) : "none", "gpu",
			 s->gpu >= 0 ? s->busid : NULL, "nics", nics, "env", env);
}

static json_t *got_json(const struct contract_got *got)
{
	const char *vals[] = { got->cuda_visible_devices, got->nccl_ib_hca, got->nccl_socket_ifname,
			       got->ucx_net_devices };
	json_t *env = json_object();

	for (size_t i = 0; i < sizeof(watched) / sizeof(*watched); i++)
		jsonb_set(&env, watched[i], jsonb_text(vals[i]));
	return json_pack("{s:o, s:o, s:o}", "cpus", got->have_cpus ? list_of(&got->cpus) : json_null(),
			 "mems", got->have_mems ? list_of(&got->mems) : json_null(), "env", env);
}

static void check_binding(const struct contract_plan *plan, const struct contract_got *got,
			  json_t *warnings)
{
	const struct slice *s = plan->slice;
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;

	if (plan->cpus_bound && got->have_cpus && !bitmap_equal(&got->cpus, &s->cpuset)) {
		bitmap_format_list(&got->cpus, &a);
		bitmap_format_list(&s->cpuset, &b);
		warn(warnings, "the program runs on CPUs %s, not the planned %s (a cgroup, taskset "
		     "or the launcher changed them)", a.buf, b.buf);
	}
	sbuf_reset(&a);
	sbuf_reset(&b);
	if (plan->mems_bound && got->have_mems && !bitmap_is_subset(&s->nodeset, &got->mems)) {
		bitmap_format_list(&s->nodeset, &a);
		bitmap_format_list(&got->mems, &b);
		warn(warnings, "memory was planned on NUMA nodes %s, but the process may use only %s "
		     "(cpuset.mems of its cgroup)", a.buf, b.buf);
	}
	sbuf_release(&a);
	sbuf_release(&b);
}

/* The GPU the plan set against the one the program sees: the spec's env
 * or the caller may have overridden CUDA_VISIBLE_DEVICES after us. */
static void check_gpu(const struct contract_plan *plan, const struct contract_got *got,
		      json_t *warnings)
{
	const char *want = env_list_get(plan->env, "CUDA_VISIBLE_DEVICES");
	const char *have = got->cuda_visible_devices;

	if (want && (!have || strcmp(want, have)))
		warn(warnings, "CUDA_VISIBLE_DEVICES=%s was planned (GPU %s), but the program gets %s",
		     want, plan->slice->gpu >= 0 ? plan->slice->busid : "none",
		     have ? have : "it unset");
}

json_t *contract_check(const struct node_topo *t, const struct contract_plan *plan,
		       const struct contract_got *got)
{
	json_t *warnings = json_array();
	const char **hcas = NULL;
	size_t n_hcas = 0;

	for (size_t i = 0; i < t->n_nics; i++)
		for (size_t k = 0; k < t->nics[i].n_ofed; k++) {
			hcas = xrealloc(hcas, (n_hcas + 1) * sizeof(*hcas));
			hcas[n_hcas++] = t->nics[i].ofed[k];
		}
	check_binding(plan, got, warnings);
	check_gpu(plan, got, warnings);
	contract_check_names("NCCL_IB_HCA", got->nccl_ib_hca, "InfiniBand/RoCE device", hcas, n_hcas, true,
		    warnings);
	contract_check_names("NCCL_SOCKET_IFNAME", got->nccl_socket_ifname, "network interface", got->ifnames,
		    got->n_ifnames, true, warnings);
	/* UCX takes a device:port pair or an interface name. */
	{
		const char **all = xmalloc((n_hcas + got->n_ifnames + 1) * sizeof(*all));

		memcpy(all, hcas, n_hcas * sizeof(*all));
		memcpy(all + n_hcas, got->ifnames, got->n_ifnames * sizeof(*all));
		contract_check_names("UCX_NET_DEVICES", got->ucx_net_devices, "device or interface", all,
			    n_hcas + got->n_ifnames, false, warnings);
		free(all);
	}
	free(hcas);
	return json_pack("{s:o, s:o, s:o}", "planned", planned_json(t, plan), "got", got_json(got),
			 "warnings", warnings);
}

static bool inside_has(const char *name, const char *const *inside, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(inside[i], name))
			return true;
	return false;
}

/* One entry of an NCCL_IB_HCA list (len bytes at p): the HCAs of devs it
 * selects, exactly or by prefix; a warning unless one of them can be
 * opened inside. */
static void check_hca_entry(const char *p, size_t len, bool exact,
			    const struct contract_hca_dev *devs, size_t n_devs,
			    const char *const *inside, size_t n_inside, json_t *warnings)
{
	const struct contract_hca_dev *first = NULL;

	for (size_t i = 0; i < n_devs; i++) {
		if (strncmp(devs[i].hca, p, len) || (exact && devs[i].hca[len]))
			continue;
		if (inside_has(devs[i].uverbs, inside, n_inside))
			return;
		if (!first)
			first = &devs[i];
	}
	if (first && first->uverbs)
		warn(warnings, "NCCL_IB_HCA names %.*s, but its device /dev/infiniband/%s is not "
		     "inside the container: NCCL cannot use it", (int)len, p, first->uverbs);
	else if (first)
		warn(warnings, "NCCL_IB_HCA names %.*s, which has no /dev/infiniband/uverbs* "
		     "device on this node to pass into the container", (int)len, p);
}

/* O(entries x HCAs x names inside), each a handful: no index. */
void contract_check_hca_devices(const char *nccl_ib_hca, const struct contract_hca_dev *devs,
				size_t n_devs, const char *const *inside, size_t n_inside,
				json_t *warnings)
{
	const char *p = nccl_ib_hca;
	bool exact = false;

	if (!p || *p == '^')
		return;
	if (*p == '=')
		exact = true, p++;
	while (*p) {
		size_t len = strcspn(p, ",:");

		if (len)
			check_hca_entry(p, len, exact, devs, n_devs, inside, n_inside, warnings);
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
}

static bool listed(const json_t *list, const char *s)
{
	for (size_t i = 0; s && i < json_array_size(list); i++)
		if (!strcmp(json_string_value(json_array_get(list, i)), s))
			return true;
	return false;
}

void contract_mark_fixed(json_t *c, const json_t *after)
{
	json_t *w = json_object_get(c, "warnings"), *fixed = json_object_get(c, "fixed");
	const json_t *still = json_object_get(after, "warnings");

	if (!fixed) {
		fixed = json_array();
		json_object_set_new(c, "fixed", fixed);
	}
	for (size_t i = 0; i < json_array_size(w); i++) {
		const char *s = json_string_value(json_array_get(w, i));

		if (!listed(still, s) && !listed(fixed, s))
			json_array_append_new(fixed, jsonb_text(s)); /* fails only out of memory */
	}
}

bool contract_warning_holds(const json_t *c, size_t i)
{
	const char *s = json_string_value(json_array_get(json_object_get(c, "warnings"), i));

	return s && !listed(json_object_get(c, "fixed"), s);
}

bool contract_is_broken(const json_t *c, int mode)
{
	if (mode != BIND_CONTRACT_FAIL)
		return false;
	for (size_t i = 0; i < json_array_size(json_object_get(c, "warnings")); i++)
		if (contract_warning_holds(c, i))
			return true;
	return false;
}
