/* rundir.c - run records on disk: OUTPUT/<name>/<hash12>/ and its attempts.
 * Shell: mkdir, files, the current directory (see rundir.h for the layout
 * and why everything is 0700/0600). */
#include "launcher/runs/rundir.h" // defines: struct rundir, rundir_create, rundir_open
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/fileio.h"      // defines: fileio_read, fileio_write_atomic, fileio_mkdirs, fileio_check_owned
#include "common/fileremove.h"  // defines: fileremove_one
#include "common/jsonfile.h"    // defines: jsonfile_load
#include "common/sbuf.h"        // defines: struct sbuf, xasprintf
#include "launcher/runs/program_module.h" // defines: program_module_remove
#include "launcher/runs/rundir_publish.h" // defines: rundir_publish_*
#include "common/spec/specfile.h" // defines: SPECFILE_RUN_SPEC

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Attempts beyond this are surely a loop gone wrong. */
#define RUNDIR_MAX_ATTEMPTS 100000
/* An R without resolved.yaml this old is what a killed writer left. */
#define RUNDIR_STALE_S 5

void rundir_release(struct rundir *rd)
{
	if (!rd)
		return;
	free(rd->run);
	free(rd->dir);
	rd->run = rd->dir = NULL;
	rd->attempt = 0;
	rd->fresh = 0;
}

/* path made absolute against the current directory, without resolving
 * symlinks (the user's spelling of a path stays recognisable). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return xstrdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (!strcmp(path, "."))
		return xstrdup(cwd);
	return xasprintf("%s/%s", strcmp(cwd, "/") ? cwd : "", path);
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Writes resolved.yaml and logs/ into dir: a temporary about to be
 * published, or an R a killed writer left without them (so logs/ may
 * be there already).  0 or -1 with err. */
static int fill_dir(const char *dir, const char *resolved, size_t len, struct sbuf *err)
{
	char *logs = xasprintf("%s/logs", dir);
	char *spec = xasprintf("%s/" SPECFILE_RUN_SPEC, dir);
	int rc = 0;

	if (mkdir(logs, RUNDIR_DIR_MODE) && errno != EEXIST) {
		sbuf_addf(err, "cannot create %s: %s", logs, strerror(errno));
		rc = -1;
	}
	if (!rc)
		rc = fileio_write_atomic(spec, resolved, len, RUNDIR_FILE_MODE, 1, err);
	free(logs);
	free(spec);
	return rc;
}

/* Attempt 2, 3, ... of run, published whole: filled in a temporary under
 * run/attempts, then given the first free number (rundir_publish_numbered:
 * mkdir claims it, as before, and rename fills it in one step).  Under
 * the caller's lock, so temporaries found there are orphans. */
static int publish_later_attempt(const char *run, const char *resolved, size_t len,
				 struct rundir *rd, struct sbuf *err)
{
	char *attempts = xasprintf("%s/" RUNFILE_ATTEMPTS, run), *tmp = NULL;
	int n = -1;

	if (mkdir(attempts, RUNDIR_DIR_MODE) && errno != EEXIST) {
		sbuf_addf(err, "cannot create %s: %s", attempts, strerror(errno));
		goto out;
	}
	rundir_publish_sweep(attempts);
	if (!(tmp = rundir_publish_tmp(attempts, "attempt", err)) ||
	    fill_dir(tmp, resolved, len, err) ||
	    (n = rundir_publish_numbered(tmp, attempts, 2, RUNDIR_MAX_ATTEMPTS, err)) < 0) {
		rundir_publish_discard(tmp);
		goto out;
	}
	rd->run = xstrdup(run);
	rd->dir = xasprintf("%s/%d", attempts, n);
	rd->attempt = n;
	rd->fresh = 1;
out:
	free(attempts);
	free(tmp);
	return n < 0 ? -1 : 0;
}

char *rundir_path(const char *output_dir, const char *name, const char *sha256)
{
	char *base = absolute(output_dir), *run;

	if (!base)
		return NULL;
	run = xasprintf("%s/%s/%.*s", base, name, RUNDIR_HASH_LEN, sha256);
	free(base);
	return run;
}

/* R as a killed writer (or an older hpctrain, which made R before its
 * files) may leave it: without resolved.yaml.  Such an R younger than
 * RUNDIR_STALE_S may still be filling (a writer without our lock): wait
 * for its file that long.  Then an R still without one is completed as
 * attempt 1 of this spec, so no later submit or status trips on it. */
