/* cmd_status.c - `hpctrain status`: where a job (or all of yours) stands.
 * Shell: resolves what the user named (launcher/runs/runref) and asks
 * slurmctld (launcher/slurm); a run or a sweep goes to status_watch
 * (progress, one row per point); --wait polls until the jobs end;
 * --ranks reads the supervised ranks' liveness files instead.  A run's
 * staging records and the trainer's data read follow its table
 * (launcher/runs/stage_summary, data_read). */
#include "common/json_print.h" // defines: json_print
#include "common/say.h" // defines: say
#include "cli/builtin.h"     // defines: cmd_status
#include "common/exitcode.h"    // defines: enum hpt_exit
#include "common/opt.h"         // defines: struct opt, opt_next
#include "common/sbuf.h"        // defines: struct sbuf, sbuf_add_number, sbuf_add_printable
#include "launcher/supervise/liveness.h" // defines: liveness_load_dir, liveness_activity
#include "launcher/job/status_json.h"  // defines: status_json_*, status_task_run, status_plan_check
#include "launcher/job/status_watch.h" // defines: status_watch
#include "launcher/job/ticker.h"       // defines: struct ticker, ticker_*, TICKER_POLL_MS
#include "launcher/runs/attempt_end.h" // defines: attempt_end_job
#include "launcher/runs/attempt_size.h" // defines: attempt_size_load
#include "launcher/runs/attempt_restart.h" // defines: attempt_restart_load, attempt_restart_describe
#include "launcher/runs/progress.h" // defines: progress_load
#include "launcher/job/run_straggler.h" // defines: run_stragglers_status, run_stragglers_load
#include "launcher/runs/rundir.h" // defines: rundir_job_id
#include "launcher/runs/runref.h" // defines: runref_resolve
#include "launcher/runs/stage_summary.h" // defines: stage_summary_load, stage_summary_format
#include "launcher/slurm/slurm.h"  // defines: hpt_slurm_job, hpt_slurm_jobs_of
#include "launcher/shape/shape_check.h" // defines: struct shape_check, shape_check_format
#include "common/strfmt.h" // defines: strfmt_label
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const status_usage[] = {
	"hpctrain status [--json] [--wait] [<run> | <sweep> | <jobid> | <name>]",
	"hpctrain status --ranks [--json] <run>",
	NULL,
};

