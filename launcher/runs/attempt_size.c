/* attempt_size.c - each attempt's granted size in ATTEMPT/nodes.json,
 * and a rank's view of its attempt (attempt_size.h).  Shell: files and
 * the Slurm environment. */
#include "launcher/runs/attempt_size.h" // defines: attempt_size_record, attempt_size_ctx_load
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/fileio.h"              // defines: fileio_write_atomic
#include "common/jsonfile.h"            // defines: jsonfile_load
#include "common/sbuf.h"                // defines: struct sbuf, xasprintf
#include "launcher/runs/rundir.h"       // defines: struct rundir, rundir_open, RUNDIR_FILE_MODE

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void attempt_size_ctx_release(struct attempt_size_ctx *c)
{
	if (!c)
		return;
	free(c->checkpoint_dir);
	memset(c, 0, sizeof(*c));
}

static int64_t env_count(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	v = strtoll(s, &end, 10);
	return *end || v < 0 ? -1 : (int64_t)v;
}

/* One attempt's nodes.json; restart and prev_world_size are 0 in a
 * file an older hpctrain wrote. */
struct size_rec {
	int64_t nodes, world_size, restart, prev_world_size;
};

static int64_t field(json_t *doc, const char *key, int64_t absent)
{
	json_t *v = json_object_get(doc, key);

	if (!v)
		return absent;
	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

static int load_rec(const char *dir, struct size_rec *r)
{
	struct sbuf why = SBUF_INIT;
	char *path = xasprintf("%s/" ATTEMPT_SIZE_FILE, dir);
	json_t *doc = jsonfile_load(path, 1 << 16, 0, &why);
	int rc = -1;

	if (doc) {
		r->nodes = field(doc, "nodes", -1);
		r->world_size = field(doc, "world_size", -1);
		r->restart = field(doc, "restart", 0);
		r->prev_world_size = field(doc, "prev_world_size", 0);
		rc = r->nodes < 0 || r->world_size < 0 || r->restart < 0 ||
		     r->prev_world_size < 0 ? -1 : 0;
	}
	json_decref(doc);
	free(path);
	sbuf_release(&why);
	return rc;
}

/* The world size this attempt ran at before Slurm requeued it as
 * restart number restart: what dir's record says, whether the rank 0
 * of this run has rewritten it yet (the record then carries it on) or
 * not.  0 when this run is no requeue, or nothing ran before it. */
static int64_t requeued_from(const char *dir, int64_t restart)
{
	struct size_rec r;

	if (restart <= 0 || load_rec(dir, &r))
		return 0;
	if (r.restart < restart)
		return r.world_size;
	return r.restart == restart ? r.prev_world_size : 0;
}

static int64_t restart_count(void)
{
	int64_t r = env_count("SLURM_RESTART_COUNT");

	return r < 0 ? 0 : r;
}

int attempt_size_record(const char *dir, int64_t world_size, struct sbuf *err)
{
	/* the step's nodes first: a job with spares, or one that lost a
	 * node and goes on inside its allocation, trains on fewer nodes
	 * than Slurm granted it */
	int64_t nodes = env_count("SLURM_STEP_NUM_NODES"), restart = restart_count();
	int64_t prev = requeued_from(dir, restart);
	char *path, *text;
	json_t *doc;
	int rc = -1;

	if (nodes < 0)
		nodes = env_count("SLURM_JOB_NUM_NODES");
	if (nodes < 0)
		nodes = env_count("SLURM_NNODES");
	doc = json_pack("{s:I, s:I, s:I, s:I}", "nodes", (json_int_t)(nodes < 0 ? 0 : nodes),
			"world_size", (json_int_t)world_size, "restart", (json_int_t)restart,
			"prev_world_size", (json_int_t)prev);
	text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	path = xasprintf("%s/" ATTEMPT_SIZE_FILE, dir);
	if (!text)
		sbuf_addf(err, "cannot write %s: out of memory", path);
	else if (!fileio_write_atomic(path, text, strlen(text), RUNDIR_FILE_MODE, 0, err))
		rc = 0;
	free(path);
	free(text);
	json_decref(doc);
	return rc;
}

int attempt_size_load(const char *dir, int64_t *nodes, int64_t *world_size)
{
	struct size_rec r;

	if (load_rec(dir, &r))
		return -1;
	*nodes = r.nodes;
	*world_size = r.world_size;
	return 0;
}

/* Whether a later attempt goes on from the run's checkpoints: its own
 * checkpoints is rundir_resume's link to them. */
static bool resumes(const struct rundir *rd)
{
	char *link = xasprintf("%s/" RUNFILE_CHECKPOINTS, rd->dir);
	struct stat st;
	bool linked = !lstat(link, &st) && S_ISLNK(st.st_mode);

	free(link);
	return linked;
}

int attempt_size_ctx_load(const char *dir, struct attempt_size_ctx *c, struct sbuf *err)
{
	struct rundir rd = RUNDIR_INIT;

	memset(c, 0, sizeof(*c));
	if (rundir_open(dir, &rd, err))
		return -1;
	c->attempt = rd.attempt;
	c->prev_world_size = requeued_from(dir, restart_count());
	if (rd.attempt >= 2 && !resumes(&rd)) {
		/* a fresh lineage: checkpoints of its own, nothing before it */
		c->checkpoint_dir = xasprintf("%s/" RUNFILE_CHECKPOINTS, rd.dir);
		rundir_release(&rd);
		return 0;
	}
	c->checkpoint_dir = xasprintf("%s/" RUNFILE_CHECKPOINTS, rd.run);
	/* else the latest earlier attempt that trained: one whose
	 * preflight failed never recorded a size */
	for (int a = rd.attempt - 1; a >= 1 && !c->prev_world_size; a--) {
		char *prev = a == 1 ? xstrdup(rd.run) : xasprintf("%s/" RUNFILE_ATTEMPTS "/%d", rd.run, a);
		int64_t nodes, world;

		if (!attempt_size_load(prev, &nodes, &world))
			c->prev_world_size = world;
		free(prev);
	}
	rundir_release(&rd);
	return 0;
}
