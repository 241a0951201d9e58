#!/usr/bin/env bats
# train.bats - hpctrain train: real training runs, exact resume, data
# conversion and the failure paths (missing or corrupt data, bad specs,
# divergence), checked by exit status and the message that names the cause.
# The runs are short; the cnn's accuracy on Fashion-MNIST is amp.bats's.

load common

FMNIST=/usr/share/datasets/fashion-mnist
# `hpctrain data` is not routed to the trainer yet: call it directly.

setup() {
	W=$BATS_TEST_TMPDIR
	export OMP_NUM_THREADS=2
}

# spec FILE MODEL DATASET EPOCHS [EXTRA YAML LINES...]: writes a spec.
spec() {
	local f=$1 model=$2 data=$3 epochs=$4
	shift 4
	{
		printf 'version: 1\nname: t\ntrain:\n  model: %s\n  dataset: %s\n  epochs: %s\n' \
			"$model" "$data" "$epochs"
		for l in "$@"; do printf '  %s\n' "$l"; done
		printf 'output: {dir: %s/runs, log_every_steps: 1}\n' "$W"
	} >"$f"
}

@test "train --help prints the usage on stdout and exits 0" {
	run --separate-stderr "$HPT" train --help
	[ "$status" -eq 0 ]
	[[ "$output" == "usage: hpctrain train "* ]]
	[ -z "$stderr" ]
}

@test "train without a spec prints the usage error with the usage status" {
	run --separate-stderr "$HPT" train
	[ "$status" -eq "$EX_USAGE" ]
	[[ "$stderr" == "hpctrain train: no job spec given"* ]]
}

@test "an OMP_NUM_THREADS above the CPUs is clamped with a warning; a malformed one is a usage error" {
	spec "$W/s.yaml" mlp synthetic 1 "batch_per_rank: 500"
	cpus=$(nproc)
	[ "$cpus" -le 4096 ] || cpus=4096
	# 100000 crashed libgomp, 2^31-1 grew to 17 GB: both run on the CPUs there are
	for n in 100000 2147483647 99999999999999999999; do
		OMP_NUM_THREADS=$n run -0 --separate-stderr timeout 300 "$HPT" train --max-steps 2 \
			--fresh --run "$W/run" "$W/s.yaml"
		# libgomp may complain first, when it loads, of a value beyond its int
		printf '%s\n' "${stderr_lines[@]}" | grep -Fqx "hpctrain train: warning: OMP_NUM_THREADS: $n is more than the $cpus CPUs this process may run on; using $cpus threads"
		[[ "$stderr" == *"hpctrain train: mlp on synthetic "*", $cpus threads;"* ]]
	done
	# --threads decides: no warning about a variable it overrides
	OMP_NUM_THREADS=100000 run -0 --separate-stderr "$HPT" train -q --threads 1 --max-steps 1 \
		--fresh --run "$W/run" "$W/s.yaml"
	[ -z "$stderr" ]
	for v in abc 0 -3 4,2 " 2" 0x10; do
		OMP_NUM_THREADS=$v run -"$EX_USAGE" --separate-stderr "$HPT" train --max-steps 1 \
			--run "$W/bad" "$W/s.yaml"
		[ "${stderr_lines[-1]}" = "hpctrain train: OMP_NUM_THREADS: expected an integer 1..4096, got \"$v\"" ]
	done
	[ ! -e "$W/bad" ]
}

@test "train mlp on the synthetic set gets within 3.5 points of its 96.25% bound in 2 epochs" {
	spec "$W/s.yaml" mlp synthetic 2 "batch_per_rank: 64" \
		"optimizer: {name: sgd, lr: 0.05, momentum: 0.9, schedule: cosine}"
	run --separate-stderr "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq 0 ]
	acc=$(jq -r 'select(.event == "summary") | .test_accuracy' "$W/run/metrics.jsonl")
	echo "test accuracy $acc"
	awk -v a="$acc" 'BEGIN { exit !(a >= 0.9275) }'
	[[ "$output" == "test accuracy "* ]]
}

