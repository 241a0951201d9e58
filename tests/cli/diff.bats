#!/usr/bin/env bats
# diff.bats - `hpctrain diff` on runs the bundled trainer makes here
# (no Slurm): two runs apart in train.optimizer.lr, two of the same
# spec, a run and itself; code sections from hand-made code.json records
# and snapshots (the format of code_diff.h); --json, --stat and the
# errors.  The runs are trained once per file.

load common

setup_file() {
	local w=$BATS_FILE_TMPDIR
	export OMP_NUM_THREADS=1
	# kernels chosen by measurement may differ between two runs; fixed
	# ones keep the kernels section out of the lists of sections below
	export HPCTRAIN_KERNELS=fixed
	cat >"$w/s.yaml" <<SPEC
version: 1
name: dd
train: {model: mlp, dataset: synthetic, epochs: 1, max_steps: 8, batch_per_rank: 16,
        optimizer: {name: sgd, lr: 0.05}}
output: {log_every_steps: 4}
SPEC
	"$HPT" train -q --run "$w/runs/dd/0a1b2c3d4e5f" "$w/s.yaml" >/dev/null
	"$HPT" train -q --run "$w/runs/dd/9f8e7d6c5b4a" --set train.optimizer.lr=0.1 "$w/s.yaml" >/dev/null
	"$HPT" train -q --run "$w/again" "$w/s.yaml" >/dev/null
}

setup() {
	F=$BATS_FILE_TMPDIR
	A=$F/runs/dd/0a1b2c3d4e5f
	B=$F/runs/dd/9f8e7d6c5b4a
	W=$BATS_TEST_TMPDIR
}

# section NAME: the lines of section NAME of $output, without its header.
section() {
	awk -v want="== $1 ==" '/^== .* ==$/ { on = ($0 == want); next } on' <<<"$output"
}

