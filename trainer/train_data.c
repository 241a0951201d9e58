/* train_data.c - the data set of one rank's trainer: see
 * train_internal.h.  Shell: reads data files and the environment. */
#include "trainer/train_internal.h"    // defines: struct trainer, train_data_open
#include "common/say.h" // defines: say
#include "trainer/data/data.h"              // defines: data_load_idx_pair, data_load_shards, data_synthetic
#include "common/exitcode.h"           // defines: HPT_EXIT_*
#include "common/sbuf.h"               // defines: struct sbuf
#include "common/spec/spec.h"          // defines: struct job, spec_stage_dataset, spec_stage_find
#include "common/monoclock.h"  // defines: monoclock_s

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FMNIST_DIR "/usr/share/datasets/fashion-mnist"

/* A data set named stage:NAME: the node's copy, which hpctrain launch
 * names in HPCTRAIN_DATA_<NAME>; without it (the trainer started by
 * hand), the entry's source, said once.  The copy holds shards, or
 * Fashion-MNIST's IDX files as Debian ships them. */
static int open_staged(struct trainer *t, const char *name, struct sbuf *err)
{
	const struct job_stage *e = spec_stage_find(&t->job->data, name);
	char *var = spec_stage_env_name(name);
	const char *path = getenv(var);
	int rc;

	if (!e) { /* spec_load refuses such a spec */
		sbuf_addf(err, "train.dataset stage:%s names no data.stage entry", name);
		free(var);
		return HPT_EXIT_BAD_SPEC;
	}
	if (!path || !*path) {
		if (t->cfg->rank == 0)
			say("warning: %s is not set (not started by "
				"hpctrain launch?); reading %s", var, e->src);
		path = e->src;
	} else {
		t->data_staged = true;
	}
	t->data_path = path;
	rc = data_idx_pair_present(path) ? data_load_idx_pair(&t->train, &t->test, path, err)
					 : data_load_shards(&t->train, &t->test, path, err);
	free(var);
	return rc;
}

/* The spec's data set: fashion-mnist, a generated one, a staged entry,
 * or a directory of shards. */
static int open_data(struct trainer *t, struct sbuf *err)
{
	const struct job_train *tr = &t->job->train;
	const char *staged = spec_stage_dataset(tr->dataset);

	if (!strcmp(tr->dataset, "synthetic")) {
		data_synthetic(&t->train, &t->test, DATA_SYNTHETIC);
		return 0;
	}
	if (!strcmp(tr->dataset, "hep-synthetic")) {
		data_synthetic(&t->train, &t->test, DATA_HEP_SYNTHETIC);
		return 0;
	}
	if (staged)
		return open_staged(t, staged, err);
	if (!strcmp(tr->dataset, "fashion-mnist")) {
		t->data_path = tr->data_dir ? tr->data_dir : FMNIST_DIR;
		return data_load_idx_pair(&t->train, &t->test, t->data_path, err);
	}
	t->data_path = tr->data_dir ? tr->data_dir : tr->dataset;
	return data_load_shards(&t->train, &t->test, t->data_path, err);
}

/* The data set, timed: its read rate goes to metrics.jsonl (a staged
 * copy on a node's disk should read faster than the shared source). */
int train_data_open(struct trainer *t, struct sbuf *err)
{
	double t0 = monoclock_s();
	int rc = open_data(t, err);

	t->data_s = monoclock_s() - t0;
	return rc;
}

