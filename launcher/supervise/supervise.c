/* supervise.c - fork the rank's program, forward signals, watch it, end it.
 * Shell (see supervise.h). */
#include "launcher/supervise/supervise.h" // defines: supervise_run, struct supervise_opts
#include "launcher/supervise/autopsy.h"   // defines: struct rank_stacks
#include "launcher/supervise/liveness.h"  // defines: struct liveness, liveness_write
#include "launcher/supervise/oom.h"       // defines: struct oom_watch, oom_watch_*
#include "launcher/supervise/stackfile.h" // defines: stackfile_write, stackfile_autopsy
#include "launcher/supervise/stacks.h"    // defines: stacks_capture_native, stacks_add_python
#include "common/exitcode.h"       // defines: HPT_EXIT_PREEMPTED, HPT_EXIT_STALLED
#include "common/fileio.h"         // defines: fileio_private_dir, fileio_write_atomic
#include "common/jsonfile.h"       // defines: jsonfile_load
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/strfmt.h"         // defines: strfmt

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BARRIER_S 15      /* how long a stalled rank waits for the others' stacks, at most */
#define PY_DUMP_S 5       /* how long faulthandler gets to print its dump */
#define ABORT_SYNC_S 0.5  /* after the last stacks file: every rank has seen it (polls: 0.2 s) */
#define PEER_HOLD_S 30    /* no grace: how long a preempted rank stays for the others */
#define MAX_CAPTURE (1 << 20)
/* A step ending (SIGTERM from slurmstepd: a peer's node lost, a rank
 * failed, the job cancelled) kills a program that makes no progress
 * within this: a rank stuck in a collective whose peer is gone never
 * returns, and Slurm's KillWait (30 s by default) would hold the step,
 * and the batch script's restart, that long.  A trainer that finishes
 * its step and checkpoints in time is left to exit. */
#define TERM_HOLD_S 2

static const int forwarded[] = { SIGTERM, SIGINT, SIGUSR1, SIGUSR2 };

struct sup {
	const struct supervise_opts *o;
	char ranks_dir[4096];
	char heartbeat[4096];
	struct liveness live;
	pid_t pid;
	int sfd;
	int out[2];            /* read ends of the program's stdout and stderr; -1 when closed */
	int status;            /* wait status, valid once exited */
	bool exited;
	bool preempting;
	double deadline;       /* preemption deadline, seconds since the epoch */
	double term_at;        /* when SIGTERM (not the preemption signal) came; 0: never */
	double next_write;
	double stall_recheck;  /* when this rank is idle but others are not */
	int mark_fd;           /* RUN/ranks/progress (liveness.h), -1 without a stall timeout */
	double mark_seen;      /* the mark is known to be at least this late */
	bool started;          /* some rank reached its first step */
	long launched_index;   /* this rank's place in the launched count, -1 when not counted */
	const char *end_state; /* the record's state after a stall or no start */
	bool unlaunched_gone;  /* a rank with no record never launched: no stacks to wait for */
	unsigned unlaunched;   /* how many such ranks unstarted() found */
	struct sbuf capture;   /* stderr kept while faulthandler dumps */
	bool capturing;
	bool stopping;         /* the supervisor itself is ending the program */
	pid_t prog;            /* a target's program (o->target), 0 while not known */
	double next_find;      /* when to look for it again */
	json_t *inside;        /* o->inside's record, once read */
	int end_status;        /* set by o->inside's check: end the program, exit with it */
	struct oom_watch oom;  /* the OOM kills around the program */
};

