# launcher/job/build.mk - what the login-node commands do across the
# concerns of launcher/ (see the README's layout): the program's code, a
# venv's packages (venv_pin; venv_list pure), an image's digest and a
# data set's manifests pinned into a job (code_pin;
# its listing, ignore rules and limits are pure, tested by test_code), a
# sweep submitted, plan's shapes and calibration, status's JSON and
# watch, report's charts of a sweep and of staging, and what differs
# between two runs (run_diff, code_diff; run_diff_text, pure).

UNIT_TESTS += test_job test_run_diff
UNIT_TESTS += test_code
