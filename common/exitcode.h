/* exitcode.h - every exit status hpctrain publishes.
 *
 * Mirrored in EXIT STATUS of man/hpctrain.1 (a test checks both agree).
 * A number, once published, never changes meaning; new ones are appended.
 * 75 and 126/127 follow sysexits(3) and the shell, so batch scripts and
 * schedulers that already know them do the right thing.
 */
#ifndef HPT_EXITCODE_H
#define HPT_EXITCODE_H

enum hpt_exit {
	HPT_EXIT_OK = 0,          /* success */
	HPT_EXIT_FAILURE = 1,     /* the operation ran and failed (e.g. a job ended FAILED) */
	HPT_EXIT_USAGE = 2,       /* bad command line: unknown command, flag or value */
	HPT_EXIT_BAD_SPEC = 3,    /* the job spec or template is invalid */
	HPT_EXIT_NO_INPUT = 4,    /* a named file, template, run or job does not exist or cannot be read
				   (or is not a regular file, or is a checkpoint others could have written;
				   in a batch script: a module that did not load, a venv without bin/) */
	HPT_EXIT_UNAVAILABLE = 5, /* a service (Slurm controller, PMIx server, munge) cannot be reached,
				   or does not answer (a stopped controller: launcher/slurm/slurm_errno.h)
				   (in a batch script: no module command for environment.modules) */
	HPT_EXIT_REJECTED = 6,    /* a service refused the request (e.g. Slurm rejected the job) */
	HPT_EXIT_TOPOLOGY = 7,    /* the node topology cannot be loaded or the binding plan is infeasible
				   (or, binding.contract: fail, a rank did not get its plan) */
	HPT_EXIT_IO = 8,          /* writing an output file or directory failed (or a run directory
				   another user owns or may write was refused) */
	HPT_EXIT_CHANGED = 9,     /* stage: a data set differs from the manifest pinned at submit;
				   submit the job again */
	HPT_EXIT_INTERNAL = 70,   /* internal error: a bug in hpctrain, or out of memory */
	HPT_EXIT_PREEMPTED = 75,  /* training stopped at a checkpoint on a preemption signal; requeue it */
	HPT_EXIT_STALLED = 76,    /* launch --supervise: no rank made progress; stacks in RUN/autopsy.txt */
	HPT_EXIT_NOSTART = 77,    /* launch --supervise: no rank reached its first step within
				   supervise.startup_timeout_s; stacks in RUN/autopsy.txt */
	HPT_EXIT_NOEXEC = 126,    /* launch: the program exists but cannot be executed */
	HPT_EXIT_NOTFOUND = 127,  /* launch: the program was not found */
};

/* Every program's last word: a command's output may go to a closed pipe
 * or a full disk, and the status must say so instead of claiming
 * success (git.c's run_builtin()).  Flushes stdout; status, or
 * HPT_EXIT_IO when the output was lost and status was 0, after a line
 * "WHO: error writing standard output: ..." (none for a closed pipe).
 * exitcode.c. */
int exitcode_finish(const char *who, int status);

#endif
