/* cmd_logs.c - `hpctrain logs`: a run's per-rank output, one rank or all;
 * a sweep's, point by point.
 * Shell: reads RUN/logs/ (launcher/runs/runref finds the run and its attempt);
 * --follow asks Slurm (launcher/slurm) when the job has ended. */
#include "cli/builtin.h"     // defines: cmd_logs
#include "common/say.h" // defines: say
#include "common/exitcode.h"    // defines: enum hpt_exit
#include "common/fileio.h"      // defines: fileio_read, fileio_open_regular, fileio_exists
#include "common/opt.h"         // defines: struct opt, opt_next
#include "common/sbuf.h"        // defines: struct sbuf, SBUF_CLIP, sbuf_add_printable
#include "launcher/runs/rundir.h" // defines: rundir_job_id
#include "launcher/runs/runref.h" // defines: runref_resolve, runref_sweep_points
#include "launcher/runs/attempt_end.h" // defines: attempt_end_job
#include "launcher/slurm/slurm.h"  // defines: hpt_slurm_job

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FOLLOW_POLL_MS 300

static const char *const logs_usage[] = {
	"hpctrain logs [--rank <n>] [--follow] (<run> | <jobid> | <name>)",
	"hpctrain logs [--rank <n>] <sweep>",
	NULL,
};

static const struct opt logs_opts[] = {
	{ "rank", required_argument, NULL, 'r', "N", "show only rank N, without labels" },
	{ "follow", no_argument, NULL, 'f', NULL,
	  "keep printing new output until the job has ended" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd logs_cmd = {
	.name = "logs",
	.usage = logs_usage,
	.summary = "Print a run's per-rank logs: one rank, or all with rank labels; a sweep's, "
		   "point by point.",
	.opts = logs_opts,
};

/* One log file being read: where we are, and the unfinished last line. */
struct source {
	char *path;
	long rank;      /* -1: logs/ranks.out, already labelled by srun --label */
	long off;
	struct sbuf partial;
	int refused;    /* said once that it is not a regular file */
};

/* By rank, then path (rank-1.out and rank-01.out are both rank 1). */
static int by_rank(const void *a, const void *b)
{
	const struct source *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Finds logs/rank-N.out (N = want, or all when want < 0), else
 * logs/ranks.out.  Returns how many. */
static size_t find_sources(const char *dir, long want, struct source **out)
{
	char *logs = xasprintf("%s/logs", dir);
	DIR *d = opendir(logs);
	struct dirent *e;
	size_t n = 0;

	*out = NULL;
	while (d && (e = readdir(d))) {
		char *end;
		long r;

		if (strncmp(e->d_name, "rank-", 5))
			continue;
		r = strtol(e->d_name + 5, &end, 10);
		if (end == e->d_name + 5 || strcmp(end, ".out") || r < 0 || (want >= 0 && r != want))
			continue;
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		(*out)[n] = (struct source){ xasprintf("%s/%s", logs, e->d_name), r, 0, SBUF_INIT, 0 };
		n++;
	}
	if (d)
		closedir(d);
	if (!n) {
		char *merged = xasprintf("%s/ranks.out", logs);

		if (!access(merged, R_OK)) {
			*out = xcalloc(1, sizeof(**out));
			(*out)[0] = (struct source){ merged, -1, 0, SBUF_INIT, 0 };
			n = 1;
		} else {
			free(merged);
		}
	}
	free(logs);
	if (n > 1)
		qsort(*out, n, sizeof(**out), by_rank);
	return n;
}

static void release_sources(struct source *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].path);
		sbuf_release(&s[i].partial);
	}
	free(s);
}

/* srun --label lines read "  N: text"; keep those of rank want (< 0: all),
 * without the label when one rank is asked for. */
static void put_line(const struct source *s, const char *line, size_t len, long want,
		     int label)
{
	if (s->rank < 0) {
		const char *p = line + strspn(line, " ");
		char *end;
		long r = strtol(p, &end, 10);

		if (want >= 0) {
			if (end == p || *end != ':' || r != want)
				return;
			end += end[1] == ' ' ? 2 : 1;
			fwrite(end, 1, len - (size_t)(end - line), stdout);
			return;
		}
		fwrite(line, 1, len, stdout);
		return;
	}
	if (label)
		printf("%ld: ", s->rank);
	fwrite(line, 1, len, stdout);
}

