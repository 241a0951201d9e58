/* precision.h - whether a node's CPU runs a job's train.precision natively.
 *
 * Core (pure): the job spec and the node's topology (its CPU flags) in,
 * warnings out.  submit --dry-run --topology checks the node it is shown;
 * a warning, never an error, since the trainer emulates bf16 and fp16
 * with fp32 arithmetic where the CPU lacks them: the job runs, only no
 * faster than at fp32.
 */
#ifndef HPT_PRECISION_H
#define HPT_PRECISION_H

#include <stdbool.h>

struct diag_list;
struct job;
struct node_topo;

/* Whether the bundled trainer trains on this node's CPU: the spec runs
 * it (no command), with train.device cpu, or auto without a GPU to take
 * (none requested, or none on the node). */
bool precision_trains_on_cpu(const struct job *job, const struct node_topo *t);

/* Adds to dl a DIAG_WARNING at file, key train.precision, when the job
 * trains on t's CPU and that CPU lacks native train.precision (fp16:
 * always, the trainer's oneDNN has no fp16 CPU kernels); and one saying
 * it cannot tell when t records no CPU flags.  Nothing otherwise. */
void precision_check(const struct job *job, const char *file, const struct node_topo *t,
		     struct diag_list *dl);

#endif
