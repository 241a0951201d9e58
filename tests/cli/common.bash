# common.bash - shared setup for the CLI tests (load it with `load common`).
HPT=${HPT:-$BATS_TEST_DIRNAME/../../bin/hpctrain}
SPECS=$BATS_TEST_DIRNAME/specs
TEMPLATES=$BATS_TEST_DIRNAME/../../templates
# Exit statuses, as in common/exitcode.h.
EX_USAGE=2 EX_BAD_SPEC=3 EX_NO_INPUT=4 EX_IO=8
bats_require_minimum_version 1.5.0
# The trainer picks kernels by timing them (HPCTRAIN_KERNELS=tune), so
# two runs may choose differently and differ in the last bits; tests that
# compare runs need the fixed choice.  isa.bats turns the tuning back on.
export HPCTRAIN_KERNELS=${HPCTRAIN_KERNELS:-fixed}
# A node ledger of the test's own (the file's, in setup_file): a node
# another test (or a real job of the user running the suite) put in
# cooldown must not leave a job here waiting or refused, nor one failed
# preflight fail every later test of the file.  A file that tests the
# ledger sets its own.
export HPCTRAIN_LEDGER=${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-${TMPDIR:-/tmp}}}/ledger/nodes.json

wait_steps() { # RUN N: until RUN/metrics.jsonl has N step records (30 s at most)
	local n
	for _ in $(seq 300); do
		n=$(grep -c '"step"' "$1/metrics.jsonl" 2>/dev/null || true)
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# make_shards DIR: a small data set of hpctrain shards (64 training and
# 16 test samples of 8x8x1, two classes), made by `hpctrain data convert`.
make_shards() {
	python3 - "$1.idx" <<'PY'
import gzip, os, struct, sys
w = sys.argv[1]
os.makedirs(w, exist_ok=True)
for split, n in (("train", 64), ("test", 16)):
    imgs = bytes((i * 7 + j) % 200 for i in range(n) for j in range(64))
    labs = bytes(i % 2 for i in range(n))
    with gzip.open(f"{w}/{split}-img.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 8, 8) + imgs)
    with gzip.open(f"{w}/{split}-lab.gz", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + labs)
PY
	"$HPT" data convert -o "$1" "$1.idx/train-img.gz" "$1.idx/train-lab.gz" >/dev/null &&
		"$HPT" data convert -o "$1" --split test "$1.idx/test-img.gz" \
			"$1.idx/test-lab.gz" >/dev/null
}

# stage_records RUN SRC N: the real staging step (bin/hpctrain-stage) on
# N mpirun ranks here, each a simulated node n<rank> caching in
# $BATS_TEST_TMPDIR/cache/n<rank>, staging SRC as entry ds and recording
# in RUN/stage/n<rank>.json, as the job's stage step records.
stage_records() {
	local node=$BATS_TEST_TMPDIR/node.sh
	command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
	printf '#!/bin/sh\nSLURMD_NODENAME=n$OMPI_COMM_WORLD_RANK exec "$HPT" "$@"\n' >"$node"
	chmod +x "$node"
	mkdir -p -m 700 "$1/stage"
	HPT=$HPT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
		mpirun --oversubscribe --bind-to none -np "$3" "$node" stage \
		--cache "$BATS_TEST_TMPDIR/cache/%n" --report "$1/stage/%n.json" --entry ds="$2"
}

# test_image DIR: helpers/mkimage.sh's image at DIR, made once and again
# only when the script is newer.  Under a lock, since bats files run side
# by side (tests/run-tests.sh) and three of them use the same image.
test_image() {
	local dir=$1
	mkdir -p "${dir%/*}"
	(
		flock 9
		if [ ! -d "$dir" ] || [ "$BATS_TEST_DIRNAME/helpers/mkimage.sh" -nt "$dir" ]; then
			sh "$BATS_TEST_DIRNAME/helpers/mkimage.sh" "$dir"
		fi
	) 9>"$dir.lock"
}

# wait_for FILE PATTERN: until FILE matches (60 s at most).
wait_for() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no '$2' in $1"
	return 1
}

# A memory cgroup of 64 MiB below this shell's own (v1 or v2), made for
# one test: its path in MEMCG.  Skips where cgroups cannot be made.
memcg() {
	local own
	if own=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)/\3/p' /proc/self/cgroup) &&
		[ -n "$own" ] && [ -d "/sys/fs/cgroup/memory$own" ]; then
		MEMCG=/sys/fs/cgroup/memory${own%/}/hpt-oom-$BATS_TEST_NUMBER-$$
		mkdir "$MEMCG" 2>/dev/null && echo $((64 << 20)) >"$MEMCG/memory.limit_in_bytes" &&
			echo 0 >"$MEMCG/memory.swappiness" 2>/dev/null && return 0
	elif own=$(sed -n 's/^0:://p' /proc/self/cgroup) && [ -f "/sys/fs/cgroup${own%/}/memory.events" ]; then
		MEMCG=/sys/fs/cgroup${own%/}/hpt-oom-$BATS_TEST_NUMBER-$$
		mkdir "$MEMCG" 2>/dev/null && echo $((64 << 20)) >"$MEMCG/memory.max" &&
			echo 0 >"$MEMCG/memory.swap.max" 2>/dev/null && return 0
	fi
	rmdir "${MEMCG:-/nonexistent}" 2>/dev/null
	skip "cannot make a memory cgroup here"
}

# code_tree_is_listed DIR CODE_JSON: DIR (a code snapshot, or a node's
# copy of one) holds exactly the files and links the run's code.json
# lists, each file with its sha256 and each link with its target: no
# file more (a __pycache__ written by the job), none changed.
code_tree_is_listed() {
	local want got
	want=$(jq -r '.files[] | if .link then "\(.path) -> \(.link)" else "\(.path) \(.sha256)" end' "$2" | sort)
	got=$(cd "$1" && {
		find . -type f -exec sha256sum {} + | sed 's|^\([0-9a-f]*\)  \./\(.*\)$|\2 \1|'
		find . -type l -printf '%P -> %l\n'
		find . -mindepth 1 -type d -name __pycache__ -printf '%P/ (a directory)\n'
	} | sort)
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}
