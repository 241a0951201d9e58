#!/usr/bin/env bats
# validate.bats - `hpctrain validate`: statuses, exact messages, JSON, hashes.

load common

setup() {
	TMP=$(mktemp -d)
}

teardown() {
	rm -rf "$TMP"
}

@test "validate accepts every bundled template and exits 0" {
	run "$HPT" validate "$TEMPLATES"/*.yaml
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c ': ok sha256:[0-9a-f]\{64\}$')" -eq "$(ls "$TEMPLATES"/*.yaml | wc -l)" ]
}

@test "validate finds a template by name" {
	run "$HPT" validate fmnist-cpu
	[ "$status" -eq 0 ]
	[[ "$output" == *"templates/fmnist-cpu.yaml: ok sha256:"* ]]
}

@test "validate lists every bad key of a file and exits with the bad-spec status" {
	run --separate-stderr "$HPT" validate "$SPECS/bad-many.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ -z "$output" ]
	f="$SPECS/bad-many.yaml"
	[ "${stderr_lines[0]}" = "$f:5:18: resources.gpus_per_node: expected an integer 0..64, got \"four\"" ]
	[ "${stderr_lines[1]}" = "$f:6:9: resources.time: expected a time limit of 1 minute to 365 days like 90, 1:30:00 or 2-00:00:00, got the string \"1:75:00\"" ]
	[ "${stderr_lines[2]}" = "$f:7:16: binding.cpu: expected one of exclusive, node, core-complex, none, got \"exclusiv\"; did you mean \"exclusive\"?" ]
	[ "${stderr_lines[3]}" = "$f:10:3: duplicate key \"epochs\" (first at 9:3)" ]
	[ "${stderr_lines[4]}" = "$f:11:1: unknown key \"outptu\"; did you mean \"output\"?" ]
	[ "${#stderr_lines[@]}" -eq 5 ]
}

@test "validate names a missing file and exits with the no-input status" {
	run --separate-stderr "$HPT" validate "$TMP/nope.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "cannot open $TMP/nope.yaml: No such file or directory" ]
}

@test "validate names an unknown template and exits with the no-input status" {
	run --separate-stderr "$HPT" validate fmnist-cpv
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "fmnist-cpv: no such file, and no template of that name (see 'hpctrain template list')" ]
}

@test "validate reports the worst status over several files" {
	run "$HPT" validate "$TEMPLATES/fmnist-cpu.yaml" "$SPECS/bad-many.yaml" "$TMP/nope.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
}

@test "validate rejects an alias bomb with a position and the bad-spec status" {
	{
		echo "version: 1"; echo "name: bomb"
		echo 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
		for i in $(seq 1 30); do
			printf 'a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n' \
				$i $i $((i-1)) $((i-1)) $((i-1)) $((i-1)) $((i-1)) $((i-1)) $((i-1)) $((i-1)) $((i-1))
		done
	} >"$TMP/bomb.yaml"
	run --separate-stderr "$HPT" validate "$TMP/bomb.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$stderr" = "$TMP/bomb.yaml:3:5: anchors and aliases are not allowed in a job spec (found &a0)" ]
}

@test "validate refuses hostile bytes with the bad-spec status" {
	printf 'version: 1\nname: a\0b\n' >"$TMP/nul.yaml"
	run --separate-stderr "$HPT" validate "$TMP/nul.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$stderr" = "$TMP/nul.yaml:2:8: NUL byte in input; a job spec is UTF-8 text" ]
	printf 'version: 1\nname: \xff\n' >"$TMP/latin.yaml"
	run --separate-stderr "$HPT" validate "$TMP/latin.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$stderr" = "$TMP/latin.yaml:2:7: invalid UTF-8 byte 0xff; a job spec is UTF-8 text" ]
	head -c 3000000 /dev/zero | tr '\0' '#' >"$TMP/big.yaml"
	run --separate-stderr "$HPT" validate "$TMP/big.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$stderr" == "$TMP/big.yaml:1:1048577: input is larger than 1048576 bytes, the limit for a job spec" ]]
	printf 'version: 1\nname: t\n---\nversion: 1\n' >"$TMP/two.yaml"
	run --separate-stderr "$HPT" validate "$TMP/two.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$stderr" = "$TMP/two.yaml:3:1: a second YAML document; a job spec is one document" ]
}

@test "validate reads a spec from standard input" {
	run bash -c "printf 'version: 1\nname: t\nresources: {nodes: x}\n' | '$HPT' validate -"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "<stdin>:3:20: resources.nodes: expected an integer 1..65536 or a range MIN-MAX of them, got \"x\"" ]
}

@test "validate --set overrides keys and names the flag in errors" {
	run --separate-stderr "$HPT" validate --set resources.nodes=4 --set params.ranks=3 --print-resolved fmnist-cpu
	[ "$status" -eq 0 ]
	[[ "$output" == *"  nodes: 4"* ]]
	[[ "$output" == *"  ranks_per_node: 3"* ]]
	run --separate-stderr "$HPT" validate --set resources.nodes=four --set resources.gpu=1 fmnist-cpu
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "${stderr_lines[0]}" = "--set resources.gpu=1: resources: unknown key \"gpu\"; did you mean \"gpus_per_node\"?" ]
	[ "${stderr_lines[1]}" = "--set resources.nodes=four: resources.nodes: expected an integer 1..65536 or a range MIN-MAX of them, got \"four\"" ]
}

@test "a malformed --set is a usage error; a huge one is quoted short" {
	for set in novalue =1 "a b=1" "resources..nodes=1"; do
		run -"$EX_USAGE" --separate-stderr "$HPT" validate --set "$set" fmnist-cpu
		[ "${stderr_lines[0]}" = "hpctrain validate: --set: expected KEY.PATH=VALUE, KEY.PATH being names of [A-Za-z0-9_-] joined by '.', got '$set'" ]
	done
	big=$(head -c 100000 /dev/zero | tr '\0' x)
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate --set "name=$big" fmnist-cpu
	[ "${#stderr}" -lt 300 ]
	[[ "$stderr" == "--set name=xxxx"*"... (100011 bytes): name: \"xxxx"*"...\" must be 1 to 64 characters"* ]]
}

@test "validate --json prints one parseable document with errors and hashes" {
	run --separate-stderr "$HPT" validate --json "$TEMPLATES/fmnist-cpu.yaml" "$SPECS/bad-many.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ -z "$stderr" ]
	echo "$output" | jq -e '.valid == false' >/dev/null
	echo "$output" | jq -e '.files[0].valid == true and (.files[0].sha256 | length) == 64' >/dev/null
	echo "$output" | jq -e '.files[1].valid == false and .files[1].sha256 == null' >/dev/null
	echo "$output" | jq -e '.files[1].errors | length == 5' >/dev/null
	echo "$output" | jq -e '.files[1].errors[0] | .line == 5 and .column == 18 and .path == "resources.gpus_per_node"' >/dev/null
}

@test "validate gives the same hash and resolved bytes every time" {
	"$HPT" validate --print-resolved fmnist-gpu >"$TMP/a"
	"$HPT" validate --print-resolved fmnist-gpu >"$TMP/b"
	cmp "$TMP/a" "$TMP/b"
	h1=$("$HPT" validate fmnist-gpu | sed 's/.*sha256://')
	h2=$("$HPT" validate fmnist-gpu | sed 's/.*sha256://')
	[ "$h1" = "$h2" ]
}

@test "re-validating the resolved form gives the same hash and bytes" {
	for t in "$TEMPLATES"/*.yaml; do
		"$HPT" validate --print-resolved "$t" >"$TMP/r.yaml"
		"$HPT" validate --print-resolved "$TMP/r.yaml" >"$TMP/rr.yaml"
		cmp "$TMP/r.yaml" "$TMP/rr.yaml"
		[ "$("$HPT" validate "$t" | sed 's/.*sha256://')" = "$("$HPT" validate "$TMP/r.yaml" | sed 's/.*sha256://')" ]
	done
}

@test "validate keeps shell syntax in strings as inert data" {
	rm -f /tmp/hpctrain-pwned
	run "$HPT" validate --print-resolved "$SPECS/injection.yaml"
	[ "$status" -eq 0 ]
	[[ "$output" == *'EVIL: "$(touch /tmp/hpctrain-pwned) `id` ; rm -rf ~ # \n#SBATCH --uid=0"'* ]]
	[ ! -e /tmp/hpctrain-pwned ]
}

@test "validate --quiet prints nothing for a good spec" {
	run "$HPT" validate --quiet fmnist-cpu
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "validate without a spec is a usage error" {
	run --separate-stderr "$HPT" validate
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain validate: no job spec given" ]
}

@test "validate suggests the flag that was meant" {
	run --separate-stderr "$HPT" validate --print-resovled fmnist-cpu
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain validate: unknown option '--print-resovled'; did you mean '--print-resolved'?" ]
}

@test "validate --fields lists every key with its type" {
	run "$HPT" validate --fields
	[ "$status" -eq 0 ]
	echo "$output" | grep -q $'^resources.gpus_per_node\tinteger 0..64\t0\t'
	echo "$output" | grep -q $'^train.precision\tfp32|bf16|fp16\tfp32\t'
}

@test "validate takes binding.contract warn or fail, warn by default, and names the choices otherwise" {
	run -0 "$HPT" validate --print-resolved fmnist-cpu
	[[ "$output" == *$'\n  contract: warn\n'* ]]
	run -0 "$HPT" validate --quiet --set binding.contract=fail fmnist-cpu
	run --separate-stderr "$HPT" validate --set binding.contract=stop fmnist-cpu
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$stderr" == *'binding.contract: expected one of warn, fail, got "stop"'* ]]
}

@test "validate takes train.device auto, cpu or cuda and suggests the meant one for a typo" {
	for d in auto cpu cuda; do
		run "$HPT" validate --set train.device=$d fmnist-cpu
		[ "$status" -eq 0 ]
	done
	run --separate-stderr "$HPT" validate --set train.device=gpu fmnist-cpu
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "${stderr_lines[0]}" = '--set train.device=gpu: train.device: expected one of auto, cpu, cuda, got "gpu"; did you mean "cpu"?' ]
	run "$HPT" validate --fields
	echo "$output" | grep -q $'^train.device\tauto|cpu|cuda\tauto\t'
}

@test "validate refuses a program or argument relative to here, and a program it sees cannot run; a name not on PATH is a warning" {
	cd "$BATS_TEST_TMPDIR"
	touch train.py
	printf '#!/bin/sh\n' >noexec.sh
	mkdir data
	printf 'version: 1\nname: p\ncommand: [python3, train.py, --data, data, --steps, "16"]\n' >rel.yaml
	# with code on (a command's default) the job runs in the code's
	# snapshot of this directory, which holds them at the same paths
	run -0 "$HPT" validate -q rel.yaml
	printf 'code: false\n' >>rel.yaml
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate rel.yaml
	[ "${stderr_lines[0]}" = "hpctrain validate: rel.yaml: command[1] 'train.py' is a file relative to this directory, and the job runs in its run directory, not here: give $PWD/train.py" ]
	[ "${stderr_lines[1]}" = "hpctrain validate: rel.yaml: command[3] 'data' is a directory relative to this directory, and the job runs in its run directory, not here: give $PWD/data" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	printf 'version: 1\nname: p\ncommand: [./noexec.sh]\n' >dot.yaml
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate dot.yaml
	[ "$stderr" = "hpctrain validate: dot.yaml: command[0] './noexec.sh' is not an executable file in the code's directory $PWD (chmod +x it, or run it through its interpreter)" ]
	printf 'code: false\n' >>dot.yaml
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate dot.yaml
	[ "$stderr" = "hpctrain validate: dot.yaml: command[0] './noexec.sh' is a relative path, and the job runs in its run directory, not here: give $PWD/noexec.sh" ]
	printf 'version: 1\nname: p\ncommand: [%s]\n' "$PWD/noexec.sh" >noexec.yaml
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate noexec.yaml
	[[ "$stderr" == *"command[0] '$PWD/noexec.sh' is not executable"* ]]
	printf 'version: 1\nname: p\ncommand: [%s]\n' "$PWD/missing" >missing.yaml
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate missing.yaml
	[[ "$stderr" == *"command[0] '$PWD/missing' does not exist"* ]]
	# where this host cannot see (a node-local directory), and a name
	# the nodes' PATH may have: not refused
	printf 'version: 1\nname: p\ncommand: [/nonexistent-%s/x]\n' "$$" >local.yaml
	run -0 "$HPT" validate -q local.yaml
	printf 'version: 1\nname: p\ncommand: [no-such-program-%s]\n' "$$" >name.yaml
	run -0 --separate-stderr "$HPT" validate name.yaml
	[[ "$stderr" == *"warning: command[0] 'no-such-program-$$' is not on this host's PATH; the nodes must have it"* ]]
	# in a container the program is the image's
	printf 'version: 1\nname: p\ncommand: [python3, train.py]\ncontainer: {image: docker://x/y:1}\n' >img.yaml
	run "$HPT" validate img.yaml
	[[ "$output" != *"relative to this directory"* ]]
}
