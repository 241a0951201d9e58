/* doctor_preflight.c - a failed preflight's aftermath: RUN/preflight.json,
 * the count of failed preflights, the exclude list, `hpctrain rerun`
 * (see doctor_preflight.h).
 * Shell: the run's files, fork and exec. */
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_plan, doctor_preflight_resubmit
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/exitcode.h"                  // defines: HPT_EXIT_NOTFOUND
#include "common/fileio.h"                    // defines: fileio_read, fileio_write_atomic, fileio_self_exe
#include "common/sbuf.h"                      // defines: struct sbuf
#include "launcher/runs/rundir.h"             // defines: struct rundir, rundir_open
#include "launcher/slurm/slurm.h"             // defines: hpt_slurm_hostlist

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int doctor_preflight_write(const char *dir, const json_t *doc, struct sbuf *err)
{
	struct sbuf path = SBUF_INIT;
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	int status = 0;

	sbuf_addf(&path, "%s/" RUNFILE_PREFLIGHT, dir);
	if (!text || fileio_write_atomic(path.buf, text, strlen(text), 0600, 0, err))
		status = -1;
	free(text);
	sbuf_release(&path);
	return status;
}

int doctor_preflight_failures(const char *run)
{
	struct sbuf path = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	int count = 0;

	for (int a = 1; a < 10000; a++) {
		json_t *doc;

		sbuf_reset(&path);
		if (a == 1)
			sbuf_addf(&path, "%s", run);
		else
			sbuf_addf(&path, "%s/" RUNFILE_ATTEMPTS "/%d", run, a);
		if (access(path.buf, F_OK))
			break;
		for (int f = 0; f < 2; f++) {
			size_t len = path.len;

			sbuf_addstr(&path, f ? "/" RUNFILE_LOST : "/" RUNFILE_PREFLIGHT);
			sbuf_reset(&text);
			sbuf_reset(&err);
			doc = fileio_read(path.buf, 1 << 24, &text, &err) ? NULL
								       : json_loads(text.buf, 0, NULL);
			if (json_is_false(json_object_get(doc, "ok")))
				count++;
			json_decref(doc);
			path.len = len; /* back to the attempt's directory */
			path.buf[len] = '\0';
		}
	}
	sbuf_release(&path);
	sbuf_release(&text);
	sbuf_release(&err);
	return count;
}

void doctor_preflight_exclude(const char *dir, struct sbuf *out)
{
	struct sbuf path = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	json_t *doc;

	sbuf_addf(&path, "%s/" RUNFILE_SUBMIT, dir);
	if (!fileio_read(path.buf, 1 << 20, &text, &err) && (doc = json_loads(text.buf, 0, NULL))) {
		const char *e = json_string_value(json_object_get(doc, "exclude"));

		sbuf_addstr(out, e ? e : "");
		json_decref(doc);
	}
	sbuf_release(&path);
	sbuf_release(&text);
	sbuf_release(&err);
}

int doctor_preflight_plan(const char *dir, int64_t max_resubmits, const char *const *failed,
			  size_t k, struct sbuf *run, struct sbuf *exclude, struct sbuf *msg)
{
	struct sbuf err = SBUF_INIT, prev = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	int done, status = -1;

	if (rundir_open(dir, &rd, &err)) {
		sbuf_addf(msg, "cannot resubmit: %s", err.buf);
		goto out;
	}
	done = doctor_preflight_failures(rd.run);
	if (done > max_resubmits) {
		sbuf_addf(msg, "preflight failed %d times; not resubmitting "
			  "(preflight.max_resubmits is %lld)", done, (long long)max_resubmits);
		goto out;
	}
	doctor_preflight_exclude(dir, &prev);
	if (hpt_slurm_hostlist(prev.buf, failed, k, exclude)) {
		sbuf_addf(msg, "cannot merge the exclude list '%s'", prev.buf);
		goto out;
	}
	sbuf_addstr(run, rd.run);
	sbuf_addf(msg, "resubmitting %s without %s (resubmission %d of at most %lld)",
		  rd.run, exclude->buf, done, (long long)max_resubmits);
	status = 0;
out:
	rundir_release(&rd);
	sbuf_release(&err);
	sbuf_release(&prev);
	return status;
}

/* Unsets every SLURM_* variable but SLURM_CONF (which cluster). */
static void unset_slurm_env(void)
{
	for (size_t i = 0; environ[i];) {
		const char *eq = strchr(environ[i], '=');
		char name[256];
		size_t len = eq ? (size_t)(eq - environ[i]) : 0;

		/* an entry without '=' names no variable unsetenv could remove */
		if (!eq || strncmp(environ[i], "SLURM_", 6) || len >= sizeof(name) ||
		    !strncmp(environ[i], "SLURM_CONF=", 11)) {
			i++;
			continue;
		}
		memcpy(name, environ[i], len);
		name[len] = '\0';
		unsetenv(name); /* environ shifts down: look at i again */
	}
}

int doctor_preflight_resubmit(const char *run, const char *exclude)
{
	char exe[PATH_MAX], path[PATH_MAX + 16];
	pid_t pid;
	int st;

	if (fileio_self_exe(exe, sizeof(exe)))
		return -1;
	snprintf(path, sizeof(path), "%s/hpctrain", dirname(exe));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* the new job must not inherit this job's Slurm identity or
		 * shape: a SLURM_NTASKS of two nodes would make the steps of
		 * a job granted one ask for two tasks there */
		unset_slurm_env();
		execl(path, "hpctrain", "rerun", "--resume", "--exclude", exclude, run, (char *)NULL);
		/* the child has no caller to hand text to: it says why itself */
		fprintf(stderr, "hpctrain doctor: cannot run %s: %s\n", path, strerror(errno));
		_exit(HPT_EXIT_NOTFOUND);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
