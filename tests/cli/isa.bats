#!/usr/bin/env bats
# isa.bats - the trainer on every x86 instruction-set level this CPU can
# run: for each cap of HPCTRAIN_MAX_CPU_ISA up to this CPU's best (AVX2,
# AVX-512, AVX512-BF16, AMX), cnn, hepcnn and resnet-small train a few
# steps at fp32, bf16 and fp16.  No step may execute a oneDNN reference
# kernel (read from ONEDNN_VERBOSE), each layer must report the precision
# it really ran in (native bf16 where the capped CPU has AVX512-BF16,
# emulated below it), and the losses must agree with the uncapped run's:
#   fp32        relative 1e-5 (kernels differ only in summation order)
#   bf16, fp16  relative 2e-2 (emulated and native roundings differ in
#               where dx and blocked copies are rounded)
# Each run is bounded by RUN_LIMIT seconds (normally about 1 s): a slow
# reference kernel fails fast and is named instead of stalling the suite.

load common

RUN_LIMIT=60
MODELS="cnn:fashion-mnist hepcnn:hep-synthetic resnet-small:synthetic"

# The caps this CPU runs, lowest first, from its flags.
cpu_caps() {
	local f
	f=$(grep -m1 '^flags' /proc/cpuinfo)
	has() { case " $f " in *" $1 "*) return 0 ;; esac; return 1; }
	has avx2 && has fma && echo avx2
	has avx512f && has avx512bw && has avx512vl && has avx512dq && echo avx512_core
	has avx512_bf16 && echo avx512_core_bf16
	has amx_bf16 && has amx_tile && echo avx512_core_amx
}

setup_file() {
	export OMP_NUM_THREADS=2
	# kernels chosen by measurement, as users get them (common.bash
	# fixes them for the other suites)
	export HPCTRAIN_KERNELS=tune HPCTRAIN_KERNEL_CACHE=$BATS_FILE_TMPDIR/kernels
	W=$BATS_FILE_TMPDIR
	cat >"$W/isa.yaml" <<YAML
version: 1
name: isa
train:
  model: cnn
  dataset: fashion-mnist
  epochs: 1
  batch_per_rank: 16
  optimizer: {name: sgd, lr: 0.01, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 1}
YAML
	for m in $MODELS; do
		for p in fp32 bf16 fp16; do
			train_at all "${m%%:*}" "${m#*:}" "$p" || return 1
		done
	done
}

# train_at CAP MODEL DATASET PRECISION: 3 steps under the cap, with
# oneDNN's log of every primitive executed; the step losses go to
# $W/CAP-MODEL-PRECISION.loss, the header line to .head.
train_at() {
	local W=$BATS_FILE_TMPDIR cap=$1 model=$2 data=$3 p=$4 rc=0
	local out=$W/$cap-$model-$p
	rm -rf "$out.run"
	HPCTRAIN_MAX_CPU_ISA=$cap ONEDNN_VERBOSE=1 timeout "$RUN_LIMIT" \
		"$HPT" train --run "$out.run" --max-steps 3 --set train.model="$model" \
		--set train.dataset="$data" --set train.precision="$p" "$W/isa.yaml" \
		>"$out.log" 2>&1 || rc=$?
	if [ "$rc" -eq 124 ]; then
		echo "$model $p at cap $cap took over $RUN_LIMIT s (normally ~1 s): a slow kernel; primitives run:" >&2
		grep '^onednn_verbose,exec' "$out.log" | cut -d, -f4-6 | sort | uniq -c >&2
		return 1
	fi
	if [ "$rc" -ne 0 ]; then
		echo "$model $p at cap $cap failed with status $rc:" >&2
		grep -v '^onednn_verbose' "$out.log" | tail -5 >&2
		return 1
	fi
	grep '^hpctrain train:' "$out.log" >"$out.head"
	sed -n 's/.*"event":"step".*"loss":\([-0-9.e]*\).*/\1/p' "$out.run/metrics.jsonl" >"$out.loss"
	[ "$(wc -l <"$out.loss")" -eq 3 ] || { echo "$out: expected 3 step losses" >&2; return 1; }
}

# no_reference CAP MODEL PRECISION: no reference primitive executed.
no_reference() {
	local log=$BATS_FILE_TMPDIR/$1-$2-$3.log
	if grep '^onednn_verbose,exec' "$log" | cut -d, -f5 | grep -q 'ref'; then
		echo "$2 $3 at cap $1 executed a reference kernel:" >&2
		grep '^onednn_verbose,exec' "$log" | grep ',ref' | cut -d, -f4-8 | sort -u >&2
		return 1
	fi
}

