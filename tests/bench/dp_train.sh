#!/bin/sh
# dp_train.sh - data-parallel training on this machine's 2 cores, side by
# side in one run: the cnn on Fashion-MNIST, 1 thread per rank,
#   1 rank x 64 against 2 ranks x 64 (weak scaling; goal >= 90%; with
#   allreduce overlap off, and again with it on), and the
#   exposed communication share of step time on 2 ranks with overlap
#   off, on (1 MiB buckets) and delayed (metrics.jsonl's comm_ms).
set -eu
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
HPT=$PWD/bin/hpctrain
STEPS=${DP_BENCH_STEPS:-150}
W=$(mktemp -d /tmp/hpctrain-dp-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

spec() { # FILE ALLREDUCE
	cat >"$1" <<SPEC
version: 1
name: dpbench
train:
  model: cnn
  dataset: fashion-mnist
  epochs: 1
  max_steps: $STEPS
  batch_per_rank: 64
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
  allreduce: $2
output: {dir: $W/runs, log_every_steps: 1}
SPEC
}
# summary RUN...: median step time over the runs' steps after the first
# 10 (warm-up), and the exposed communication share.  Medians of step
# times, not means of rates: a few slow steps from a noisy neighbour
# would otherwise decide the ratio.
summary() {
	for r; do cat "$r/metrics.jsonl"; done | jq -s '
		[.[] | select(.event == "step" and .step > 10)] |
		{step_ms: (map(.step_ms) | sort | .[length / 2 | floor]),
		 share: ((map(.comm_ms) | add) / (map(.step_ms) | add))}'
}
spec "$W/sync.yaml" "{overlap: false}"
spec "$W/overlap.yaml" "{overlap: true, bucket_mb: 1}"
spec "$W/delayed.yaml" "{overlap: true, bucket_mb: 1, delayed: true}"
# 1 and 2 ranks alternate, twice, both under mpirun --bind-to core (the
# same pinning on each side), so a slow spell of the machine hits both
for i in 1 2; do
	mpirun --bind-to core -np 1 "$HPT" train -q --run "$W/one$i" "$W/sync.yaml" >/dev/null
	mpirun --bind-to core -np 2 "$HPT" train -q --run "$W/two$i" "$W/sync.yaml" >/dev/null
done
mpirun --bind-to core -np 2 "$HPT" train -q --run "$W/ovl" "$W/overlap.yaml" >/dev/null
mpirun --bind-to core -np 2 "$HPT" train -q --run "$W/del" "$W/delayed.yaml" >/dev/null
one=$(summary "$W/one1" "$W/one2") two=$(summary "$W/two1" "$W/two2")
ovl=$(summary "$W/ovl") del=$(summary "$W/del")
jq -rn --argjson one "$one" --argjson two "$two" --argjson ovl "$ovl" --argjson del "$del" \
	--arg steps "$STEPS" '
	"cnn on Fashion-MNIST, batch 64 per rank, 2 x \($steps) steps each, 1 thread per rank, median step",
	"  1 rank : \($one.step_ms) ms, \(64000 / $one.step_ms | floor) samples/s",
	"  2 ranks: \($two.step_ms) ms, \(128000 / $two.step_ms | floor) samples/s global; weak-scaling efficiency \(100 * $one.step_ms / $two.step_ms | floor)% (goal >= 90%)",
	"  2 ranks, overlapped (1 MiB buckets): \($ovl.step_ms) ms; weak-scaling efficiency \(100 * $one.step_ms / $ovl.step_ms | floor)%",
	"exposed communication, share of step time on 2 ranks (metrics comm_ms / step_ms):",
	"  overlap off (one 25 MiB bucket after backward): \(1000 * $two.share | round / 10)%",
	"  overlap on (1 MiB buckets during backward)    : \(1000 * $ovl.share | round / 10)%",
	"  delayed (step t reduced behind step t+1)      : \(1000 * $del.share | round / 10)%"'
