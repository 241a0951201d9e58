#!/usr/bin/env bats
# hostile.bats - hpctrain against another user on the same machine, and
# against files that are not what they seem: links planted
# in a shared directory, a run directory or a checkpoint another user
# could write, a umask of 000, FIFOs where a file is read.  The other
# user is nobody, via setpriv; those tests need root and are skipped
# without it.  Every command that could hang runs under `timeout 10`,
# so a regression fails instead of hanging the suite.

load common

setup() {
	W=$BATS_TEST_TMPDIR
	export OMP_NUM_THREADS=1
	# BATS_TEST_TMPDIR is private: nobody needs a place it can reach.
	SHARED=$(mktemp -d /tmp/hpctrain-hostile.XXXXXX)
	chmod 755 "$SHARED"
}

teardown() {
	rm -rf "$SHARED"
}

need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root, to act as nobody"
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
}

as_nobody() { # COMMAND...: runs it as nobody:nogroup, no other groups
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}

# A tiny run of the trainer: SPEC FILE, then extra YAML lines under train.
tiny_spec() {
	local f=$1
	shift
	{
		printf 'version: 1\nname: hostile\ntrain:\n  model: mlp\n  dataset: synthetic\n'
		printf '  epochs: 1\n  max_steps: 6\n  batch_per_rank: 16\n'
		printf '  checkpoint: {every_steps: 3, keep: 2}\n'
		for l in "$@"; do printf '  %s\n' "$l"; done
		printf 'output: {dir: %s/runs, log_every_steps: 1}\n' "$W"
	} >"$f"
}

@test "train under umask 000 makes its run directory 0700 and every file in it 0600" {
	tiny_spec "$W/s.yaml"
	run -0 sh -c 'umask 000 && exec "$@"' sh "$HPT" train -q --run "$W/new/run" "$W/s.yaml"
	[ "$(stat -c %a "$W/new/run")" = 700 ]
	[ "$(stat -c %a "$W/new/run/checkpoints")" = 700 ]
	for f in resolved.yaml metrics.jsonl checkpoints/ckpt-000000000006.bin; do
		[ "$(stat -c %a "$W/new/run/$f")" = 600 ]
	done
	# nothing in the run is open to group or others
	[ -z "$(find "$W/new" -perm /077)" ]
}

@test "train refuses a run directory others may write with the I/O status, before writing into it" {
	tiny_spec "$W/s.yaml"
	mkdir -m 1777 "$W/open"
	run --separate-stderr "$HPT" train -q --run "$W/open" "$W/s.yaml"
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain train: refusing $W/open: group or others may write it (mode 1777)" ]
	[ -z "$(ls -A "$W/open")" ]
}

@test "train refuses a run directory nobody owns, and a checkpoint nobody planted, unread" {
	need_root
	tiny_spec "$W/s.yaml"
	mkdir -m 700 "$SHARED/theirs"
	chown nobody:nogroup "$SHARED/theirs"
	run --separate-stderr "$HPT" train -q --run "$SHARED/theirs" "$W/s.yaml"
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain train: refusing $SHARED/theirs: it belongs to uid 65534, not to uid 0" ]
	# a run whose checkpoints/ was open for a while: nobody planted one
	run -0 "$HPT" train -q --run "$SHARED/run" --max-steps 3 "$W/s.yaml"
	chmod 777 "$SHARED/run" "$SHARED/run/checkpoints"
	as_nobody sh -c "echo planted >'$SHARED/run/checkpoints/ckpt-000000000999.bin'"
	chmod 700 "$SHARED/run" "$SHARED/run/checkpoints"
	run --separate-stderr "$HPT" train -q --run "$SHARED/run" "$W/s.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain train: refusing $SHARED/run/checkpoints/ckpt-000000000999.bin: it belongs to uid 65534, not to uid 0" ]
	# nothing was trained on its word
	[ "$(jq -s 'map(select(.event == "step")) | length' "$SHARED/run/metrics.jsonl")" -eq 3 ]
}