/* s's file opened for reading: a regular file only (a FIFO named like a
 * rank's log would block logs forever), said once when it is not.  NULL
 * when it cannot be opened. */
static FILE *open_source(struct source *s)
{
	struct sbuf err = SBUF_INIT;
	int fd = fileio_open_regular(s->path, 0, &err);
	FILE *fp = fd < 0 ? NULL : fdopen(fd, "r");

	if (fd < 0 && fileio_exists(s->path) && !s->refused++)
		say("%s", err.buf);
	if (fd >= 0 && !fp)
		close(fd);
	sbuf_release(&err);
	return fp;
}

/* Prints the complete lines added to s since the last call; with flush,
 * also an unfinished last line.  Returns 1 if anything was read. */
static int drain(struct source *s, long want, int label, int flush)
{
	FILE *fp = open_source(s);
	char buf[65536];
	size_t k, start = 0;
	int any = 0;

	if (fp && !fseek(fp, s->off, SEEK_SET)) {
		while ((k = fread(buf, 1, sizeof(buf), fp)) > 0) {
			sbuf_add(&s->partial, buf, k);
			s->off += (long)k;
			any = 1;
		}
	}
	if (fp)
		fclose(fp);
	for (size_t i = 0; i < s->partial.len; i++) {
		if (s->partial.buf[i] != '\n')
			continue;
		put_line(s, s->partial.buf + start, i + 1 - start, want, label);
		start = i + 1;
	}
	if (flush && start < s->partial.len) {
		put_line(s, s->partial.buf + start, s->partial.len - start, want, label);
		putchar('\n');
		start = s->partial.len;
	}
	if (start) {
		memmove(s->partial.buf, s->partial.buf + start, s->partial.len - start);
		s->partial.len -= start;
		s->partial.buf[s->partial.len] = '\0';
	}
	return any;
}

/* Gives each file of fresh the offset and unfinished line it had in old;
 * both are in by_rank's order, so one merge does: O(files).  A search of
 * old for each file was O(files^2) per poll, and a run of 4,096 ranks
 * has 4,096 files. */
static void carry(struct source *fresh, size_t m, const struct source *old, size_t n)
{
	for (size_t i = 0, k = 0; i < m && k < n;) {
		int c = by_rank(&fresh[i], &old[k]);

		if (c < 0) {
			i++;
		} else if (c > 0) {
			k++;
		} else {
			fresh[i].off = old[k].off;
			fresh[i].refused = old[k].refused;
			sbuf_add(&fresh[i].partial, old[k].partial.buf, old[k].partial.len);
			i++;
			k++;
		}
	}
}

static int follow(const struct runref *ref, long want)
{
	const struct rundir *rd = &ref->rd;
	struct sbuf err = SBUF_INIT;
	struct source *s = NULL;
	size_t n = 0;
	int status = HPT_EXIT_OK, ended = 0;

	if (!ref->job_id) {
		unsigned long id;

		/* why: no submit.json, or one that cannot be read (a FIFO) */
		rundir_job_id(rd, &id, NULL, &err);
		say("%s", err.buf);
		sbuf_release(&err);
		return HPT_EXIT_NO_INPUT;
	}
	while (!status) {
		struct hpt_slurm_job j;
		struct source *fresh;
		size_t m;

		/* ranks' files appear as the step starts: rescan, keep offsets */
		m = find_sources(rd->dir, want, &fresh);
		carry(fresh, m, s, n);
		release_sources(s, n);
		s = fresh;
		n = m;
		for (size_t i = 0; i < n; i++)
			drain(&s[i], want, want < 0, ended);
		fflush(stdout);
		if (ended)
			break;
		status = ref->task >= 0
				 ? hpt_slurm_array_task((uint32_t)ref->job_id, ref->task, &j, &err)
				 : hpt_slurm_job((uint32_t)ref->job_id, &j, &err);
		/* a controller that forgot the job (MinJobAge, no
		 * accounting): the run's own record is all there will be */
		if (status && !attempt_end_job(rd->dir, ref->job_id, &j)) {
			say("job %lu: Slurm has no record of it; %s, exit %d (from the run's record)",
			    ref->job_id, j.state, j.exit_code);
			status = 0;
			j.finished = true;
		}
		if (!status) {
			ended = j.finished;
			hpt_slurm_job_release(&j);
		}
		if (!ended)
			usleep(FOLLOW_POLL_MS * 1000);
	}
	if (status)
		say("%s", err.buf);
	release_sources(s, n);
	sbuf_release(&err);
	return status;
}

