/* slurm_state.c - a job's state word as a name and whether it has ended
 * (slurm_state.h).  Core: no libslurm call, only slurm.h's constants. */
#include "launcher/slurm/slurm_state.h" // defines: hpt_slurm_state_of

#include <slurm/slurm.h>

#include <stddef.h>

/* The flags with a name, in the order Slurm's job_state_string() tests
 * them (src/common/slurm_protocol_defs.c), so status says what squeue
 * says; transit marks those of a job not yet done with: its processes
 * or its nodes may still be busy, or it goes back to the queue. */
static const struct {
	uint32_t flag;
	const char *name;
	bool transit;
} flags[] = {
	{ JOB_COMPLETING, "COMPLETING", true },
	{ JOB_STAGE_OUT, "STAGE_OUT", true },
	{ JOB_CONFIGURING, "CONFIGURING", true },
	{ JOB_RESIZING, "RESIZING", true },
	{ JOB_REQUEUE, "REQUEUED", true },
	{ JOB_REQUEUE_FED, "REQUEUE_FED", true },
	{ JOB_REQUEUE_HOLD, "REQUEUE_HOLD", true },
	{ JOB_SPECIAL_EXIT, "SPECIAL_EXIT", true },
	{ JOB_STOPPED, "STOPPED", false },
	{ JOB_REVOKED, "REVOKED", false },
	{ JOB_RESV_DEL_HOLD, "RESV_DEL_HOLD", false },
	{ JOB_SIGNALING, "SIGNALING", true },
	/* no name of their own in Slurm's text, but not an end either */
	{ JOB_POWER_UP_NODE, NULL, true },
};

static const char *const bases[JOB_END] = {
	[JOB_PENDING] = "PENDING",     [JOB_RUNNING] = "RUNNING",
	[JOB_SUSPENDED] = "SUSPENDED", [JOB_COMPLETE] = "COMPLETED",
	[JOB_CANCELLED] = "CANCELLED", [JOB_FAILED] = "FAILED",
	[JOB_TIMEOUT] = "TIMEOUT",     [JOB_NODE_FAIL] = "NODE_FAIL",
	[JOB_PREEMPTED] = "PREEMPTED", [JOB_BOOT_FAIL] = "BOOT_FAIL",
	[JOB_DEADLINE] = "DEADLINE",   [JOB_OOM] = "OUT_OF_MEMORY",
};

void hpt_slurm_state_of(uint32_t word, struct hpt_slurm_state *out)
{
	uint32_t base = word & JOB_STATE_BASE;
	bool transit = false;

	out->name = base < JOB_END ? bases[base] : "UNKNOWN";
	for (size_t i = sizeof(flags) / sizeof(flags[0]); i-- > 0;) {
		if (!(word & flags[i].flag))
			continue;
		transit |= flags[i].transit;
		if (flags[i].name) /* backwards: the first in Slurm's order wins */
			out->name = flags[i].name;
	}
	out->pending = base == JOB_PENDING;
	out->finished = base >= JOB_COMPLETE && base < JOB_END && !transit;
	out->completed = out->finished && base == JOB_COMPLETE;
}
