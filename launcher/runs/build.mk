# launcher/runs/build.mk - runs on disk and their attempts: run
# directories (published whole, under a lock: rundir_publish.c), what
# a user names (runref), sweep records, progress from
# metrics.jsonl (and the trainer's data record: common/data_read), the staging
# step's per-node records summed (stage_summary, pure; its reader
# stage_summary_load), where each run of a sweep stands (run_state: states and
# ETA, pure; run_state_load asks Slurm), one attempt (resolved and
# rendered once: attempt.c; recorded and submitted: attempt_submit.c) and
# a sweep's points as array jobs (planned: sweep_plan.c; made and
# submitted: sweep_submit.c).

UNIT_TESTS += test_rundir test_progress test_run_state test_stage_summary test_sweep_plan \
              test_attempt test_resize test_attempt_restart
