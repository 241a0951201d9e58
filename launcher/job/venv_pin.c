/* venv_pin.c - a venv's packages read into a job's identity: see
 * venv_pin.h.  Shell: the directory walk and the reads; the parsing and
 * the digest are venv_list's. */
#include "launcher/job/venv_pin.h"  // defines: venv_pin, venv_pin_unchanged
#include "launcher/job/venv_list.h" // defines: struct venv_list, venv_list_*
#include "common/exitcode.h"        // defines: HPT_EXIT_*
#include "common/fileio.h"          // defines: fileio_read
#include "common/say.h"             // defines: say
#include "common/sbuf.h"            // defines: struct sbuf, xasprintf

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define METADATA_MAX (16u << 20) /* a METADATA holds the README: some are MBs */

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n > k && !strcmp(s + n - k, tail);
}

/* The core metadata file of site-packages entry name, or NULL for an
 * entry that is no distribution's.  An .egg-info is a directory holding
 * PKG-INFO, or (distutils) that file itself. */
static char *metadata_of(const char *site, const char *name)
{
	char *path = xasprintf("%s/%s", site, name), *meta = NULL;
	struct stat st;

	if (ends_with(name, ".dist-info"))
		meta = xasprintf("%s/METADATA", path);
	else if (ends_with(name, ".egg-info") && !stat(path, &st))
		meta = S_ISDIR(st.st_mode) ? xasprintf("%s/PKG-INFO", path) : xstrdup(path);
	free(path);
	return meta;
}

/* Each distribution of one site-packages directory into l.  0, or -1
 * after saying which file could not be read. */
static int read_site(const char *site, struct venv_list *l)
{
	DIR *d = opendir(site);
	struct dirent *e;
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	int rc = 0;

	if (!d)
		return errno == ENOENT ? 0 : (say("cannot read %s: %s", site, strerror(errno)), -1);
	while (!rc && (e = readdir(d))) {
		char *meta = e->d_name[0] == '.' ? NULL : metadata_of(site, e->d_name);

		if (!meta)
			continue;
		sbuf_reset(&text);
		sbuf_reset(&err);
		if (fileio_read(meta, METADATA_MAX, &text, &err)) {
			say("environment.venv: %s", err.buf);
			rc = -1;
		} else if (venv_list_add_metadata(l, text.buf ? text.buf : "", text.len)) {
			say("warning: %s has no Name: or Version: header; its distribution is left "
			    "out of the venv's packages", meta);
		}
		free(meta);
	}
	closedir(d);
	sbuf_release(&text);
	sbuf_release(&err);
	return rc;
}

/* VENV/lib/python*\/site-packages, each one (a venv has one; lib64 is a
 * link to lib, so it is not read twice). */
static int read_venv(const char *venv, struct venv_list *l)
{
	char *lib = xasprintf("%s/lib", venv);
	DIR *d = opendir(lib);
	struct dirent *e;
	int rc = 0;

	if (!d && errno != ENOENT) {
		say("cannot read %s: %s", lib, strerror(errno));
		rc = -1;
	}
	while (d && !rc && (e = readdir(d))) {
		char *site;

		if (strncmp(e->d_name, "python", 6))
			continue;
		site = xasprintf("%s/%s/site-packages", lib, e->d_name);
		rc = read_site(site, l);
		free(site);
	}
	if (d)
		closedir(d);
	free(lib);
	return rc;
}

/* The venv's packages, finished; 0, or HPT_EXIT_NO_INPUT said. */
static int list_of(const char *venv, struct venv_list *l)
{
	struct stat st;

	if (stat(venv, &st)) {
		say("cannot read environment.venv %s: %s", venv, strerror(errno));
		return HPT_EXIT_NO_INPUT;
	}
	if (!S_ISDIR(st.st_mode)) {
		say("environment.venv %s is not a directory", venv);
		return HPT_EXIT_NO_INPUT;
	}
	if (read_venv(venv, l))
		return HPT_EXIT_NO_INPUT;
	venv_list_finish(l);
	return HPT_EXIT_OK;
}

int venv_pin(struct job *job, json_t **record)
{
	struct venv_list l = { 0 };
	int status;

	*record = NULL;
	if (!job->environment.venv)
		return HPT_EXIT_OK;
	status = list_of(job->environment.venv, &l);
	if (!status) {
		free(job->environment.venv_digest);
		job->environment.venv_digest = xstrdup(l.digest);
		*record = venv_list_json(&l, job->environment.venv);
		if (!*record) {
			say("cannot record the packages of environment.venv %s (a name that is not "
			    "UTF-8, or out of memory)", job->environment.venv);
			status = HPT_EXIT_NO_INPUT;
		}
	}
	venv_list_release(&l);
	return status;
}

int venv_pin_unchanged(struct job *job, json_t **record)
{
	char *pinned = job->environment.venv_digest;
	int status;

	*record = NULL;
	if (!job->environment.venv)
		return HPT_EXIT_OK;
	job->environment.venv_digest = NULL;
	status = venv_pin(job, record);
	if (!pinned) {
		/* a run from before venvs were pinned: its identity has none */
		free(job->environment.venv_digest);
		job->environment.venv_digest = NULL;
	} else if (!status && strcmp(pinned, job->environment.venv_digest)) {
		say("the packages installed in environment.venv %s have changed since the run was "
		    "submitted (%s, now %s); submit the spec again for a new run",
		    job->environment.venv, pinned, job->environment.venv_digest);
		json_decref(*record);
		*record = NULL;
		status = HPT_EXIT_NO_INPUT;
	}
	free(pinned);
	return status;
}