@test "train does not append through a metrics.jsonl link, nor block on a FIFO there" {
	tiny_spec "$W/s.yaml"
	mkdir -m 700 "$W/run"
	echo precious >"$W/victim"
	ln -s "$W/victim" "$W/run/metrics.jsonl"
	run --separate-stderr timeout 10 "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain train: cannot open $W/run/metrics.jsonl: it is a symbolic link" ]
	[ "$(cat "$W/victim")" = precious ]
	rm "$W/run/metrics.jsonl"
	mkfifo "$W/run/metrics.jsonl"
	run --separate-stderr timeout 10 "$HPT" train -q --run "$W/run" "$W/s.yaml"
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain train: cannot open $W/run/metrics.jsonl: it is not a regular file" ]
}

# --- launch: its report, its run, its topology ---

@test "launch --report under umask 000 writes a 0700 directory of 0600 files; an open one is refused" {
	run -0 sh -c 'umask 000 && exec "$@"' sh "$HPT" launch --report "$W/rep" -- true
	[ "$(stat -c %a "$W/rep")" = 700 ]
	[ "$(stat -c %a "$W/rep/rank-00000.json")" = 600 ]
	mkdir -m 777 "$W/open"
	run --separate-stderr "$HPT" launch --report "$W/open" -- true
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain launch: refusing $W/open: group or others may write it (mode 0777)" ]
	[ -z "$(ls -A "$W/open")" ]
}

@test "launch --supervise --run keeps ranks/ private and never writes through a planted link" {
	mkdir -m 700 "$W/run"
	printf 'version: 1\nname: t\n' >"$W/run/resolved.yaml"
	mkdir -m 700 "$W/run/ranks"
	echo precious >"$W/victim"
	# the supervisor's old fixed temporary name, and the heartbeat's
	ln -s "$W/victim" "$W/run/ranks/.rank-0.json.tmp"
	ln -s "$W/victim" "$W/run/ranks/rank-0.heartbeat"
	run -0 sh -c 'umask 000 && exec "$@"' sh "$HPT" launch --supervise --run "$W/run" -- true
	[ "$(cat "$W/victim")" = precious ]
	[ -f "$W/run/ranks/rank-0.json" ]
	[ ! -L "$W/run/ranks/rank-0.heartbeat" ]
	[ "$(stat -c %a "$W/run/ranks/rank-0.json")" = 600 ]
	[ "$(stat -c %a "$W/run/ranks/rank-0.heartbeat")" = 600 ]
}

@test "launch --run and doctor --preflight refuse a run nobody owns with the I/O status" {
	need_root
	mkdir -m 700 "$SHARED/theirs"
	printf 'version: 1\nname: t\nenv: {LD_PRELOAD: /tmp/evil.so}\n' >"$SHARED/theirs/resolved.yaml"
	chown -R nobody:nogroup "$SHARED/theirs"
	run --separate-stderr "$HPT" launch --run "$SHARED/theirs" -- true
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain launch: refusing $SHARED/theirs: it belongs to uid 65534, not to uid 0" ]
	run --separate-stderr timeout 30 "$HPT" doctor --preflight "$SHARED/theirs"
	[ "$status" -eq "$EX_IO" ]
	[ "$stderr" = "hpctrain doctor: refusing $SHARED/theirs: it belongs to uid 65534, not to uid 0" ]
	[ ! -e "$SHARED/theirs/preflight.json" ]
}

