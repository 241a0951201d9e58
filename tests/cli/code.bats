#!/usr/bin/env bats
# code.bats - the program's code as part of the run (CODE in
# hpctrain-job(5)): its digest in the resolved form, hostile trees
# refused by validate, and, against a real local Slurm (tests/cluster,
# one node), the stored snapshot, code.json and jobs that run it.  The
# snapshot staged to the nodes' caches with the data is validate's here
# and stage_cluster.bats's on three nodes.

load common
load slurm_cluster

setup() {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	PROJ=$BATS_TEST_TMPDIR/proj
	mkdir -p "$PROJ"
	cd "$PROJ"
	printf 'print("one")\n' >train.py
}

# code_spec FILE NAME COMMAND [EXTRA YAML]: a one-rank job of COMMAND
# whose output.dir is outside the code's directory, code on (write_spec's
# jobs have it off).
code_spec() {
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: 1, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: $3
preempt: {lead_s: 0}
output: {dir: $BATS_TEST_TMPDIR/runs}
${4:-}
SPEC
}

digest_of() { # SPEC: the code digest validate pins
	"$HPT" validate --print-resolved "$1" | sed -n 's/^  digest: "\(sha256:[0-9a-f]*\)"$/\1/p'
}

@test "validate pins the code's digest: an edit changes it, a touch or an ignored file does not" {
	code_spec job.yaml c '[python3, train.py]'
	printf '*.log\n' >.gitignore
	run -0 digest_of job.yaml
	local first=$output
	[[ "$first" == sha256:* ]] && [ "${#first}" -eq 71 ]
	"$HPT" validate --print-resolved job.yaml | grep -qx "  dir: \"$PROJ\""
	touch -d '2001-01-01' train.py
	printf 'noise\n' >out.log
	run -0 digest_of job.yaml
	[ "$output" = "$first" ]
	printf 'print("two")\n' >train.py
	run -0 digest_of job.yaml
	[ "$output" != "$first" ]
	chmod +x train.py
	local edited=$output
	run -0 digest_of job.yaml
	[ "$output" != "$edited" ]
}

@test "the bundled trainer and code: false have no code section, so their hashes stay as they were" {
	printf 'version: 1\nname: t\ntrain: {epochs: 1}\n' >t.yaml
	run -0 "$HPT" validate --print-resolved t.yaml
	[[ "$output" != *"code:"* ]]
	code_spec off.yaml off '[python3, train.py]' 'code: false'
	# without a snapshot the job runs in its run directory: a relative file is refused
	run -"$EX_BAD_SPEC" "$HPT" validate off.yaml
	code_spec off.yaml off "[python3, $PROJ/train.py]" 'code: false'
	run -0 "$HPT" validate --print-resolved off.yaml
	[[ "$output" == *$'\ncode:\n  enabled: false\n'* ]]
	[[ "$output" != *"digest: \"sha256"* ]]
}

@test "a FIFO, a socket or a name that is not UTF-8 in the tree is refused naming it" {
	code_spec job.yaml c '[python3, train.py]'
	mkfifo pipe
	run -"$EX_NO_INPUT" --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: cannot snapshot $PROJ/pipe: it is a FIFO; leave it out (code.exclude, .hpctrainignore)" ]
	printf 'pipe\n' >.hpctrainignore
	run -0 "$HPT" validate job.yaml
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$PROJ/sock"
	run -"$EX_NO_INPUT" --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: cannot snapshot $PROJ/sock: it is a socket; leave it out (code.exclude, .hpctrainignore)" ]
	rm sock
	touch "$(printf 'caf\351.py')"
	run -"$EX_NO_INPUT" --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: cannot snapshot $PROJ/caf\\xe9.py: its name is not UTF-8 (bytes shown as \\xHH); rename it, or leave it out (code.exclude, .hpctrainignore)" ]
}