# same_losses CAP MODEL PRECISION TOLERANCE: step losses within the
# relative tolerance of the uncapped run's.
same_losses() {
	local W=$BATS_FILE_TMPDIR
	paste "$W/all-$2-$3.loss" "$W/$1-$2-$3.loss" | awk -v tol="$4" -v what="$2 $3 at cap $1" '
		{ d = $1 - $2; if (d < 0) d = -d; s = $1 < 0 ? -$1 : $1
		  if (d > tol * s) { printf "%s: step %d loss %s, uncapped %s\n", what, NR, $2, $1; bad = 1 } }
		END { exit bad }' >&2
}

# check_cap CAP: the whole matrix at one cap.  The CPU's own best cap
# runs what the uncapped runs already ran, kernel for kernel: one model
# and precision there shows the cap is read and changes nothing.
check_cap() {
	local cap=$1 m p tol models=$MODELS precisions="fp32 bf16 fp16"
	cpu_caps | grep -qx "$cap" || skip "this CPU cannot run $cap"
	if [ "$cap" = "$(cpu_caps | tail -1)" ]; then
		models=${MODELS%% *} precisions=bf16
	fi
	for m in $models; do
		for p in $precisions; do
			train_at "$cap" "${m%%:*}" "${m#*:}" "$p"
			no_reference "$cap" "${m%%:*}" "$p"
			tol=2e-2
			[ "$p" = fp32 ] && tol=1e-5
			same_losses "$cap" "${m%%:*}" "$p" "$tol"
		done
	done
}

# The precision cnn's layers report at CAP, from the header line.
cnn_head() {
	cat "$BATS_FILE_TMPDIR/$1-cnn-$2.head"
}

@test "uncapped: no reference kernel in any model or precision" {
	for m in $MODELS; do
		for p in fp32 bf16 fp16; do
			no_reference all "${m%%:*}" "$p"
		done
	done
}

@test "cap avx2 (Zen 2/3, Haswell): no reference kernel, losses match the uncapped run" {
	check_cap avx2
}

@test "cap avx512_core (Skylake, Cascade Lake): no reference kernel, losses match" {
	check_cap avx512_core
}

@test "cap avx512_core_bf16 (Cooper Lake, Zen 4): no reference kernel, losses match" {
	check_cap avx512_core_bf16
}

@test "cap avx512_core_amx (Sapphire Rapids): no reference kernel, losses match" {
	check_cap avx512_core_amx
}

@test "below AVX512-BF16, bf16 is emulated in fp32 kernels and the header says why" {
	cpu_caps | grep -qx avx2 || skip "this CPU cannot run avx2"
	[ -f "$BATS_FILE_TMPDIR/avx2-cnn-bf16.head" ] ||
		train_at avx2 cnn fashion-mnist bf16
	run -0 cnn_head avx2 bf16
	[[ "$output" == *"avx2 (capped by HPCTRAIN_MAX_CPU_ISA)"* ]]
	[[ "$output" == *"conv 1x bf16 emulated on jit:avx2 (no AVX512-BF16: this CPU runs avx2)"* ]]
	[[ "$output" == *"linear 2x bf16 emulated on sgemm"* ]]
}

# fixed_head CAP PRECISION: the cnn's header line with the fixed kernels.
fixed_head() {
	local W=$BATS_FILE_TMPDIR
	HPCTRAIN_KERNELS=fixed HPCTRAIN_MAX_CPU_ISA=$1 timeout "$RUN_LIMIT" "$HPT" train \
		--run "$W/fixed-$1-$2.run" --max-steps 1 --set train.precision="$2" "$W/isa.yaml" 2>&1 |
		grep '^hpctrain train:'
}

# measured CAP PRECISION: the candidates of each cnn layer that has a
# choice, from its "[measured: ...]", one line a layer in the model's
# order: "conv bf16: emulated blocked,emulated nhwc,native", names
# sorted, a candidate the 2 s budget left untimed marked " (untimed)".
measured() {
	cnn_head "$1" "$2" | grep -oE '(conv|linear) [0-9]+x [a-z0-9]+ [^[,]*\[measured: [^]]*\]' |
		awk '{
			s = $0; sub(/.*\[measured: /, "", s); sub(/\]$/, "", s); sub(/; cached$/, "", s)
			left = ""
			if (match(s, /[0-9.]+ s budget spent before /)) {
				left = substr(s, RSTART + RLENGTH); s = substr(s, 1, RSTART - 1)
			}
			sub(/; $/, "", s)
			m = 0
			k = split(s, t, ", ")
			for (i = 1; i <= k; i++) { sub(/ [0-9.]+ ms$/, "", t[i]); name[++m] = t[i] }
			k = split(left, t, ", ")
			for (i = 1; i <= k; i++) name[++m] = t[i] " (untimed)"
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && name[j - 1] > name[j]; j--) {
					x = name[j]; name[j] = name[j - 1]; name[j - 1] = x
				}
			line = $1 " " $3 ":"
			for (i = 1; i <= m; i++) line = line (i > 1 ? "," : " ") name[i]
			for (i = 0; i < $2 + 0; i++) print line
		}'
}

