# launcher/runs/build.mk - runs on disk and their attempts: run
# directories, what a user names (runref), sweep records, progress from
# metrics.jsonl, where each run of a sweep stands (run_state: states and
# ETA, pure; run_state_load asks Slurm), and one attempt (render, record,
# submit).

RUNS_CORE  = launcher/runs/progress.c launcher/runs/run_state.c
RUNS_SHELL = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/runref_job.c \
             launcher/runs/sweep_record.c launcher/runs/attempt.c
RUNS_SHELL += launcher/runs/run_state_load.c

UNIT_TESTS += test_rundir test_progress test_run_state
UNIT_SRC_test_rundir   = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/sweep_record.c \
                         common/fileio.c common/sbuf.c
UNIT_SRC_test_progress = launcher/runs/progress.c common/sbuf.c
UNIT_SRC_test_run_state = launcher/runs/run_state.c launcher/runs/progress.c common/sbuf.c
