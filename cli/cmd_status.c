/* cmd_status.c - `hpctrain status`: where a job (or all of yours) stands.
 * Shell: resolves a run or job id (launcher/rundir) and asks slurmctld
 * (launcher/slurm); --wait polls until the job ends. */
#include "cli/json_print.h" // defines: json_print
#include "cli/builtin.h"     // defines: cmd_status
#include "cli/exitcode.h"    // defines: enum hpt_exit
#include "cli/opt.h"         // defines: struct opt, opt_next
#include "cli/sbuf.h"        // defines: struct sbuf
#include "launcher/rundir.h" // defines: rundir_resolve
#include "launcher/slurm.h"  // defines: hpt_slurm_job, hpt_slurm_jobs_of

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Polling cost: one small RPC per job every this many ms; slurmctld
 * answers thousands a second, and jobs here live seconds to days. */
#define WAIT_POLL_MS 500

static const char *const status_usage[] = {
	"hpctrain status [--json] [--wait] [<run> | <jobid>]",
	NULL,
};

static const struct opt status_opts[] = {
	{ "json", no_argument, NULL, 'j', NULL, "print the result as JSON" },
	{ "wait", no_argument, NULL, 'w', NULL,
	  "wait until the job (or every job listed) has ended; exit 1 unless all COMPLETED" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd status_cmd = {
	.name = "status",
	.usage = status_usage,
	.summary = "Show the Slurm state of a run or job, or of all your jobs.",
	.opts = status_opts,
};

static json_t *json_time(time_t t)
{
	char buf[32];
	struct tm tm;

	if (!t)
		return json_null();
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

static json_t *job_json(const struct hpt_slurm_job *j)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:b, s:s, s:s, s:s, s:i, s:i}", "job_id",
			      (json_int_t)j->job_id, "name", j->name, "state", j->state,
			      "reason", j->reason, "finished", j->finished, "nodes", j->nodes,
			      "partition", j->partition, "run", j->work_dir, "restarts",
			      (int)j->restarts, "tasks", (int)j->tasks);

	json_object_set_new(o, "exit_code", j->finished ? json_integer(j->exit_code) : json_null());
	json_object_set_new(o, "signal", j->finished ? json_integer(j->exit_signal) : json_null());
	json_object_set_new(o, "submit_time", json_time(j->submit_time));
	json_object_set_new(o, "start_time", json_time(j->start_time));
	json_object_set_new(o, "end_time", json_time(j->end_time));
	return o;
}

static void print_table(const struct hpt_slurm_job *v, size_t n)
{
	printf("%-8s %-22s %-5s %-12s %-20s %s\n", "JOB", "STATE", "EXIT", "NODES", "NAME", "RUN");
	for (size_t i = 0; i < n; i++) {
		const struct hpt_slurm_job *j = &v[i];
		char state[96], ex[16] = "-";

		if (*j->reason && strcmp(j->reason, "None"))
			snprintf(state, sizeof(state), "%s(%s)", j->state, j->reason);
		else
			snprintf(state, sizeof(state), "%s", j->state);
		if (j->finished && j->exit_signal)
			snprintf(ex, sizeof(ex), "sig%d", j->exit_signal);
		else if (j->finished)
			snprintf(ex, sizeof(ex), "%d", j->exit_code);
		printf("%-8u %-22s %-5s %-12s %-20s %s\n", j->job_id, state, ex,
		       *j->nodes ? j->nodes : "-", j->name, *j->work_dir ? j->work_dir : "-");
	}
}

static void release_all(struct hpt_slurm_job *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		hpt_slurm_job_release(&v[i]);
	free(v);
}

static int all_finished(const struct hpt_slurm_job *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].finished)
			return 0;
	return 1;
}

int cmd_status(int argc, char **argv)
{
	struct sbuf err = SBUF_INIT;
	struct rundir rd = RUNDIR_INIT;
	struct hpt_slurm_job *v = NULL;
	unsigned long id = 0;
	size_t n = 0;
	int c, json = 0, wait = 0, status;

	opt_reset();
	while ((c = opt_next(&status_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'w':
			wait = 1;
			break;
		case 'h':
			opt_usage(stdout, &status_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		return opt_error(&status_cmd, "one run or job id at a time");
	if (optind < argc && rundir_resolve(argv[optind], &rd, &id, &err)) {
		fprintf(stderr, "hpctrain status: %s\n", err.buf);
		sbuf_release(&err);
		return HPT_EXIT_NO_INPUT;
	}
	status = hpt_slurm_init(&err);
	if (status)
		goto out;
	for (;;) {
		sbuf_reset(&err);
		/* a job id alone goes through hpt_slurm_job for its exact error */
		if (id) {
			v = xcalloc(1, sizeof(*v));
			status = hpt_slurm_job((uint32_t)id, v, &err);
			n = !status;
		} else {
			status = hpt_slurm_jobs_of((uint32_t)getuid(), &v, &n, &err);
		}
		if (status || !wait || all_finished(v, n))
			break;
		release_all(v, n);
		v = NULL;
		usleep(WAIT_POLL_MS * 1000);
	}
	if (status == HPT_EXIT_NO_INPUT && rd.dir)
		sbuf_addf(&err, " (run %s; without accounting, Slurm forgets finished jobs after "
			  "MinJobAge)", rd.dir);
	if (!status) {
		if (json) {
			json_t *jobs = json_array(), *doc;

			for (size_t i = 0; i < n; i++)
				json_array_append_new(jobs, job_json(&v[i]));
			doc = json_pack("{s:o}", "jobs", jobs);
			status = json_print(doc);
		} else {
			print_table(v, n);
		}
		if (wait)
			for (size_t i = 0; i < n; i++)
				if (!v[i].completed)
					status = HPT_EXIT_FAILURE;
	}
	hpt_slurm_fini();
out:
	if (status && status != HPT_EXIT_FAILURE)
		fprintf(stderr, "hpctrain status: %s\n", err.buf);
	release_all(v, n ? n : 0);
	rundir_release(&rd);
	sbuf_release(&err);
	return status;
}