static int complete_run(const char *run, const char *resolved, size_t len, struct rundir *rd,
			struct sbuf *err)
{
	char *spec = xasprintf("%s/" SPECFILE_RUN_SPEC, run);
	struct stat st;
	int rc = 1; /* 1: R is complete, compare it */

	for (int i = 0; !fileio_exists(spec) && !stat(run, &st) &&
			time(NULL) - st.st_mtime < RUNDIR_STALE_S && i < 10 * RUNDIR_STALE_S; i++)
		usleep(100000);
	if (!fileio_exists(spec)) {
		rc = fill_dir(run, resolved, len, err) ? -1 : 0;
		if (!rc) {
			rd->run = xstrdup(run);
			rd->dir = xstrdup(run);
			rd->attempt = 1;
			rd->fresh = 1;
		}
	}
	free(spec);
	return rc;
}

/* Attempt 1: R made whole in a temporary sibling and renamed into place.
 * 0 published, 1 R exists (a writer without our lock won), -1 with err. */
static int publish_run(const char *parent, const char *run, const char *resolved, size_t len,
		       struct rundir *rd, struct sbuf *err)
{
	char *tmp = rundir_publish_tmp(parent, strrchr(run, '/') + 1, err);
	int rc = -1;

	if (!tmp || fill_dir(tmp, resolved, len, err))
		goto out;
	if (!rename(tmp, run)) {
		rd->run = xstrdup(run);
		rd->dir = xstrdup(run);
		rd->attempt = 1;
		rd->fresh = 1;
		rc = 0;
	} else if (errno == EEXIST || errno == ENOTEMPTY) {
		rc = 1;
	} else {
		sbuf_addf(err, "cannot rename %s to %s: %s", tmp, run, strerror(errno));
	}
out:
	if (rc)
		rundir_publish_discard(tmp);
	free(tmp);
	return rc;
}

/* An existing R: ours, closed to others (a shared output.dir must not let
 * another user pre-make the run we add an attempt to), and this spec, not
 * another with the same 12-digit prefix.  Then a later attempt. */
static int attempt_existing(const char *run, const char *resolved, size_t len,
			    struct rundir *rd, struct sbuf *err)
{
	struct sbuf old = SBUF_INIT, ignored = SBUF_INIT;
	char *path = xasprintf("%s/" SPECFILE_RUN_SPEC, run);
	int rc = -1, same;

	if (fileio_check_owned(run, err))
		goto out;
	rc = complete_run(run, resolved, len, rd, err);
	if (rc <= 0)
		goto out;
	rc = -1;
	same = !fileio_read(path, len + 1, &old, &ignored) && old.len == len &&
	       !memcmp(old.buf, resolved, len);
	if (!same)
		sbuf_addf(err,
			  "%s holds a different job (a hash prefix collision, or an edited "
			  RUNFILE_SPEC "); move it away or change output.dir",
			  run);
	else
		rc = publish_later_attempt(run, resolved, len, rd, err);
out:
	free(path);
	sbuf_release(&old);
	sbuf_release(&ignored);
	return rc;
}

int rundir_create(const char *output_dir, const char *name, const char *sha256,
		  const char *resolved, size_t len, struct rundir *out, struct sbuf *err)
{
	char *base = absolute(output_dir), *parent = NULL, *run = NULL;
	int rc = -1, lock = -1;
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (!base) {
		sbuf_addf(err, "cannot find the current directory: %s", strerror(errno));
		return -1;
	}
	parent = xasprintf("%s/%s", base, name);
	run = xasprintf("%s/%.*s", parent, RUNDIR_HASH_LEN, sha256);
	if (fileio_mkdirs(parent, RUNDIR_DIR_MODE, NULL)) {
		sbuf_addf(err, "cannot create %s: %s", parent, strerror(errno));
		goto out;
	}
	if ((lock = rundir_publish_lock(parent, err)) < 0)
		goto out;
	rundir_publish_sweep(parent); /* what submits killed mid-way left */
	rc = 1; /* R exists */
	if (lstat(run, &st)) {
		if (errno != ENOENT) {
			sbuf_addf(err, "cannot create %s: %s", run, strerror(errno));
			rc = -1;
			goto out;
		}
		if ((rc = publish_run(parent, run, resolved, len, out, err)) < 0)
			goto out;
	}
	if (rc)
		rc = attempt_existing(run, resolved, len, out, err);
out:
	rundir_publish_unlock(lock);
	free(base);
	free(parent);
	free(run);
	return rc;
}

