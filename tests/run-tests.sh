#!/bin/bash
# run-tests.sh - run every test suite and end with one summary line:
#   N passed, N failed[, N skipped]
# Unit tests (cmocka) run twice, plain and under ASan+UBSan; CLI tests are
# bats files; the fuzz target replays its seed corpus.  All speak TAP, so
# one parser counts them.  Logs of each suite land in build/test-logs/,
# with the seconds it took in NAME.time.
#
# Suites can run side by side, HPT_TEST_JOBS lanes at once: one lane for
# what computes all the time (the unit, sanitizer and fuzz suites, then
# the trainer's bats files), one for the files that look at the host's
# SquashFS mounts, and a pool of the others, most of whose time is spent
# waiting on Slurm, srun and the programs they start.  Bats files share
# nothing that could collide: each starts its own throw-away cluster in
# a slot of its own (tests/cluster/up.sh), in a temporary directory of
# its own, with a node ledger of its own (tests/cli/common.bash), and
# the test images are made once under a lock (test_image, mpiimage.sh).
#
# The default is a lane a CPU, at most 4.  make check costs about 20
# minutes of CPU (user and system) on these 2-core machines, and its
# suites keep the cores about 60% busy (the cluster files wait on Slurm
# most of the time, the trainer's files compute): one lane took 24
# minutes, two 16.  Three were no faster (17): beside a third lane, the
# CPU lane's suites took half as long again, and that lane is the
# longest.  Measured again at 1,640 tests: two lanes 18m06s, three
# 18m34s (the trainer's files 1.3 to 2.2 times as long, and load-bound
# failures in the podman and 2-node files).
# HPT_TEST_JOBS=N chooses.
# The summary is printed in a fixed order whatever finished first, then
# each suite's time and the slowest tests.
set -u
cd "$(dirname "$0")/.." || exit 70
LOGS=build/test-logs
mkdir -p "$LOGS/unit" "$LOGS/asan" "$LOGS/cli" "$LOGS/fuzz"
rm -f "$LOGS"/*/*.tap "$LOGS"/*/*.time "$LOGS"/*/*.rc
export HPT="$PWD/bin/hpctrain"
JOBS=${HPT_TEST_JOBS:-$(nproc)}
case $JOBS in '' | *[!0-9]* | 0) echo "HPT_TEST_JOBS: expected a number of lanes, got '$JOBS'" >&2; exit 64 ;; esac
[ "$JOBS" -le 4 ] || JOBS=4
PASS=0 FAIL=0 SKIP=0
ORDER=()

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

# run_suite NAME CMD...: runs one suite into its log, keeping its status
# and its time for the summary.
run_suite() {
	local name=$1 start rc
	shift
	ORDER+=("$name")
	start=$(date +%s)
	"$@" >"$LOGS/$name.tap" 2>&1
	rc=$?
	echo "$rc" >"$LOGS/$name.rc"
	echo $(($(date +%s) - start)) >"$LOGS/$name.time"
}

# The unit lane: every cmocka binary, again under each lower
# instruction-set cap for the backend's kernels (the trainer emulates
# bf16 below AVX512-BF16; see tests/cli/isa.bats), the sanitized
# binaries, and the fuzz corpus.  The sanitized binaries are built here,
# beside the first suites (make check builds only the plain ones first):
# their minute of compiling is no longer a minute before every suite.
# HPT_SAN_MAKE is the make command (make check passes its own).
unit_lane() {
	local t cap name san
	${HPT_SAN_MAKE:-make --no-print-directory} san-test-bins >"$LOGS/san-build.log" 2>&1 &
	san=$!
	for t in build/tests/test_*; do
		[ -x "$t" ] || continue
		CMOCKA_MESSAGE_OUTPUT=TAP run_suite "unit/${t##*/}" "$t"
	done
	for cap in avx2 avx512_core; do
		for t in build/tests/test_amp build/tests/test_backend; do
			[ -x "$t" ] || continue
			CMOCKA_MESSAGE_OUTPUT=TAP HPCTRAIN_MAX_CPU_ISA=$cap run_suite "unit/${t##*/}@$cap" "$t"
		done
	done
	if ! wait "$san"; then
		run_suite "asan/build" sh -c 'echo "not ok 1 - the sanitized unit tests did not build (see $1)"; exit 1' \
			sh "$LOGS/san-build.log"
	fi
	for t in build/tests-san/test_*; do
		[ -x "$t" ] || continue
		CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			run_suite "asan/${t##*/}" "$t"
	done
	# the Python module's suites, with the python3 that ranks run
	# (Debian's, which has torch)
	run_suite "unit/python" /usr/bin/python3 -B tests/python/tap.py
	name=fuzz/spec-corpus
	if [ -x build/fuzz/fuzz_spec ]; then
		run_suite "$name" sh -c 'build/fuzz/fuzz_spec -runs=0 tests/fuzz/corpus >"$1" 2>&1 &&
			echo "ok 1 - fuzz_spec replays $(ls tests/fuzz/corpus | wc -l) corpus inputs" ||
			echo "not ok 1 - fuzz_spec crashed on the corpus (see $1)"' sh "$LOGS/fuzz.log"
	else
		run_suite "$name" echo "ok 1 - fuzz_spec # SKIP clang with libFuzzer not available"
	fi
	printf '%s\n' "${ORDER[@]}" >"$LOGS/unit-lane.order"
}

