#!/usr/bin/env bats
# resize.bats - hpctrain train resumed at another world size:
# the checkpoint's global batch is held by gradient accumulation on fewer
# ranks and by a smaller per-rank batch on more, so every step after the
# resume trains on the same samples (batch_hash in metrics.jsonl) with
# the same learning rate, its loss is the uninterrupted run's to fp32
# rounding, and so is its final test accuracy (within 0.5 points); a global batch the ranks cannot split is refused with the bad
# spec status.  Real mpirun ranks on Fashion-MNIST, cnn, global batch 64,
# 12 steps, stopped with --max-steps 6.
#
# Tolerance: the loss of a step is the global batch's mean; the runs add
# the same per-sample gradients in another order (a different tree of
# ranks and micro-steps), so parameters part by fp32 rounding only.
# Measured: 3e-8 relative after 6 steps resumed; the bound is 1e-5.

load common

FMNIST=/usr/share/datasets/fashion-mnist

setup_file() {
	export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	command -v mpirun >/dev/null || return 0
	[ -e "$FMNIST/train-images-idx3-ubyte.gz" ] || return 0
	# the uninterrupted references, global batch 64: 4 ranks x 16, and
	# 2 ranks x 32 (another spec: lr_scaling gives it lr x 2, not x 4)
	spec "$BATS_FILE_TMPDIR/s16.yaml" 16
	spec "$BATS_FILE_TMPDIR/s32.yaml" 32
	mpi 4 train -q --run "$BATS_FILE_TMPDIR/ref16" "$BATS_FILE_TMPDIR/s16.yaml" >/dev/null
	mpi 2 train -q --run "$BATS_FILE_TMPDIR/ref32" "$BATS_FILE_TMPDIR/s32.yaml" >/dev/null
}

setup() {
	W=$BATS_TEST_TMPDIR
	REF16=$BATS_FILE_TMPDIR/ref16 REF32=$BATS_FILE_TMPDIR/ref32
	export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
	[ -e "$FMNIST/train-images-idx3-ubyte.gz" ] || skip "no Fashion-MNIST (dataset-fashion-mnist)"
}

# spec FILE BATCH_PER_RANK: 12 steps of the cnn on Fashion-MNIST.
spec() {
	{
		printf 'version: 1\nname: resize\ntrain:\n  model: cnn\n  dataset: fashion-mnist\n'
		printf '  epochs: 1\n  max_steps: 12\n  batch_per_rank: %s\n' "$2"
		printf '  optimizer: {name: sgd, lr: 0.05, momentum: 0.9, lr_scaling: linear}\n'
		printf '  checkpoint: {every_steps: 0, keep: 1}\n'
		printf 'output: {dir: %s/runs, log_every_steps: 1}\n' "$BATS_FILE_TMPDIR"
	} >"$1"
}

mpi() {
	local n=$1
	shift
	mpirun --oversubscribe --bind-to none -np "$n" "$HPT" "$@"
}

# accuracy_agrees A B: the final test accuracies within 0.5 points.
accuracy_agrees() {
	jq -n --slurpfile a "$1/metrics.jsonl" --slurpfile b "$2/metrics.jsonl" -e '
		def acc(s): [s[] | select(.event == "summary")][-1].test_accuracy;
		(acc($a) - acc($b) | fabs) <= 0.005'
}

# steps RUN: "step batch_hash lr" per step record
steps() { jq -r 'select(.event == "step") | "\(.step) \(.batch_hash) \(.lr)"' "$1/metrics.jsonl"; }

# losses_agree A B BOUND: the same steps, each loss within BOUND relative.
losses_agree() {
	paste <(jq -r 'select(.event == "step") | "\(.step) \(.loss)"' "$1/metrics.jsonl") \
		<(jq -r 'select(.event == "step") | "\(.step) \(.loss)"' "$2/metrics.jsonl") |
		awk -v b="$3" '$1 != $3 { bad = 1 }
			{ d = $2 - $4; if (d < 0) d = -d; if (d > b * $4) bad = 1; n++ }
			END { exit bad || n != 12 }'
}

