/* launch_code.c - the code snapshot a rank's program runs in: found
 * from the run's code.json (launcher/job/code_pin.h writes it at
 * submit), checked against the digest the run's resolved form names;
 * with the data staged, the node's copy of it (its data.stage entry
 * "code", launcher/job/code_stage.h); and where Python's bytecode goes
 * instead of into it.
 * Shell: reads code.json, stats the snapshot, makes the bytecode's
 * directory. */
#include "launcher/launch/launch.h" // defines: struct launch, launch_code_dir, launch_workdir
#include "common/exitcode.h"        // defines: HPT_EXIT_*
#include "common/fileio.h"          // defines: FILEIO_*
#include "common/jsonfile.h"        // defines: jsonfile_load
#include "common/runfile.h"         // defines: RUNFILE_CODE
#include "common/say.h"             // defines: say
#include "common/sbuf.h"            // defines: struct sbuf, xasprintf
#include "launcher/stage/stage_path.h" // defines: stage_job_cache_dir, stage_pycache_dir

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CODE_JSON_MAX (1u << 30)

/* The node's copy of the snapshot, when the code was staged with the
 * data (launcher/job/code_stage.h) and the copy is here: the data's
 * entry "code" whose source is this snapshot.  NULL otherwise; a copy
 * that is missing was said by launch_plan_data, and the rank runs the
 * shared snapshot, which holds the same bytes. */
static const char *staged_copy(const struct launch *l, const char *snapshot)
{
	for (size_t i = 0; l->data.code && i < l->data.n; i++) {
		const struct data_env_entry *e = &l->data.v[i];

		if (e->path == l->data.code && e->path == e->staged && !strcmp(e->src, snapshot))
			return e->staged;
	}
	return NULL;
}

/* Python writes a module's bytecode beside its source when it can: into
 * a writable snapshot (the store's directories are 0700) or a node's
 * copy of it, which would then hold files the snapshot's listing does
 * not, for `hpctrain diff`, the next job's stage step (a snapshot whose
 * manifest moved) and a reader to find.  PYTHONPYCACHEPREFIX (Python
 * 3.8+) moves it to the node cache's private directory, left to the
 * user who set one.  One directory a node, not a rank: its writes are
 * atomic renames, and a library compiled once serves later jobs (the
 * prefix makes Python pass over a library's own __pycache__, so the
 * first job on a node compiles what it imports). */
static void pycache(struct launch *l, struct envplan_input *in)
{
	struct sbuf err = SBUF_INIT;
	char *cache;

	if (getenv("PYTHONPYCACHEPREFIX"))
		return;
	cache = stage_job_cache_dir(&l->job, getenv("TMPDIR"), (unsigned)getuid());
	free(l->pycache_dir);
	l->pycache_dir = stage_pycache_dir(cache);
	/* the cache first: a directory someone else may write above ours
	 * could swap it for theirs, and their bytecode would run */
	if (l->dry_run || (!fileio_private_dir(cache, &err) &&
			   !fileio_private_dir(l->pycache_dir, &err))) {
		in->pycache_prefix = l->pycache_dir;
	} else {
		say("rank %u: warning: %s; Python writes no bytecode (PYTHONDONTWRITEBYTECODE=1) "
		    "rather than into the code snapshot", l->ri.rank, err.buf);
		in->no_bytecode = true;
	}
	free(cache);
	sbuf_release(&err);
}

int launch_code_dir(struct launch *l, struct envplan_input *in)
{
	struct sbuf err = SBUF_INIT;
	const char *snapshot = NULL, *digest = NULL;
	char *path;
	struct stat st;
	json_t *doc;
	int status = HPT_EXIT_OK;

	if (!l->have_job || !l->run || !l->job.code.digest)
		return HPT_EXIT_OK;
	path = xasprintf("%s/" RUNFILE_CODE, l->run);
	doc = jsonfile_load(path, CODE_JSON_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
	if (!doc || json_unpack(doc, "{s:s, s:s}", "snapshot", &snapshot, "digest", &digest) ||
	    strcmp(digest, l->job.code.digest) || snapshot[0] != '/') {
		say("rank %u: %s does not name the run's code snapshot (%s)%s%s", l->ri.rank, path,
		    l->job.code.digest, err.len ? ": " : "", err.buf);
		status = HPT_EXIT_NO_INPUT;
	} else if (stat(snapshot, &st) || !S_ISDIR(st.st_mode)) {
		say("rank %u: the run's code snapshot %s is gone; the program is not started "
		    "from the live tree in its place", l->ri.rank, snapshot);
		status = HPT_EXIT_NO_INPUT;
	} else {
		const char *copy = staged_copy(l, snapshot);

		free(l->code_dir);
		free(l->run_dir);
		l->code_dir = xstrdup(copy ? copy : snapshot);
		l->code_staged = copy != NULL;
		l->run_dir = realpath(l->run, NULL);
		if (!l->run_dir)
			l->run_dir = xstrdup(l->run);
		in->code_dir = l->code_dir;
		in->run_dir = l->run_dir;
		pycache(l, in);
	}
	json_decref(doc);
	free(path);
	sbuf_release(&err);
	return status;
}

const char *launch_workdir(const struct launch *l)
{
	return l->code_dir;
}
