#!/bin/sh
# amp_cpu.sh - bf16 against fp32 training throughput of cnn (Fashion-MNIST)
# and hepcnn (hep-synthetic 64x64) at each ISA cap this CPU can run
# (tests/bench/lib/isa.sh; CAPS="avx2 ..." picks some), side by side in
# one command: the same spec, steps and threads (STEPS, default 100 for
# cnn and half that for hepcnn; THREADS, default 2), only
# train.precision differs.
#
# Per cap and model, one row: samples/s of each precision, their ratio,
# the goal at that cap, and the same ratio from build/bench/bench_amp,
# which interleaves fp32 and bf16 steps in one process (median step
# times), so that this shared VM's drifting speed cannot skew it the way
# it skews back-to-back runs.  Goals: 1.5x at avx512_core_bf16 (a native
# bf16 dot product, no AMX), 1.74x at avx512_core_amx; none below, where
# the CPU has no bf16 arithmetic and the trainer emulates it at about fp32
# speed.  Under each row, the kernels the bf16 run's start line names.
#
# What is timed: a step runs from loading its batch to the end of the
# optimizer update; the first WARMUP steps (default 10) are left out.
# A bf16 run gets at most 3x its fp32 run's time plus 15 s: a run past
# that has hit a slow kernel, is reported as timed out (bench_amp is then
# skipped), and the script exits 1 (so does any failed run).
#
# Kernels are chosen by measurement at plan time (HPCTRAIN_KERNELS=tune,
# hpctrain-train(1)), afresh in every run (no kernel cache); under each
# row, what the tuning cost each run, in seconds and as a share of a
# 1,000-step run at that run's steady step time.
#
# Not a test: it asserts nothing about time.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/lib/isa.sh
isa_unset
THREADS=${THREADS:-2} STEPS=${STEPS:-100} WARMUP=${WARMUP:-10} BATCH=128
CAPS=${CAPS:-$(isa_caps)}
posint() {
	case $2 in '' | *[!0-9]* | 0*)
		echo "amp_cpu.sh: $1 must be a positive integer, not '$2'" >&2
		exit 2 ;;
	esac
}
posint THREADS "$THREADS"
posint STEPS "$STEPS"
[ "$WARMUP" = 0 ] || posint WARMUP "$WARMUP"
# shellcheck disable=SC2086 # a list of caps
isa_check $CAPS
if [ -z "$CAPS" ]; then
	echo "amp_cpu.sh: this CPU has no AVX2: no ISA cap to run" >&2
	exit 1
fi
if [ $((STEPS / 2)) -le "$WARMUP" ]; then
	echo "amp_cpu.sh: STEPS/2 ($((STEPS / 2))) must exceed WARMUP ($WARMUP)" >&2
	exit 2
fi
export OMP_NUM_THREADS="$THREADS" HPCTRAIN_KERNELS=tune HPCTRAIN_KERNEL_CACHE=
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -x build/bench/bench_amp ] || make -s build/bench/bench_amp

now() { date +%s.%N; }

# steady METRICS: samples/s over the steps after WARMUP
steady() {
	jq -rs --argjson w "$WARMUP" --argjson b "$BATCH" '
		[.[] | select(.event == "step" and .step > $w) | .step_ms]
		| length * $b * 1000 / add' "$1"
}

# train CAP MODEL PREC STEPS LIMIT: samples/s, or "timed out", "exit N"
train() {
	_out=$W/$2-$1-$3
	_rc=0
	isa_run "$1" timeout "$5" bin/hpctrain-train --run "$_out" --threads "$THREADS" \
		--max-steps "$4" --set "train.precision=$3" "$W/$2.yaml" >/dev/null 2>"$_out.err" ||
		_rc=$?
	case $_rc in
	0) steady "$_out/metrics.jsonl" ;;
	124) echo "timed out" ;;
	*) echo "exit $_rc" ;;
	esac
}

goal() {
	case $1 in
	avx512_core_bf16) echo 1.5x ;;
	avx512_core_amx) echo 1.74x ;;
	*) echo - ;;
	esac
}

