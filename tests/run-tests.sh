#!/bin/sh
# run-tests.sh - run every test suite and end with one summary line:
#   N passed, N failed[, N skipped]
# Unit tests (cmocka) run twice, plain and under ASan+UBSan; CLI tests are
# bats files; the fuzz target replays its seed corpus.  All speak TAP, so
# one parser counts them.  Logs of each suite land in build/test-logs/.
set -u
cd "$(dirname "$0")/.." || exit 70
LOGS=build/test-logs
mkdir -p "$LOGS/unit" "$LOGS/asan" "$LOGS/cli" "$LOGS/fuzz"
export HPT="$PWD/bin/hpctrain"
PASS=0 FAIL=0 SKIP=0

# count_tap NAME RC: adds the results in $LOGS/NAME.tap to the totals.  A
# suite that exits non-zero without reporting a failure (a crash, a
# sanitizer abort) counts as one failed test.
count_tap() {
	set -- "$1" "$2" $(awk '
		/^ok / { if (tolower($0) ~ /# skip/) s++; else p++; next }
		/^not ok / { if ($0 ~ /# SKIP/) s++; else f++; next }
		END { printf "%d %d %d", p, f, s }' "$LOGS/$1.tap")
	if [ "$2" -ne 0 ] && [ "$4" -eq 0 ]; then
		set -- "$1" "$2" "$3" 1 "$5"
		echo "not ok - $1 exited with status $2" >>"$LOGS/$1.tap"
	fi
	PASS=$((PASS + $3)) FAIL=$((FAIL + $4)) SKIP=$((SKIP + $5))
	if [ "$4" -ne 0 ]; then
		printf '%-28s %s passed, %s failed (log: %s)\n' "$1" "$3" "$4" "$LOGS/$1.tap"
		grep -E '^not ok|^# ' "$LOGS/$1.tap" | grep -v '^# not ok' | head -40 | sed 's/^/    /'
	else
		printf '%-28s %s passed%s\n' "$1" "$3" "$( [ "$5" -ne 0 ] && echo ", $5 skipped")"
	fi
}

run_suite() {
	name=$1
	shift
	"$@" >"$LOGS/$name.tap" 2>&1
	count_tap "$name" $?
}

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	CMOCKA_MESSAGE_OUTPUT=TAP run_suite "unit/${t##*/}" "$t"
done
# The backend's kernels again under each lower instruction-set cap (the
# trainer emulates bf16 below AVX512-BF16; see tests/cli/isa.bats).
for cap in avx2 avx512_core; do
	for t in build/tests/test_amp build/tests/test_backend; do
		[ -x "$t" ] || continue
		CMOCKA_MESSAGE_OUTPUT=TAP HPCTRAIN_MAX_CPU_ISA=$cap run_suite "unit/${t##*/}@$cap" "$t"
	done
done
for t in build/tests-san/test_*; do
	[ -x "$t" ] || continue
	CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		run_suite "asan/${t##*/}" "$t"
done
for b in tests/cli/*.bats; do
	[ -f "$b" ] || continue
	n=${b##*/}
	run_suite "cli/${n%.bats}" bats --tap "$b"
done
if [ -x build/fuzz/fuzz_spec ]; then
	name=fuzz/spec-corpus
	if build/fuzz/fuzz_spec -runs=0 tests/fuzz/corpus >"$LOGS/fuzz.log" 2>&1; then
		echo "ok 1 - fuzz_spec replays $(ls tests/fuzz/corpus | wc -l) corpus inputs" >"$LOGS/$name.tap"
	else
		echo "not ok 1 - fuzz_spec crashed on the corpus (see $LOGS/fuzz.log)" >"$LOGS/$name.tap"
	fi
	count_tap "$name" 0
else
	mkdir -p "$LOGS/fuzz"
	echo "ok 1 - fuzz_spec # SKIP clang with libFuzzer not available" >"$LOGS/fuzz/spec-corpus.tap"
	count_tap fuzz/spec-corpus 0
fi

line="$PASS passed, $FAIL failed"
[ "$SKIP" -ne 0 ] && line="$line, $SKIP skipped"
echo "$line"
[ "$FAIL" -eq 0 ]
