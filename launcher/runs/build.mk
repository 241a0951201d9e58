# launcher/runs/build.mk - runs on disk and their attempts: run
# directories, what a user names (runref), sweep records, progress from
# metrics.jsonl (and the trainer's data record: common/data_read), the staging
# step's per-node records summed (stage_summary, pure; its reader
# stage_summary_load), where each run of a sweep stands (run_state: states and
# ETA, pure; run_state_load asks Slurm), one attempt (resolved and
# rendered once: attempt.c; recorded and submitted: attempt_submit.c) and
# a sweep's points as array jobs (planned: sweep_plan.c; made and
# submitted: sweep_submit.c).

RUNS_CORE  = launcher/runs/progress.c launcher/runs/run_state.c launcher/runs/attempt.c \
             launcher/runs/sweep_plan.c launcher/runs/stage_summary.c launcher/runs/resize.c
RUNS_SHELL = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/runref_job.c \
             launcher/runs/sweep_record.c launcher/runs/attempt_submit.c \
             launcher/runs/sweep_submit.c launcher/runs/run_state_load.c \
             launcher/runs/stage_summary_load.c launcher/runs/attempt_size.c

UNIT_TESTS += test_rundir test_progress test_run_state
UNIT_SRC_test_rundir    = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/sweep_record.c \
                          common/fileio.c common/jsonfile.c common/sbuf.c
UNIT_SRC_test_progress  = launcher/runs/progress.c common/data_read.c common/fileio.c \
                          common/sbuf.c
UNIT_SRC_test_run_state = launcher/runs/run_state.c launcher/runs/progress.c \
                          common/data_read.c common/fileio.c common/sbuf.c

# The staging records summed, good and hostile, and the trainer's data
# record.
UNIT_TESTS += test_stage_summary
UNIT_SRC_test_stage_summary = launcher/runs/stage_summary.c launcher/runs/stage_summary_load.c \
                              common/data_read.c common/fileio.c common/sbuf.c

# The sweep's plan, with points loaded and rendered as submit does: the
# spec core, the renderer, the run's pure parts (rundir.c for the
# release of a point's run) and the version.
UNIT_TESTS += test_sweep_plan
UNIT_SRC_test_sweep_plan = launcher/runs/sweep_plan.c launcher/runs/attempt.c launcher/runs/resize.c \
                           launcher/runs/rundir.c $(SLURM_CORE) $(SPEC_CORE) $(SPEC_SHELL)

# One attempt: rendered once, refused when not, reloaded from its run.
UNIT_TESTS += test_attempt
UNIT_SRC_test_attempt = launcher/runs/attempt.c launcher/runs/attempt_submit.c launcher/runs/resize.c \
                        launcher/runs/rundir.c $(SLURM_CORE) $(SLURM_SHELL) $(SPEC_CORE) \
                        $(SPEC_SHELL)

# The next attempt's size (resize, pure) and each attempt's granted size
# as recorded and read back (attempt_size).
UNIT_TESTS += test_resize
UNIT_SRC_test_resize = launcher/runs/resize.c launcher/runs/attempt_size.c \
                       launcher/runs/rundir.c launcher/runs/runref.c \
                       launcher/runs/sweep_record.c common/fileio.c common/jsonfile.c \
                       common/sbuf.c