/* A stalled job's merged stacks (launch --supervise wrote them) end the
 * logs of all ranks: they say where each rank stood when it stopped. */
static void print_autopsy(const struct rundir *rd)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT, shown = SBUF_INIT;
	char *path = xasprintf("%s/autopsy.txt", rd->dir);

	if (!fileio_read(path, 16 << 20, &text, &err) && text.len) {
		sbuf_add_printable(&shown, path);
		printf("\n== autopsy (%s) ==\n", shown.buf);
		fwrite(text.buf, 1, text.len, stdout);
	}
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	sbuf_release(&shown);
}

/* Every log of one run, as it stands. */
static int show_run(const struct rundir *rd, long want)
{
	struct source *s = NULL;
	size_t n = find_sources(rd->dir, want, &s);
	int status = HPT_EXIT_OK;

	if (!n && want >= 0) {
		say("no log of rank %ld in %s/logs", want, rd->dir);
		status = HPT_EXIT_NO_INPUT;
	} else if (!n) {
		say("no rank logs yet in %s/logs", rd->dir);
	}
	for (size_t i = 0; i < n; i++)
		drain(&s[i], want, want < 0, 1);
	if (want < 0)
		print_autopsy(rd);
	release_sources(s, n);
	return status;
}

/* Each point's run under a header naming the point and its values. */
static int show_sweep(const char *record, long want)
{
	struct sbuf err = SBUF_INIT;
	struct runref *v = NULL;
	json_t *doc = NULL, *points;
	size_t n = 0;
	int status = runref_sweep_points(record, &doc, &v, &n, &err);

	if (status)
		say("%s", err.buf);
	points = json_object_get(doc, "points");
	for (size_t i = 0; i < n; i++) {
		char *values = json_dumps(json_object_get(json_array_get(points, i), "params"),
					  JSON_COMPACT | JSON_ENSURE_ASCII);
		struct sbuf dir = SBUF_INIT; /* from the sweep record: escaped */

		sbuf_add_printable(&dir, v[i].rd.dir ? v[i].rd.dir : "(no run)");
		printf("%s== point %zu %s: %s ==\n", i ? "\n" : "", i, values ? values : "", dir.buf);
		sbuf_release(&dir);
		free(values);
		fflush(stdout);
		if (v[i].rd.dir && show_run(&v[i].rd, want) && !status)
			status = HPT_EXIT_NO_INPUT;
	}
	runref_release_all(v, n);
	json_decref(doc);
	sbuf_release(&err);
	return status;
}

int cmd_logs(int argc, char **argv)
{
	struct sbuf err = SBUF_INIT;
	struct runref ref = RUNREF_INIT;
	long want = -1;
	int c, follow_on = 0, status = HPT_EXIT_OK;
	char *end;

	opt_reset();
	while ((c = opt_next(&logs_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'r':
			errno = 0;
			want = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || want < 0 || want > 1 << 24)
				return opt_error(&logs_cmd, "--rank: expected a rank number, got '%s'",
						 SBUF_CLIP(optarg));
			break;
		case 'f':
			follow_on = 1;
			break;
		case 'h':
			opt_usage(stdout, &logs_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return opt_error(&logs_cmd, optind >= argc ? "no run given" : "one run at a time");
	if (opt_check_operands(&logs_cmd, argc, argv, optind))
		return HPT_EXIT_USAGE;
	status = runref_resolve(argv[optind], &ref, &err);
	if (ref.note)
		say("%s", ref.note);
	if (!status && ref.kind == RUNREF_SWEEP && follow_on) {
		runref_release(&ref);
		return opt_error(&logs_cmd, "--follow takes one run, not a sweep (name a point: "
				 "NAME/HASH)");
	}
	/* a job id, and --follow, need Slurm */
	if (!status && (ref.kind == RUNREF_JOB || follow_on))
		status = hpt_slurm_init(&err);
	if (!status)
		status = runref_job_run(&ref, &err);
	if (status) {
		say("%s", err.buf);
	} else if (ref.kind == RUNREF_SWEEP) {
		status = show_sweep(ref.sweep, want);
	} else if (follow_on) {
		status = follow(&ref, want);
	} else {
		status = show_run(&ref.rd, want);
	}
	runref_release(&ref);
	sbuf_release(&err);
	return status;
}
