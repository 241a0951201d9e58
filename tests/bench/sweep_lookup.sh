#!/bin/sh
# sweep_lookup.sh - naming a sweep by its NAME against naming it by its
# record's path (the peer, in the same run), at 100, 1,000 and 10,000
# points.  Each size is a synthetic OUTPUT/NAME/ of N runs
# (HASH12/{resolved.yaml,submit.json}) and one sweep-HASH12.json listing
# them all, as `hpctrain submit --sweep` leaves it; no Slurm is needed:
# `hpctrain logs` resolves the name (launcher/runs/runref.c) and prints
# each point's header, reading no job state.  Goal: the NAME lookup
# within 1 s at 10,000 points (the issue's bar: 2,000 points in 1 s), and
# close to the peer: resolving the name reads the record once.
set -eu
cd "$(dirname "$0")/../.."
HPT=$PWD/bin/hpctrain
SIZES=${SWEEP_BENCH_SIZES:-100 1000 10000}
RUNS=${SWEEP_BENCH_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/hpctrain-bench-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT

# make_sweep DIR N: N runs and their one sweep record in DIR.
make_sweep() {
	mkdir -p "$1"
	awk -v dir="$1" -v n="$2" 'BEGIN {
		rec = dir "/sweep-5eed00000000.json"
		printf "{\"sweep\": \"sweep-5eed00000000\", \"name\": \"bench\", \"mode\": \"grid\",\n" > rec
		printf " \"axes\": [{\"key\": \"train.seed\", \"values\": [" > rec
		for (i = 0; i < n; i++)
			printf "%s%d", i ? "," : "", i > rec
		printf "]}],\n \"points\": [\n" > rec
		for (i = 0; i < n; i++) {
			h = sprintf("%012x", 0xabc000000000 + i * 7919)
			printf "%s{\"index\": %d, \"params\": {\"train.seed\": %d}, \"run\": \"%s\", " \
			       "\"dir\": \"%s\", \"array\": 0, \"task\": %d}\n", i ? "," : "", i, i, h, h, i > rec
			print h > (dir "/.list")
		}
		printf "],\n \"arrays\": [{\"job_id\": 4242, \"spec\": \"0-%d\", " \
		       "\"submitted_at\": \"2026-11-24T15:00:00Z\"}]}\n", n - 1 > rec
	}'
	(cd "$1" && xargs mkdir <.list)
	awk -v dir="$1" '{
		f = dir "/" $1 "/resolved.yaml"
		print "version: 1\nname: bench" > f
		close(f)
		f = dir "/" $1 "/submit.json"
		printf "{\"job_id\": 4242, \"array_task_id\": %d}\n", NR - 1 > f
		close(f)
	}' "$1/.list"
	rm "$1/.list"
}

ms() { date +%s%N; }

# best_ms CMD...: the best of RUNS runs, in ms; each must succeed.
best_ms() {
	best=
	i=0
	while [ $i -lt "$RUNS" ]; do
		t0=$(ms)
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
		t1=$(ms)
		t=$(( (t1 - t0) / 1000000 ))
		[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
		i=$((i + 1))
	done
	echo "$best"
}

printf '%-8s %14s %14s %8s\n' POINTS "by NAME (ms)" "by path (ms)" ratio
for n in $SIZES; do
	out=$work/runs-$n
	make_sweep "$out/bench" "$n"
	named=$(HPCTRAIN_OUTPUT_DIR=$out best_ms "$HPT" logs bench)
	path=$(best_ms "$HPT" logs "$out/bench/sweep-5eed00000000.json")
	awk -v n="$n" -v a="$named" -v b="$path" 'BEGIN {
		printf "%-8d %14d %14d %8.2f\n", n, a, b, (b > 0 ? a / b : 0)
	}'
	last=$named
	rm -rf "$out"
done
awk -v t="$last" 'BEGIN { printf "goal: the largest sweep by NAME within 1000 ms: %s\n", t <= 1000 ? "ok" : "over" }'
