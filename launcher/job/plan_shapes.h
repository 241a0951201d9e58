/* plan_shapes.h - a job's candidate shapes weighed, for hpctrain plan and
 * submit --shape auto: the job's past runs fitted (launcher/shape), each
 * shape loaded and rendered as submit would and Slurm asked when it
 * would start, each run predicted, one picked.
 * Shell: needs hpt_slurm_init.  Prints one line per problem,
 * "hpctrain CMD: ..." (common/say.h), to stderr.
 */
#ifndef HPT_PLAN_SHAPES_H
#define HPT_PLAN_SHAPES_H

#include "common/spec/spec.h"             // defines: struct job, struct spec_override
#include "launcher/shape/shape_batch.h"   // defines: struct shape_batch
#include "launcher/shape/shape_history.h" // defines: struct shape_history
#include "launcher/shape/shape_model.h"   // defines: struct shape_fit
#include "launcher/shape/shape_pick.h"    // defines: struct shape_candidate, struct shape_work
#include "launcher/slurm/slurm.h"         // defines: struct hpt_slurm_partition

#include <jansson.h>
#include <stddef.h>
#include <time.h>

struct diag_list;

struct plan_shapes_request {
	const char *where, *text;           /* the spec, read once (it may be stdin) */
	size_t len;
	const struct spec_override *sets;   /* the user's --set flags */
	size_t nsets;
	const struct shape_candidate *shapes; /* --shapes, or NULL: 1..max_nodes */
	size_t nshapes;
	unsigned max_nodes;                 /* 0: the partition's size, at most 16 */
	struct shape_deadline deadline;     /* zeroed: none */
	const char *exe;                    /* this hpctrain, as the script names it */
	const char *exclude;                /* nodes to leave out, or NULL */
	const struct hpt_slurm_partition *part;
};

struct plan_shapes_result {
	const char *name;          /* the job's, borrowed */
	struct shape_history h;
	struct shape_work w;
	struct shape_batch b;      /* the batch a user's program holds (per rank otherwise) */
	struct shape_fit f;
	struct shape_candidate *v; /* the shapes weighed, in order */
	size_t n;
	size_t runnable;           /* of them, those Slurm would run */
	long pick;                 /* index, or -1 (none runnable or meets the deadline) */
	long fastest;              /* the earliest finish, or -1 */
};

/* Weighs the shapes of job (the spec as r gives it, loaded).  0 with
 * *out filled (its pick may be -1: see runnable), HPT_EXIT_NO_INPUT
 * without past runs or a known work, or HPT_EXIT_UNAVAILABLE when Slurm
 * does not answer.  Release *out either way. */
int plan_shapes_weigh(const struct plan_shapes_request *r, const struct job *job, struct plan_shapes_result *out);
void plan_shapes_release(struct plan_shapes_result *p);

/* The spec of r loaded at c's nodes and ranks per node, after the
 * user's --set flags, as --set would set them.  0, HPT_EXIT_BAD_SPEC
 * with diagnostics in dl. */
int plan_shapes_load(const struct plan_shapes_request *r, const struct shape_candidate *c, struct job *job,
		     struct diag_list *dl);

/* The whole plan as hpctrain plan --json prints it, and the pick alone
 * as submit --shape auto records it in submit.json (nodes,
 * ranks_per_node, start, steps, run_s, rel_err, finish, node_hours and
 * the model).  New references; the second needs p->pick >= 0. */
json_t *plan_shapes_json(const struct plan_shapes_result *p, struct shape_deadline deadline);
json_t *plan_shapes_pick_json(const struct plan_shapes_result *p);

#endif