@test "a link to /etc is kept as a link and named in a warning" {
	code_spec job.yaml c '[python3, train.py]'
	ln -s /etc etc
	run -0 --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: warning: $PROJ/etc points outside $PROJ (to /etc); the snapshot keeps it as a link, so the job reads what it names when it runs" ]
	# a relative one resolves from wherever the job meets it
	rm etc
	ln -s ../data data
	run -0 --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: warning: $PROJ/data points outside $PROJ (to ../data); the snapshot keeps it as a link, so the job reads what it names when it runs, from the snapshot's place (or a node's copy of it), not from this tree's: make it absolute to name the same thing" ]
}

@test "more files than code.max_files is refused naming the largest subdirectories and the key" {
	code_spec job.yaml c '[python3, train.py]' 'code: {max_files: 3}'
	mkdir -p big small
	touch big/1 big/2 big/3 small/1
	local top=$(($(stat -c %s job.yaml) + $(stat -c %s train.py)))
	run -"$EX_NO_INPUT" --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: the code in $PROJ is 6 files and $top bytes, more than code.max_files (3) allows; the largest subdirectories: big/ (3 files, 0 bytes), ./ (2 files, $top bytes), small/ (1 files, 0 bytes); leave files out (code.exclude, .hpctrainignore, .gitignore), point code.dir at a smaller directory, or raise code.max_files" ]
	run -0 "$HPT" validate --set code.exclude='[big/]' job.yaml
}

@test "a file that changes while the code is snapshotted fails validate, naming it" {
	code_spec job.yaml c '[python3, train.py]'
	printf 'data' >grow.py
	cc -shared -fPIC -o "$BATS_TEST_TMPDIR/grow.so" "$BATS_TEST_DIRNAME/helpers/grow_on_read.c" -ldl
	LD_PRELOAD=$BATS_TEST_TMPDIR/grow.so GROW_ON_READ=grow.py run -1 --separate-stderr "$HPT" validate job.yaml
	[ "$stderr" = "hpctrain validate: $PROJ/grow.py changed while the code was snapshotted (its size, mtime or ctime moved); submit again when nothing writes it" ]
	[ "$(cat grow.py)" = datax ]
	run -0 "$HPT" validate job.yaml
}