@test "a FIFO as --topology of launch, topo and submit is refused at once with the no-input status" {
	mkfifo "$W/node.xml"
	run --separate-stderr timeout 10 "$HPT" launch --topology "$W/node.xml" -- true
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain launch: cannot read $W/node.xml: it is a FIFO, not a regular file" ]
	run --separate-stderr timeout 10 "$HPT" topo --input "$W/node.xml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain topo: cannot read $W/node.xml: it is a FIFO, not a regular file" ]
	printf 'version: 1\nname: t\n' >"$W/j.yaml"
	run --separate-stderr timeout 10 "$HPT" submit --dry-run --topology "$W/node.xml" "$W/j.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain submit: cannot read $W/node.xml: it is a FIFO, not a regular file" ]
}

# --- status, logs, report: FIFOs where files are read ---

# A run directory as submit leaves it, for the read-only commands.
fake_run() {
	mkdir -m 700 -p "$1/logs"
	printf 'version: 1\nname: hostile\n' >"$1/resolved.yaml"
}

@test "status of a run or a name whose submit.json is a FIFO returns at once, naming it" {
	fake_run "$W/runs/hostile/0123456789ab"
	mkfifo "$W/runs/hostile/0123456789ab/submit.json"
	run --separate-stderr timeout 10 "$HPT" status "$W/runs/hostile/0123456789ab"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain status: cannot read $W/runs/hostile/0123456789ab/submit.json: it is a FIFO, not a regular file" ]
	HPCTRAIN_OUTPUT_DIR=$W/runs run --separate-stderr timeout 10 "$HPT" status hostile
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$stderr" == *"/submit.json: it is a FIFO, not a regular file" ]]
	# a liveness file that is a FIFO is skipped, not waited on
	mkdir -m 700 "$W/runs/hostile/0123456789ab/ranks"
	mkfifo "$W/runs/hostile/0123456789ab/ranks/rank-0.json"
	run timeout 10 "$HPT" status --ranks "$W/runs/hostile/0123456789ab"
	[ "$status" -ne 124 ]
}

@test "logs of a run whose rank log is a FIFO says so and goes on" {
	fake_run "$W/run"
	mkfifo "$W/run/logs/rank-0.out"
	echo "rank one said this" >"$W/run/logs/rank-1.out"
	run --separate-stderr timeout 10 "$HPT" logs "$W/run"
	[ "$status" -eq 0 ]
	[ "$stderr" = "hpctrain logs: cannot read $W/run/logs/rank-0.out: it is a FIFO, not a regular file" ]
	[ "$output" = "1: rank one said this" ]
}

@test "report of a run whose metrics.jsonl is a FIFO returns at once with the no-input status" {
	fake_run "$W/run"
	mkfifo "$W/run/metrics.jsonl"
	run --separate-stderr timeout 10 "$HPT" report "$W/run"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain report: cannot read $W/run/metrics.jsonl: it is a FIFO, not a regular file" ]
}

@test "status, logs and report of a run whose metrics.jsonl is a FIFO or a link to /dev/zero return at once" {
	fake_run "$W/run"
	echo '{"job_id": 999993}' >"$W/run/submit.json"
	mkfifo "$W/run/metrics.jsonl"
	for kind in "a FIFO" "a character device"; do
		run --separate-stderr timeout 10 "$HPT" report "$W/run"
		[ "$status" -eq "$EX_NO_INPUT" ]
		[ "$stderr" = "hpctrain report: cannot read $W/run/metrics.jsonl: it is $kind, not a regular file" ]
		run timeout 10 "$HPT" status "$W/run"
		[ "$status" -ne 124 ]
		run timeout 10 "$HPT" logs "$W/run"
		[ "$status" -ne 124 ]
		rm "$W/run/metrics.jsonl"
		ln -s /dev/zero "$W/run/metrics.jsonl"
	done
}

# --- report in a directory nobody shares with us ---

