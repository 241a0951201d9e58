/* train_profile.c - where a run's training steps spend their time, for
 * metrics.jsonl's "profile" record (train_internal.h train_profile_*):
 * each top-level layer's forward and backward (model.h), the batch, the
 * loss, the wait for the gradients' allreduce and the update, summed
 * over the steps after a warm-up.  The layers time themselves
 * (layer.c); train.c adds the other phases to t->prof. */
#include "trainer/train_internal.h" // defines: struct trainer, struct step_profile
#include "trainer/metrics.h"        // defines: metrics_profile
#include "trainer/model/model.h"          // defines: struct layer_time, model_layer_times*
#include "common/sbuf.h"            // defines: xcalloc

#include <stdlib.h>

/* The warm-up: a tenth of the run, at most 20 steps. */
#define PROFILE_WARMUP_MAX 20

void train_profile_plan(struct trainer *t, int64_t start)
{
	int64_t warm = (t->stop_step - start) / 10;

	t->prof = (struct step_profile){ .from_step = start + (warm < PROFILE_WARMUP_MAX
								? warm : PROFILE_WARMUP_MAX) };
}

void train_profile_step_begins(struct trainer *t, int64_t step)
{
	if (step != t->prof.from_step)
		return;
	t->prof = (struct step_profile){ .from_step = step };
	model_layer_times_reset(&t->model);
}

void train_profile_step_ends(struct trainer *t, int64_t step, double seconds)
{
	if (step < t->prof.from_step)
		return;
	t->prof.steps++;
	t->prof.step_s += seconds;
}

int train_profile_write(struct trainer *t)
{
	size_t n;
	struct layer_time *v;
	int rc;

	if (t->dev || !t->prof.steps)
		return 0;
	n = model_layer_times(&t->model, NULL, 0);
	v = xcalloc(n ? n : 1, sizeof(*v));
	model_layer_times(&t->model, v, n);
	rc = metrics_profile(&t->mt, &t->prof, v, n,
			     (double)t->tp.plan.batch * t->tp.plan.accum);
	free(v);
	return rc;
}
