#!/bin/sh
# gpu_bench.sh - training throughput and model FLOP utilisation (MFU) on
# this machine's first GPU: cnn (Fashion-MNIST), hepcnn (hep-synthetic
# 64x64) and resnet-small (Fashion-MNIST) at fp32, bf16 and fp16, side by
# side in one run: the same spec, batch (BATCH, default 256) and steps
# (STEPS, default 200), only train.precision differs.
#
# MFU = 3 x model FLOPs per sample x samples/s (the summary's gflops)
# over the peak of the same precision, measured in this run by
# build/bench/bench_cuda_peak (a 16384^3 cuBLASLt GEMM through the
# trainer's be_cuda_gemm: fp32 without TF32, bf16/fp16 on tensor cores).
# The bundled models are small: expect low MFU at fp32 on tiny images,
# which is what the figure is for.  Not a test: it asserts nothing about
# time.  Without a GPU (or a build without nvcc) it prints
# "skipped: no GPU" and exits 0.
set -eu
cd "$(dirname "$0")/../.."
BATCH=${BATCH:-256} STEPS=${STEPS:-200}
if [ ! -x build/bench/bench_cuda_peak ] || [ ! -x bin/hpctrain-train ]; then
	echo "skipped: no GPU"
	exit 0
fi
peak=$(build/bench/bench_cuda_peak)
case $peak in "skipped: no GPU"*) echo "skipped: no GPU"; exit 0 ;; esac
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || echo "unknown")
printf 'GPU training on %s: batch %s, %s steps\n' "$name" "$BATCH" "$STEPS"
echo "$peak" | sed -n 's/^peak_tflops \(.*\) \(.*\)$/  measured GEMM peak \1: \2 TFLOP\/s/p'
printf '  %-13s %-5s %11s %9s %7s\n' model prec samples/s TFLOP/s MFU
status=0
for m in cnn:fashion-mnist hepcnn:hep-synthetic resnet-small:fashion-mnist; do
	model=${m%%:*} data=${m#*:}
	cat >"$W/$model.yaml" <<YAML
version: 1
name: bench
train:
  model: $model
  dataset: $data
  epochs: 1
  batch_per_rank: $BATCH
  device: cuda
  optimizer: {name: sgd, lr: 0.01, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 100000}
YAML
	for p in fp32 bf16 fp16; do
		if ! bin/hpctrain-train --run "$W/$model-$p" --max-steps "$STEPS" \
			--set train.precision=$p "$W/$model.yaml" >/dev/null 2>"$W/$model-$p.err"; then
			printf '  %-13s %-5s failed: %s\n' "$model" "$p" "$(tail -1 "$W/$model-$p.err")"
			status=1
			continue
		fi
		sps=$(jq -r 'select(.event == "summary") | .mean_samples_per_s' "$W/$model-$p/metrics.jsonl")
		gf=$(jq -r 'select(.event == "summary") | .gflops' "$W/$model-$p/metrics.jsonl")
		pk=$(echo "$peak" | awk -v p="$p" '$1 == "peak_tflops" && $2 == p { print $3 }')
		awk -v m="$model" -v p="$p" -v s="$sps" -v g="$gf" -v k="$pk" 'BEGIN {
			printf "  %-13s %-5s %11.0f %9.2f %6.1f%%\n", m, p, s, g / 1000, 100 * g / 1000 / k }'
	done
done
sed -n 's/.*; \(CUDA .*\)$/  \1/p' "$W/cnn-fp32.err" | head -1
exit $status
