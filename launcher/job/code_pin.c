/* code_pin.c - a job's code pinned by its content: see code_pin.h.
 * Calls code_scan, code_git and code_store, and prints. */
#include "launcher/job/code_pin.h"   // defines: code_pin, code_pin_unchanged, code_pin_*_dir
#include "launcher/job/code_git.h"   // defines: code_git_toplevel, code_git_state_*
#include "launcher/job/code_list.h"  // defines: struct code_list, code_list_json
#include "launcher/job/code_scan.h"  // defines: code_scan
#include "launcher/job/code_stage.h" // defines: code_stage_pin
#include "launcher/job/code_store.h" // defines: code_store, code_store_path
#include "common/exitcode.h"         // defines: HPT_EXIT_*
#include "common/fileio.h"           // defines: FILEIO_*
#include "common/jsonfile.h"         // defines: jsonfile_load
#include "common/runfile.h"          // defines: RUNFILE_CODE
#include "common/say.h"              // defines: say, say_lines
#include "common/sbuf.h"             // defines: struct sbuf, xasprintf

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CODE_JSON_MAX (1u << 30)

/* path made absolute against the current directory, without resolving
 * links (it may not exist yet). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return xstrdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return xasprintf("%s/%s", strcmp(cwd, "/") ? cwd : "", path);
}

char *code_pin_codes_dir(const struct job *job)
{
	char *out = absolute(job->output.dir), *codes;

	if (!out)
		return NULL;
	codes = xasprintf("%s/.code", out);
	free(out);
	return codes;
}

/* The file the job's program is, as this host sees it: command[0] when
 * it holds a '/', else the first argument naming a regular file
 * (python3 train.py).  NULL when none does. */
static char *program_file(const struct job *job)
{
	struct stat st;

	for (size_t i = 0; i < job->command.n; i++) {
		const char *a = job->command.v[i];

		if (i == 0 && !strchr(a, '/'))
			continue;
		if (*a && *a != '-' && !stat(a, &st) && S_ISREG(st.st_mode))
			return realpath(a, NULL);
		if (i == 0)
			break; /* a program named by its path is the one, found or not */
	}
	return NULL;
}

char *code_pin_default_dir(const struct job *job)
{
	struct sbuf top = SBUF_INIT;
	char *prog = program_file(job), *slash, *out = NULL;

	if (prog && (slash = strrchr(prog, '/'))) {
		*slash = '\0';
		if (!code_git_toplevel(*prog ? prog : "/", &top))
			out = realpath(top.buf, NULL);
	}
	if (!out)
		out = realpath(".", NULL);
	free(prog);
	sbuf_release(&top);
	return out;
}

/* output.dir resolved when it exists, so that a tree holding it (the
 * submit directory, as by default) never lists the runs. */
static char *skip_of(const char *codes)
{
	char *out = xstrdup(codes), *real;

	*strrchr(out, '/') = '\0';
	real = realpath(out, NULL);
	if (real) {
		free(out);
		return real;
	}
	return out;
}

/* With data staged, the snapshot is one more entry (code_stage.h);
 * a tree the stage engine cannot copy as it is runs from the shared
 * snapshot, said. */
static void stage(struct job *job, const struct code_list *l, const char *snapshot,
		  size_t *files)
{
	struct sbuf why = SBUF_INIT;
	size_t n = 0;

	if (!code_stage_pin(job, l, snapshot, &n, &why)) {
		if (files && n)
			files[job->data.nstage - 1] = n;
	} else {
		say("warning: the code snapshot is not staged to the nodes' caches with the "
		    "data: %s; the ranks run it from %s", why.buf, snapshot);
	}
	sbuf_release(&why);
}

