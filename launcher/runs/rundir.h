/* rundir.h - run records on disk: OUTPUT/<name>/<hash12>/ and its attempts.
 *
 * Shell: creates directories and files.  Layout of one run R:
 *
 *   R = OUTPUT/<name>/<hash12>/     attempt 1
 *       resolved.yaml  job.sbatch  submit.json  logs/  (metrics.jsonl, ranks/ ...)
 *   R/attempts/2/  R/attempts/3/    later attempts, each of the same shape
 *
 * hash12 is the first 12 hex digits of the resolved spec's SHA-256, so the
 * same spec always lands in the same R; resubmitting it (or `hpctrain
 * rerun R`) makes a new attempt and never overwrites a file of an earlier
 * one.  Every attempt directory holds its own resolved.yaml, byte for byte
 * R's, so `hpctrain launch --run DIR` reads DIR/resolved.yaml whichever
 * attempt DIR is.
 *
 * Permissions: directories 0700, files 0600, whatever the umask.  A run
 * holds the spec's env values (tokens, paths), its logs and checkpoints;
 * the job runs as the submitting user, who is the only one who needs them.
 * A site that wants a group to read runs can chmod them afterwards.
 * OUTPUT itself (and OUTPUT/<name>) are made 0700 too when created here;
 * existing ones are left as they are.  An existing R that another user
 * owns, or that group or others may write, gets no new attempt
 * (fileio_check_owned): train, launch and doctor refuse it too.
 */
#ifndef HPT_RUNDIR_H
#define HPT_RUNDIR_H

#include <stddef.h>
#include <stdint.h>

struct sbuf;

#define RUNDIR_HASH_LEN 12
#define RUNDIR_DIR_MODE 0700
#define RUNDIR_FILE_MODE 0600

struct rundir {
	char *run;   /* absolute path of R; NULL when unset */
	char *dir;   /* absolute path of this attempt's directory (R itself for 1) */
	int attempt; /* 1, 2, ...; 0 when unset */
	int fresh;   /* created by rundir_create and not yet kept */
};

#define RUNDIR_INIT { NULL, NULL, 0, 0 }

/* Frees the strings; accepts NULL and a zeroed struct. */
void rundir_release(struct rundir *rd);

/* The run directory R of (name, sha256) under output_dir, made absolute
 * against the current directory (free it); NULL when that cannot be
 * found.  Nothing is created. */
char *rundir_path(const char *output_dir, const char *name, const char *sha256);

/* Makes a new attempt of the run for (name, sha256) under output_dir
 * (relative paths are taken from the current directory) with resolved
 * (the canonical spec) and logs/ in it.  Every attempt is published
 * whole (rundir_publish.h): made in a temporary, renamed into place, so
 * no reader and no concurrent submit ever sees an R or attempt without
 * its resolved.yaml.  Under OUTPUT/<name>/.lock, which also clears what
 * a killed submit left: its temporaries, and an R without resolved.yaml
 * (after RUNDIR_STALE_S seconds), which is completed as attempt 1.  A
 * later attempt's number is still claimed by mkdir(2): two submissions
 * of one spec at once get different attempts.  Fails when R holds a
 * different resolved.yaml (a 12-digit hash prefix collision).  Returns
 * 0, or -1 with a message in err ("cannot create runs/x: Permission
 * denied"). */
int rundir_create(const char *output_dir, const char *name, const char *sha256,
		  const char *resolved, size_t len, struct rundir *out, struct sbuf *err);

/* Makes a new attempt of an existing run R (as found by rundir_open),
 * copying R's resolved.yaml, published whole under the same lock as
 * rundir_create.  Returns 0 or -1 with err. */
int rundir_new_attempt(const char *run, struct rundir *out, struct sbuf *err);

/* Writes file (a name in the attempt directory) with mode 0600,
 * atomically, refusing to replace an existing file.  0 or -1 with err. */
int rundir_write(const struct rundir *rd, const char *file, const void *data, size_t len,
		 struct sbuf *err);

/* For a later attempt (attempt >= 2): makes its checkpoints/ a symbolic
 * link to the run's own RUN/checkpoints (made 0700 when missing), so the
 * trainer of this attempt resumes from, and goes on writing, the last
 * checkpoint of any attempt (HPCTRAIN_CHECKPOINT_DIR names the same
 * directory).  Nothing for attempt 1.  0 or -1 with err. */
int rundir_resume(const struct rundir *rd, struct sbuf *err);

/* Removes an attempt this process created and never submitted: the
 * files named in rundir_create and job.sbatch, logs/, then the directory
 * with its resolved.yaml in one step (renamed away under the lock, as it
 * was published), and R's attempts/ when it empties.  Anything else
 * found there is left alone, and then so is the attempt, whole.  Best
 * effort; no-op unless rd->fresh. */
void rundir_abandon(struct rundir *rd);

/* Finds a run from what a user typed: an attempt directory or R (for R,
 * the latest attempt that has a submit.json, else the latest).  A
 * directory qualifies when it holds resolved.yaml.  Returns 0, or -1
 * with err ("no run at x: ..."). */
int rundir_open(const char *arg, struct rundir *out, struct sbuf *err);

/* Reads the Slurm job id from the attempt's submit.json; *task (when
 * not NULL) gets the attempt's index in that array job when it is a sweep
 * point, else -1.  Returns 0, or -1 with err (no submit.json: the attempt
 * was never submitted). */
int rundir_job_id(const struct rundir *rd, unsigned long *job_id, int64_t *task, struct sbuf *err);

#endif
