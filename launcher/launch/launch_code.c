/* launch_code.c - the code snapshot a rank's program runs in: found
 * from the run's code.json (launcher/job/code_pin.h writes it at
 * submit), checked against the digest the run's resolved form names;
 * with the data staged, the node's copy of it (its data.stage entry
 * "code", launcher/job/code_stage.h).
 * Shell: reads code.json, stats the snapshot. */
#include "launcher/launch/launch.h" // defines: struct launch, launch_code_dir, launch_workdir
#include "common/exitcode.h"        // defines: HPT_EXIT_*
#include "common/fileio.h"          // defines: FILEIO_*
#include "common/jsonfile.h"        // defines: jsonfile_load
#include "common/runfile.h"         // defines: RUNFILE_CODE
#include "common/say.h"             // defines: say
#include "common/sbuf.h"            // defines: struct sbuf, xasprintf

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
