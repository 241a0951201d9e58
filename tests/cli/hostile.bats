#!/usr/bin/env bats
# hostile.bats - hpctrain against another user on the same machine, and
# against files that are not what they seem (issue 26): links planted
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
