/* runfile.h - the names of the files in a run directory, each in one
 * place: they are the contract between submit, the batch script, launch,
 * the trainer, doctor, stage, status, report and plan.  Here in common/
 * since every layer names some of them (the trainer writes the metrics,
 * render.c's script reads the resolved spec).  A run is laid out as
 *
 *   RUN/resolved.yaml      the resolved spec (the run's identity)
 *   RUN/job.sbatch         its batch script
 *   RUN/submit.json        the submission's record (job id, plan, ...)
 *   RUN/code.json          the code snapshot the job runs (launcher/job/code_pin.h)
 *   RUN/software.json      the software it ran with: hpctrain's version, the
 *                          venv's packages, modules, oneDNN (common/software.h)
 *   RUN/metrics.jsonl      the program's step and summary records
 *   RUN/nodes.json         the size Slurm granted the attempt
 *   RUN/preflight.json     doctor's preflight, RUN/lost.json its lost nodes
 *   RUN/stage/<node>.json  the stage step's record of each node
 *   RUN/end.json           how the batch script ended (its exit, a requeue)
 *   RUN/checkpoints/       the checkpoints (in a later attempt that resumes,
 *                          a link to the run's first directory's)
 *   RUN/python/hpctrain/   the Python module the attempt was submitted with
 *   RUN/code.json          the program's source tree as snapshot (code_diff.h)
 *   RUN/attempts/N/        attempt N > 1, laid out the same
 *
 * and a sweep's array directory holds RUNFILE_TASK_LINK: one link per
 * array index, to the point's run. */
#ifndef HPT_RUNFILE_H
#define HPT_RUNFILE_H

#define RUNFILE_SPEC      "resolved.yaml"
#define RUNFILE_SCRIPT    "job.sbatch"
#define RUNFILE_SUBMIT    "submit.json"
#define RUNFILE_CODE      "code.json"
#define RUNFILE_SOFTWARE  "software.json"
#define RUNFILE_METRICS   "metrics.jsonl"
#define RUNFILE_NODES     "nodes.json"
#define RUNFILE_PREFLIGHT "preflight.json"
#define RUNFILE_LOST      "lost.json"
#define RUNFILE_END       "end.json"
#define RUNFILE_CHECKPOINTS "checkpoints"
#define RUNFILE_STAGE     "stage"
#define RUNFILE_ATTEMPTS  "attempts"
#define RUNFILE_PYTHON    "python"
/* The array task's link in a sweep array's directory: "%s/%lld" of the
 * directory and the task index (render_array.c's script follows it). */
#define RUNFILE_TASK_LINK "%s/%lld"

#endif