int64_t supervise_grace(int64_t lead_s)
{
	int64_t margin = lead_s / 4;

	if (!lead_s)
		return 0;
	if (margin < 1)
		margin = 1;
	if (margin > 15)
		margin = 15;
	return lead_s > margin ? lead_s - margin : 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct sup *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hpctrain launch: rank %u: ", s->o->rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define FIND_PERIOD_S 0.2 /* a runtime starts its program within a second or so */

/* The program's PID: the child's, or a target's once it is known (the
 * inside check runs then, once); 0 while a target's is not known. */
static pid_t program(struct sup *s)
{
	const struct supervise_target *t = s->o->target;

	if (!t)
		return s->pid;
	if (!s->prog && !s->exited) {
		s->prog = t->find(t->arg);
		s->next_find = now() + FIND_PERIOD_S;
		if (s->prog > 0) {
			s->live.pid = s->prog;
			if (s->o->inside && !s->inside)
				s->inside = s->o->inside->check(s->o->inside->arg, s->prog,
								&s->end_status);
			s->live.inside = s->inside;
		} else {
			s->prog = 0;
		}
	}
	return s->prog;
}

/* What holds the program (a container) goes: after a kill, and at the end. */
static void end_target(struct sup *s)
{
	if (s->o->target && s->o->target->end)
		s->o->target->end(s->o->target->arg);
}

/* How often records are rewritten: for the shorter of the bounds they
 * are judged by (liveness_period), alike on every rank of a job. */
static double period(const struct sup *s)
{
	int64_t bound = s->o->stall_s;

	if (s->o->startup_s && (!bound || s->o->startup_s < bound))
		bound = s->o->startup_s;
	return liveness_period(bound);
}

static void write_live(struct sup *s, const char *state)
{
	struct sbuf err = SBUF_INIT;

	if (state)
		s->live.state = state;
	if (!s->ranks_dir[0])
		return;
	s->live.updated = now();
	if (!s->exited && s->pid > 0 && program(s) > 0) {
		double cpu = liveness_cpu_seconds(program(s));

		if (cpu >= 0)
			s->live.cpu_s = cpu;
		oom_watch_note(&s->oom, program(s));
	}
	if (liveness_write(s->ranks_dir, &s->live, &err))
		say(s, "%s", err.buf);
	s->next_write = s->live.updated + period(s);
	sbuf_release(&err);
}

/* The run's ranks/ directory (private: 0700, and refused when another
 * user owns it or others may write it) and this rank's heartbeat file
 * in it, written as every file is (a mkstemp file renamed over it). */
static void prepare_files(struct sup *s)
{
	struct sbuf err = SBUF_INIT;
	int n;

	if (!s->o->run_dir)
		return;
	n = snprintf(s->ranks_dir, sizeof(s->ranks_dir), "%s/ranks", s->o->run_dir);
	if (n < 0 || (size_t)n >= sizeof(s->ranks_dir)) {
		say(s, "run directory path too long; no liveness records");
		s->ranks_dir[0] = '\0';
		return;
	}
	if (fileio_private_dir(s->ranks_dir, &err)) {
		say(s, "%s; no liveness records", err.buf);
		s->ranks_dir[0] = '\0';
		goto out;
	}
	n = snprintf(s->heartbeat, sizeof(s->heartbeat), "%s/rank-%u.heartbeat", s->ranks_dir,
		     s->o->rank);
	if (n < 0 || (size_t)n >= sizeof(s->heartbeat) ||
	    fileio_write_atomic(s->heartbeat, "", 0, 0600, 0, &err)) {
		s->heartbeat[0] = '\0';
		goto out;
	}
	setenv("HPCTRAIN_HEARTBEAT", s->heartbeat, 1);
	if (s->o->stall_s && (s->mark_fd = liveness_mark_open(s->ranks_dir, &err)) < 0)
		say(s, "%s; reading every rank's record to tell a stall instead", err.buf);
out:
	sbuf_release(&err);
}

/* A pipe for fd unless fd is a terminal, where a program should keep
 * seeing one (and is watched by a person anyway). */
static int make_pipe(int fd, int p[2])
{
	p[0] = p[1] = -1;
	if (isatty(fd))
		return 0;
	if (pipe2(p, O_CLOEXEC))
		return -1;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	return 0;
}

static void start_child(struct sup *s, char **argv, int po[2], int pe[2], int report[2],
			const sigset_t *old)
{
	int err;

	sigprocmask(SIG_SETMASK, old, NULL);
	if (po[1] >= 0)
		dup2(po[1], 1);
	if (pe[1] >= 0)
		dup2(pe[1], 2);
	if (!s->o->workdir || !chdir(s->o->workdir))
		execvp(argv[0], argv);
	err = errno;
	if (write(report[1], &err, sizeof(err)) < 0)
		_exit(HPT_EXIT_NOEXEC);
	_exit(err == ENOENT ? HPT_EXIT_NOTFOUND : HPT_EXIT_NOEXEC);
}

/* Forks and execs; returns 0, or the exit status when the program could
 * not start (the child's errno comes back through a close-on-exec pipe). */
static int spawn(struct sup *s, char **argv)
{
	int po[2], pe[2], report[2], err = 0;
	sigset_t set, old;
	ssize_t n;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	s->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sfd < 0 || make_pipe(1, po) || make_pipe(2, pe) || pipe2(report, O_CLOEXEC)) {
		say(s, "cannot set up the supervisor: %s", strerror(errno));
		return HPT_EXIT_INTERNAL;
	}
	fflush(stdout);
	fflush(stderr);
	s->pid = fork();
	if (s->pid < 0) {
		say(s, "cannot fork: %s", strerror(errno));
		return HPT_EXIT_INTERNAL;
	}
	if (!s->pid)
		start_child(s, argv, po, pe, report, &old);
	close(report[1]);
	for (int i = 0; i < 2; i++) {
		int *p = i ? pe : po;

		if (p[1] >= 0)
			close(p[1]);
		s->out[i] = p[0];
	}
	while ((n = read(report[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n == sizeof(err)) {
		waitpid(s->pid, NULL, 0);
		if (err == ENOENT) {
			fprintf(stderr, "hpctrain launch: %s: command not found\n", argv[0]);
			return HPT_EXIT_NOTFOUND;
		}
		fprintf(stderr, "hpctrain launch: cannot execute %s: %s\n", argv[0], strerror(err));
		return HPT_EXIT_NOEXEC;
	}
	return 0;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* our own output is gone: keep the program running regardless */
		p += w;
		n -= (size_t)w;
	}
}

/* Copies what is ready on stream i (0 stdout, 1 stderr) through. */
static void pump(struct sup *s, int i)
{
	char buf[65536];
	ssize_t n = read(s->out[i], buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close(s->out[i]);
		s->out[i] = -1;
		return;
	}
	write_all(i + 1, buf, (size_t)n);
	s->live.output_bytes += (uint64_t)n;
	s->live.last_output = s->live.last_progress = now();
	if (i == 1 && s->capturing && s->capture.len < MAX_CAPTURE)
		sbuf_add(&s->capture, buf, (size_t)n);
}

static void reap(struct sup *s)
{
	struct rusage ru;
	int st;

	if (!s->exited && wait4(s->pid, &st, WNOHANG, &ru) == s->pid) {
		s->exited = true;
		s->status = st;
		if (!s->o->target) /* else the runtime's client's: keep the program's last */
			s->live.cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	}
}

static int exit_status_of(int st)
{
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

static void on_signal(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			reap(s);
			continue;
		}
		if (s->exited)
			continue;
		if (sig == s->o->preempt_signal && !s->preempting) {
			s->preempting = true;
			s->deadline = now() + (double)s->o->grace_s;
			if (s->o->grace_s)
				say(s, "preemption signal (SIG%s): the program has %lld s to exit",
				    sigabbrev_np(sig), (long long)s->o->grace_s);
			else
				say(s, "preemption signal (SIG%s) passed on", sigabbrev_np(sig));
			write_live(s, "preempting");
		} else if (sig == SIGTERM && !s->term_at) {
			s->term_at = now();
		}
		kill(s->pid, sig);
	}
}

/* The heartbeat file's mtime as progress. */
static void check_heartbeat(struct sup *s)
{
	struct stat st;
	double t;

	if (!s->heartbeat[0] || stat(s->heartbeat, &st))
		return;
	t = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
	if (t > s->live.last_heartbeat && (st.st_size || t > s->live.started)) {
		if (!s->live.first_heartbeat)
			s->live.first_heartbeat = t;
		s->live.last_heartbeat = t;
		if (t > s->live.last_progress)
			s->live.last_progress = t;
	}
}

/* Stalled: no progress here for stall_s, nor in any other rank's file
 * for stall_s and the period those files are rewritten at: a rank that
 * progressed since its last write shows it at its next, and waiting out
 * one period more keeps that rank from being taken for stalled. */
static bool stalled(struct sup *s, double t)
{
	double per = period(s), other;
	unsigned files;

	if (!s->o->stall_s || !s->ranks_dir[0] || t - s->live.last_progress < (double)s->o->stall_s ||
	    t < s->stall_recheck)
		return false;
	/* without the mark (it could not be opened), every rank's record */
	other = s->mark_fd >= 0 ? liveness_mark_read(s->ranks_dir)
				: liveness_latest_progress(s->ranks_dir, s->o->rank, &files);
	if (t - other >= (double)s->o->stall_s + per)
		return true;
	s->stall_recheck = t + per;
	return false;
}

/* The step's name in a count's file (count_path): each step of a
 * requeued job, and each mpirun, counts afresh.  0, or -1 when it does
 * not fit: a key cut short could be another step's. */
static int step_key(char *buf, size_t len)
{
	const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
	const char *restart = getenv("SLURM_RESTART_COUNT"), *ns = getenv("PMIX_NAMESPACE");
	int rc;

	if (job && step)
		rc = strfmt(buf, len, "%s.%s.%s", job, step, restart ? restart : "0");
	else
		rc = strfmt(buf, len, "%s", ns && *ns ? ns : "local");
	for (char *p = buf; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			*p = '_';
	return rc;
}

/* RUN/ranks/WHAT-STEP into path (len bytes): 0, or -1 when there is no
 * step key or the path does not fit (then nothing is counted). */
static int count_path(const struct sup *s, const char *what, char *path, size_t len)
{
	char key[256];

	if (step_key(key, sizeof(key)))
		return -1;
	return strfmt(path, len, "%s/%s-%s", s->ranks_dir, what, key);
}

#define COUNT_STACKS "stacks"     /* the ranks that left their stacks */
#define COUNT_EXITED "exited"     /* the ranks whose program ended on its own */
#define COUNT_LAUNCHED "launched" /* the ranks whose supervisor started */
#define COUNT_STARTED "started"   /* the ranks whose program reached its first step */

/* Counts this rank in RUN/ranks/WHAT-STEP: a byte appended, so that a
 * stat of one file tells how many ranks have (O_APPEND is atomic on a
 * local file system and on Lustre; on NFS a lost byte costs a wait to
 * its bound, never a hang).  The byte's index, or -1. */
static long count_in(const struct sup *s, const char *what)
{
	char path[4096 + 512];
	struct sbuf ignored = SBUF_INIT;
	off_t end = -1;
	int fd;

	if (count_path(s, what, path, sizeof(path)))
		return -1;
	/* not a bare open(2): O_WRONLY blocks on a FIFO planted there */
	fd = fileio_open_append(path, &ignored);
	sbuf_release(&ignored);
	if (fd < 0)
		return -1;
	if (write(fd, "x", 1) == 1)
		end = lseek(fd, 0, SEEK_CUR);
	close(fd);
	return end > 0 ? (long)end - 1 : -1;
}

/* How many ranks of this step are counted in WHAT-STEP; its mtime into
 * *mtime when given. */
static unsigned count_of(const struct sup *s, const char *what, double *mtime)
{
	char path[4096 + 512];
	struct stat st;

	if (count_path(s, what, path, sizeof(path)) || lstat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (mtime)
		*mtime = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
	return st.st_size > (off_t)UINT_MAX ? UINT_MAX : (unsigned)st.st_size;
}

/* The ranks that have left their stacks or will leave none (their
 * program ended on its own); *newest: when the last stacks were left. */
static unsigned counted(const struct sup *s, double *newest)
{
	unsigned stacks = count_of(s, COUNT_STACKS, newest);

	return stacks + count_of(s, COUNT_EXITED, NULL);
}

/* This rank's program reached its first step: it touched its heartbeat
 * (the bundled trainer does after each step), or, output_starts, wrote
 * output. */
static bool own_started(const struct sup *s)
{
	return s->live.last_heartbeat > 0 || (s->o->output_starts && s->live.last_output > 0);
}

/* Not started: this rank shows no first step startup_s after its start,
 * nor has any other rank counted itself started (count_in, when its own
 * program reached its first step).  Tasks that never launched leave
 * their peers waiting in MPI's start-up, busy on the CPU, which is why
 * neither CPU time nor a stall bound (off by default) tells.  A stat of
 * two files a rank; only the first rank to have launched reads every
 * record, to name the ranks that have not started.  why gets which ranks
 * have not (liveness_say_unstarted), or how many never launched. */
static bool unstarted(struct sup *s, double t, struct sbuf *why)
{
	unsigned launched;
	json_t **v;
	size_t n;

	if (!s->o->startup_s || !s->ranks_dir[0] || s->started || s->preempting)
		return false;
	if (own_started(s)) {
		s->started = true;
		count_in(s, COUNT_STARTED);
		return false;
	}
	if (t - s->live.started < (double)s->o->startup_s)
		return false;
	if (count_of(s, COUNT_STARTED, NULL)) {
		s->started = true;
		return false;
	}
	launched = count_of(s, COUNT_LAUNCHED, NULL);
	s->unlaunched = s->o->world > launched ? s->o->world - launched : 0;
	if (s->launched_index) {
		sbuf_addf(why, "%u of %u ranks never launched; the first rank to launch names the "
			  "ranks in its log", s->unlaunched, s->o->world);
		return true;
	}
	v = liveness_load_dir(s->ranks_dir, &n);
	liveness_say_unstarted(v, n, s->o->world, s->o->output_starts, why);
	if (!why->len)
		sbuf_addstr(why, "no record shows one");
	for (size_t i = 0; i < n; i++)
		json_decref(v[i]);
	free(v);
	return true;
}

/* Waits up to timeout_s for the child to exit, still copying its output. */
static void wait_exit(struct sup *s, double timeout_s)
{
	double end = now() + timeout_s;

	while (!s->exited) {
		struct pollfd p[3] = { { s->sfd, POLLIN, 0 }, { s->out[0], POLLIN, 0 },
				       { s->out[1], POLLIN, 0 } };
		double left = end - now();

		if (left <= 0)
			break;
		if (poll(p, 3, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			on_signal(s);
		for (int i = 0; i < 2; i++)
			if (p[i + 1].revents)
				pump(s, i);
	}
}

/* Whether rank r will leave no stacks: its record says it exited, or
 * that it progressed after since (this rank's stall), so it is not
 * stalled; or, past the start-up bound, it has no record: it never
 * launched.  Its record is rewritten at least every liveness_period(),
 * so a live rank is known within that, not after BARRIER_S. */
static bool not_coming(const struct sup *s, unsigned r, double since)
{
	char path[4200];
	struct sbuf err = SBUF_INIT;
	json_t *doc;
	const char *state;
	bool gone;

	/* encode-ok: ranks_dir[4096] and a rank's file name fit in 4200 */
	snprintf(path, sizeof(path), "%s/rank-%u.json", s->ranks_dir, r);
	doc = jsonfile_load(path, LIVENESS_MAX_BYTES, 0, &err);
	state = json_string_value(json_object_get(doc, "state"));
	gone = (!doc && s->unlaunched_gone) || (state && !strcmp(state, "exited")) ||
	       json_number_value(json_object_get(doc, "last_progress")) > since;
	json_decref(doc);
	sbuf_release(&err);
	return gone;
}

/* Waits (a few seconds at most) until every rank of the step has left
 * its stacks, exited leaving none, or never launched (counted(): one
 * file, whatever the number of ranks, and unstarted()'s count; a rank
 * that comes none of these ways costs the wait),
 * then until the moment every rank derives alike from them: the last
 * stacks' count's mtime and ABORT_SYNC_S.  The Python ranks are aborted
 * then, all at once, for faulthandler's dump: a rank aborted even 0.2 s
 * after a peer has already seen the peer die (its gloo or MPI wait
 * failing) and dumps from its exception handling or its interpreter's
 * shutdown, with no frame of the wait left to show.  A clock that
 * disagrees with the file's by more than a second gets no wait. */
static void barrier(struct sup *s)
{
	double end = now() + BARRIER_S, newest = 0, at;
	bool all;

	while (!(all = counted(s, &newest) + s->unlaunched >= s->o->world) && now() < end)
		wait_exit(s, 0.2);
	at = newest + ABORT_SYNC_S;
	if (all && at > now() && at - now() < 1 + ABORT_SYNC_S)
		wait_exit(s, at - now());
}

/* How many ranks' stacks files say they are complete, or will leave
 * none (not_coming). */
static unsigned count_complete(const struct sup *s, double since)
{
	char path[4200];
	unsigned n = 0;

	for (unsigned r = 0; r < s->o->world; r++) {
		struct sbuf err = SBUF_INIT; /* not there yet, or not a file: not complete */
		json_t *doc;

		/* encode-ok: ranks_dir[4096] and a rank\'s file name fit in 4200 */
		snprintf(path, sizeof(path), "%s/rank-%u.stacks.json", s->ranks_dir, r);
		doc = jsonfile_load(path, STACKFILE_MAX_BYTES, 0, &err);
		if (doc)
			n += json_is_true(json_object_get(doc, "complete"));
		else
			n += r != s->o->rank && not_coming(s, r, since);
		json_decref(doc);
		sbuf_release(&err);
	}
	return n;
}

/* The reporter waits (a few seconds at most) for the others' Python dumps. */
static void wait_complete(struct sup *s, double since)
{
	double end = now() + BARRIER_S;

	while (count_complete(s, since) < s->o->world && now() < end)
		usleep(200 * 1000);
}

/* Records the program's stacks (native, then Python through faulthandler,
 * which ends it), then stops it.  With a run directory, the stacks go to
 * ranks/rank-N.stacks.json and the first rank to leave them (its count's
 * index 0) writes autopsy.txt. */
static void autopsy_and_stop(struct sup *s, const char *reason)
{
	pid_t pid = program(s) > 0 ? program(s) : s->pid;
	struct rank_stacks r = { .rank = s->o->rank, .pid = pid };
	struct sbuf path = SBUF_INIT, err = SBUF_INIT, text = SBUF_INIT;
	bool python = stacks_is_python(pid);
	double since = now(); /* a rank that progresses after this is not stalled */
	char rootpath[64], root[64] = "";
	long index = -1;
	int rootfd;

	/* The program's root (a container's image), kept open: its source
	 * files are read after it has gone. */
	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(rootpath, sizeof(rootpath), "/proc/%d/root", (int)pid);
	rootfd = open(rootpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd >= 0)
		/* encode-ok: a pid in a /proc path: at most 11 digits more */
		snprintf(root, sizeof(root), "/proc/self/fd/%d", rootfd);
	s->stopping = s->capturing = true; /* a rank killed by a peer's abort leaves a traceback */
	r.host = xstrdup(s->o->host);
	r.reason = xstrdup(reason);
	r.complete = !python;
	stacks_capture_native(pid, &r);
	if (r.error)
		say(s, "%s", r.error);
	sbuf_addf(&path, "%s/rank-%u.stacks.json", s->ranks_dir, s->o->rank);
	if (s->ranks_dir[0] && stackfile_write(path.buf, &r, &err))
		say(s, "%s", err.buf);
	else if (s->ranks_dir[0])
		index = count_in(s, COUNT_STACKS);
	/* Every rank has its native stacks before any Python rank aborts,
	 * which could end its peers' programs before theirs are read. */
	if (s->ranks_dir[0])
		barrier(s);
	if (python) {
		/* the abort is ours, for faulthandler's dump: no core file (a
		 * large model's would be gigabytes, in the run directory) */
		prlimit(pid, RLIMIT_CORE, &(struct rlimit){ 0, 0 }, NULL);
		if (!s->exited && !kill(pid, SIGABRT))
			wait_exit(s, PY_DUMP_S);
		stacks_add_python(&r, s->capture.buf, s->capture.len, root[0] ? root : NULL);
		r.complete = true;
		sbuf_reset(&err);
		if (s->ranks_dir[0] && stackfile_write(path.buf, &r, &err))
			say(s, "%s", err.buf);
	}
	if (!s->exited) {
		if (pid != s->pid)
			kill(pid, SIGKILL);
		end_target(s);
		kill(s->pid, SIGKILL);
		wait_exit(s, 10);
	}
	if (rootfd >= 0)
		close(rootfd);
	if (s->ranks_dir[0] && index == 0) {
		sbuf_reset(&err);
		wait_complete(s, since);
		if (!stackfile_autopsy(s->o->run_dir, s->o->world, &text, &err)) {
			/* The summary goes to the rank log; the stacks stay in the file. */
			const char *blank = strstr(text.buf, "\n\n");

			fprintf(stderr, "%.*s\nhpctrain launch: the stacks of every rank are in %s/autopsy.txt\n",
				blank ? (int)(blank - text.buf) : (int)text.len, text.buf, s->o->run_dir);
		} else
			say(s, "%s", err.buf);
	}
	rank_stacks_release(&r);
	sbuf_release(&path);
	sbuf_release(&err);
	sbuf_release(&text);
}

/* The inside check said the program must not go on: end it and what
 * holds it, as after a stall but with no stacks to record. */
static bool end_on_inside_check(struct sup *s)
{
	if (!s->end_status || s->exited)
		return false;
	say(s, "the program broke its contract inside its runtime; ending it (exit status %d)",
	    s->end_status);
	s->stopping = true;
	if (s->prog > 0)
		kill(s->prog, SIGKILL);
	end_target(s);
	kill(s->pid, SIGKILL);
	wait_exit(s, 10);
	return true;
}

/* SIGTERM came TERM_HOLD_S ago and no heartbeat since. */
static bool term_stuck(const struct sup *s, double t)
{
	return s->term_at && !s->stopping && t >= s->term_at + TERM_HOLD_S &&
	       s->live.last_heartbeat < s->term_at;
}

static int poll_timeout_ms(const struct sup *s, double t)
{
	double next = t + 3600;

	if (s->ranks_dir[0])
		next = s->next_write;
	if (s->preempting && s->o->grace_s && s->deadline < next)
		next = s->deadline;
	if (s->term_at && !s->stopping && s->term_at + TERM_HOLD_S < next)
		next = s->term_at + TERM_HOLD_S;
	if (s->o->target && !s->prog && s->next_find < next)
		next = s->next_find;
	if (s->o->stall_s && s->ranks_dir[0]) {
		double stall = s->live.last_progress + (double)s->o->stall_s;

		if (stall < s->stall_recheck)
			stall = s->stall_recheck;
		if (stall < next)
			next = stall;
	}
	if (s->o->startup_s && s->ranks_dir[0] && !s->started && !s->preempting) {
		double start = s->live.started + (double)s->o->startup_s;

		if (start < next)
			next = start;
	}
	return next <= t ? 0 : (int)((next - t) * 1000) + 1;
}

/* The loop: returns when the program has exited, 76 after a stall, 77
 * when no rank started, or the inside check's end_status once it ended
 * the program. */
static int watch(struct sup *s)
{
	struct sbuf why = SBUF_INIT;

	while (!s->exited) {
		struct pollfd p[3] = { { s->sfd, POLLIN, 0 }, { s->out[0], POLLIN, 0 },
				       { s->out[1], POLLIN, 0 } };
		double t = now();

		if (end_on_inside_check(s))
			return s->end_status;
		if (poll(p, 3, poll_timeout_ms(s, t)) < 0 && errno != EINTR)
			return HPT_EXIT_INTERNAL;
		if (p[0].revents)
			on_signal(s);
		for (int i = 0; i < 2; i++)
			if (p[i + 1].revents)
				pump(s, i);
		if (s->exited)
			break;
		t = now();
		if (s->o->target && !s->prog && t >= s->next_find)
			program(s);
		if (end_on_inside_check(s))
			return s->end_status;
		check_heartbeat(s);
		s->mark_seen = liveness_mark_note(s->mark_fd, s->mark_seen, s->live.last_progress,
						  liveness_period(s->o->stall_s));
		if (s->preempting && s->o->grace_s && t >= s->deadline) {
			say(s, "the program ignored the preemption signal for %lld s; recording its "
			    "stacks and stopping it", (long long)s->o->grace_s);
			autopsy_and_stop(s, "ignored the preemption signal");
			return -1;
		}
		if (term_stuck(s, t)) {
			say(s, "the step is ending (SIGTERM) and the program made no progress for %d s: "
			    "killing it (a rank stuck in a collective whose peer is gone)", TERM_HOLD_S);
			s->stopping = true;
			if (s->prog > 0)
				kill(s->prog, SIGKILL);
			end_target(s);
			kill(s->pid, SIGKILL);
			continue;
		}
		if (stalled(s, t)) {
			say(s, "no rank made progress for %lld s; recording stacks",
			    (long long)s->o->stall_s);
			s->end_state = "stalled";
			write_live(s, s->end_state);
			autopsy_and_stop(s, "stalled");
			return HPT_EXIT_STALLED;
		}
		if (unstarted(s, t, &why)) {
			say(s, "no rank reached its first step (a heartbeat%s) within %lld s "
			    "(supervise.startup_timeout_s): %s; recording stacks and ending the step "
			    "(exit status %d)", s->o->output_starts ? " or output" : "",
			    (long long)s->o->startup_s, why.buf, HPT_EXIT_NOSTART);
			sbuf_release(&why);
			s->end_state = "unstarted";
			s->unlaunched_gone = true;
			write_live(s, s->end_state);
			autopsy_and_stop(s, "reached no first step");
			return HPT_EXIT_NOSTART;
		}
		if (s->ranks_dir[0] && t >= s->next_write)
			write_live(s, NULL);
	}
	return -1;
}

/* Copies what the program left in its pipes (a background child of it
 * may hold them open: take what is there, do not wait for EOF). */
static void drain(struct sup *s)
{
	for (int i = 0; i < 2; i++)
		while (s->out[i] >= 0) {
			struct pollfd p = { s->out[i], POLLIN, 0 };

			if (poll(&p, 1, 0) <= 0)
				break;
			pump(s, i);
		}
}

/* A SIGKILL comes from the kernel's OOM killer, or from a person, Slurm
 * or another process: the memory cgroups' count tells which, and the
 * record keeps it for doctor --lost.  Either way the program's. */
static void say_sigkill(struct sup *s, int st)
{
	s->live.oom_kills = oom_watch_kills(&s->oom);
	if (s->live.oom_kills)
		say(s, "the program was killed by the kernel's OOM killer (SIGKILL; its memory "
		    "cgroup counted %lld OOM kill%s): exit status %d", s->live.oom_kills,
		    s->live.oom_kills == 1 ? "" : "s", st);
	else
		say(s, "the program was killed by signal 9 (SIGKILL), not by the OOM killer: "
		    "exit status %d", st);
}

/* stalled_status: watch's, 76 after a stall, 77 with no start, or the inside check's
 * end_status, else -1. */
static int final_status(struct sup *s, int stalled_status)
{
	int st = s->exited ? exit_status_of(s->status) : 128 + SIGKILL;

	s->live.exit_status = st;
	s->live.signal = s->exited && WIFSIGNALED(s->status) ? WTERMSIG(s->status) : 0;
	if (s->end_status && stalled_status == s->end_status) {
		s->live.exit_status = s->end_status;
		write_live(s, "exited");
		return s->end_status;
	}
	if (stalled_status > 0) {
		write_live(s, s->end_state ? s->end_state : "stalled");
		return stalled_status;
	}
	if (s->live.signal == SIGKILL && !s->stopping)
		say_sigkill(s, st);
	else if (s->live.signal && !s->stopping) /* not our own SIGABRT or KILL */
		say(s, "the program was killed by signal %d (SIG%s): exit status %d", s->live.signal,
		    sigabbrev_np(s->live.signal), st);
	if (s->preempting && st != HPT_EXIT_PREEMPTED && s->o->after_requeue) {
		say(s, "the program exited %d after the preemption signal; exiting %d to requeue "
		    "(preempt.after_signal: requeue)", st, HPT_EXIT_PREEMPTED);
		st = HPT_EXIT_PREEMPTED;
	}
	write_live(s, "exited");
	return st;
}

/* A preempted rank that leaves first (75) is a failed task to srun
 * --kill-on-bad-exit and to mpirun, which then kill the step's other
 * ranks at once: a program slower to act on the signal would lose its
 * checkpoint.  So each rank leaving on a preemption counts itself out
 * (a byte appended to RUN/ranks/preempted-STEP) and stays until every
 * rank of the step has, or until its program's grace is over (no
 * grace: PEER_HOLD_S).  A stat every 0.1 s, during a preemption only. */
static void hold_for_peers(struct sup *s, int status)
{
	char key[256], path[4096 + 512];
	double limit = s->o->grace_s ? s->deadline + 1 : now() + PEER_HOLD_S;
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	struct sbuf ignored = SBUF_INIT;
	struct stat st;
	int fd;

	if (!s->preempting || status != HPT_EXIT_PREEMPTED || s->o->world < 2 || !s->ranks_dir[0])
		return;
	if (step_key(key, sizeof(key)))
		return; /* no step to count out of: the peers' own grace holds */
	/* encode-ok: ranks_dir[4096] and key[256] fit in 4608 */
	snprintf(path, sizeof(path), "%s/preempted-%s", s->ranks_dir, key);
	/* not a bare open(2): O_WRONLY blocks on a FIFO planted there */
	fd = fileio_open_append(path, &ignored);
	sbuf_release(&ignored);
	if (fd < 0 || write(fd, "x", 1) != 1) {
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	while (now() < limit) {
		if (!lstat(path, &st) && st.st_size >= (off_t)s->o->world)
			return;
		nanosleep(&nap, NULL);
	}
	say(s, "not every rank of the step left on the preemption in time; exiting");
}

int supervise_run(const struct supervise_opts *o, char **argv)
{
	struct sup s = { .o = o, .sfd = -1, .out = { -1, -1 }, .mark_fd = -1,
			 .launched_index = -1, .capture = SBUF_INIT };
	int status;

	prepare_files(&s);
	if (o->startup_s && s.ranks_dir[0])
		s.launched_index = count_in(&s, COUNT_LAUNCHED);
	if (!getenv("PYTHONFAULTHANDLER"))
		setenv("PYTHONFAULTHANDLER", "1", 1);
	s.live = (struct liveness){ .rank = o->rank, .world = o->world, .host = o->host,
				    .state = "starting", .exit_status = -1, .oom_kills = -1,
				    .contract = o->contract };
	s.live.started = s.live.last_progress = now();
	status = spawn(&s, argv);
	if (!status) {
		s.live.pid = s.pid;
		oom_watch_start(&s.oom, s.pid);
		write_live(&s, "running");
		status = watch(&s);
		drain(&s);
		status = final_status(&s, status);
		/* a stall's autopsy of the others waits for no stacks of ours */
		if (!s.stopping && s.ranks_dir[0] && (o->stall_s || o->grace_s))
			count_in(&s, COUNT_EXITED);
		end_target(&s);
		hold_for_peers(&s, status);
	} else if (s.ranks_dir[0]) {
		s.live.exit_status = status;
		write_live(&s, "exited");
	}
	for (int i = 0; i < 2; i++)
		if (s.out[i] >= 0)
			close(s.out[i]);
	if (s.sfd >= 0)
		close(s.sfd);
	if (s.mark_fd >= 0)
		close(s.mark_fd);
	sbuf_release(&s.capture);
	json_decref(s.inside);
	return status;
}