# The ISA a cap runs at on this CPU: "all" is the CPU's best.
cap_isa() {
	if [ "$1" = all ]; then cpu_caps | tail -1; else echo "$1"; fi
}

# expected CAP PRECISION: what measured must print at CAP, from the
# tuner's candidate lists (cpu_conv.c be_conv_create, cpu_linear.c
# be_linear_create).  The first convolution (one input channel, fused
# with its pooling) has no choice.  The 32->64 convolution: its two
# layouts at fp32; native bf16 and emulation in either layout where
# the capped CPU has AVX512-BF16 (AMX included: native runs AMX
# kernels), the two emulations alone below it and at fp16 (oneDNN 2.6
# has no fp16 CPU kernels, so native fp16 never plans and is no
# candidate).  The linear layers choose only between native bf16 and
# emulation, so only where native bf16 exists; else they run sgemm.
expected() {
	local isa
	isa=$(cap_isa "$1")
	case $2:$isa in
	fp32:*) echo "conv fp32: blocked,nhwc" ;;
	bf16:avx512_core_bf16 | bf16:avx512_core_amx)
		echo "conv bf16: emulated blocked,emulated nhwc,native"
		echo "linear bf16: emulated,native"
		echo "linear bf16: emulated,native"
		;;
	*) echo "conv $2: emulated blocked,emulated nhwc" ;;
	esac
}

# cached_keys CAP PRECISION: the kernel cache holds each choice of the
# cnn at CAP under the ISA it ran at (the cap, not "all").
cached_keys() {
	local isa key shapes="conv:16x14x14x32x64x3x3x1x1x3"
	isa=$(cap_isa "$1")
	[[ "$(expected "$1" "$2")" == *linear* ]] && shapes+=" linear:16x3136x128 linear:16x128x10"
	for key in $shapes; do
		grep -qF "|$isa|t2|${key%%:*}|$2|${key#*:}	" "$BATS_FILE_TMPDIR/kernels" || {
			echo "no cache line |$isa|t2|${key%%:*}|$2|${key#*:} for cnn $2 at cap $1" >&2
			return 1
		}
	done
}

@test "tuned: at each cap each layer with a choice times exactly the candidates that cap has" {
	local cap p got best
	best=$(cpu_caps | tail -1)
	run -0 cnn_head all bf16
	[[ "$output" == *"kernels tuned by measurement in "*" s, 2 threads;"* ]]
	# A layer's candidates are each timed unless the process's 2 s
	# budget ran out first; then the start line names those left
	# untimed and nothing is cached.  Which of the two happened depends
	# on the machine's load, so each is checked, not assumed; which
	# candidate wins is never asserted.
	for cap in all $(cpu_caps); do
		for p in fp32 bf16 fp16; do
			[ -f "$BATS_FILE_TMPDIR/$cap-cnn-$p.head" ] ||
				train_at "$cap" cnn fashion-mnist "$p"
			got=$(measured "$cap" "$p")
			if [ "$(sed 's/ (untimed)//g' <<<"$got")" != "$(expected "$cap" "$p")" ]; then
				printf 'cnn %s at cap %s: candidates\n%s\nexpected\n%s\n' "$p" "$cap" \
					"$got" "$(expected "$cap" "$p")" >&2
				return 1
			fi
			[[ "$got" == *untimed* ]] || cached_keys "$cap" "$p"
			# the cap that equals the CPU's best reuses the uncapped
			# run's choices: the key names the ISA run, not the cap
			run -0 cnn_head "$cap" "$p"
			if [ "$cap" = "$best" ] && [[ "$(measured all "$p")" != *untimed* ]]; then
				[ "$(grep -o '; cached\]' <<<"$output" | wc -l)" -eq "$(wc -l <<<"$got")" ]
			elif [ "$cap" != "$best" ]; then
				[[ "$output" != *"; cached]"* ]]
			fi
		done
	done
	# a cached choice gives the same reason as the first run's
	run -0 cnn_head "$best" fp16
	[[ "$output" == *"conv 1x fp16 emulated on "*"(oneDNN "*" has no fp16 CPU kernels) [measured: "* ]]
}