# ratio FP32 BF16: BF16/FP32, or "-" unless both are numbers
ratio() {
	if echo "$1 $2" | grep -Eq '^[0-9.]+ [0-9.]+$'; then
		printf '%.2fx' "$(echo "$2 $1" | awk '{print $1/$2}')"
	else
		echo -
	fi
}

rate() {
	case $1 in
	*[!0-9.]*) echo "$1" ;;
	*) printf '%.0f/s' "$1" ;;
	esac
}

status=0
printf 'bf16 vs fp32 training, batch %s, %s thread(s), %s steps (hepcnn %s; the first %s not timed)\n' \
	"$BATCH" "$THREADS" "$STEPS" "$((STEPS / 2))" "$WARMUP"
printf '  %-17s %-7s %10s %10s %9s %6s  %s\n' "ISA cap" model fp32 bf16 bf16/fp32 goal \
	"interleaved (bench_amp)"
for cap in $CAPS; do
	for m in cnn:fashion-mnist:$STEPS hepcnn:hep-synthetic:$((STEPS / 2)); do
		model=${m%%:*} rest=${m#*:}
		data=${rest%%:*} steps=${rest#*:}
		cat >"$W/$model.yaml" <<YAML
version: 1
name: bench
train:
  model: $model
  dataset: $data
  epochs: 1
  batch_per_rank: $BATCH
  optimizer: {name: sgd, lr: 0.01, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 1}
YAML
		t0=$(now)
		f=$(train "$cap" "$model" fp32 "$steps" 600)
		limit=$(echo "$t0 $(now)" | awk '{printf "%.0f", 3 * ($2 - $1) + 15}')
		b=$(train "$cap" "$model" bf16 "$steps" "$limit")
		il=
		[ "$b" = "timed out" ] ||
			il=$(isa_run "$cap" timeout "$((limit + 15))" build/bench/bench_amp "$model" \
				"$((steps - WARMUP))" "$THREADS" 2>&1) || il=failed
		# median ms per step: bf16 over fp32 in time is fp32 over bf16 in rate
		il=$(echo "$il" | sed -n 's/.*fp32 *\([0-9.]*\) ms *bf16 *\([0-9.]*\) ms.*/\2 \1/p')
		printf '  %-17s %-7s %10s %10s %9s %6s  %s\n' "$cap" "$model" "$(rate "$f")" \
			"$(rate "$b")" "$(ratio "$f" "$b")" "$(goal "$cap")" "$(ratio "${il% *}" "${il#* }")"
		case $f in *[!0-9.]*)
			grep -v -e '^step ' -e '^$' "$W/$model-$cap-fp32.err" | head -3 | sed 's/^/    fp32: /'
			status=1 ;;
		esac
		if [ -z "$il" ] && [ "$(ratio "$f" "$b")" != - ]; then
			echo "    bench_amp $model failed or ran past $((limit + 15)) s"
			status=1
		fi
		case $b in
		"timed out")
			echo "    bf16 ran past ${limit} s (3x fp32's time + 15 s): a slow kernel"
			status=1 ;;
		"exit 3")
			echo "    bf16 refused: $(grep -v -e '^step ' -e '^$' "$W/$model-$cap-bf16.err" | head -1)" ;;
		exit*)
			grep -v -e '^step ' -e '^$' "$W/$model-$cap-bf16.err" | head -3 | sed 's/^/    /'
			status=1 ;;
		*)
			sed -n '1{s/.*; kernels: /    bf16 kernels: /p;t
s/.*; \(oneDNN .*\)$/    bf16 on \1/p;}' "$W/$model-$cap-bf16.err" ;;
		esac
		for p in fp32 bf16; do
			case $([ "$p" = fp32 ] && echo "$f" || echo "$b") in *[!0-9.]*) continue ;; esac
			sed -n '1s/.*kernels tuned by measurement in \([0-9.]*\) s.*/\1/p' \
				"$W/$model-$cap-$p.err" |
				awk -v p="$p" -v r="$([ "$p" = fp32 ] && echo "$f" || echo "$b")" -v b="$BATCH" \
					'{ printf "    %s tuning: %.2f s, %.2f%% of a 1,000-step run\n", p, $1,
					   100 * $1 / (1000 * b / r) }'
		done
	done
done
exit $status