# stopped N BATCH: a run of N ranks x BATCH stopped after step 6, in $W/r.
stopped() {
	spec "$W/s.yaml" "$2"
	run -0 mpi "$1" train -q --max-steps 6 --run "$W/r" "$W/s.yaml"
}

@test "a 4-rank checkpoint resumed on 2 ranks accumulates 2 steps of 16: same batches, lr, losses and accuracy as 4 ranks throughout" {
	stopped 4 16
	run -0 --separate-stderr mpi 2 train -q --run "$W/r" "$W/s.yaml"
	[ "$stderr" = "hpctrain train: resuming a 4-rank checkpoint (global batch 64) on 2 ranks: 2 accumulation steps of 16" ]
	diff <(steps "$REF16") <(steps "$W/r")
	losses_agree "$REF16" "$W/r" 1e-5
	accuracy_agrees "$REF16" "$W/r"
}

@test "a 2-rank checkpoint resumed on 4 ranks shrinks the per-rank batch to 16: same batches, lr, losses and accuracy" {
	stopped 2 32
	run -0 --separate-stderr mpi 4 train -q --run "$W/r" "$W/s.yaml"
	[ "$stderr" = "hpctrain train: resuming a 2-rank checkpoint (global batch 64) on 4 ranks: batch 16 per rank" ]
	diff <(steps "$REF32") <(steps "$W/r")
	losses_agree "$REF32" "$W/r" 1e-5
	accuracy_agrees "$REF32" "$W/r"
	# and the batches are those of 4 ranks x 16 (lr aside: another spec)
	diff <(steps "$REF16" | cut -d' ' -f1,2) <(steps "$W/r" | cut -d' ' -f1,2)
}

@test "a 2-rank checkpoint resumed by one process without mpirun accumulates 2 steps of 32" {
	stopped 2 32
	run -0 --separate-stderr "$HPT" train -q --run "$W/r" "$W/s.yaml"
	[ "$stderr" = "hpctrain train: resuming a 2-rank checkpoint (global batch 64) on 1 rank: 2 accumulation steps of 32" ]
	diff <(steps "$REF32") <(steps "$W/r")
	losses_agree "$REF32" "$W/r" 1e-5
}

@test "a global batch 3 ranks cannot split is refused with the bad-spec status, naming both batches and the rank counts that work" {
	stopped 4 16
	run -"$EX_BAD_SPEC" --separate-stderr mpi 3 train -q --run "$W/r" "$W/s.yaml"
	printf '%s\n' "${stderr_lines[@]}" | grep -Fqx "hpctrain train: rank 0: cannot resume a 4-rank checkpoint (global batch 64) on 3 ranks (global batch 48): global batch 64 does not split over 3 ranks; rank counts that hold it: 1, 2, 4, 8, 16, 32, 64; or train on at global batch 48 with --new-global-batch"
	# nothing trained, the checkpoint is untouched
	[ "$(ls "$W/r/checkpoints")" = "ckpt-000000000006.bin" ]
	[ "$(jq -s 'map(select(.event == "step")) | length' "$W/r/metrics.jsonl")" -eq 6 ]
}

@test "--new-global-batch resumes on 3 ranks at global batch 48 and says so" {
	stopped 4 16
	run -0 --separate-stderr mpi 3 train -q --new-global-batch --run "$W/r" "$W/s.yaml"
	[ "$stderr" = "hpctrain train: resuming a 4-rank checkpoint (global batch 64) on 3 ranks with a new global batch of 48 (--new-global-batch): batch 16 per rank" ]
	# position 6 x 64 = 384 samples into the epoch: step 8 of 48 is next
	[ "$(jq -r 'select(.event == "step") | .step' "$W/r/metrics.jsonl" | sed -n 7p)" -eq 9 ]
	[ "$(jq -r 'select(.event == "step") | .lr' "$W/r/metrics.jsonl" | tail -1)" = 0.15 ]
}
