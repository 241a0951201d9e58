#!/bin/sh
# accum.sh - what gradient accumulation costs when a run resumes on fewer
# ranks: a 4-rank checkpoint of the cnn on Fashion-MNIST
# (global batch 64) resumed on 2 ranks, which accumulate 2 steps of 16,
# against the same checkpoint resumed on 4 ranks of 16, on the same
# cores: this machine's, 1 thread per rank, no pinning on either side.
# The two alternate, twice, so a slow spell of the machine hits both.
# Prints the median step time and global samples/s of each and their
# ratio.  Fewer ranks than cores would not be the same cores: on a
# machine of N cores, the 4 ranks take them all, as do the 2 ranks'
# accumulation steps one after the other.
set -eu
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
HPT=$PWD/bin/hpctrain
STEPS=${ACCUM_BENCH_STEPS:-120}
W=$(mktemp -d /tmp/hpctrain-accum-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

cat >"$W/s.yaml" <<SPEC
version: 1
name: accum
train:
  model: cnn
  dataset: fashion-mnist
  epochs: 1
  max_steps: $((STEPS + 10))
  batch_per_rank: 16
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 1}
SPEC
mpi() { mpirun --oversubscribe --bind-to none -np "$@"; }
# the checkpoint both resume from: 10 steps on 4 ranks
mpi 4 "$HPT" train -q --max-steps 10 --run "$W/base" "$W/s.yaml" >/dev/null
for i in 1 2; do
	for n in 4 2; do
		cp -a "$W/base" "$W/r$n.$i"
		mpi "$n" "$HPT" train -q --run "$W/r$n.$i" "$W/s.yaml" >"$W/r$n.$i.out" 2>&1
	done
done
grep -h "accumulation steps" "$W"/r2.*.out | head -1 || true
# median step time of the resumed steps, the first 5 left out (warm-up)
median() {
	cat "$@" | jq -s '[.[] | select(.event == "step" and .step > 15) | .step_ms] |
		sort | .[length / 2 | floor]'
}
four=$(median "$W"/r4.*/metrics.jsonl) two=$(median "$W"/r2.*/metrics.jsonl)
jq -rn --argjson four "$four" --argjson two "$two" --arg steps "$STEPS" --arg cpu "$(getconf _NPROCESSORS_ONLN)" '
	"cnn on Fashion-MNIST, global batch 64, resumed from a 4-rank checkpoint, 2 x \($steps) steps each, \($cpu) cores, 1 thread per rank, median step",
	"  4 ranks x 16             : \($four) ms, \(64000 / $four | floor) samples/s",
	"  2 ranks x 2 accum. of 16 : \($two) ms, \(64000 / $two | floor) samples/s",
	"  accumulation / 4 ranks   : \(100 * $four / $two | round / 100)x"'
