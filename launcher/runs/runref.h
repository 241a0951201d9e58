/* runref.h - what a user names after status, logs, cancel, rerun, report.
 *
 * Shell (reads directories and records).  Accepted, in this order:
 *   a run or attempt directory        runs/fmnist/0a1b2c3d4e5f[/attempts/2]
 *   a sweep record                    runs/fmnist/sweep-0a1b2c3d4e5f.json
 *   a Slurm job id, or an array task  1234, 1234_5
 *   a name, looked up in the output directory (runref_output_dir):
 *     NAME                            its one sweep, or its one run; of
 *                                     several runs, the newest (note says so)
 *     NAME/HASH                       a run, by a prefix of its hash
 *     NAME/sweep-HASH                 a sweep, by a prefix of its hash
 * A name that fits more than one lists the candidates in err.
 */
#ifndef HPT_RUNREF_H
#define HPT_RUNREF_H

#include "launcher/runs/rundir.h" // defines: struct rundir

#include <jansson.h>
#include <stdint.h>

struct sbuf;

enum runref_kind { RUNREF_RUN, RUNREF_SWEEP, RUNREF_JOB };

struct runref {
	int kind;               /* enum runref_kind */
	struct rundir rd;       /* RUN: the run and its latest attempt */
	char *sweep;            /* SWEEP: absolute path of the sweep record */
	unsigned long job_id;   /* JOB; RUN: from submit.json, 0 when never submitted */
	int64_t task;           /* the array task (1234_5, or a sweep point's run); -1: none */
	char *note;             /* owned: what the resolution chose for the user (a
				 * name's newest run of several), to say; or NULL */
};

#define RUNREF_INIT { RUNREF_RUN, RUNDIR_INIT, NULL, 0, -1, NULL }

/* Where names are looked up: $HPCTRAIN_OUTPUT_DIR, else "runs" (the
 * default output.dir), relative to the current directory. */
const char *runref_output_dir(void);

/* Resolves arg.  Returns 0, HPT_EXIT_NO_INPUT (nothing of that name) or
 * HPT_EXIT_USAGE (a name that fits sweeps and runs, or several sweeps:
 * err lists them).  A name of several runs and no sweep is its newest
 * run (the latest submission), and out->note says so, naming the others'
 * form NAME/HASH; the caller says it on stderr. */
int runref_resolve(const char *arg, struct runref *out, struct sbuf *err);
void runref_release(struct runref *r);

/* Opens the run (or attempt) directory dir as a RUN, its job id and
 * array task from its submit.json.  0 or HPT_EXIT_NO_INPUT with err. */
int runref_open_run(const char *dir, struct runref *out, struct sbuf *err);

/* For a JOB: the run the job works in (an array task: its point's run),
 * asked of Slurm (hpt_slurm_init first); r becomes that RUN.  Other kinds
 * are left alone.  0 or a status with err. */
int runref_job_run(struct runref *r, struct sbuf *err);

/* The runs of a sweep record's points, in point order (v[i].rd.dir is
 * NULL for a run that is gone), and the record itself in *doc.  0 or
 * HPT_EXIT_NO_INPUT with err.  Free with runref_release_all and
 * json_decref. */
int runref_sweep_points(const char *record, json_t **doc, struct runref **v, size_t *n,
			struct sbuf *err);
void runref_release_all(struct runref *v, size_t n);

/* "1234" or "1234_5". */
void runref_job_text(unsigned long job_id, int64_t task, char *buf, size_t len);

#endif
