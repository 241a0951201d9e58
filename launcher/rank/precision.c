/* precision.c - a node's CPU against a job's train.precision.
 * Core: see precision.h. */
#include "launcher/rank/precision.h" // defines: precision_check, precision_trains_on_cpu
#include "common/diag.h"             // defines: struct diag_list, diag_add
#include "common/sbuf.h"             // defines: struct sbuf
#include "common/spec/spec.h"        // defines: struct job, train_precision_names
#include "topology/cpufeat.h"        // defines: cpufeat_parse, cpufeat_native_for, cpufeat_format,
                                     //          cpufeat_bf16_speed
#include "topology/topo.h"           // defines: struct node_topo

/* Whether the bundled trainer trains on this node's CPU: the spec runs
 * it (no command), with train.device cpu, or auto without a GPU to take
 * (none requested, or none on the node). */
bool precision_trains_on_cpu(const struct job *job, const struct node_topo *t)
{
	if (job->command.n)
		return false;
	if (job->train.device == DEVICE_CPU)
		return true;
	return job->train.device == DEVICE_AUTO &&
	       (job->resources.gpus_per_node < 1 || !t->n_gpus);
}

/* A warning, not an error: where the CPU lacks what bf16 or fp16 need,
 * the trainer emulates them with fp32 arithmetic, so the job runs, only
 * no faster than at fp32.  Unknown CPU features are said so, not guessed. */
void precision_check(const struct job *job, const char *file, const struct node_topo *t,
		     struct diag_list *dl)
{
	const char *prec = train_precision_names[job->train.precision];
	unsigned need = cpufeat_native_for(prec);
	struct sbuf names = SBUF_INIT;

	if (!need || !precision_trains_on_cpu(job, t))
		return;
	if (job->train.precision == PRECISION_FP16) {
		/* whatever the CPU: the trainer's oneDNN has no fp16 CPU kernels */
		diag_add(dl, DIAG_WARNING, file, 0, 0, "train.precision",
			 "fp16 cannot be faster than fp32 on any CPU: the trainer's oneDNN 2.6 has "
			 "no fp16 CPU kernels (AVX512-FP16 and AMX-FP16 unused), so it emulates "
			 "fp16 with fp32 arithmetic; precision: fp32 is the alternative (bf16 runs "
			 "natively on CPUs with AVX512-BF16 or AMX-BF16)");
		return;
	}
	cpufeat_format(need, " or ", &names);
	if (!t->cpu_flags)
		diag_add(dl, DIAG_WARNING, file, 0, 0, "train.precision",
			 "cannot tell whether this node's CPU has %s for %s: the topology records "
			 "no CPU flags (hpctrain topo --export-xml on the node saves them)",
			 names.buf, prec);
	else if (!(cpufeat_parse(t->cpu_flags) & need))
		diag_add(dl, DIAG_WARNING, file, 0, 0, "train.precision",
			 "%s cannot be faster than fp32 on this node's CPU: it has no %s, so the "
			 "trainer emulates %s with fp32 arithmetic; precision: fp32 is the "
			 "alternative",
			 prec, names.buf, prec);
	else if (!cpufeat_bf16_can_win(cpufeat_bf16_speed(t->cpu_flags)))
		diag_add(dl, DIAG_WARNING, file, 0, 0, "train.precision",
			 "bf16 cannot be faster than fp32 on this node's CPU: Intel AVX512-BF16 "
			 "without AMX computes bf16 dot products at the fp32 FMA rate; precision: "
			 "fp32 is the alternative");
	sbuf_release(&names);
}
