# common.bash - shared setup for the CLI tests (load it with `load common`).
HPT=${HPT:-$BATS_TEST_DIRNAME/../../bin/hpctrain}
SPECS=$BATS_TEST_DIRNAME/specs
TEMPLATES=$BATS_TEST_DIRNAME/../../templates
# Exit statuses, as in common/exitcode.h.
EX_USAGE=2 EX_BAD_SPEC=3 EX_NO_INPUT=4 EX_IO=8
bats_require_minimum_version 1.5.0

wait_steps() { # RUN N: until RUN/metrics.jsonl has N step records (30 s at most)
	local n
	for _ in $(seq 300); do
		n=$(grep -c '"step"' "$1/metrics.jsonl" 2>/dev/null || true)
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