int code_pin(struct job *job, bool store, json_t **record, size_t *files)
{
	struct sbuf warn = SBUF_INIT, err = SBUF_INIT, top = SBUF_INIT;
	struct code_list l = { 0 };
	char *dir = NULL, *codes = NULL, **skip = NULL, *snapshot = NULL;
	size_t nskip = 0;
	json_t *git = NULL;
	struct code_git_pending pending = { -1, -1 };
	struct stat st;
	int status = HPT_EXIT_OK;

	if (record)
		*record = NULL;
	if (!spec_code_is_on(job))
		return HPT_EXIT_OK;
	dir = job->code.dir ? realpath(job->code.dir, NULL) : code_pin_default_dir(job);
	if (!dir || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		say("cannot snapshot the code in %s: it is not a directory here%s",
		    job->code.dir ? job->code.dir : "the submit directory",
		    job->code.dir ? " (code.dir)" : "");
		status = HPT_EXIT_NO_INPUT;
		goto out;
	}
	codes = code_pin_codes_dir(job);
	if (!codes) {
		say("cannot name output.dir %s: the current directory is gone", job->output.dir);
		status = HPT_EXIT_IO;
		goto out;
	}
	skip = xcalloc(job->data.nstage + 1, sizeof(*skip));
	skip[0] = skip_of(codes);
	for (size_t i = 0; i < job->data.nstage; i++)
		skip[i + 1] = realpath(job->data.stage[i].src, NULL);
	for (size_t i = 0; i <= job->data.nstage; i++)
		if (skip[i])
			skip[nskip++] = skip[i];
	/* git status walks the tree while the scan lstats it: on two cores
	 * the two walks overlap instead of adding up */
	if (record && !code_git_toplevel(dir, &top))
		code_git_state_start(dir, &pending);
	status = code_scan(dir, &job->code, (const char *const *)skip, nskip, &l, &warn, &err);
	if (pending.pid >= 0)
		git = code_git_state_finish(dir, &pending);
	say_lines(warn.buf);
	if (status) {
		say("%s", err.buf);
		goto out;
	}
	snapshot = code_store_path(codes, l.digest);
	if (store && (status = code_store(&l, dir, codes, &err))) {
		say("%s", err.buf);
		goto out;
	}
	if (!job->code.dir)
		job->code.dir = xstrdup(dir);
	free(job->code.digest);
	job->code.digest = xstrdup(l.digest);
	stage(job, &l, snapshot, files);
	if (!record)
		goto out;
	*record = code_list_json(&l, dir, snapshot, git);
	git = NULL; /* the record's now */
	if (!*record) {
		say("cannot record the code of %s (out of memory)", dir);
		status = HPT_EXIT_INTERNAL;
	}
out:
	json_decref(git);
	code_list_release(&l);
	sbuf_release(&warn);
	sbuf_release(&err);
	sbuf_release(&top);
	free(dir);
	free(codes);
	for (size_t i = 0; i < nskip; i++)
		free(skip[i]);
	free(skip);
	free(snapshot);
	return status;
}

int code_pin_unchanged(const struct job *job, const char *run, json_t **record)
{
	char *path;
	struct sbuf err = SBUF_INIT;
	const char *snapshot = NULL, *digest = NULL;
	struct stat st;
	json_t *doc;
	int status = HPT_EXIT_OK;

	*record = NULL;
	if (!job->code.digest)
		return HPT_EXIT_OK;
	path = xasprintf("%s/" RUNFILE_CODE, run);
	doc = jsonfile_load(path, CODE_JSON_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
	if (!doc || json_unpack(doc, "{s:s, s:s}", "snapshot", &snapshot, "digest", &digest) ||
	    strcmp(digest, job->code.digest)) {
		say("the run's code record %s is %s; submit the spec again for a new snapshot",
		    path, doc ? "not the run's (another digest, or no snapshot named)" : "unreadable");
		if (err.len)
			say("%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	} else if (lstat(snapshot, &st) || !S_ISDIR(st.st_mode)) {
		say("the run's code snapshot %s is gone (code %s); submit the spec again for a new "
		    "snapshot", snapshot, digest);
		status = HPT_EXIT_NO_INPUT;
	} else {
		*record = json_incref(doc);
	}
	json_decref(doc);
	free(path);
	sbuf_release(&err);
	return status;
}