@test "fixed kernels name no measurement; an unknown HPCTRAIN_KERNELS is a usage error" {
	run -0 fixed_head all bf16
	[[ "$output" == *"kernels fixed (HPCTRAIN_KERNELS=fixed), 2 threads;"* ]]
	[[ "$output" != *measured* ]]
	HPCTRAIN_KERNELS=fast run -"$EX_USAGE" --separate-stderr "$HPT" train --max-steps 1 \
		"$BATS_FILE_TMPDIR/isa.yaml"
	[ "$stderr" = 'hpctrain train: HPCTRAIN_KERNELS: expected one of tune, fixed, got "fast"' ]
}

@test "where native bf16 measures slower, the layer says so and runs emulated bf16" {
	cpu_caps | grep -qx avx512_core_bf16 || skip "this CPU has no AVX512-BF16"
	run -0 cnn_head avx512_core_bf16 bf16
	# either choice is right; an emulated one says why
	if [[ "$output" == *"conv 1x bf16 emulated"* ]]; then
		[[ "$output" == *"conv 1x bf16 emulated on "*" (native bf16 measured slower) [measured: emulated "* ]]
	fi
}

@test "with AVX512-BF16, bf16 layers run native bf16 kernels; the one-channel first layer keeps fp32" {
	cpu_caps | grep -qx avx512_core_bf16 || skip "this CPU has no AVX512-BF16"
	# the fixed choice: tuning may take emulation where it measures faster
	run -0 fixed_head all bf16
	[[ "$output" == *"conv 1x fp32 conv1pool:avx512_core (1 input channel, fused with its pooling)"* ]]
	[[ "$output" =~ conv\ 1x\ bf16\ (jit_bf16|brg)[a-z_]*:avx512_core_(bf16|amx) ]]
	# Both linear layers run native bf16: with AMX, oneDNN may pick AMX
	# for one and AVX512-BF16 for the other ("linear 1x" twice).
	linears=$(grep -oE 'linear [0-9]+x [^,]*' <<<"$output")
	[ "$(awk '{ n += $2 + 0 } END { print n }' <<<"$linears")" -eq 2 ]
	run -1 grep -vE '^linear [0-9]+x bf16 brg:avx512_core_(amx_)?bf16$' <<<"$linears"
	run -0 fixed_head all bf16
	[[ "$output" != *emulated* ]]
}

@test "fp16 names its emulation (oneDNN has no fp16 CPU kernels)" {
	run -0 cnn_head all fp16
	[[ "$output" == *"conv 1x fp16 emulated on "*"(oneDNN "*" has no fp16 CPU kernels)"* ]]
}

@test "an unknown HPCTRAIN_MAX_CPU_ISA is a usage error naming the variable and the choices" {
	HPCTRAIN_MAX_CPU_ISA=avx3 run -"$EX_USAGE" "$HPT" train --max-steps 1 "$BATS_FILE_TMPDIR/isa.yaml"
	[[ "$output" == *'HPCTRAIN_MAX_CPU_ISA: unknown instruction set "avx3"; expected one of avx2, avx512_core'* ]]
	[ ! -d "$BATS_FILE_TMPDIR/runs" ] || [ -z "$(ls "$BATS_FILE_TMPDIR/runs")" ]
}

@test "oneDNN's undocumented sse41 and avx caps and a bad HPCTRAIN_GPU_SHARE are usage errors" {
	for cap in sse41 avx; do
		HPCTRAIN_MAX_CPU_ISA=$cap run -"$EX_USAGE" --separate-stderr "$HPT" train --max-steps 1 \
			"$BATS_FILE_TMPDIR/isa.yaml"
		[ "$stderr" = "hpctrain train: HPCTRAIN_MAX_CPU_ISA: unknown instruction set \"$cap\"; expected one of avx2, avx512_core, avx512_core_bf16, avx512_core_amx, all" ]
	done
	HPCTRAIN_GPU_SHARE=yes run -"$EX_USAGE" --separate-stderr "$HPT" train --max-steps 1 \
		"$BATS_FILE_TMPDIR/isa.yaml"
	[ "$stderr" = 'hpctrain train: HPCTRAIN_GPU_SHARE: expected one of 0, 1, got "yes"' ]
}