@test "train writes JSON-lines metrics, a profile, and keeps the newest checkpoints only" {
	spec "$W/s.yaml" mlp synthetic 1 "batch_per_rank: 500" "checkpoint: {every_steps: 10, keep: 2}"
	run --separate-stderr "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq 0 ]
	[ "$(jq -s 'map(select(.event == "step")) | length' "$W/run/metrics.jsonl")" -eq 100 ]
	[ "$(jq -s 'map(select(.event == "epoch")) | length' "$W/run/metrics.jsonl")" -eq 1 ]
	# the profile leaves out the first tenth of the steps; its parts
	# never add up to more than the step
	jq -se 'map(select(.event == "profile"))[0] | .steps == 90 and
		([.layers[] | .layer] == ["flatten", "linear 64>256", "linear 256>128", "linear 128>4"]) and
		([.layers[] | .forward_ms + .backward_ms] + [.data_ms, .loss_ms, .comm_wait_ms,
		  .update_ms, .other_ms] | add) <= .step_ms * 1.001' "$W/run/metrics.jsonl"
	[ "$(ls "$W/run/checkpoints")" = "$(printf 'ckpt-000000000090.bin\nckpt-000000000100.bin')" ]
	[ -f "$W/run/resolved.yaml" ]
}

@test "a run stopped at step 23 and resumed has the same losses, bit for bit, as one that never stopped" {
	spec "$W/s.yaml" resnet-small synthetic 1 "batch_per_rank: 32" "max_steps: 40" \
		"optimizer: {name: adamw, lr: 0.001, weight_decay: 0.01, schedule: cosine, warmup_epochs: 0.01}" \
		"checkpoint: {every_steps: 0, keep: 1}"
	run "$HPT" train -q --run "$W/a" "$W/s.yaml"
	[ "$status" -eq 0 ]
	run "$HPT" train -q --run "$W/b" --max-steps 23 "$W/s.yaml"
	[ "$status" -eq 0 ]
	[ -f "$W/b/checkpoints/ckpt-000000000023.bin" ]
	run --separate-stderr "$HPT" train --run "$W/b" "$W/s.yaml"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"resuming from $W/b/checkpoints/ckpt-000000000023.bin (step 23)"* ]]
	# the load, in its own record before the first step (a recovery's figure)
	[ "$(jq -sc 'map(select(.event == "resume" or .step == 24)) | map(.event) |
		. == ["resume", "step"]' "$W/b/metrics.jsonl")" = true ]
	jq -se 'map(select(.event == "resume")) | length == 1 and .[0].checkpoint_step == 23 and
		.[0].load_s >= 0' "$W/b/metrics.jsonl"
	jq -r 'select(.event == "step") | "\(.step) \(.loss)"' "$W/a/metrics.jsonl" >"$W/a.txt"
	jq -r 'select(.event == "step") | "\(.step) \(.loss)"' "$W/b/metrics.jsonl" >"$W/b.txt"
	[ "$(wc -l <"$W/a.txt")" -eq 40 ]
	diff "$W/a.txt" "$W/b.txt"
}

