/* attempt_size.c - each attempt's granted size in ATTEMPT/nodes.json,
 * and a rank's view of its attempt (attempt_size.h).  Shell: files and
 * the Slurm environment. */
#include "launcher/runs/attempt_size.h" // defines: attempt_size_record, attempt_size_ctx_load
#include "common/fileio.h"              // defines: fileio_write_atomic
#include "common/jsonfile.h"            // defines: jsonfile_load
#include "common/sbuf.h"                // defines: struct sbuf, xasprintf
#include "launcher/runs/rundir.h"       // defines: struct rundir, rundir_open, RUNDIR_FILE_MODE

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

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

int attempt_size_record(const char *dir, int64_t world_size, struct sbuf *err)
{
	int64_t nodes = env_count("SLURM_JOB_NUM_NODES");
	char *path, *text;
	json_t *doc;
	int rc = -1;

	if (nodes < 0)
		nodes = env_count("SLURM_NNODES");
	doc = json_pack("{s:I, s:I}", "nodes", (json_int_t)(nodes < 0 ? 0 : nodes), "world_size",
			(json_int_t)world_size);
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
	struct sbuf why = SBUF_INIT;
	char *path = xasprintf("%s/" ATTEMPT_SIZE_FILE, dir);
	json_t *doc = jsonfile_load(path, 1 << 16, 0, &why);
	json_t *n = json_object_get(doc, "nodes"), *w = json_object_get(doc, "world_size");
	int rc = -1;

	if (json_is_integer(n) && json_is_integer(w) && json_integer_value(n) >= 0 &&
	    json_integer_value(w) >= 0) {
		*nodes = json_integer_value(n);
		*world_size = json_integer_value(w);
		rc = 0;
	}
	json_decref(doc);
	free(path);
	sbuf_release(&why);
	return rc;
}

int attempt_size_ctx_load(const char *dir, struct attempt_size_ctx *c, struct sbuf *err)
{
	struct rundir rd = RUNDIR_INIT;

	memset(c, 0, sizeof(*c));
	if (rundir_open(dir, &rd, err))
		return -1;
	c->attempt = rd.attempt;
	c->checkpoint_dir = xasprintf("%s/checkpoints", rd.run);
	/* the latest earlier attempt that trained: one whose preflight
	 * failed never recorded a size */
	for (int a = rd.attempt - 1; a >= 1 && !c->prev_world_size; a--) {
		char *prev = a == 1 ? xstrdup(rd.run) : xasprintf("%s/attempts/%d", rd.run, a);
		int64_t nodes, world;

		if (!attempt_size_load(prev, &nodes, &world))
			c->prev_world_size = world;
		free(prev);
	}
	rundir_release(&rd);
	return 0;
}
