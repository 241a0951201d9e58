#!/bin/sh
# train_vs_torch.sh - hpctrain train's fp32 cnn training against this
# CPU's fp32 GEMM peak and against PyTorch, side by side in one command,
# at each ISA cap this CPU can run (tests/bench/lib/isa.sh; CAPS="avx2
# ..." picks some).  Fashion-MNIST, batch 128, the same steps and threads
# on both sides (STEPS, default 200; THREADS, default 1).
#
# Per cap, one row: hpctrain's samples/s and GFLOP/s, that as a share of
# the fp32 GEMM peak that build/bench/bench_peak measures under the same
# cap in the same run (goal: at least 85% at every cap), PyTorch's
# samples/s with the memory format and BLAS it ran on, and the ratio
# (reported, not a goal).
#
# What is timed, the same on both sides: a step runs from loading its
# batch to the end of the optimizer update, and the first WARMUP steps
# (default 20: JIT, first-touch memory) are left out.  hpctrain's figure
# is computed here from its per-step step_ms records (the summary's
# mean_samples_per_s counts every step); its GFLOP/s are the FLOPs a step
# computes (forward, weight gradient, input gradient but the first
# layer's; hpctrain-train(1)) per sample, read off the summary, times that
# rate.
#
# The peer is PyTorch as its users run it at its best
# (tests/torch/bench_cnn.py): Debian's python3-torch on OpenBLAS
# (libopenblas0-pthread; `make bench` installs both), OpenBLAS held to
# THREADS, the faster of contiguous and channels_last.  Below this CPU's
# best cap the peer runs oneDNN, OpenBLAS and torch's kernels as it would
# on such a CPU.  A peer on the reference BLAS, or none installed, is a
# failed measurement: no ratio, exit 1.  OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE from the caller are unset (they slow OpenBLAS).
#
# Not a test: it asserts nothing about time.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/lib/isa.sh
isa_unset
THREADS=${THREADS:-1} STEPS=${STEPS:-200} WARMUP=${WARMUP:-20} BATCH=128
CAPS=${CAPS:-$(isa_caps)}
posint() {
	case $2 in '' | *[!0-9]* | 0*)
		echo "train_vs_torch.sh: $1 must be a positive integer, not '$2'" >&2
		exit 2 ;;
	esac
}
posint THREADS "$THREADS"
posint STEPS "$STEPS"
[ "$WARMUP" = 0 ] || posint WARMUP "$WARMUP"
# shellcheck disable=SC2086 # a list of caps
isa_check $CAPS
if [ -z "$CAPS" ]; then
	echo "train_vs_torch.sh: this CPU has no AVX2: no ISA cap to run" >&2
	exit 1
fi
if [ "$STEPS" -le "$WARMUP" ]; then
	echo "train_vs_torch.sh: STEPS ($STEPS) must exceed WARMUP ($WARMUP)" >&2
	exit 2
fi
export OMP_NUM_THREADS="$THREADS" HPCTRAIN_KERNELS=tune HPCTRAIN_KERNEL_CACHE=
PY=/usr/bin/python3
TOP=$(isa_caps | tail -1)
if ! $PY -c 'import torch' 2>/dev/null; then
	echo "train_vs_torch.sh: no PyTorch peer: install python3-torch and libopenblas0-pthread" \
		"(make bench does)" >&2
	exit 1
fi
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
  batch_per_rank: $BATCH
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 1}
YAML

# steady METRICS: "samples/s GFLOP/s" over the steps after WARMUP
steady() {
	jq -rs --argjson w "$WARMUP" --argjson b "$BATCH" '
		[.[] | select(.event == "step" and .step > $w) | .step_ms] as $ms
		| (.[] | select(.event == "summary")) as $s
		| (($ms | length) * $b * 1000 / ($ms | add)) as $sps
		| "\($sps) \($sps * $s.gflops / $s.mean_samples_per_s)"' "$1"
}

# breakdown METRICS GEMM: where a step's time goes, from the trainer's
# own timers (metrics.jsonl's "profile" record, the steps after its
# warm-up): per layer its forward and backward time, its GFLOP/s as a
# share of the GEMM peak, and its share of the step; then the batch, the
# loss, the update and what no timer holds.
breakdown() {
	jq -r 'select(.event == "profile") | (.layers[] | ["L", .layer, .forward_ms,
		.backward_ms, .gflops]), ["T", .step_ms, .steps, .data_ms, .loss_ms, .update_ms,
		.other_ms] | @tsv' "$1" | awk -F '\t' -v peak="$2" '
		$1 == "T" { step = $2; steps = $3; tail = sprintf("batch %.2f ms, loss %.2f ms, " \
			"update %.2f ms, other %.2f ms", $4, $5, $6, $7); next }
		{ name[++n] = $2; f[n] = $3; b[n] = $4; g[n] = $5 }
		END {
			if (!step) { print "    no profile record"; exit }
			printf "    where a step goes (%.2f ms, mean of %d steps): forward + backward\n",
				step, steps
			for (i = 1; i <= n; i++) {
				printf "      %-24s %6.2f + %6.2f ms %5.1f%%", name[i], f[i], b[i],
					100 * (f[i] + b[i]) / step
				if (g[i] > 0)
					printf "  %6.1f GFLOP/s, %5.1f%% of peak", g[i], 100 * g[i] / peak
				printf "\n"
			}
			printf "      %s\n", tail
		}'
}

