/* plan_policy.c - the spellings of binding policies (spec, CLI, output).
 * Pure core.  One table per field, so parser and printer cannot disagree. */
#include "topology/plan.h" // defines: struct plan_policy, plan_policy_*
#include "common/sbuf.h"      // defines: sbuf_addf

#include <string.h>

static const char *const gpu_names[] = { "auto", "none" };
static const char *const cpu_names[] = { "exclusive", "node", "core-complex", "none" };
static const char *const nic_names[] = { "rail", "single", "none" };
static const char *const memory_names[] = { "local", "preferred", "none" };

#define NAME_OF(tab, v) ((unsigned)(v) < sizeof(tab) / sizeof(tab[0]) ? tab[v] : "?")

const char *plan_policy_gpu_name(enum plan_gpu_policy v)
{
	return NAME_OF(gpu_names, v);
}

const char *plan_policy_cpu_name(enum plan_cpu_policy v)
{
	return NAME_OF(cpu_names, v);
}

const char *plan_policy_nic_name(enum plan_nic_policy v)
{
	return NAME_OF(nic_names, v);
}

const char *plan_policy_memory_name(enum plan_memory_policy v)
{
	return NAME_OF(memory_names, v);
}

static int lookup(const char *const *tab, size_t n, const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tab[i], value))
			return (int)i;
	return -1;
}

int plan_policy_set(struct plan_policy *p, const char *key, const char *value)
{
	int v;

#define SET(name, tab, field, type)						\
	if (!strcmp(key, name)) {						\
		v = lookup(tab, sizeof(tab) / sizeof(tab[0]), value);		\
		if (v < 0)							\
			return -1;						\
		p->field = (type)v;						\
		return 0;							\
	}
	SET("gpu", gpu_names, gpu, enum plan_gpu_policy)
	SET("cpu", cpu_names, cpu, enum plan_cpu_policy)
	SET("nic", nic_names, nic, enum plan_nic_policy)
	SET("memory", memory_names, memory, enum plan_memory_policy)
#undef SET
	return -1;
}

void plan_policy_format(const struct plan_policy *p, struct sbuf *out)
{
	sbuf_addf(out, "gpu=%s cpu=%s nic=%s memory=%s", plan_policy_gpu_name(p->gpu),
		  plan_policy_cpu_name(p->cpu), plan_policy_nic_name(p->nic),
		  plan_policy_memory_name(p->memory));
}
