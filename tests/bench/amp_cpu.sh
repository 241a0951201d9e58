#!/bin/sh
# amp_cpu.sh - bf16 vs fp32 training throughput of cnn (Fashion-MNIST)
# and hepcnn (hep-synthetic 64x64) on this CPU, side by side in one run:
# the same spec, steps and threads (THREADS, default 2; STEPS, default
# 200), only train.precision differs.  Prints samples/s of each, the
# ratio (goal: 1.74x, the seeds' AMP gain) and the kernel oneDNN chose.
# Then the same models' steps interleaved in one process
# (build/bench/bench_amp: fp32, bf16, fp32, ...), which this shared VM's
# drifting speed cannot skew the way it skews back-to-back runs.
# Not a test: it asserts nothing about time.
set -eu
cd "$(dirname "$0")/../.."
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
THREADS=${THREADS:-2} STEPS=${STEPS:-200}
export OMP_NUM_THREADS=$THREADS
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf 'bf16 vs fp32 training, batch 128, %s steps, %s thread(s)\n' "$STEPS" "$THREADS"
for m in cnn:fashion-mnist hepcnn:hep-synthetic; do
	model=${m%%:*} data=${m#*:}
	cat >"$W/$model.yaml" <<YAML
version: 1
name: bench
train:
  model: $model
  dataset: $data
  epochs: 1
  batch_per_rank: 128
  optimizer: {name: sgd, lr: 0.01, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 100000}
YAML
	for p in fp32 bf16; do
		bin/hpctrain-train --run "$W/$model-$p" --threads "$THREADS" --max-steps "$STEPS" \
			--set train.precision=$p "$W/$model.yaml" >/dev/null 2>"$W/$model-$p.err"
		sed -n 's/.*"event":"summary".*"mean_samples_per_s":\([0-9.]*\).*/\1/p' \
			"$W/$model-$p/metrics.jsonl" >"$W/$model-$p.sps"
	done
	f=$(cat "$W/$model-fp32.sps") b=$(cat "$W/$model-bf16.sps")
	printf '  %-7s fp32 %8.0f samples/s   bf16 %8.0f samples/s   %.2fx (goal 1.74x)\n' \
		"$model" "$f" "$b" "$(echo "$b $f" | awk '{print $1/$2}')"
done
sed -n 's/.*; \(oneDNN .*\)$/  \1/p' "$W/cnn-bf16.err" | head -1
[ -x build/bench/bench_amp ] || make -s build/bench/bench_amp
printf 'interleaved steps, one process (build/bench/bench_amp), %s thread(s):\n' "$THREADS"
build/bench/bench_amp cnn "$STEPS" "$THREADS"
build/bench/bench_amp hepcnn "$(( STEPS / 4 + 10 ))" "$THREADS"