status=0
printf 'cnn, Fashion-MNIST, batch %s, %s thread(s), %s steps (the first %s not timed), PyTorch %s\n' \
	"$BATCH" "$THREADS" "$STEPS" "$WARMUP" "$($PY -c 'import torch; print(torch.__version__)')"
printf '  %-17s %10s %8s %9s %7s %10s  %-13s %6s  %s\n' "ISA cap" hpctrain GFLOP/s "GEMM peak" \
	"% peak" PyTorch format ratio "PyTorch's BLAS"
for cap in $CAPS; do
	if ! isa_run "$cap" bin/hpctrain-train --run "$W/run-$cap" --threads "$THREADS" \
		--max-steps "$STEPS" "$W/cnn.yaml" >/dev/null 2>"$W/$cap.err"; then
		printf '  %-17s hpctrain train failed:\n' "$cap"
		grep -v -e '^step ' -e '^$' "$W/$cap.err" | sed 's/^/    /'
		status=1
		continue
	fi
	ours=$(steady "$W/run-$cap/metrics.jsonl")
	sps=${ours% *} gf=${ours#* }
	gemm=$(isa_run "$cap" build/bench/bench_peak | sed -n 's/^gemm_gflops //p')
	grep -qiw "$cap" "$W/$cap.err" ||
		echo "  note: hpctrain's header does not name $cap: $(sed -n 1p "$W/$cap.err")"
	if isa_peer "$cap" "$TOP" $PY tests/torch/bench_cnn.py "$STEPS" "$BATCH" "$THREADS" \
		"$WARMUP" >"$W/torch-$cap.out" 2>"$W/torch-$cap.err"; then
		torch=$(sed -n 's/^samples_per_s \([0-9.]*\) format .*/\1/p' "$W/torch-$cap.out")
		fmt=$(sed -n 's/^samples_per_s [0-9.]* format //p' "$W/torch-$cap.out")
		ratio=$(printf '%.2fx' "$(echo "$sps $torch" | awk '{print $1/$2}')")
		torch=$(printf '%.0f/s' "$torch")
	else
		torch=- fmt=failed ratio=-
		status=1
	fi
	printf '  %-17s %8.0f/s %8.1f %9.1f %6.1f%% %10s  %-13s %6s  %s\n' "$cap" "$sps" "$gf" \
		"$gemm" "$(echo "$gf $gemm" | awk '{print 100*$1/$2}')" "$torch" "$fmt" "$ratio" \
		"$(sed -n 's/^blas //p' "$W/torch-$cap.out")"
	# The peer at its best: where OpenBLAS fell back to a generic core
	# at the top cap, its users are told to name one; both figures shown.
	core=$(sed -n 's/^blas OpenBLAS .*, \([A-Za-z0-9_]*\) kernels,.*/\1/p' "$W/torch-$cap.out")
	best=$(isa_coretype "$core")
	if [ "$cap" = "$TOP" ] && [ -n "$best" ] &&
		isa_peer "$cap" "$TOP" env OPENBLAS_CORETYPE="$best" $PY tests/torch/bench_cnn.py \
			"$STEPS" "$BATCH" "$THREADS" "$WARMUP" >"$W/torch-best.out" 2>&1; then
		t2=$(sed -n 's/^samples_per_s \([0-9.]*\) format .*/\1/p' "$W/torch-best.out")
		printf '  %-17s %10s %8s %9s %7s %8.0f/s  %-13s %5.2fx  %s\n' \
			"  OPENBLAS_CORETYPE=$best" "" "" "" "" "$t2" \
			"$(sed -n 's/^samples_per_s [0-9.]* format //p' "$W/torch-best.out")" \
			"$(echo "$sps $t2" | awk '{print $1/$2}')" \
			"$(sed -n 's/^blas //p' "$W/torch-best.out")"
		echo "    OpenBLAS picked $core (generic) on this CPU; the row above names $best for it"
	fi
	breakdown "$W/run-$cap/metrics.jsonl" "$gemm"
	if [ "$fmt" = failed ]; then
		if grep -q '^blas reference' "$W/torch-$cap.out"; then
			echo "    failed measurement: PyTorch ran on the reference BLAS; install" \
				"libopenblas0-pthread (make bench does) and let libblas.so.3 point at it"
		else
			sed 's/^/    /' "$W/torch-$cap.err" "$W/torch-$cap.out" | tail -5
		fi
	fi
done
echo "  goal: hpctrain at >= 85% of the GEMM peak at every cap; the PyTorch ratio is reported only"
exit $status
