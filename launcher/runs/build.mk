# launcher/runs/build.mk - runs on disk and their attempts: run
# directories, what a user names (runref), sweep records, progress from
# metrics.jsonl, and one attempt (render, record, submit).

RUNS_CORE  = launcher/runs/progress.c
RUNS_SHELL = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/runref_job.c \
             launcher/runs/sweep_record.c launcher/runs/attempt.c

UNIT_TESTS += test_rundir test_progress
UNIT_SRC_test_rundir   = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/sweep_record.c \
                         common/fileio.c common/sbuf.c
UNIT_SRC_test_progress = launcher/runs/progress.c common/sbuf.c
