#!/usr/bin/env bats
# template.bats - `hpctrain template list|show|init`.

load common

setup() {
	TMP=$(mktemp -d)
}

teardown() {
	rm -rf "$TMP"
}

@test "template list names every bundled template with its summary" {
	run "$HPT" template list
	[ "$status" -eq 0 ]
	for t in fmnist-cpu fmnist-gpu hepcnn-multinode cpu-multinode torch-container fmnist-container \
		fmnist-staged torch-ddp; do
		echo "$output" | grep -q "^$t  *[a-zA-Z]"
	done
}

@test "template list --json parses" {
	run "$HPT" template list --json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e 'map(.name) | index("fmnist-cpu") != null' >/dev/null
}

@test "template show prints the template verbatim" {
	run "$HPT" template show hepcnn-multinode
	[ "$status" -eq 0 ]
	diff <(echo "$output") "$TEMPLATES/hepcnn-multinode.yaml"
}

@test "template init writes a spec that validates, and never overwrites" {
	cd "$TMP"
	run "$HPT" template init fmnist-cpu
	[ "$status" -eq 0 ]
	cmp fmnist-cpu.yaml "$TEMPLATES/fmnist-cpu.yaml"
	"$HPT" validate --quiet fmnist-cpu.yaml
	echo "mine" >job.yaml
	run --separate-stderr "$HPT" template init fmnist-gpu -o job.yaml
	[ "$status" -eq "$EX_IO" ]
	[[ "$stderr" == *"job.yaml: File exists (use --force to replace it)" ]]
	[ "$(cat job.yaml)" = "mine" ]
	run "$HPT" template init fmnist-gpu -o job.yaml --force
	[ "$status" -eq 0 ]
	cmp job.yaml "$TEMPLATES/fmnist-gpu.yaml"
	[ -z "$(ls | grep tmp)" ]
}

@test "template show of an unknown name suggests the nearest" {
	run --separate-stderr "$HPT" template show fmnist-gpv
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "${stderr_lines[0]}" = "hpctrain template: no template named 'fmnist-gpv'; did you mean 'fmnist-gpu'?" ]
}

@test "template with an unknown action is a usage error with a suggestion" {
	run --separate-stderr "$HPT" template lst
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain template: unknown action 'lst'; did you mean 'list'?" ]
}

@test "HPCTRAIN_TEMPLATE_PATH comes first in the search" {
	printf '# fmnist-cpu: mine\nversion: 1\nname: mine\n' >"$TMP/fmnist-cpu.yaml"
	HPCTRAIN_TEMPLATE_PATH=$TMP run "$HPT" template list
	echo "$output" | grep -q '^fmnist-cpu  *mine$'
	HPCTRAIN_TEMPLATE_PATH=$TMP run "$HPT" validate --print-resolved fmnist-cpu
	[[ "$output" == *'name: "mine"'* ]]
}

@test "torch-container validates with its image reference, recorded unpinned; a missing image path exits 4" {
	run --separate-stderr "$HPT" validate --print-resolved torch-container
	[ "$status" -eq 0 ]
	[[ "$output" == *$'command:\n- "python3"\n- "/workspace/train.py"\n'* ]]
	[[ "$output" == *'image: "docker.io/pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime"'* ]]
	[[ "$output" == *'  runtime: podman'* ]]
	[[ "$output" == *'digest: "unpinned"'* ]]
	[[ "$stderr" == *"warning: the image reference docker.io/pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime cannot be pinned"* ]]
	run --separate-stderr "$HPT" validate --print-resolved torch-container \
		--set params.image="$TMP/gone" --set params.runtime=charliecloud
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain validate: container image $TMP/gone: No such file or directory" ]
}

@test "fmnist-container validates without an image, and trains two ranks inside one made by mktrainimage.sh" {
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
	local root=$BATS_TEST_DIRNAME/../.. cache work run
	run -0 "$HPT" validate fmnist-container
	cache=$(cd "$root" && pwd)/build/images/train
	if [ ! -d "$cache" ] || [ "$BATS_TEST_DIRNAME/helpers/mktrainimage.sh" -nt "$cache" ] ||
		[ "$root/bin/hpctrain-train" -nt "$cache" ] || [ "$root/bin/hpctrain" -nt "$cache" ]; then
		sh "$BATS_TEST_DIRNAME/helpers/mktrainimage.sh" "$cache"
	fi
	# a hard-linked copy, outside /tmp (ch-run binds /tmp itself): the run
	# directory reaches the trainer through launch's own mount, whose
	# point is made in the image before its digest is taken
	work=$(mktemp -d "$(cd "$root" && pwd)/build/template-bats.XXXXXX")
	cp -al "$cache" "$work/img"
	run=$work/runs/f
	mkdir -p "$run" "$work/img$run"
	chmod 700 "$work/runs" "$run"
	run --separate-stderr "$HPT" validate --print-resolved fmnist-container --set params.image="$work/img" \
		--set params.runtime=charliecloud --set params.epochs=1 --set train.max_steps=3 \
		--set train.allreduce.stall_timeout_s=60
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"warning: container.image: the bundled trainer is started inside the image by its path on the host"* ]]
	printf '%s\n' "$output" >"$run/resolved.yaml"
	cd "$run"
	USER=${USER:-root} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		OMPI_MCA_btl_vader_single_copy_mechanism=none \
		run timeout 300 mpirun -x OMPI_MCA_btl_vader_single_copy_mechanism -np 2 \
		"$HPT" launch --run "$run" -- "$HPT" train "$run/resolved.yaml" --run "$run"
	cd /
	rm -rf "$work/img"
	[ "$status" -eq 0 ] || { echo "$output"; rm -rf "$work"; false; }
	[[ "$output" == *"test accuracy "*" after 3 steps"* ]]
	jq -e 'select(.event == "summary") | .ranks == 2 and .steps == 3' "$run/metrics.jsonl"
	rm -rf "$work"
}

@test "fmnist-staged stages Fashion-MNIST's IDX files to the node and trains two ranks on that copy" {
	local src=/usr/share/datasets/fashion-mnist run=$TMP/run h
	[ -r "$src/train-images-idx3-ubyte.gz" ] || skip "no $src (dataset-fashion-mnist)"
	command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
	mkdir -m 700 "$run"
	run --separate-stderr "$HPT" validate --print-resolved fmnist-staged --set params.nodes=1 \
		--set params.epochs=1 --set train.max_steps=3 --set data.cache.dir="$TMP/cache"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$run/resolved.yaml"
	run -0 "$HPT" stage --run "$run"
	h=$(sed -n 's/^    manifest: "sha256:\(.*\)"$/\1/p' "$run/resolved.yaml")
	diff -r "$src" "$TMP/cache/$h"
	cd "$run"
	OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		run timeout 300 mpirun --oversubscribe -np 2 \
		"$HPT" launch --run "$run" -- "$HPT" train "$run/resolved.yaml" --run "$run"
	cd /
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"test accuracy "*" after 3 steps"* ]]
	jq -s -e --arg p "$TMP/cache/$h" 'map(select(.event == "data")) | length == 1 and .[0].staged and .[0].path == $p' \
		"$run/metrics.jsonl"
}