static const struct opt status_opts[] = {
	{ "json", no_argument, NULL, 'j', NULL, "print the result as JSON" },
	{ "wait", no_argument, NULL, 'w', NULL,
	  "wait until the job (or every job listed) has ended, showing progress; exit 1 "
	  "unless all COMPLETED" },
	{ "ranks", no_argument, NULL, 'r', NULL,
	  "show each supervised rank of a run: state, progress, idle time, exit status" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd status_cmd = {
	.name = "status",
	.usage = status_usage,
	.summary = "Show the Slurm state of a run, a sweep (one line per point) or a job, or of "
		   "all your jobs.",
	.opts = status_opts,
};

/* Text from Slurm or a file, for a table: control characters escaped
 * (sbuf_add_printable), so a job name cannot redraw the terminal. */
static const char *printable(struct sbuf *sb, const char *s)
{
	sbuf_reset(sb);
	sbuf_add_printable(sb, s ? s : "");
	return sb->buf;
}

static void print_table(const struct hpt_slurm_job *v, size_t n)
{
	struct sbuf state = SBUF_INIT, nodes = SBUF_INIT, name = SBUF_INIT, dir = SBUF_INIT,
		    idb = SBUF_INIT;

	printf("%-11s %-22s %-5s %-12s %-20s %s\n", "JOB", "STATE", "EXIT", "NODES", "NAME", "RUN");
	for (size_t i = 0; i < n; i++) {
		const struct hpt_slurm_job *j = &v[i];
		char ex[16] = "-", id[48], *run;

		printable(&state, j->state);
		if (*j->reason && strcmp(j->reason, "None")) {
			sbuf_addch(&state, '(');
			sbuf_add_printable(&state, j->reason);
			sbuf_addch(&state, ')');
		}
		if (j->finished && j->exit_signal)
			strfmt_label(ex, sizeof(ex), "sig%d", j->exit_signal);
		else if (j->finished)
			strfmt_label(ex, sizeof(ex), "%d", j->exit_code);
		if (j->array_job_id && j->array_task < 0) /* the array's pending tasks */
			strfmt_label(id, sizeof(id), "%u_[%s]", j->array_job_id, j->array_pending);
		else
			runref_job_text(j->array_job_id ? j->array_job_id : j->job_id, j->array_task,
					id, sizeof(id));
		run = status_task_run(j);
		printf("%-11s %-22s %-5s %-12s %-20s %s\n", printable(&idb, id), state.buf, ex,
		       *j->nodes ? printable(&nodes, j->nodes) : "-", printable(&name, j->name),
		       run ? printable(&dir, run) : *j->work_dir ? printable(&dir, j->work_dir) : "-");
		free(run);
	}
	sbuf_release(&state);
	sbuf_release(&nodes);
	sbuf_release(&name);
	sbuf_release(&dir);
	sbuf_release(&idb);
}

/* One rank's row of status --ranks.  The file is the rank's: a missing
 * or odd figure prints as "-", a huge one in %g form. */
static void print_rank_row(json_t *r, double now)
{
	struct sbuf cpu = SBUF_INIT, node = SBUF_INIT, activity = SBUF_INIT;
	json_t *cpu_s = json_object_get(r, "cpu_s");
	char act[64];

	liveness_activity(r, now, act, sizeof(act));
	sbuf_add_number(&cpu, json_is_number(cpu_s) ? json_number_value(cpu_s) : NAN, 1);
	printf("%-5d %-16s %-8d %-24s %9s %12lld\n", (int)json_integer_value(json_object_get(r, "rank")),
	       printable(&node, json_string_value(json_object_get(r, "node"))),
	       (int)json_integer_value(json_object_get(r, "pid")), printable(&activity, act), cpu.buf,
	       (long long)json_integer_value(json_object_get(r, "output_bytes")));
	sbuf_release(&cpu);
	sbuf_release(&node);
	sbuf_release(&activity);
}

/* The table (or JSON) of RUN/ranks/rank-N.json; the contract's warnings
 * follow the table, one line each. */
static int show_ranks(const struct rundir *rd, int json)
{
	char *dir = xasprintf("%s/ranks", rd->dir);
	struct timespec ts;
	size_t n;
	json_t **v = liveness_load_dir(dir, &n);
	int status = HPT_EXIT_OK;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (json) {
		json_t *a = json_array(), *doc;

		for (size_t i = 0; i < n; i++)
			json_array_append(a, v[i]);
		doc = json_pack("{s:o, s:o}", "run", jsonb_text(rd->dir), "ranks", a);
		status = json_print(doc);
	} else if (n) {
		printf("%-5s %-16s %-8s %-24s %9s %12s\n", "RANK", "NODE", "PID", "ACTIVITY", "CPU_S",
		       "OUTPUT");
		for (size_t i = 0; i < n; i++)
			print_rank_row(v[i], (double)ts.tv_sec);
		for (size_t i = 0; i < n; i++) {
			json_t *w = json_object_get(json_object_get(v[i], "contract"), "warnings");

			for (size_t k = 0; k < json_array_size(w); k++) {
				struct sbuf text = SBUF_INIT;

				printf("warning: rank %d: %s\n",
				       (int)json_integer_value(json_object_get(v[i], "rank")),
				       printable(&text, json_string_value(json_array_get(w, k))));
				sbuf_release(&text);
			}
		}
	} else {
		say("no supervised ranks in %s (the job has not started, "
			"or runs without launch --supervise)", dir);
		status = HPT_EXIT_NO_INPUT;
	}
	for (size_t i = 0; i < n; i++)
		json_decref(v[i]);
	free(v);
	free(dir);
	return status;
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

/* status RUN --ranks. */
static int status_ranks(const char *run, int json)
{
	struct sbuf err = SBUF_INIT;
	struct runref ref = RUNREF_INIT;
	int status = runref_resolve(run, &ref, &err);

	if (ref.note)
		say("%s", ref.note);
	if (!status && ref.kind == RUNREF_SWEEP) {
		sbuf_addf(&err, "--ranks shows one run, not the sweep %s (name a point: NAME/HASH)",
			  ref.sweep);
		status = HPT_EXIT_USAGE;
	} else if (!status && ref.kind == RUNREF_JOB && !(status = hpt_slurm_init(&err))) {
		status = runref_job_run(&ref, &err);
	}
	if (status)
		say("%s", err.buf);
	else
		status = show_ranks(&ref.rd, json);
	runref_release(&ref);
	sbuf_release(&err);
	return status;
}

/* The --wait line of one run: its job's state and the run's progress. */
static void show_progress(struct ticker *t, const char *run, const struct hpt_slurm_job *v,
			  size_t n)
{
	struct run_progress p;
	struct sbuf line = SBUF_INIT;
	const char *state = n ? v[0].state : "?";

	progress_load(run, &p);
	progress_format(state, &p, &line);
	ticker_show(t, line.buf, state);
	sbuf_release(&line);
}

/* The job id (or, with id 0, all of this user's jobs), polled until
 * every one has finished when wait is set.  *v and *n as
 * hpt_slurm_jobs_of() gives them. */
static int query_jobs(unsigned long id, int64_t task, int wait, struct ticker *t,
		      const char *run, struct hpt_slurm_job **v, size_t *n, struct sbuf *err)
{
	int status;

	for (;;) {
		sbuf_reset(err);
		/* an array task, or every record of a job (an array's tasks) */
		if (id && task >= 0) {
			*v = xcalloc(1, sizeof(**v));
			status = hpt_slurm_array_task((uint32_t)id, task, *v, err);
			*n = !status;
		} else if (id) {
			status = hpt_slurm_job_all((uint32_t)id, v, n, err);
		} else {
			status = hpt_slurm_jobs_of((uint32_t)getuid(), v, n, err);
		}
		if (!status && wait && run && t->live >= 0)
			show_progress(t, run, *v, *n);
		if (status || !wait || all_finished(*v, *n))
			return status;
		release_all(*v, *n);
		*v = NULL;
		*n = 0;
		usleep(TICKER_POLL_MS * 1000);
	}
}

/* Below a run's table: the size Slurm granted this attempt (nodes.json,
 * recorded by rank 0's launch), its staging step summed over the nodes' records
 * (RUN/stage/), and how fast the trainer read its data set; nothing for
 * what the run has not done. */
static void print_run_lines(const char *run)
{
	struct stage_summary s;
	struct run_progress p;
	struct sbuf line = SBUF_INIT;
	int64_t nodes, world;

	if (!attempt_size_load(run, &nodes, &world))
		printf("size: %lld node%s granted, world size %lld\n", (long long)nodes,
		       nodes == 1 ? "" : "s", (long long)world);
	if (!attempt_restart_describe(run, &line))
		printf("%s\n", line.buf);
	sbuf_reset(&line);
	stage_summary_load(run, &s);
	if (s.n || s.skipped) {
		sbuf_addstr(&line, "stage: ");
		if (s.n)
			stage_summary_format(&s, &line);
		else
			sbuf_addf(&line, "no readable record (%zu skipped)", s.skipped);
		printf("%s\n", line.buf);
	}
	progress_load(run, &p);
	sbuf_reset(&line);
	data_read_format(&p.data, &line);
	if (line.len)
		printf("%s\n", line.buf);
	sbuf_reset(&line);
	run_stragglers_status(run, &line);
	fputs(line.buf, stdout);
	stage_summary_release(&s);
	sbuf_release(&line);
}

static void print_plan_line(const char *run, const struct hpt_slurm_job *j)
{
	struct shape_check c;
	struct sbuf line = SBUF_INIT;

	if (status_plan_check(run, j, &c))
		return;
	shape_check_format(&c, time(NULL), &line);
	printf("%s\n", line.buf);
	sbuf_release(&line);
}

static int print_jobs(const struct hpt_slurm_job *v, size_t n, int json, const char *run)
{
	struct shape_check c;
	json_t *jobs, *doc;

	if (!json) {
		print_table(v, n);
		if (run)
			print_plan_line(run, n ? &v[n - 1] : NULL);
		if (run)
			print_run_lines(run);
		return HPT_EXIT_OK;
	}
	jobs = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = status_json_job(&v[i]);

		if (run)
			jsonb_set(&o, "progress", status_json_progress(run));
		jsonb_append(&jobs, o);
	}
	if (!run)
		return json_print(json_pack("{s:o}", "jobs", jobs));
	doc = json_pack("{s:o, s:o, s:o}", "jobs", jobs, "stage", status_json_stage(run), "size",
			status_json_size(run));
	jsonb_set(&doc, "in_allocation", attempt_restart_load(run) ?: json_null());
	jsonb_set(&doc, "plan", status_plan_check(run, n ? &v[n - 1] : NULL, &c)
				? json_null() : shape_check_json(&c));
	jsonb_set(&doc, "stragglers", run_stragglers_load(run));
	return json_print(doc);
}

/* status [RUN|JOBID] [--wait]: a job's records (a run's: with its
 * progress), or all of this user's jobs. */
static int status_jobs(unsigned long id, int64_t task, const char *run, int json, int wait,
		       struct sbuf *err)
{
	struct hpt_slurm_job *v = NULL;
	struct ticker t;
	size_t n = 0;
	int status;

	ticker_init(&t, json ? -1 : isatty(STDOUT_FILENO));
	status = query_jobs(id, task, wait, &t, run, &v, &n, err);
	ticker_end(&t);
	/* forgotten (MinJobAge, no accounting): the run's own record */
	if (status == HPT_EXIT_NO_INPUT && run && id && task < 0) {
		release_all(v, n);
		v = xcalloc(1, sizeof(*v));
		n = !attempt_end_job(run, id, v);
		status = n ? HPT_EXIT_OK : HPT_EXIT_NO_INPUT;
	}
	if (!status)
		status = print_jobs(v, n, json, run);
	/* --wait: the status says whether every job completed. */
	for (size_t i = 0; !status && wait && i < n; i++)
		if (!v[i].completed)
			status = HPT_EXIT_FAILURE;
	release_all(v, n);
	return status;
}

static int status_of(const char *arg, int json, int wait)
{
	struct sbuf err = SBUF_INIT;
	struct runref ref = RUNREF_INIT;
	int status = arg ? runref_resolve(arg, &ref, &err) : 0;

	if (ref.note)
		say("%s", ref.note);
	if (!status && arg && ref.kind == RUNREF_RUN && !ref.job_id) {
		unsigned long id;

		/* why: no submit.json, or one that cannot be read (a FIFO) */
		rundir_job_id(&ref.rd, &id, NULL, &err);
		status = HPT_EXIT_NO_INPUT;
	}
	if (status) {
		say("%s", err.buf);
		goto out;
	}
	status = hpt_slurm_init(&err);
	if (!status && arg && ref.kind == RUNREF_SWEEP)
		status = status_watch(&ref, json, wait);
	else if (!status)
		status = status_jobs(arg ? ref.job_id : 0, ref.task,
				     arg && ref.kind == RUNREF_RUN ? ref.rd.dir : NULL, json, wait,
				     &err);
	if (status == HPT_EXIT_NO_INPUT && arg && ref.kind == RUNREF_RUN && ref.task < 0)
		sbuf_addf(&err, " (run %s; without accounting, Slurm forgets finished jobs after "
			  "MinJobAge)", ref.rd.dir);
	if (status && status != HPT_EXIT_FAILURE && err.len)
		say("%s", err.buf);
out:
	runref_release(&ref);
	sbuf_release(&err);
	return status;
}

int cmd_status(int argc, char **argv)
{
	int c, json = 0, wait = 0, ranks = 0;
	const char *run;

	opt_reset();
	while ((c = opt_next(&status_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'w':
			wait = 1;
			break;
		case 'r':
			ranks = 1;
			break;
		case 'h':
			opt_usage(stdout, &status_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		return opt_error(&status_cmd, "one run, sweep or job id at a time");
	if (opt_check_operands(&status_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	run = optind < argc ? argv[optind] : NULL;
	if (!ranks)
		return status_of(run, json, wait);
	if (wait || !run)
		return opt_error(&status_cmd, wait ? "--ranks and --wait exclude each other"
						   : "--ranks needs a run");
	return status_ranks(run, json);
}