@test "stage --clear as root removes nothing of another user's, in their cache or planted in its own" {
	need_root
	local h nob
	h=$(printf 'ab%.0s' $(seq 32))
	nob=$(id -u nobody)
	# nobody's cache with one entry: refused whole, nothing made in it
	mkdir -m 700 "$SHARED/theirs"
	chown nobody:nogroup "$SHARED/theirs"
	as_nobody sh -c "mkdir '$SHARED/theirs/$h' &&
		echo data >'$SHARED/theirs/$h/f' && echo '{}' >'$SHARED/theirs/$h.json'"
	run timeout 10 "$HPT" stage --clear --cache "$SHARED/theirs"
	[ "$status" -eq "$EX_IO" ]
	[[ "$output" == *"refusing $SHARED/theirs: it belongs to uid $nob, not to uid 0"* ]]
	[ "$(cat "$SHARED/theirs/$h/f")" = data ]
	[ -z "$(find "$SHARED/theirs" -user 0)" ]
	# root's own cache, an entry holding a file of nobody's: it stays, named
	mkdir -m 700 "$W/mine" "$W/mine/$h"
	echo data >"$W/mine/$h/f"
	echo '{}' >"$W/mine/$h.json"
	chown nobody "$W/mine/$h/f"
	run timeout 10 "$HPT" stage --clear --cache "$W/mine"
	[ "$status" -eq "$EX_IO" ]
	[[ "$output" == *"refusing to remove $W/mine/.tmp-$h-removed-"*"/f: it belongs to uid $nob, not to uid 0"* ]]
	[ "$(cat "$W/mine/$h/f")" = data ]
	[ -f "$W/mine/$h.json" ]
	chown root "$W/mine/$h/f"
	run -0 timeout 10 "$HPT" stage --clear --cache "$W/mine"
	[ ! -e "$W/mine/$h" ]
}

@test "report into a shared sticky directory writes through none of nobody's links, removes none of our files" {
	need_root
	cp -r "$BATS_TEST_DIRNAME/../fixtures/metrics/resumed" "$W/resumed"
	D=$SHARED/fmnist
	mkdir -m 1777 "$D"
	echo precious >"$SHARED/victim"
	chmod 644 "$SHARED/victim"
	# our own comm.png; nobody's manifest claims report wrote it
	echo "our own" >"$D/comm.png"
	as_nobody sh -c "printf '{\"files\": [{\"name\": \"comm.png\", \"ino\": 1, \"size\": 8, \"mtime_ns\": 1}]}' >'$D/.hpctrain-report.json'"
	# nobody plants each chart's name, and the temporary name the old
	# report used (<chart>.png.tmp.<its pid>), as links to the victim
	run -0 sh -c '
		d=$1 victim=$2 hpt=$3 run=$4
		for c in loss accuracy throughput comm lr; do
			setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
				ln -s "$victim" "$d/$c.png.tmp.$$"
		done
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- ln -s "$victim" "$d/loss.png"
		exec "$hpt" report -o "$d" "$run"' sh "$D" "$SHARED/victim" "$HPT" "$W/resumed"
	[ "$(cat "$SHARED/victim")" = precious ]
	[ "$(cat "$D/comm.png")" = "our own" ]
	for c in loss accuracy throughput lr; do
		[ "$(stat -c '%F %U %a' "$D/$c.png")" = "regular file root 600" ] || false
	done
}

@test "report as another user in a sticky directory warns, and succeeds, where it cannot replace the manifest" {
	need_root
	cp -r "$BATS_TEST_DIRNAME/../fixtures/metrics/resumed" "$SHARED/resumed"
	chmod -R a+rX "$SHARED/resumed"
	D=$SHARED/out
	mkdir -m 1777 "$D"
	printf '{"files": []}\n' >"$D/.hpctrain-report.json" # root's: nobody cannot replace it
	run --separate-stderr as_nobody "$HPT" report -o "$D" "$SHARED/resumed"
	[ "$status" -eq 0 ]
	[ "$stderr" = "hpctrain report: warning: cannot create $D/.hpctrain-report.json: Operation not permitted; a later report will not remove these charts" ]
	[ "$(stat -c '%U %a' "$D/loss.png")" = "nobody 600" ]
}
