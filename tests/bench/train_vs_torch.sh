#!/bin/sh
# train_vs_torch.sh - hpctrain train vs PyTorch on the issue-6 cnn, side
# by side in one command: Fashion-MNIST, batch 128, the same number of
# steps and threads (THREADS, default 1; STEPS, default 300).  Prints
# samples/s of each, the ratio, and hpctrain's achieved GFLOP/s against a
# large oneDNN fp32 GEMM and convolution measured in the same run.
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE slow OpenBLAS; both are unset for
# both programs.  Not a test: it asserts nothing about time.
set -eu
cd "$(dirname "$0")/../.."
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
THREADS=${THREADS:-1} STEPS=${STEPS:-300}
export OMP_NUM_THREADS=$THREADS
PY=/usr/bin/python3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -x build/bench/bench_peak ] || make -s build/bench/bench_peak
cat >"$W/cnn.yaml" <<YAML
version: 1
name: bench
train:
  model: cnn
  dataset: fashion-mnist
  epochs: 1
  batch_per_rank: 128
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 1000}
YAML
bin/hpctrain-train -q --run "$W/run" --threads "$THREADS" --max-steps "$STEPS" "$W/cnn.yaml" >/dev/null
ours=$(sed -n 's/.*"event":"summary".*"mean_samples_per_s":\([0-9.]*\).*"gflops":\([0-9.]*\).*/\1 \2/p' "$W/run/metrics.jsonl")
sps=${ours% *} gf=${ours#* }
if $PY -c 'import torch' 2>/dev/null; then
	torch=$($PY tests/torch/bench_cnn.py "$STEPS" 128 "$THREADS" | sed -n 's/^samples_per_s //p')
else
	torch=
fi
peak=$(build/bench/bench_peak)
gemm=$(echo "$peak" | sed -n 's/^gemm_gflops //p')
conv=$(echo "$peak" | sed -n 's/^conv_gflops //p')
printf 'cnn, Fashion-MNIST, batch 128, %s steps, %s thread(s)\n' "$STEPS" "$THREADS"
printf '  hpctrain train   %10.0f samples/s   %6.1f GFLOP/s (%.0f%% of GEMM peak %.0f, %.0f%% of conv peak %.0f)\n' \
	"$sps" "$gf" "$(echo "$gf $gemm" | awk '{print 100*$1/$2}')" "$gemm" \
	"$(echo "$gf $conv" | awk '{print 100*$1/$2}')" "$conv"
if [ -n "$torch" ]; then
	printf '  PyTorch %s  %10.0f samples/s\n' "$($PY -c 'import torch; print(torch.__version__[:6])')" "$torch"
	printf '  ratio            %10.2fx (goal: 3x)\n' "$(echo "$sps $torch" | awk '{print $1/$2}')"
else
	echo "  PyTorch: not installed (python3-torch); no ratio"
fi