@test "data convert writes shards that train reads, multi-label included" {
	python3 - "$W" <<'PY'
import gzip, struct, sys, random
w = sys.argv[1]
random.seed(1)
for split, n in (("train", 512), ("test", 128)):
    imgs, labs = bytearray(), bytearray()
    for i in range(n):
        a, b = random.random() < 0.5, random.random() < 0.5
        px = [random.randrange(40) for _ in range(64)]
        if a:
            for j in range(0, 32): px[j] += 100
        if b:
            for j in range(0, 64, 8): px[j] += 100
        imgs += bytes(px); labs += bytes([a, b])
    with gzip.open(f"{w}/{split}-img.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 8, 8) + imgs)
    with gzip.open(f"{w}/{split}-lab.gz", "wb") as f:
        f.write(struct.pack(">III", 0x802, n, 2) + labs)
PY
	run "$HPT" data convert -o "$W/shards" --shards 3 "$W/train-img.gz" "$W/train-lab.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "$W/shards: 512 samples of 8x8x1 in 3 train shards" ]
	run "$HPT" data convert -o "$W/shards" --split test "$W/test-img.gz" "$W/test-lab.gz"
	[ "$status" -eq 0 ]
	spec "$W/s.yaml" mlp "$W/shards" 20 "batch_per_rank: 32"
	run --separate-stderr "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq 0 ]
	acc=$(jq -r 'select(.event == "summary") | .test_accuracy' "$W/run/metrics.jsonl")
	awk -v a="$acc" 'BEGIN { exit !(a >= 0.95) }'
}

@test "a dataset stage:NAME reads HPCTRAIN_DATA_NAME, else the entry's source with a warning, and logs the read" {
	python3 - "$W" <<'PY'
import gzip, struct, sys
w = sys.argv[1]
for split, n in (("train", 64), ("test", 16)):
    imgs = bytes((i * 7 + j) % 200 for i in range(n) for j in range(64))
    labs = bytes(i % 2 for i in range(n))
    with gzip.open(f"{w}/{split}-img.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 8, 8) + imgs)
    with gzip.open(f"{w}/{split}-lab.gz", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + labs)
PY
	"$HPT" data convert -o "$W/src" "$W/train-img.gz" "$W/train-lab.gz" >/dev/null
	"$HPT" data convert -o "$W/src" --split test "$W/test-img.gz" "$W/test-lab.gz" >/dev/null
	spec "$W/s.yaml" mlp '"stage:sh-1"' 1 "batch_per_rank: 16"
	printf 'data: {stage: [{name: sh-1, src: %s}]}\n' "$W/src" >>"$W/s.yaml"
	run --separate-stderr env -u HPCTRAIN_DATA_SH_1 "$HPT" train -q --run "$W/run1" "$W/s.yaml"
	[ "$status" -eq 0 ]
	[ "$stderr" = "hpctrain train: warning: HPCTRAIN_DATA_SH_1 is not set (not started by hpctrain launch?); reading $W/src" ]
	size=$(cat "$W"/src/*.hpts | wc -c)
	jq -se --arg p "$W/src" --argjson n "$size" 'map(select(.event == "data")) | length == 1 and
		(.[0] | .path == $p and (.staged | not) and .bytes == $n and
		 .dataset == "stage:sh-1" and .seconds >= 0)' "$W/run1/metrics.jsonl"
	mv "$W/src" "$W/copy"
	HPCTRAIN_DATA_SH_1=$W/copy run --separate-stderr "$HPT" train -q --run "$W/run2" "$W/s.yaml"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# the data record comes first, before any step
	head -1 "$W/run2/metrics.jsonl" | jq -e --arg p "$W/copy" --argjson n "$size" \
		'.event == "data" and .path == $p and .staged and .bytes == $n'
}

@test "a missing data directory fails with the no-input status naming the file" {
	spec "$W/s.yaml" cnn fashion-mnist 1 "data_dir: $W/nowhere"
	run --separate-stderr "$HPT" train --run "$W/run" "$W/s.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain train: cannot open $W/nowhere/train-images-idx3-ubyte.gz: No such file or directory" ]
}

@test "a corrupt gzip data file fails with the no-input status naming the file" {
	mkdir "$W/d"
	cp "$FMNIST"/*.gz "$W/d/"
	head -c 20000 "$FMNIST/train-images-idx3-ubyte.gz" >"$W/d/train-images-idx3-ubyte.gz"
	spec "$W/s.yaml" cnn fashion-mnist 1 "data_dir: $W/d"
	run --separate-stderr "$HPT" train --run "$W/run" "$W/s.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$stderr" == "hpctrain train: $W/d/train-images-idx3-ubyte.gz: "* ]]
	[[ "$stderr" == *"while reading pixels"* || "$stderr" == *"truncated"* ]]
}

@test "a corrupt checkpoint stops the resume with the no-input status naming it" {
	spec "$W/s.yaml" mlp synthetic 1 "max_steps: 5"
	run "$HPT" train -q --run "$W/run" --max-steps 3 "$W/s.yaml"
	[ "$status" -eq 0 ]
	printf 'garbage' | dd of="$W/run/checkpoints/ckpt-000000000003.bin" bs=1 seek=200 conv=notrunc 2>/dev/null
	run --separate-stderr "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain train: $W/run/checkpoints/ckpt-000000000003.bin: corrupt checkpoint (CRC-32 mismatch)" ]
}

# flip FILE OFFSET: complements one byte in place, as a bad disk would.
flip() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

@test "a user's ckpt-best.bin beside the checkpoints is neither resumed from nor pruned" {
	spec "$W/s.yaml" mlp synthetic 1 "batch_per_rank: 16" "max_steps: 9" \
		"checkpoint: {every_steps: 3, keep: 2}"
	run -0 "$HPT" train -q --run "$W/run" --max-steps 6 "$W/s.yaml"
	# a copy of step 3: sorted by name it came last and was taken as the newest
	cp -p "$W/run/checkpoints/ckpt-000000000003.bin" "$W/run/checkpoints/ckpt-best.bin"
	run -0 --separate-stderr "$HPT" train --run "$W/run" "$W/s.yaml"
	[[ "$stderr" == *"resuming from $W/run/checkpoints/ckpt-000000000006.bin (step 6)"* ]]
	[ "$(ls "$W/run/checkpoints")" = "$(printf 'ckpt-000000000006.bin\nckpt-000000000009.bin\nckpt-best.bin')" ]
	# --fresh removes the trainer's checkpoints, not the copy
	run -0 "$HPT" train -q --fresh --run "$W/run" --max-steps 1 "$W/s.yaml"
	[ "$(ls "$W/run/checkpoints")" = "$(printf 'ckpt-000000000001.bin\nckpt-best.bin')" ]
}

@test "a flipped byte in the newest checkpoint resumes from the one before it, with a warning naming it" {
	spec "$W/s.yaml" mlp synthetic 1 "batch_per_rank: 16" "max_steps: 9" \
		"checkpoint: {every_steps: 3, keep: 2}"
	run -0 "$HPT" train -q --run "$W/run" --max-steps 6 "$W/s.yaml"
	flip "$W/run/checkpoints/ckpt-000000000006.bin" 300
	run -0 --separate-stderr "$HPT" train --run "$W/run" "$W/s.yaml"
	printf '%s\n' "${stderr_lines[@]}" | grep -Fqx "hpctrain train: warning: $W/run/checkpoints/ckpt-000000000006.bin: corrupt checkpoint (CRC-32 mismatch); passed over for an older checkpoint"
	[[ "$stderr" == *"resuming from $W/run/checkpoints/ckpt-000000000003.bin (step 3)"* ]]
	# steps 4..9 trained again; step 6 written anew, whole
	[ "$(jq -s 'map(select(.event == "step")) | length' "$W/run/metrics.jsonl")" -eq 12 ]
	run -0 --separate-stderr "$HPT" train --run "$W/run" "$W/s.yaml"
	[[ "$stderr" == *"resuming from $W/run/checkpoints/ckpt-000000000009.bin (step 9)"* ]]
	[[ "$stderr" != *warning* ]]
}

@test "after --new-global-batch renumbers the steps downward, a resume takes the new lineage and the old one is retired" {
	command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
	spec "$W/s.yaml" mlp synthetic 1 "batch_per_rank: 16" "max_steps: 20" \
		"checkpoint: {every_steps: 3, keep: 2}"
	# global batch 16: steps 3 and 6, 96 samples
	run -0 "$HPT" train -q --run "$W/run" --max-steps 6 "$W/s.yaml"
	# 2 ranks at global batch 32: 96 samples are step 3; on to step 5
	run -0 mpirun --oversubscribe --bind-to none -np 2 "$HPT" train -q --new-global-batch \
		--run "$W/run" --max-steps 5 "$W/s.yaml"
	# the old lineage (steps 3 and 6, which sort after step 5) moved aside
	[ "$(ls "$W/run/checkpoints")" = "$(printf 'ckpt-000000000005.bin\nretired-gb16-160')" ]
	[ "$(ls "$W/run/checkpoints/retired-gb16-160")" = "$(printf 'ckpt-000000000003.bin\nckpt-000000000006.bin')" ]
	# a plain resume holds global batch 32, from step 5, and so does another
	# --new-global-batch at 2 ranks: the 64 samples since are not discarded
	run -0 --separate-stderr "$HPT" train --run "$W/run" --max-steps 6 "$W/s.yaml"
	[[ "$stderr" == *"resuming from $W/run/checkpoints/ckpt-000000000005.bin (step 5)"* ]]
	[[ "$stderr" == *"resuming a 2-rank checkpoint (global batch 32) on 1 rank: 2 accumulation steps of 16"* ]]
}

@test "a model too deep for the data's images fails with the bad-spec status" {
	spec "$W/s.yaml" hepcnn synthetic 1
	run --separate-stderr "$HPT" train --run "$W/run" "$W/s.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$stderr" = "hpctrain train: the model's pooling needs larger images (they shrink to 1x1 before it) (model hepcnn, data 8x8x1)" ]
}

@test "a diverging run stops with status 1 and names the step" {
	spec "$W/s.yaml" mlp synthetic 1 "optimizer: {name: sgd, lr: 100, momentum: 0.99}"
	run --separate-stderr "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "hpctrain train: step "*": the loss is "*"; the run diverged, lower train.optimizer.lr" ]]
}

@test "an invalid spec fails with the bad-spec status and the validator's message" {
	spec "$W/s.yaml" cnnn fashion-mnist 1
	run --separate-stderr "$HPT" train "$W/s.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$stderr" == *"train.model: expected one of mlp, cnn, hepcnn, resnet-small"* ]]
}

# cuda_build: whether bin/hpctrain-train has the CUDA backend (make found nvcc).
cuda_build() {
	ldd "$(dirname "$HPT")/hpctrain-train" | grep -q libcudart
}

@test "train.device cuda without a visible GPU fails with the unavailable status before making the run" {
	spec "$W/s.yaml" cnn synthetic 1 "max_steps: 2"
	export CUDA_VISIBLE_DEVICES= # no GPU, even on a machine with some
	run --separate-stderr "$HPT" train -q --run "$W/run" --set train.device=cuda "$W/s.yaml"
	[ "$status" -eq 5 ] # HPT_EXIT_UNAVAILABLE
	if cuda_build; then
		[ "$stderr" = "hpctrain train: train.device: cuda, but no GPU is visible (CUDA_VISIBLE_DEVICES=)" ]
	else
		[ "$stderr" = "hpctrain train: train.device: cuda, but this trainer was built without CUDA" ]
	fi
	[ ! -e "$W/run" ]
}

@test "train.device auto with gpus_per_node but no visible GPU trains on the CPU and says so" {
	spec "$W/s.yaml" mlp synthetic 1 "max_steps: 2"
	printf 'resources: {gpus_per_node: 2}\n' >>"$W/s.yaml"
	export CUDA_VISIBLE_DEVICES=
	run --separate-stderr "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq 0 ]
	if cuda_build; then
		why="no GPU is visible (CUDA_VISIBLE_DEVICES=)"
	else
		why="this trainer was built without CUDA"
	fi
	[ "$stderr" = "hpctrain train: train.device: auto: resources.gpus_per_node is 2, but $why; training on the CPU" ]
	[[ "$output" == "test accuracy "* ]]
}

@test "train.device cpu and auto without gpus_per_node train on the CPU without a note" {
	spec "$W/s.yaml" mlp synthetic 1 "max_steps: 2"
	export CUDA_VISIBLE_DEVICES=
	run --separate-stderr "$HPT" train -q --run "$W/a" "$W/s.yaml"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run --separate-stderr "$HPT" train --run "$W/c" --set train.device=cpu "$W/s.yaml"
	[ "$status" -eq 0 ]
	[[ "${stderr_lines[0]}" == "hpctrain train: mlp on synthetic "*"; oneDNN "* ]]
}
