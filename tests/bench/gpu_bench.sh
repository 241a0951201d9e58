#!/bin/sh
# gpu_bench.sh - training throughput and model FLOP utilisation (MFU) on
# this machine's first GPU: cnn (Fashion-MNIST), hepcnn (hep-synthetic
# 64x64) and resnet-small (Fashion-MNIST) at fp32, bf16 and fp16, side by
# side in one run: the same spec, batch (BATCH, default 256) and steps
# (STEPS, default 200), only train.precision differs.
#
# Throughput counts the steps after the first WARMUP (default 20): cuDNN's
# plans, the first growth of the scratch buffers and the clocks' ramp-up
# land in those.  It is BATCH x steps over their summed step_ms, from the
# metrics' step records (one per step here).
#
# MFU = 3 x model FLOPs per sample x samples/s (the FLOPs per sample are
# the summary's gflops over its mean_samples_per_s) over two peaks:
#  - spec: the GPU's specification peak for the precision, dense (no
#    sparsity) at boost clock, from the table in spec_peak keyed by the
#    name nvidia-smi reports; fp32 is the CUDA-core peak, since the
#    trainer uses no TF32; "n/a" for a GPU not in the table;
#  - GEMM: the peak measured in this run by build/bench/bench_cuda_peak
#    (a 16384^3 cuBLASLt GEMM through the trainer's be_cuda_gemm).
# copy and sync are per step, after the warm-up: copy_ms (the batch into
# pinned memory and to the GPU; the device part overlaps the previous
# step) and sync_ms (the host waiting for the GPU: the loss, and at fp16
# the overflow check).
#
# The peer runs beside each row: tests/torch/bench_gpu.py, PyTorch on
# the same GPU with the same model, batch, steps and warm-up, as its
# users run it at its best (channels_last, cudnn.benchmark, autocast at
# bf16 and fp16, the data already on the GPU); its configuration is
# printed under the table.  ratio is hpctrain's samples/s over the
# peer's.  PYTHON (default python3) is the interpreter that holds torch;
# without torch or CUDA there, the peer's columns read n/a.
#
# The bundled models are small: expect low MFU at fp32 on tiny images,
# which is what the figure is for.  Not a test: it asserts nothing about
# time.  Without a GPU (or a build without nvcc) it prints
# "skipped: no GPU" and exits 0.
set -eu
cd "$(dirname "$0")/../.."
BATCH=${BATCH:-256} STEPS=${STEPS:-200} WARMUP=${WARMUP:-20} PYTHON=${PYTHON:-python3}
if [ ! -x build/bench/bench_cuda_peak ] || [ ! -x bin/hpctrain-train ]; then
	echo "skipped: no GPU"
	exit 0
fi
if [ "$STEPS" -le "$WARMUP" ]; then
	echo "gpu_bench.sh: STEPS ($STEPS) must exceed WARMUP ($WARMUP)" >&2
	exit 2
fi

# spec_peak NAME PREC: TFLOP/s from the vendor's data sheet (dense, boost
# clock); nothing when the GPU is not listed.  More specific names first.
spec_peak() {
	case $1 in
	*H200*NVL*) f=60 h=835 ;;
	*GH200* | *H200*) f=67 h=989 ;;
	*H100*NVL*) f=60 h=835 ;;
	*H100*PCIe*) f=51 h=756 ;;
	*H100*) f=67 h=989 ;; # SXM5
	*A100*) f=19.5 h=312 ;;
	*L40S*) f=91.6 h=362 ;;
	*L40) f=90.5 h=181 ;;
	*L4) f=30.3 h=121 ;;
	*A10) f=31.2 h=125 ;;
	*) return 0 ;;
	esac
	case $2 in
	fp32) echo "$f" ;;
	*) echo "$h" ;;
	esac
}

# steady METRICS: "n ms copy sync" over the step records after WARMUP.
steady() {
	jq -rs --argjson w "$WARMUP" '
		[.[] | select(.event == "step" and .step > $w)] as $s
		| [($s | length), ($s | map(.step_ms) | add),
		   ($s | map(.copy_ms // 0) | add / length),
		   ($s | map(.sync_ms // 0) | add / length)] | @tsv' "$1"
}

peak=$(build/bench/bench_cuda_peak)
case $peak in "skipped: no GPU"*) echo "skipped: no GPU"; exit 0 ;; esac
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || echo "unknown")
printf 'GPU training on %s: batch %s, %s steps, the first %s not counted\n' "$name" "$BATCH" \
	"$STEPS" "$WARMUP"
echo "$peak" | sed -n 's/^peak_tflops \(.*\) \(.*\)$/  measured GEMM peak \1: \2 TFLOP\/s/p'
for p in fp32 bf16 fp16; do
	s=$(spec_peak "$name" "$p")
	printf '  specification peak %s: %s TFLOP/s\n' "$p" "${s:-n/a}"
done
printf '  %-13s %-5s %11s %9s %9s %9s %8s %8s %11s %6s\n' model prec samples/s TFLOP/s \
	MFU-spec MFU-GEMM copy_ms sync_ms torch/s ratio
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
output: {dir: $W/runs, log_every_steps: 1}
YAML
	for p in fp32 bf16 fp16; do
		run=$W/$model-$p
		if ! bin/hpctrain-train --run "$run" --max-steps "$STEPS" \
			--set train.precision=$p "$W/$model.yaml" >/dev/null 2>"$run.err"; then
			printf '  %-13s %-5s failed: %s\n' "$model" "$p" "$(tail -1 "$run.err")"
			status=1
			continue
		fi
		fps=$(jq -r 'select(.event == "summary") | .gflops / .mean_samples_per_s' \
			"$run/metrics.jsonl")
		pk=$(echo "$peak" | awk -v p="$p" '$1 == "peak_tflops" && $2 == p { print $3 }')
		peer=$("$PYTHON" tests/torch/bench_gpu.py "$model" "$p" "$BATCH" "$STEPS" "$WARMUP" \
			2>"$run.peer.err" | sed -n 's/^samples_per_s \([0-9.]*\) config "\(.*\)"$/\1 \2/p')
		[ -n "$peer" ] && config=${peer#* }
		steady "$run/metrics.jsonl" | awk -v m="$model" -v p="$p" -v b="$BATCH" -v f="$fps" \
			-v k="$pk" -v s="$(spec_peak "$name" "$p")" -v t="${peer%% *}" '{
			sps = b * $1 / ($2 / 1000); tf = f * sps / 1000
			spec = s == "" ? "n/a" : sprintf("%.1f%%", 100 * tf / s)
			peer = t == "" ? "n/a" : sprintf("%.0f", t)
			ratio = t == "" ? "n/a" : sprintf("%.2f", sps / t)
			printf "  %-13s %-5s %11.0f %9.2f %9s %8.1f%% %8.3f %8.3f %11s %6s\n", m, p, sps,
				tf, spec, 100 * tf / k, $3, $4, peer, ratio }'
	done
done
sed -n 's/.*; \(CUDA .*\)$/  \1/p' "$W/cnn-fp32.err" | head -1
echo "  peer: ${config:-none ($(tail -1 "$W/cnn-fp32.peer.err" 2>/dev/null))}"
exit $status