/* The directory that holds run (OUTPUT/<name>), where its lock is. */
static char *parent_of(const char *run)
{
	const char *slash = strrchr(run, '/');

	return slash && slash != run ? xstrndup(run, (size_t)(slash - run)) : xstrdup("/");
}

int rundir_new_attempt(const char *run, struct rundir *out, struct sbuf *err)
{
	struct sbuf text = SBUF_INIT;
	char *path = xasprintf("%s/" SPECFILE_RUN_SPEC, run), *parent = parent_of(run);
	int rc = -1, lock = -1;

	memset(out, 0, sizeof(*out));
	if (fileio_check_owned(run, err) || fileio_read(path, 16 << 20, &text, err))
		goto out;
	if ((lock = rundir_publish_lock(parent, err)) < 0)
		goto out;
	rc = publish_later_attempt(run, text.buf, text.len, out, err);
out:
	rundir_publish_unlock(lock);
	free(path);
	free(parent);
	sbuf_release(&text);
	return rc;
}

int rundir_write(const struct rundir *rd, const char *file, const void *data, size_t len,
		 struct sbuf *err)
{
	char *path = xasprintf("%s/%s", rd->dir, file);
	int rc = fileio_write_atomic(path, data, len, RUNDIR_FILE_MODE, 1, err);

	free(path);
	return rc;
}

int rundir_resume(const struct rundir *rd, struct sbuf *err)
{
	char *shared = xasprintf("%s/checkpoints", rd->run);
	char *link = xasprintf("%s/checkpoints", rd->dir);
	int rc = 0;

	if (rd->attempt < 2)
		goto out;
	if (fileio_private_dir(shared, err)) {
		rc = -1;
	} else if (symlink(shared, link)) {
		sbuf_addf(err, "cannot link %s to %s: %s", link, shared, strerror(errno));
		rc = -1;
	}
out:
	free(shared);
	free(link);
	return rc;
}

/* Whether dir holds nothing but resolved.yaml. */
static int holds_only_spec(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int only = d != NULL;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, SPECFILE_RUN_SPEC))
			only = 0;
	if (d)
		closedir(d);
	return only;
}

/* Takes the attempt directory away in one step, as it was published:
 * renamed onto an empty temporary beside it, then emptied.  A reader
 * sees the whole attempt or none, never one without resolved.yaml. */
static void unpublish(const char *dir)
{
	char *up = xstrndup(dir, (size_t)(strrchr(dir, '/') - dir));
	struct sbuf ignored = SBUF_INIT;
	char *tmp = rundir_publish_tmp(up, "abandoned", &ignored);

	if (tmp && !rename(dir, tmp)) /* onto an empty directory: allowed */
		rundir_publish_discard(tmp);
	else if (tmp)
		fileremove_one(tmp, &ignored);
	free(tmp);
	free(up);
	sbuf_release(&ignored);
}

void rundir_abandon(struct rundir *rd)
{
	static const char *const files[] = { RUNFILE_SCRIPT, RUNFILE_SUBMIT, RUNFILE_CODE,
					     RUNFILE_SOFTWARE,
					     "checkpoints" /* rundir_resume's link */ };
	struct sbuf ignored = SBUF_INIT;
	char *path, *parent;
	int lock;

	if (!rd || !rd->fresh || !rd->dir)
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path = xasprintf("%s/%s", rd->dir, files[i]);
		fileremove_one(path, &ignored); /* only the caller's, as every removal */
		free(path);
	}
	program_module_remove(rd->dir);
	path = xasprintf("%s/logs", rd->dir);
	fileremove_one(path, &ignored);
	free(path);
	/* resolved.yaml goes with the directory, under the lock the
	 * directory was published under; when something else was left in
	 * it, the attempt stays, whole */
	parent = parent_of(rd->run);
	lock = rundir_publish_lock(parent, &ignored);
	if (holds_only_spec(rd->dir))
		unpublish(rd->dir);
	if (rd->attempt > 1) {
		path = xasprintf("%s/attempts", rd->run);
		fileremove_one(path, &ignored); /* fails, harmlessly, while other attempts remain */
		free(path);
	}
	rundir_publish_unlock(lock);
	free(parent);
	sbuf_release(&ignored);
	rd->fresh = 0;
}

