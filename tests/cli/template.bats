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
	for t in fmnist-cpu fmnist-gpu hepcnn-multinode cpu-multinode; do
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
