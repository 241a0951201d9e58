/* train_plan.c - the global batch a run holds and how its ranks hold it
 * (see train_plan.h).  Shell: picks the newest checkpoint that verifies
 * on rank 0, shares it through the hooks; resume.c decides. */
#include "trainer/train_plan.h" // defines: struct train_plan, train_plan_*
#include "trainer/model/ckpt.h"       // defines: ckpt_latest, ckpt_peek
#include "trainer/train.h"      // defines: struct train_config, struct train_hooks
#include "common/exitcode.h"    // defines: HPT_EXIT_*
#include "common/say.h"         // defines: say_lines
#include "common/sbuf.h"        // defines: struct sbuf, sbuf_detach
#include "common/spec/spec.h"   // defines: struct job

#include <stdlib.h>

/* Rank 0: the newest checkpoint that verifies, its header into v[] =
 * { status, found, global, world, batch } and its path into tp, the
 * ones passed over said on stderr (once: open_run loads tp's path). */
static void peek_latest(const struct train_config *cfg, struct train_plan *tp, int64_t v[5],
			struct sbuf *err)
{
	char *dir = xasprintf("%s/checkpoints", cfg->run_dir);
	struct sbuf path = SBUF_INIT, warn = SBUF_INIT;
	struct ckpt_meta meta;
	int rc;

	if (!cfg->fresh && (rc = ckpt_latest(dir, cfg->hash, &path, &meta, &warn, err)) != 1) {
		v[0] = rc;
		v[1] = 1;
		if (!rc) {
			v[2] = meta.global_batch;
			v[3] = meta.world;
			v[4] = meta.batch;
			tp->ckpt_path = sbuf_detach(&path, NULL);
		}
	}
	say_lines(warn.buf);
	sbuf_release(&warn);
	sbuf_release(&path);
	free(dir);
}

void train_plan_release(struct train_plan *tp)
{
	if (!tp)
		return;
	free(tp->ckpt_path);
	tp->ckpt_path = NULL;
}

int train_plan_make(const struct train_config *cfg, const struct train_hooks *hooks,
		    struct train_plan *tp, struct sbuf *err)
{
	int64_t v[5] = { 0 }, batch = cfg->job->train.batch_per_rank;
	int64_t natural = batch * cfg->world, global;
	struct sbuf why = SBUF_INIT;

	if (!cfg->rank)
		peek_latest(cfg, tp, v, err);
	if (hooks && hooks->share && hooks->share(hooks->ctx, v, 5)) {
		sbuf_addstr(err, "cannot share the checkpoint's batch shape among the ranks");
		return HPT_EXIT_INTERNAL;
	}
	if (v[0])
		return (int)v[0];
	tp->resumed = v[1] != 0;
	tp->ckpt_global = v[2];
	tp->ckpt_world = v[3];
	tp->ckpt_batch = v[4];
	global = tp->resumed && tp->ckpt_global && !cfg->new_global_batch ? tp->ckpt_global : natural;
	if (!resume_plan_make(global, cfg->world, (int)batch, &tp->plan, &why)) {
		sbuf_release(&why);
		return 0;
	}
	if (!cfg->rank)
		sbuf_addf(err, "cannot resume a %lld-rank checkpoint (global batch %lld) on %d ranks "
			  "(global batch %lld): %s; or train on at global batch %lld with "
			  "--new-global-batch",
			  (long long)tp->ckpt_world, (long long)global, cfg->world,
			  (long long)natural, why.buf, (long long)natural);
	sbuf_release(&why);
	return HPT_EXIT_BAD_SPEC;
}

void train_plan_describe(const struct train_plan *tp, int world, struct sbuf *out)
{
	const struct resume_plan *p = &tp->plan;

	if (!tp->resumed)
		return;
	if (!tp->ckpt_global) {
		sbuf_addf(out, "the checkpoint records no global batch (written before version 3); "
			  "training on at global batch %lld", (long long)p->global);
		return;
	}
	if (tp->ckpt_world == world && tp->ckpt_global == p->global && tp->ckpt_batch == p->batch)
		return;
	if (tp->ckpt_global != p->global)
		sbuf_addf(out, "resuming a %lld-rank checkpoint (global batch %lld) on %d rank%s with "
			  "a new global batch of %lld (--new-global-batch)",
			  (long long)tp->ckpt_world, (long long)tp->ckpt_global, world,
			  world == 1 ? "" : "s", (long long)p->global);
	else
		sbuf_addf(out, "resuming a %lld-rank checkpoint (global batch %lld) on %d rank%s",
			  (long long)tp->ckpt_world, (long long)tp->ckpt_global, world,
			  world == 1 ? "" : "s");
	if (p->accum > 1)
		sbuf_addf(out, ": %d accumulation steps of %d", p->accum, p->batch);
	else
		sbuf_addf(out, ": batch %d per rank", p->batch);
}
