/* policy.c - a job spec's binding: section -> struct plan_policy.
 * Core.  The spec and the planner spell every policy the same, so the
 * spec's names go through plan_policy_set(), the planner's one parser. */
#include "launcher/rank/policy.h"  // defines: policy_from_spec
#include "topology/plan.h"    // defines: struct plan_policy, plan_policy_set
#include "common/spec/spec.h" // defines: struct job_binding, bind_*_names

void policy_from_spec(struct plan_policy *p, const struct job_binding *b)
{
	plan_policy_set(p, "gpu", bind_gpu_names[b->gpu]);
	plan_policy_set(p, "cpu", bind_cpu_names[b->cpu]);
	plan_policy_set(p, "nic", bind_nic_names[b->nic]);
	plan_policy_set(p, "memory", bind_mem_names[b->memory]);
}