/* The highest attempt number under run/attempts, preferring those with a
 * submit.json; 1 when there are none.  A number without resolved.yaml
 * (claimed by an older hpctrain killed before it wrote one) is no
 * attempt. */
static int latest_attempt(const char *run, int *submitted)
{
	char *attempts = xasprintf("%s/attempts", run);
	DIR *d = opendir(attempts);
	int best = 1, best_sub = 0;
	struct dirent *e;

	{
		char *p = xasprintf("%s/" RUNFILE_SUBMIT, run);

		best_sub = fileio_exists(p);
		free(p);
	}
	while (d && (e = readdir(d))) {
		char *end, *p;
		long n = strtol(e->d_name, &end, 10);
		int sub;

		if (*end || n < 2 || n > RUNDIR_MAX_ATTEMPTS || e->d_name[0] == '0')
			continue;
		p = xasprintf("%s/%ld/" SPECFILE_RUN_SPEC, attempts, n);
		sub = fileio_exists(p);
		free(p);
		if (!sub)
			continue;
		p = xasprintf("%s/%ld/" RUNFILE_SUBMIT, attempts, n);
		sub = fileio_exists(p);
		free(p);
		if ((sub && !best_sub) || (sub == best_sub && n > best)) {
			best = (int)n;
			best_sub = sub;
		}
	}
	if (d)
		closedir(d);
	free(attempts);
	*submitted = best_sub;
	return best;
}

int rundir_open(const char *arg, struct rundir *out, struct sbuf *err)
{
	char *dir = absolute(arg), *p, *slash;
	int submitted;

	memset(out, 0, sizeof(*out));
	if (!dir) {
		sbuf_addf(err, "cannot find the current directory: %s", strerror(errno));
		return -1;
	}
	while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	p = xasprintf("%s/" SPECFILE_RUN_SPEC, dir);
	if (!is_dir(dir) || !fileio_exists(p)) {
		sbuf_addf(err, "no run at %s (a run directory holds " RUNFILE_SPEC ")", arg);
		free(p);
		free(dir);
		return -1;
	}
	free(p);
	/* DIR/attempts/N is a later attempt of DIR */
	slash = strrchr(dir, '/');
	if (slash && slash - dir > 9 && !strncmp(slash - 9, "/attempts", 9) &&
	    strspn(slash + 1, "0123456789") == strlen(slash + 1) && slash[1] &&
	    strlen(slash + 1) < 7) { /* no attempt number beyond an int */
		out->attempt = (int)strtol(slash + 1, NULL, 10);
		out->run = xstrndup(dir, (size_t)(slash - 9 - dir));
		out->dir = dir;
		return 0;
	}
	out->run = dir;
	out->attempt = latest_attempt(dir, &submitted);
	out->dir = out->attempt == 1 ? xstrdup(dir) : xasprintf("%s/" RUNFILE_ATTEMPTS "/%d", dir, out->attempt);
	return 0;
}

int rundir_job_id(const struct rundir *rd, unsigned long *job_id, int64_t *task, struct sbuf *err)
{
	char *path = xasprintf("%s/" RUNFILE_SUBMIT, rd->dir);
	struct sbuf why = SBUF_INIT;
	json_t *doc = jsonfile_load(path, 1 << 20, 0, &why), *id, *t;
	int rc = -1;

	if (task)
		*task = -1;
	if (!doc) {
		if (!fileio_exists(path))
			sbuf_addf(err, "%s was never submitted (no " RUNFILE_SUBMIT ")", rd->dir);
		else
			sbuf_add(err, why.buf, why.len);
	} else if (!json_is_integer(id = json_object_get(doc, "job_id")) ||
		   json_integer_value(id) <= 0 || json_integer_value(id) > UINT32_MAX) {
		sbuf_addf(err, "%s: no job_id", path);
	} else {
		*job_id = (unsigned long)json_integer_value(id);
		t = json_object_get(doc, "array_task_id");
		if (task && json_is_integer(t) && json_integer_value(t) >= 0)
			*task = json_integer_value(t);
		rc = 0;
	}
	json_decref(doc);
	sbuf_release(&why);
	free(path);
	return rc;
}
