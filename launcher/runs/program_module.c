/* program_module.c - the Python module found, and copied into an
 * attempt; see program_module.h.  Shell. */
#include "launcher/runs/program_module.h" // defines: program_module_dir, program_module_publish
#include "common/fileio.h" // defines: fileio_self_exe, fileio_exists, fileio_read, fileio_write_atomic
#include "common/runfile.h" // defines: RUNFILE_PYTHON
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf
#include "launcher/runs/rundir_publish.h" // defines: rundir_publish_tmp, rundir_publish_discard

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where make install puts the package: PYTHONDIR, which the Makefile
 * sets for this file alone. */
#ifndef HPT_PYTHON_DIR
#define HPT_PYTHON_DIR "/usr/local/lib/python3/dist-packages"
#endif

#define PACKAGE "hpctrain"
#define MODULE_MAX (1u << 20) /* one file of the package; they are a few KiB */

static int holds_package(const char *dir)
{
	char path[PATH_MAX];

	return snprintf(path, sizeof(path), "%s/" PACKAGE "/__init__.py", dir) < (int)sizeof(path) &&
	       fileio_exists(path);
}

int program_module_dir(struct sbuf *out)
{
	char exe[PATH_MAX], *real;

	sbuf_reset(out);
	if (!fileio_self_exe(exe, sizeof(exe))) {
		sbuf_addf(out, "%s/../launcher/python", dirname(exe));
		real = holds_package(out->buf) ? realpath(out->buf, NULL) : NULL;
		sbuf_reset(out);
		if (real) {
			sbuf_addstr(out, real);
			free(real);
			return 0;
		}
	}
	if (!holds_package(HPT_PYTHON_DIR))
		return -1;
	sbuf_addstr(out, HPT_PYTHON_DIR);
	return 0;
}

/* Each *.py of src/hpctrain into dst (a fresh directory). */
static int copy_package(const char *src, const char *dst, struct sbuf *err)
{
	struct sbuf from = SBUF_INIT, to = SBUF_INIT, text = SBUF_INIT;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	sbuf_addf(&from, "%s/" PACKAGE, src);
	if (!(d = opendir(from.buf))) {
		sbuf_addf(err, "cannot read %s: %s", from.buf, strerror(errno));
		sbuf_release(&from);
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n < 4 || strcmp(e->d_name + n - 3, ".py") || e->d_name[0] == '.')
			continue;
		sbuf_reset(&from);
		sbuf_reset(&to);
		sbuf_reset(&text);
		sbuf_addf(&from, "%s/" PACKAGE "/%s", src, e->d_name);
		sbuf_addf(&to, "%s/%s", dst, e->d_name);
		rc = fileio_read(from.buf, MODULE_MAX, &text, err) ||
		     fileio_write_atomic(to.buf, text.buf, text.len, 0600, 1, err) ? -1 : 0;
	}
	closedir(d);
	sbuf_release(&from);
	sbuf_release(&to);
	sbuf_release(&text);
	return rc;
}

int program_module_publish(const char *dir, struct sbuf *err)
{
	struct sbuf src = SBUF_INIT, pkg = SBUF_INIT, final = SBUF_INIT;
	char *tmp = NULL;
	int rc = -1;

	sbuf_addf(&final, "%s/" RUNFILE_PYTHON, dir);
	if (fileio_exists(final.buf)) {
		rc = 0;
		goto out;
	}
	if (program_module_dir(&src)) {
		sbuf_addstr(err, "hpctrain's Python module is neither beside this binary nor "
			    "where make install puts it (" HPT_PYTHON_DIR ")");
		goto out;
	}
	if (!(tmp = rundir_publish_tmp(dir, RUNFILE_PYTHON, err)))
		goto out;
	sbuf_addf(&pkg, "%s/" PACKAGE, tmp);
	if (mkdir(pkg.buf, 0700))
		sbuf_addf(err, "cannot make %s: %s", pkg.buf, strerror(errno));
	else if (!copy_package(src.buf, pkg.buf, err) && !rename(tmp, final.buf))
		rc = 0;
	else if (!err->len)
		sbuf_addf(err, "cannot rename %s to %s: %s", tmp, final.buf, strerror(errno));
	if (rc)
		rundir_publish_discard(tmp);
out:
	free(tmp);
	sbuf_release(&src);
	sbuf_release(&pkg);
	sbuf_release(&final);
	return rc;
}

void program_module_remove(const char *dir)
{
	char *copy = xasprintf("%s/" RUNFILE_PYTHON, dir);

	rundir_publish_discard(copy);
	free(copy);
}

int program_module_path(const char *dir, struct sbuf *out)
{
	sbuf_reset(out);
	if (dir) {
		sbuf_addf(out, "%s/" RUNFILE_PYTHON, dir);
		if (holds_package(out->buf))
			return 0;
	}
	return program_module_dir(out);
}
