/* submit_report.c - submit an attempt and report it (submit, rerun).
 * Shell: see submit_report.h. */
#include "cli/submit_report.h" // defines: submit_report
#include "cli/json_print.h"    // defines: json_print
#include "launcher/runs/attempt.h"  // defines: attempt_submit
#include "launcher/runs/rundir.h"   // defines: struct rundir
#include "launcher/doctor/ledger.h"   // defines: ledger_load, ledger_cooling
#include "launcher/slurm/slurm.h"    // defines: hpt_slurm_hostlist, hpt_slurm_cluster_name
#include "common/diag.h"       // defines: struct diag_list, diag_report
#include "common/exitcode.h"   // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"       // defines: struct sbuf
#include "common/spec/specfile.h" // defines: specfile_load

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int submit_report(struct attempt *at, struct rundir *rd, int json, struct sbuf *err)
{
	struct sbuf warn = SBUF_INIT;
	json_t *rec = NULL;
	int status = attempt_submit(at, rd, &rec, err, &warn);

	fputs(warn.buf, stderr);
	/* A record means the job exists, even when recording it failed:
	 * the user needs its id either way. */
	if (rec && json) {
		int printed = json_print(json_incref(rec));

		status = status ? status : printed;
	} else if (rec) {
		printf("submitted job %lld: %s\n",
		       (long long)json_integer_value(json_object_get(rec, "job_id")), rd->dir);
	}
	json_decref(rec);
	sbuf_release(&warn);
	return status;
}

int submit_check_hostlist(const char *s, struct sbuf *err)
{
	struct sbuf out = SBUF_INIT;
	int rc = 0;

	if (!*s || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-[],") !=
		       strlen(s) || hpt_slurm_hostlist(s, NULL, 0, &out)) {
		sbuf_addf(err, "'%s' is not a Slurm hostlist such as node[1-3,7]", s);
		rc = -1;
	}
	sbuf_release(&out);
	return rc;
}

/* The nodes of this cluster in the ledger's cooldown, said on stderr. */
static size_t cooling_nodes(const char *cluster, json_t **doc, const char ***nodes)
{
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	time_t now = time(NULL);
	size_t n = 0;

	*nodes = NULL;
	if (ledger_path(&path, &err) || ledger_load(path.buf, doc, &err)) {
		fprintf(stderr, "hpctrain: warning: the node ledger was not read: %s\n", err.buf);
		goto out;
	}
	n = ledger_cooling(*doc, cluster, now, nodes);
	for (size_t i = 0; i < n; i++) {
		const json_t *e = ledger_entry(*doc, cluster, (*nodes)[i]);
		json_int_t until = json_integer_value(json_object_get(e, "until"));
		const char *why = json_string_value(json_object_get(e, "reason"));

		fprintf(stderr, "hpctrain: excluding %s: it failed doctor %lld time(s), last: %s; "
			"cooling down for %lld min more ('hpctrain doctor --forget %s' clears it)\n",
			(*nodes)[i], (long long)json_integer_value(json_object_get(e, "failures")),
			why ? why : "?", (long long)((until - now + 59) / 60), (*nodes)[i]);
	}
out:
	sbuf_release(&path);
	sbuf_release(&err);
	return n;
}

int submit_exclude(struct attempt *at, const char *user, int ledger, const char *hpctrain,
		   struct sbuf *err)
{
	struct sbuf cluster = SBUF_INIT, list = SBUF_INIT, why = SBUF_INIT;
	struct diag_list dl = DIAG_LIST_INIT;
	const char **nodes = NULL;
	json_t *doc = NULL;
	size_t n = 0;
	int status = 0;

	if (ledger && !hpt_slurm_cluster_name(&cluster, &why))
		n = cooling_nodes(cluster.buf, &doc, &nodes);
	else if (ledger)
		fprintf(stderr, "hpctrain: warning: the node ledger was not read: %s\n", why.buf);
	if (!user && !n)
		goto out;
	if (hpt_slurm_hostlist(user, nodes, n, &list)) {
		sbuf_addf(err, "cannot make a hostlist of '%s' and the ledger's nodes", user ? user : "");
		status = HPT_EXIT_USAGE;
		goto out;
	}
	free(at->exclude);
	at->exclude = list.len ? xstrdup(list.buf) : NULL;
	status = attempt_prepare(at, hpctrain, &dl);
	diag_report(stderr, &dl);
out:
	free(nodes);
	json_decref(doc);
	diag_list_release(&dl);
	sbuf_release(&cluster);
	sbuf_release(&list);
	sbuf_release(&why);
	return status;
}

/* Loads run/resolved.yaml and checks it still resolves to itself: an
 * edited file, or one from an hpctrain whose canonical form differs,
 * would start a job that is not this run. */
int submit_load_run(const struct rundir *rd, struct attempt *at, const char *exe)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, path = SBUF_INIT, old = SBUF_INIT;
	int status;

	sbuf_addf(&path, "%s/resolved.yaml", rd->run);
	status = specfile_load(path.buf, NULL, &at->job, &dl, &where);
	if (!status)
		status = attempt_prepare(at, exe, &dl);
	diag_drop_warnings(&dl);
	diag_report(stderr, &dl);
	if (!status) {
		FILE *fp = fopen(path.buf, "r");
		char buf[8192];
		size_t k;

		while (fp && (k = fread(buf, 1, sizeof(buf), fp)) > 0)
			sbuf_add(&old, buf, k);
		if (fp)
			fclose(fp);
		if (old.len != at->resolved.len || memcmp(old.buf, at->resolved.buf, old.len)) {
			fprintf(stderr,
				"hpctrain rerun: %s no longer resolves to itself (edited, or from "
				"another hpctrain version); submit the spec again instead\n",
				path.buf);
			status = HPT_EXIT_BAD_SPEC;
		}
	}
	diag_list_release(&dl);
	sbuf_release(&where);
	sbuf_release(&path);
	sbuf_release(&old);
	return status;
}
