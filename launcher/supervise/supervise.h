/* supervise.h - `hpctrain launch --supervise`: run one rank's program as a child.
 *
 * Shell.  The launcher has bound itself and set the environment; the
 * supervisor forks the program and waits for it, blocked in poll(2) on a
 * signalfd and the program's output pipes, so it uses no CPU while the
 * program runs quietly.  It:
 *
 *   - forwards TERM, INT, USR1 and USR2 to the program, reaps it, and
 *     exits with its status (128+N for signal N);
 *   - on the preemption signal, gives the program grace_s to exit: 75
 *     means checkpointed; any other exit, or a program still running at
 *     the deadline (its stacks recorded first, then KILLed), exits 75
 *     when after_requeue, else with the program's status;
 *   - copies the program's stdout and stderr through, counting bytes and
 *     the time of the last output, and keeps ranks_dir/rank-N.json
 *     current (launcher/liveness.h);
 *   - sets HPCTRAIN_HEARTBEAT to a file the program may touch or append
 *     to as a sign of progress (the bundled trainer does, every step);
 *   - when no rank has made progress for stall_s, records its program's
 *     stacks (launcher/stacks.h), waits for the other ranks' stacks,
 *     writes run_dir/autopsy.txt (the first rank to leave its stacks
 *     does) and exits 76;
 *   - when no rank has reached its first step (a heartbeat; with
 *     output_starts, output too) startup_s after its start, says which
 *     ranks have not (no record: never launched; or starting, by node),
 *     does the same and exits 77;
 *   - given a target (a program a runtime runs under its own monitor,
 *     podman's conmon), reads liveness and stacks from the program's
 *     host PID, checks its contract there, and ends the target after a
 *     kill and at the end, or at once when the check says the program
 *     must not go on.  launch (cli/) wires the container code in,
 *     so supervise/ includes nothing of launcher/container/.
 */
#ifndef HPT_SUPERVISE_H
#define HPT_SUPERVISE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A program that is not the supervisor's child: a runtime (podman) that
 * starts it under a monitor of its own (conmon) and stays in between.
 * The supervisor forwards signals to its child as ever (podman proxies
 * them and exits with the program's status), but reads liveness, stacks
 * and the contract from the program's host PID, sends the autopsy's
 * SIGABRT and KILL there, and calls end when it kills the program and
 * once when it is done, so that nothing outlives the step. */
struct supervise_target {
	/* the program's host PID, or 0 while it is not known yet */
	pid_t (*find)(void *arg);
	/* ends the program and what holds it (podman rm -f); idempotent */
	void (*end)(void *arg);
	void *arg;
};

/* Read once the program's PID is known (its own or a target's): the
 * binding it really got against the plan, for a runtime that may reset
 * it.  check may re-pin the program and returns a new reference
 * (warnings, what was done) to record in the liveness file, or NULL.
 * It sets *end_status (0 before the call) to end the program at once:
 * the supervisor kills it, ends the target, says so in one line and
 * returns that status (launch's binding.contract: fail). */
struct supervise_inside {
	json_t *(*check)(void *arg, pid_t pid, int *end_status);
	void *arg;
};

struct supervise_opts {
	const char *run_dir;   /* the run (attempt) directory, or NULL */
	const char *workdir;   /* the program's working directory; NULL: the supervisor's */
	unsigned rank, world;
	const char *host;
	int preempt_signal;    /* the signal that means "checkpoint now"; 0 for none */
	int64_t grace_s;       /* how long the program has after it; 0: no limit */
	bool after_requeue;    /* preempt.after_signal: requeue */
	int64_t stall_s;       /* 0: never declare a stall; needs run_dir */
	int64_t startup_s;     /* 0: no bound on reaching the first step; needs run_dir */
	bool output_starts;    /* output is a first step too (a program that may
				* never touch the heartbeat), not only a heartbeat */
	json_t *contract;      /* borrowed, copied into the liveness file */
	const struct supervise_target *target; /* NULL: the program is the child */
	const struct supervise_inside *inside; /* NULL: no check inside */
};

/* Runs argv (the environment already set) and returns the status to exit
 * with: the program's, 128+N, 75, 76, 77, the inside check's end_status, or
 * 126/127 when it cannot start. */
int supervise_run(const struct supervise_opts *o, char **argv);

/* The grace a program gets after the preemption signal: lead_s less a
 * margin for the supervisor to record stacks and stop it before Slurm's
 * KILL (a quarter of lead_s, at least 1 s and at most 15 s); 0 (no
 * limit) when lead_s is 0, as Slurm then sends no warning before KILL. */
int64_t supervise_grace(int64_t lead_s);

#endif
