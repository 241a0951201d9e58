/* launch_contract.c - the launch contract as `hpctrain launch` says it:
 * each difference between the plan and what the rank got, before the
 * program and inside its container, as a warning, or an error where it
 * breaks binding.contract: fail.  Shell (stderr); the check and the
 * verdict are launcher/rank/contract.h's. */
#include "launcher/launch/launch.h"             // defines: struct launch, launch_contract_check, launch_contract_inside
#include "common/say.h" // defines: say
#include "common/exitcode.h"        // defines: HPT_EXIT_TOPOLOGY
#include "launcher/rank/contract.h" // defines: contract_check, contract_got_read, contract_inside_check, contract_is_broken

#include <stdio.h>

/* Each warning of contract c on stderr after "rank N: " and where, as
 * an error where it breaks the spec's binding.contract: fail; whether
 * it does. */
static bool say_contract(const struct launch *l, const json_t *c, const char *where)
{
	const json_t *w = json_object_get(c, "warnings");
	bool broken = contract_is_broken(c, l->have_job ? l->job.binding.contract
							: BIND_CONTRACT_WARN);

	for (size_t i = 0; i < json_array_size(w); i++)
		say("rank %u: %s%s: %s", l->ri.rank, where,
			broken && contract_warning_holds(c, i) ? "error" : "warning",
			json_string_value(json_array_get(w, i)));
	return broken;
}

/* The contract read again from the program podman started; each
 * difference is said as before the runtime, and one that breaks
 * binding.contract: fail ends the program (HPT_EXIT_TOPOLOGY). */
json_t *launch_contract_inside(void *arg, pid_t pid, int *end_status)
{
	const struct launch *l = arg;
	struct contract_plan plan = {
		.slice = &l->plan.slices[l->ri.local_rank],
		.cpus_bound = l->bound.cpu_applied,
		.mems_bound = l->bound.mem_applied,
		.env = &l->planned_env,
	};
	json_t *c = contract_inside_check(&l->topo, &plan, pid);

	if (say_contract(l, c, "inside the container: "))
		*end_status = HPT_EXIT_TOPOLOGY;
	return c;
}

/* The plan next to what this process got, once the binding and the
 * environment are in place; each difference is said in the rank's log
 * (and, supervised, kept in its liveness file).  A new reference, and
 * *broken when it breaks binding.contract: fail. */
json_t *launch_contract_check(const struct launch *l, bool *broken)
{
	struct contract_plan plan = {
		.slice = &l->plan.slices[l->ri.local_rank],
		.cpus_bound = l->bound.cpu_applied,
		.mems_bound = l->bound.mem_applied,
		.env = &l->planned_env,
	};
	struct contract_got got;
	json_t *c;

	contract_got_read(&got);
	c = contract_check(&l->topo, &plan, &got);
	*broken = say_contract(l, c, "");
	contract_got_release(&got);
	return c;
}
