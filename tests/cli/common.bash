# common.bash - shared setup for the CLI tests (load it with `load common`).
HPT=${HPT:-$BATS_TEST_DIRNAME/../../bin/hpctrain}
SPECS=$BATS_TEST_DIRNAME/specs
TEMPLATES=$BATS_TEST_DIRNAME/../../templates
# Exit statuses, as in common/exitcode.h.
EX_USAGE=2 EX_BAD_SPEC=3 EX_NO_INPUT=4 EX_IO=8
bats_require_minimum_version 1.5.0
