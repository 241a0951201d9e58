/* doctor_preflight.c - a failed preflight's aftermath: RUN/preflight.json,
 * the count of failed preflights, the exclude list to resubmit with
 * (see doctor_preflight.h).
 * Shell: the run's files. */
#include "launcher/doctor/doctor_preflight.h" // defines: doctor_preflight_plan
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/fileio.h"                    // defines: fileio_read, fileio_write_atomic
#include "common/sbuf.h"                      // defines: struct sbuf
#include "common/spec/spec.h"                 // defines: struct job
#include "common/jsonb.h" // defines: jsonb_dumps
#include "launcher/doctor/doctor.h"           // defines: doctor_check_name, DOCTOR_NCHECKS
#include "launcher/doctor/exclude.h"          // defines: exclude_nodes_left
#include "launcher/runs/resize.h"             // defines: resize_next
#include "launcher/runs/rundir.h"             // defines: struct rundir, rundir_open
#include "launcher/slurm/render.h"            // defines: render_restarts_in_place
#include "launcher/slurm/slurm.h"             // defines: hpt_slurm_hostlist, hpt_slurm_init

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int doctor_preflight_write(const char *dir, const json_t *doc, struct sbuf *err)
{
	struct sbuf path = SBUF_INIT;
	char *text;
	int status = 0;

	sbuf_addf(&path, "%s/" RUNFILE_PREFLIGHT, dir);
	text = jsonb_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS, path.buf, err);
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

bool doctor_preflight_enough_left(const struct job *job, const char *exclude, struct sbuf *msg)
{
	struct sbuf err = SBUF_INIT;
	int64_t left = -1, next;
	bool ok;

	if (!hpt_slurm_init(&err))
		left = exclude_nodes_left(exclude);
	sbuf_reset(&err);
	ok = !resize_next(job->resources.nodes_min, job->resources.nodes, left, &next, &err);
	if (ok)
		sbuf_addf(msg, "\nthe next attempt can have %lld node%s at most", (long long)next,
			  next == 1 ? "" : "s");
	else
		sbuf_addf(msg, "\nnot resubmitting: %s", err.buf);
	sbuf_release(&err);
	return ok;
}

int doctor_preflight_after(const char *dir, const struct job *job, const json_t *doc,
			   const char *const *failed, size_t k, struct sbuf *again,
			   struct sbuf *exclude, struct sbuf *msg)
{
	struct sbuf err = SBUF_INIT;

	if (doctor_preflight_write(dir, doc, &err))
		sbuf_addf(msg, "warning: %s\n", err.buf);
	sbuf_release(&err);
	if (!k || render_restarts_in_place(job) ||
	    doctor_preflight_plan(dir, job->preflight.max_resubmits, failed, k, again, exclude, msg))
		return 1;
	return doctor_preflight_enough_left(job, exclude->buf, msg) ? 0 : 1;
}

/* "node2: nics: ..." for node record o: its first failed check */
static void first_failure(const json_t *o, struct sbuf *why)
{
	const json_t *checks = json_object_get(o, "checks");

	sbuf_addstr(why, why->len ? "; " : "");
	sbuf_add_printable(why, json_string_value(json_object_get(o, "node")) ?: "?");
	for (int c = 0; c < DOCTOR_NCHECKS; c++) {
		const json_t *cell = json_object_get(checks, doctor_check_name(c));
		const char *reason = json_string_value(json_object_get(cell, "reason"));

		if (!strcmp(json_string_value(json_object_get(cell, "grade")) ?: "", "FAIL")) {
			sbuf_addf(why, ": %s: ", doctor_check_name(c));
			sbuf_add_printable(why, reason ? reason : "failed");
			return;
		}
	}
}

size_t doctor_preflight_failed(const char *dir, char ***nodes, struct sbuf *why)
{
	struct sbuf path = SBUF_INIT, text = SBUF_INIT, err = SBUF_INIT;
	json_t *doc = NULL, *o;
	const char *exclude;
	size_t k = 0, i;

	*nodes = NULL;
	sbuf_addf(&path, "%s/" RUNFILE_PREFLIGHT, dir);
	if (!fileio_read(path.buf, 1 << 24, &text, &err))
		doc = json_loads(text.buf, 0, NULL);
	exclude = json_string_value(json_object_get(doc, "exclude"));
	if (!json_is_false(json_object_get(doc, "ok")) || !exclude || !*exclude) {
		k = 0;
	} else if (hpt_slurm_hostlist_names(exclude, nodes, &k)) {
		*nodes = NULL;
		k = 0;
	} else {
		json_array_foreach(json_object_get(doc, "nodes"), i, o) {
			const char *node = json_string_value(json_object_get(o, "node"));

			if (node && hpt_slurm_hostlist_has(exclude, node) == 1)
				first_failure(o, why);
		}
	}
	json_decref(doc);
	sbuf_release(&path);
	sbuf_release(&text);
	sbuf_release(&err);
	return k;
}
