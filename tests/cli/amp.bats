#!/usr/bin/env bats
# amp.bats - mixed precision in hpctrain train: bf16 (oneDNN bf16
# convolutions) and fp16 (loss-scaled, binary16-rounded inputs) runs of
# the cnn on Fashion-MNIST reach the fp32 run's test accuracy within 0.5
# points after the same 2 epochs, and the precision and the kernel in use
# are named on stderr.  The three runs cost about 2.5 minutes on 2 cores;
# the first test trains all three, the others read its results.

load common

setup_file() {
	export OMP_NUM_THREADS=2
	W=$BATS_FILE_TMPDIR
	cat >"$W/cnn.yaml" <<YAML
version: 1
name: amp
train:
  model: cnn
  dataset: fashion-mnist
  epochs: 2
  batch_per_rank: 128
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9, schedule: cosine}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 100000}
YAML
}

# acc PRECISION: the final test accuracy in percent.
acc() {
	sed -n 's/^test accuracy \([0-9.]*\),.*/\1/p' "$BATS_FILE_TMPDIR/$1.out" | awk '{print 100*$1}'
}

@test "fp32, bf16 and fp16 cnn runs on Fashion-MNIST all train for 2 epochs" {
	W=$BATS_FILE_TMPDIR
	for p in fp32 bf16 fp16; do
		"$HPT" train --run "$W/run-$p" --set train.precision=$p "$W/cnn.yaml" \
			>"$W/$p.out" 2>"$W/$p.err"
	done
	grep -q 'after 936 steps (2.00 epochs)' "$W/bf16.out"
	grep -q 'after 936 steps (2.00 epochs)' "$W/fp16.out"
}

@test "bf16 reaches the fp32 test accuracy within 0.5 points" {
	a=$(acc fp32) b=$(acc bf16)
	echo "fp32 $a% bf16 $b%"
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 85 && b >= a - 0.5) }'
}

@test "fp16 with loss scaling reaches the fp32 test accuracy within 0.5 points" {
	a=$(acc fp32) h=$(acc fp16)
	echo "fp32 $a% fp16 $h%"
	awk -v a="$a" -v h="$h" 'BEGIN { exit !(a > 85 && h >= a - 0.5) }'
}

@test "train names the precision and the kernel oneDNN chose for it" {
	grep -q ', bf16; oneDNN .*low-precision conv: bf16 ' "$BATS_FILE_TMPDIR/bf16.err"
	grep -q ', fp16; oneDNN .*low-precision conv: f16 ' "$BATS_FILE_TMPDIR/fp16.err"
	grep -q ', fp32; oneDNN ' "$BATS_FILE_TMPDIR/fp32.err"
	! grep -q 'low-precision' "$BATS_FILE_TMPDIR/fp32.err"
}
