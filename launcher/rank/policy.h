/* policy.h - the binding policy a job spec asks for, in the planner's
 * terms: what `submit --dry-run --topology` plans with and what `launch`
 * starts from before its --cpu/--gpu/--nic/--memory flags.  Core. */
#ifndef HPT_POLICY_H
#define HPT_POLICY_H

struct job_binding;
struct plan_policy;

/* Sets every field of p from the spec's binding: section. */
void policy_from_spec(struct plan_policy *p, const struct job_binding *b);

#endif