# code_run DIR SNAPSHOT FILES...: a copy of run A with a code.json whose
# snapshot is SNAPSHOT; each FILE is PATH=TEXT, written into the snapshot
# and recorded with TEXT's sha256 (mode 0644).
code_run() {
	local dir=$1 snap=$2 f path text sum files=
	shift 2
	cp -r "$A" "$dir"
	mkdir -p "$snap"
	for f in "$@"; do
		path=${f%%=*} text=${f#*=}
		printf '%s\n' "$text" >"$snap/$path"
		sum=$(sha256sum "$snap/$path" | cut -d' ' -f1)
		files+=${files:+,}"{\"path\": \"$path\", \"mode\": 420, \"size\": 1, \"sha256\": \"$sum\"}"
	done
	printf '{"digest": "sha256:%s", "dir": "/src", "snapshot": "%s", "files": [%s], "file_count": %d, "bytes": 0, "git": null}\n' \
		"$(basename "$snap")" "$snap" "$files" $# >"$dir/code.json"
}

@test "diff of two runs apart in lr exits 1 and shows the spec section alone, naming the key with both values" {
	run -1 --separate-stderr "$HPT" diff "$A" "$B"
	[ "$stderr" = "" ]
	[ "${lines[0]}" = "a: $A" ]
	[ "${lines[1]}" = "b: $B" ]
	[ "$(section spec)" = "$(printf -- '- train.optimizer.lr: 0.05\n+ train.optimizer.lr: 0.1')" ]
	# results beside, never a section of differences
	[ "$(grep '^== ' <<<"$output")" = "$(printf '== spec ==\n== metrics ==')" ]
	section metrics | grep -q '^  test_accuracy  '
}

@test "diff of a run with itself, and of two runs of the same spec, exits 0 and prints nothing" {
	run -0 --separate-stderr "$HPT" diff "$A" "$A"
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$HPT" diff "$A" "$F/again"
	[ "$output" = "" ]
}

@test "diff takes runs by NAME/HASH under the output directory" {
	HPCTRAIN_OUTPUT_DIR=$F/runs run -1 "$HPT" diff dd/0a1b dd/9f8e
	[ "${lines[0]}" = "a: $A" ]
	[ "${lines[1]}" = "b: $B" ]
}

@test "diff --json prints one object with every section" {
	run -1 --separate-stderr "$HPT" diff --json "$A" "$B"
	jq -e '.same == false and .a == "'"$A"'" and .b == "'"$B"'"' <<<"$output"
	jq -e '[keys[]] == (["a","b","code","data","image","kernels","metrics","same","shape","spec","venv","versions"])' <<<"$output"
	jq -e '.spec == [{"key": "train.optimizer.lr", "a": "0.05", "b": "0.1"}]' <<<"$output"
	jq -e '.code == null and .venv == [] and .image == null and .data == [] and .shape == []' <<<"$output"
	jq -e '.metrics | map(.key) | index("test_accuracy") != null' <<<"$output"
	# the trainer's rank 0 recorded its library, instruction set and kernels
	jq -e '(.onednn | test("^[0-9]+[.][0-9]+[.][0-9]+$")) and (.isa | length > 0) and
		(.kernels | type == "string")' "$A/software.json"
	run -0 "$HPT" diff -j "$A" "$A"
	jq -e '.same == true and .spec == []' <<<"$output"
}

@test "diff names added, removed and changed code files with a unified diff, and --stat counts them" {
	code_run "$W/ca" "$W/snap-a" "train.py=lr = 0.05" "old.py=x"
	code_run "$W/cb" "$W/snap-b" "new.py=y" "train.py=lr = 0.1"
	run -1 --separate-stderr "$HPT" diff "$W/ca" "$W/cb"
	[ "$(grep '^== ' <<<"$output")" = "$(printf '== code ==\n== metrics ==')" ]
	section code >"$W/code.txt"
	[ "$(cat "$W/code.txt")" = "$(printf '%s\n' "- sha256:snap-a" "+ sha256:snap-b" "A new.py" \
		"D old.py" "M train.py (+1 -1)" "--- a/train.py" "+++ b/train.py" "@@ -1 +1 @@" \
		"-lr = 0.05" "+lr = 0.1")" ]
	run -1 "$HPT" diff --stat "$W/ca" "$W/cb"
	[ "$(section code)" = "$(printf '%s\n' "- sha256:snap-a" "+ sha256:snap-b" \
		"1 added, 1 removed, 1 changed" "A new.py" "D old.py" "M train.py (+1 -1)")" ]
	run -1 "$HPT" diff --json "$W/ca" "$W/cb"
	jq -e '.code.added == ["new.py"] and .code.removed == ["old.py"] and
		.code.changed[0].path == "train.py" and .code.changed[0].added == 1' <<<"$output"
}

@test "diff says a missing snapshot and still lists the file; a run without code.json is no code recorded" {
	code_run "$W/ca" "$W/snap-a" "train.py=one"
	code_run "$W/cb" "$W/snap-b" "train.py=two"
	rm -r "$W/snap-b"
	run -1 "$HPT" diff "$W/ca" "$W/cb"
	section code | grep -qx "M train.py: snapshot missing: $W/snap-b"
	run -1 "$HPT" diff "$W/ca" "$A"
	[ "$(section code)" = "$(printf '%s\n' "- sha256:snap-a" "+ (none)" "no code recorded for the second run")" ]
	# neither run has code: the section says nothing
	run -0 "$HPT" diff "$A" "$F/again"
}

# venv_run DIR VERSION: a copy of run A whose venv had numpy VERSION and
# torch 2.1.0: its resolved.yaml pins the venv's digest (the listing's
# sha256, as validate pins it) and its software.json lists the packages
# (the format of common/software.h).
venv_run() {
	local digest
	cp -r "$A" "$1"
	digest=sha256:$(printf 'numpy==%s\ntorch==2.1.0\n' "$2" | sha256sum | cut -d' ' -f1)
	sed -i "s|^  venv: null\$|  venv: \"/v\"\\n  venv_digest: \"$digest\"|" "$1/resolved.yaml"
	grep -qx "  venv_digest: \"$digest\"" "$1/resolved.yaml"
	printf '{"hpctrain": "x", "venv": {"path": "/v", "digest": "%s", "packages": {"numpy": "%s", "torch": "2.1.0"}}}\n' \
		"$digest" "$2" >"$1/software.json"
}

@test "diff of two runs apart in one venv package's version shows the venv section alone" {
	venv_run "$W/va" 1.24.2
	venv_run "$W/vb" 1.24.3
	run -1 --separate-stderr "$HPT" diff "$W/va" "$W/vb"
	[ "$(grep '^== ' <<<"$output")" = "$(printf '== venv ==\n== metrics ==')" ]
	[ "$(section venv)" = "$(printf -- '- numpy: 1.24.2\n+ numpy: 1.24.3')" ]
	run -1 "$HPT" diff --json "$W/va" "$W/vb"
	jq -e '.venv == [{"key": "numpy", "a": "1.24.2", "b": "1.24.3"}] and .spec == []' <<<"$output"
	run -0 "$HPT" diff "$W/va" "$W/va"
}

@test "diff of a run that does not exist exits with the no-input status naming it" {
	run -4 --separate-stderr "$HPT" diff "$A" "$W/nowhere"
	[[ "$stderr" == "hpctrain diff: "*"$W/nowhere"* ]]
	[ "$output" = "" ]
}

@test "diff with other than two runs, or an unknown option, is a usage error" {
	run -2 --separate-stderr "$HPT" diff "$A"
	[ "${stderr_lines[0]}" = "hpctrain diff: two runs are needed, got 1" ]
	run -2 --separate-stderr "$HPT" diff "$A" "$B" "$A"
	[ "${stderr_lines[0]}" = "hpctrain diff: two runs at a time, got 3" ]
	run -2 "$HPT" diff --bogus "$A" "$B"
	run -2 "$HPT" diff "$A" ""
	run -0 "$HPT" diff --help
	[ "${lines[0]}" = "usage: hpctrain diff [--stat] [--json] <run-a> <run-b>" ]
}