@test "with data staged, validate pins the snapshot as the entry code, by its files' manifest, executables and links" {
	mkdir "$BATS_TEST_TMPDIR/data"
	printf 'x\n' >"$BATS_TEST_TMPDIR/data/a"
	code_spec job.yaml st '[python3, train.py]' "data: {stage: [{name: ds, src: $BATS_TEST_TMPDIR/data}]}"
	run -0 --separate-stderr "$HPT" validate --print-resolved job.yaml
	local digest snap
	digest=$(sed -n 's/^  digest: "\(sha256:[0-9a-f]*\)"$/\1/p' <<<"$output")
	snap=$BATS_TEST_TMPDIR/runs/.code/${digest#sha256:}
	# the stage step's scan of the snapshot will find what the listing says
	[ "$(grep -A4 -x '  - name: "code"' <<<"$output")" = "  - name: \"code\"
    src: \"$snap\"
    manifest: \"$("$HPT" stage --manifest "$PROJ" | jq -r .hash)\"
    bytes: $(($(stat -c %s job.yaml) + $(stat -c %s train.py)))
    is_file: false" ]
	[ "$(grep -c '^  - name: ' <<<"$output")" -eq 2 ]
	# the resolved form, entry and all, resolves to itself
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/resolved.yaml"
	run -0 --separate-stderr "$HPT" validate --print-resolved "$BATS_TEST_TMPDIR/resolved.yaml"
	[ "$output" = "$(cat "$BATS_TEST_TMPDIR/resolved.yaml")" ]
	# an executable and a link are staged as such: another manifest
	local plain
	plain=$(grep -A2 -x '  - name: "code"' <<<"$output" | sed -n 's/^    manifest: //p')
	chmod +x train.py
	ln -s train.py main.py
	run -0 --separate-stderr "$HPT" validate --print-resolved job.yaml
	[ -z "$stderr" ]
	[ "$(grep -c '^  - name: ' <<<"$output")" -eq 2 ]
	[[ "$(grep -A2 -x '  - name: "code"' <<<"$output")" != *"$plain"* ]]
	rm main.py
	# one's own entry under the name would pass for the snapshot
	code_spec own.yaml own '[python3, train.py]' "data: {stage: [{name: code, src: $BATS_TEST_TMPDIR/data}]}"
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate own.yaml
	[[ "$stderr" == *'data.stage: the name "code" is the code snapshot'"'"'s when the code is on; name this entry otherwise'* ]]
}

@test "an edited file is another run, and the first run, still queued, runs the file it was submitted with" {
	need_slurm
	cd "$PROJ"
	code_spec job.yaml edit "[sh, -c, 'while [ ! -e $BATS_TEST_TMPDIR/go ]; do sleep 0.1; done; sha256sum train.py']"
	local old new
	old=$(sha256sum <train.py | cut -d' ' -f1)
	submit_json job.yaml
	local first=$JOB run1=$DIR
	printf 'print("two")\n' >train.py
	new=$(sha256sum <train.py | cut -d' ' -f1)
	submit_json job.yaml
	local second=$JOB run2=$DIR
	[ "$run1" != "$run2" ]
	touch "$BATS_TEST_TMPDIR/go"
	"$HPT" status --wait "$first" >/dev/null
	"$HPT" status --wait "$second" >/dev/null
	[ "$(grep -v warning "$run1/logs/rank-0.out")" = "$old  train.py" ]
	[ "$(grep -v warning "$run2/logs/rank-0.out")" = "$new  train.py" ]
	[ "$(jq -r .code.digest "$run1/submit.json")" = "$(jq -r .digest "$run1/code.json")" ]
}

@test "two submits of the same tree store one snapshot, private, and code.json lists its files; an orphaned temporary goes" {
	need_slurm
	cd "$PROJ"
	printf '#!/bin/sh\n' >run.sh
	chmod 755 run.sh
	ln -s train.py link.py
	code_spec a.yaml a '[true]'
	code_spec b.yaml b '[true]'
	# what a submit killed mid-snapshot leaves: the next one removes it
	local orphan=$BATS_TEST_TMPDIR/runs/.code/.0123abcd.tmp-Xy12Z9
	(umask 077 && mkdir -p "$orphan/src")
	printf 'half\n' >"$orphan/src/half.py"
	submit_json a.yaml
	[ ! -e "$orphan" ]
	local a=$DIR snap ino
	snap=$(jq -r .snapshot "$a/code.json")
	ino=$(stat -c %i "$snap/train.py")
	submit_json b.yaml
	local b=$DIR
	[ "$snap" = "$(jq -r .snapshot "$b/code.json")" ]
	[ "$snap" = "$BATS_TEST_TMPDIR/runs/.code/$(jq -r '.digest | ltrimstr("sha256:")' "$a/code.json")" ]
	[ "$(stat -c %i "$snap/train.py")" = "$ino" ]
	[ "$(find "$BATS_TEST_TMPDIR/runs/.code" -mindepth 1 -maxdepth 1 ! -name .lock | wc -l)" -eq 1 ]
	[ "$(stat -c %a "$snap")" = 700 ]
	[ "$(stat -c %a "$snap/train.py")" = 600 ]
	[ "$(stat -c %a "$snap/run.sh")" = 700 ]
	[ "$(readlink "$snap/link.py")" = train.py ]
	[ "$(stat -c %a "$a/code.json")" = 600 ]
	jq -e --arg d "$PROJ" '.dir == $d and .git == null and .file_count == 5 and
		[.files[].path] == ["a.yaml", "b.yaml", "link.py", "run.sh", "train.py"]' "$a/code.json"
	jq -e '[.files[] | select(.path == "link.py")][0] == {"path": "link.py", "mode": 511, "link": "train.py"}' "$a/code.json"
	jq -e --arg s "$(sha256sum <train.py | cut -d" " -f1)" --argjson n "$(stat -c %s train.py)" \
		'[.files[] | select(.path == "train.py")][0] == {"path": "train.py", "mode": 420, "size": $n, "sha256": $s}' "$a/code.json"
	jq -e '[.files[] | select(.path == "run.sh")][0].mode == 493' "$a/code.json"
	"$HPT" status --wait "$(jq -r .job_id "$a/submit.json")" >/dev/null
	"$HPT" status --wait "$(jq -r .job_id "$b/submit.json")" >/dev/null
}

@test "a git work tree records its commit, branch and changed files; .gitignored files are left out" {
	need_slurm
	command -v git >/dev/null || skip "no git"
	cd "$PROJ"
	printf '*.log\n' >.gitignore
	printf 'noise\n' >out.log
	git init -q -b main .
	git -c user.name=t -c user.email=t@t add .gitignore train.py
	git -c user.name=t -c user.email=t@t commit -qm one
	printf 'print("dirty")\n' >train.py
	code_spec job.yaml g '[python3, train.py]'
	submit_json job.yaml
	jq -e --arg c "$(git rev-parse HEAD)" '.git.commit == $c and .git.branch == "main" and
		.git.dirty == true and (.git.changed | index("train.py")) != null' "$DIR/code.json"
	jq -e '[.files[].path] | index("out.log") == null and index("train.py") != null' "$DIR/code.json"
	"$HPT" status --wait "$JOB" >/dev/null
}

@test "a relative python3 train.py runs in the snapshot, with HPCTRAIN_CODE_DIR and HPCTRAIN_RUN_DIR; its imports leave the snapshot as it was" {
	need_slurm
	cd "$PROJ"
	printf 'import os, sys, util\nprint(os.getcwd() == os.environ["HPCTRAIN_CODE_DIR"], os.environ["HPCTRAIN_RUN_DIR"], util.read())\nprint("pyc", util.__cached__.startswith(sys.pycache_prefix + "/"), os.path.isfile(util.__cached__))\n' >train.py
	printf 'def read():\n    return open("data.txt").read().strip()\n' >util.py
	printf 'submitted\n' >data.txt
	unset PYTHONDONTWRITEBYTECODE # some machines set it; the job inherits this shell's
	code_spec job.yaml rel '[python3, train.py]'
	submit_json job.yaml
	printf 'edited\n' >data.txt
	"$HPT" status --wait "$JOB" >/dev/null
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "True $DIR submitted
pyc True True" ] || { cat "$DIR"/logs/*; false; }
	# Python compiled util.py under PYTHONPYCACHEPREFIX, not beside it
	code_tree_is_listed "$(jq -r .snapshot "$DIR/code.json")" "$DIR/code.json"
}

@test "rerun of a run whose code snapshot is gone is 'no input', naming it" {
	need_slurm
	cd "$PROJ"
	code_spec job.yaml gone '[python3, train.py]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	local snap
	snap=$(jq -r .snapshot "$DIR/code.json")
	rm -rf "$snap"
	run -"$EX_NO_INPUT" --separate-stderr "$HPT" rerun --fresh "$DIR"
	[ "${stderr_lines[-1]}" = "hpctrain rerun: the run's code snapshot $snap is gone (code $(jq -r .digest "$DIR/code.json")); submit the spec again for a new snapshot" ]
	[ ! -e "$DIR/attempts" ]
}

@test "every point of a sweep runs the one snapshot of the tree" {
	need_slurm
	cd "$PROJ"
	code_spec job.yaml sw '[python3, train.py]'
	run -0 --separate-stderr "$HPT" submit --sweep env.N=1,2 job.yaml
	local runs=("$BATS_TEST_TMPDIR"/runs/sw/[0-9a-f]*/) d
	[ "${#runs[@]}" -eq 2 ]
	[ "$(jq -r .snapshot "${runs[0]}code.json")" = "$(jq -r .snapshot "${runs[1]}code.json")" ]
	[ "$(find "$BATS_TEST_TMPDIR/runs/.code" -mindepth 1 -maxdepth 1 ! -name .lock | wc -l)" -eq 1 ]
	for d in "${runs[@]}"; do
		"$HPT" status --wait "$d" >/dev/null
		[ "$(grep -v warning "${d}logs/rank-0.out")" = one ] || return 1
	done
}