# The lanes.  One for what uses the CPUs all the time: the unit,
# sanitizer and fuzz suites, then the trainer's bats files, whose MPI
# ranks and OpenMP threads compute; side by side they would only slow
# each other down.  One for the files that look at what a node has
# mounted or running under /tmp/hpctrain-squash-UID (SquashFS images
# started by ch-run and podman), which is one per host and so shared by
# every cluster here.  The other bats files spend most of their time
# waiting on Slurm and the programs it starts (a 2-core machine is about
# a quarter busy during supervise.bats): each is a lane of its own in a
# pool of the lanes left, slowest first.
CPU_FILES="isa amp dp train resize"
MOUNT_FILES="container container_cluster stage_cluster"
# The pool's files named here in the order they last took, on a 2-core
# machine, slowest first; then the rest by name.
SLOW="supervise range_cluster sweep matrix_cluster submit stage doctor status docs plan logs launch environment template rerun"
bats_files() {
	local n
	for n in $SLOW; do
		[ -f "tests/cli/$n.bats" ] && echo "tests/cli/$n.bats"
	done
	for n in tests/cli/*.bats; do
		case " $SLOW $CPU_FILES $MOUNT_FILES " in *" $(basename "$n" .bats) "*) continue ;; esac
		echo "$n"
	done
}

bats_file() {
	local n=${1##*/}
	run_suite "cli/${n%.bats}" bats --tap --timing "$1"
}

group_lane() {
	local n
	for n in $1; do
		[ -f "tests/cli/$n.bats" ] && bats_file "tests/cli/$n.bats"
	done
}

cpu_lane() {
	unit_lane
	group_lane "$CPU_FILES"
}

# Lanes share the cores, and a process that spins while it waits takes
# a core from the one it waits for: MPI ranks yield in their progress
# loop when idle, OpenMP threads sleep at a barrier.  Production runs
# one rank a core and keeps both knobs at their defaults.
if [ "$JOBS" -gt 1 ]; then
	export OMPI_MCA_mpi_yield_when_idle=1 OMP_WAIT_POLICY=PASSIVE
fi

# A pool of $JOBS lanes: the CPU lane and the mounts lane first, then
# one bats file a lane.
running=0
start_lane() {
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	"$@" &
	running=$((running + 1))
}
# The MPI image of container.bats (debootstrap: a minute of downloading
# and unpacking, mostly waiting) is made beside the suites from the
# start, even in one lane: container.bats runs minutes later and finds
# it made, or waits on the same lock.  (A grandchild: the pool's wait -n
# below must see only lanes end; the end waits for it through its lock.)
(sh tests/cli/helpers/mpiimage.sh build/images/mpi >"$LOGS/mpiimage.log" 2>&1 &)

BATS=()
for n in $CPU_FILES $MOUNT_FILES; do
	[ -f "tests/cli/$n.bats" ] && BATS+=("cli/$n")
done
start_lane cpu_lane
start_lane group_lane "$MOUNT_FILES"
for b in $(bats_files); do
	n=${b##*/}
	BATS+=("cli/${n%.bats}")
	start_lane bats_file "$b"
done
wait
[ ! -e build/images/mpi.lock ] || flock build/images/mpi.lock true

while read -r name; do
	count_tap "$name" "$(cat "$LOGS/$name.rc" 2>/dev/null || echo 1)"
done < <(cat "$LOGS/unit-lane.order" 2>/dev/null; printf '%s\n' "${BATS[@]}" | sort)

echo "suite times (s), slowest first:"
for f in "$LOGS"/*/*.time; do
	n=${f#$LOGS/}
	echo "$(cat "$f") ${n%.time}"
done | sort -rn | awk '$1 >= 5 { printf "  %5d  %s\n", $1, $2 } $1 < 5 { rest += $1; k++ }
	END { if (k) printf "  %5d  (%d suites under 5 s)\n", rest, k }'

echo "slowest tests (ms):"
grep -h '^ok .* in [0-9]*ms$' "$LOGS"/cli/*.tap 2>/dev/null |
	sed 's/^ok [0-9]* \(.*\) in \([0-9]*\)ms$/\2 \1/' | sort -rn | head -25 |
	awk '{ t = $1; $1 = ""; printf "  %7d %s\n", t, substr($0, 1, 90) }'

line="$PASS passed, $FAIL failed"
[ "$SKIP" -ne 0 ] && line="$line, $SKIP skipped"
echo "$line"
[ "$FAIL" -eq 0 ]
