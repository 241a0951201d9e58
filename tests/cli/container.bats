#!/usr/bin/env bats
# container.bats - jobs in a container: `hpctrain launch` through the real
# Charliecloud (directory images, and SquashFS ones mounted by squashfuse)
# and Podman under runc, where it can start; the supervisor reaching the
# program inside (preemption, the stall autopsy, nothing left after a
# kill); the contract read inside; the refusals; the image's digest in
# the run's identity (validate, rerun); and on a one-node local Slurm,
# an MPI program in a debootstrap image started by srun --mpi=pmix, and
# a job on a node without the runtime.
# The image is made offline by helpers/mkimage.sh and cached under build/;
# each file run copies it, so changing the copy changes no other test.

load common
load slurm_cluster

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset SLURM_JOB_ID SLURM_STEP_ID SLURM_PROCID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK CUDA_VISIBLE_DEVICES
EX_NOTFOUND=127

setup_file() {
	local cache=$ROOT/build/test-image
	command -v ch-run >/dev/null || return 0
	cluster_up single
	test_image "$cache/img"
	# Outside /tmp, which ch-run binds by itself: the run directory
	# must reach the program through launch's own mounts.
	WORK=$(mktemp -d "$ROOT/build/container-bats.XXXXXX")
	export WORK XDG_CACHE_HOME=$WORK/cache
	cp -a "$cache/img" "$WORK/img"
	echo inside >"$WORK/img/marker"
	# A program that checkpoints on USR2 (its handler writes a file into
	# the run directory, its cwd) and one that stalls after using 1 s of
	# CPU, both inside the image.
	cat >"$WORK/img/preempt.py" <<-'EOF'
	import signal, sys, time
	def checkpoint(sig, frame):
	    open("checkpointed", "w").write("by the program's handler\n")
	    sys.exit(75)
	signal.signal(signal.SIGUSR2, checkpoint)
	open("ready", "w").close()
	while True:
	    time.sleep(0.05)
	EOF
	# 1 s of CPU time first, saying so as it goes: its output is
	# progress, so the stall is timed from the sleep however slowly a
	# loaded machine gives it the CPU (a stall timed from the start
	# would catch it in the loop)
	cat >"$WORK/img/stall.py" <<-'EOF'
	import time
	def wait_forever():
	    time.sleep(3600)
	while time.process_time() < 1.0:
	    t = time.process_time() + 0.05
	    while time.process_time() < t:
	        pass
	    print(".", end="", flush=True)
	open("ready", "w").close()
	wait_forever()
	EOF
}

teardown_file() {
	cluster_down
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

need_ch() {
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
}

# make_run NAME IMAGE [RUNTIME [STALL_S [YAML]]]: a run directory with the
# resolved spec of a job in IMAGE (supervise.stall_timeout_s STALL_S, and
# the line YAML), and its path as a mount point inside the image.
make_run() {
	local run=$WORK/runs/$1
	mkdir -p "$run" "$WORK/img$run"
	chmod 700 "$WORK/runs" "$run"
	printf 'version: 1\nname: %s\ncommand: [sh]\ncode: false\nsupervise: {stall_timeout_s: %s}\ncontainer: {image: %s, runtime: %s}\n%s\n' \
		"$1" "${4:-0}" "$2" "${3:-auto}" "${5:-}" >"$WORK/$1.yaml"
	"$HPT" validate --print-resolved "$WORK/$1.yaml" >"$run/resolved.yaml"
	echo "$run"
}

# The line a program prints about itself inside: its rank, CPUs, cwd.
PROBE='echo "rank=$RANK world=$WORLD_SIZE cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)" "slice=$(printf %s "$HPCTRAIN_SLICE" | sed "s/.*\"cpus\":\"\([^\"]*\)\".*/\1/")" "cwd=$(pwd) marker=$(cat /marker)"; echo "$RANK" >"rank-$RANK.txt"'

field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

@test "two ranks in a charliecloud directory image get their planned CPUs, rank variables and the run directory as cwd" {
	need_ch
	local run line r
	run=$(make_run two "$WORK/img" charliecloud)
	run env -u USER mpirun -np 2 "$HPT" launch --run "$run" -- sh -c "$PROBE"
	[ "$status" -eq 0 ]
	for r in 0 1; do
		line=$(printf '%s\n' "$output" | grep "^rank=$r ")
		[ "$(field world "$line")" = 2 ]
		[ "$(field cpus "$line")" = "$(field slice "$line")" ]
		[ "$(field cwd "$line")" = "$run" ]
		[ "$(field marker "$line")" = inside ]
		[ "$(cat "$run/rank-$r.txt")" = "$r" ]
	done
}

@test "a step's ranks on a node join one charliecloud namespace; without a step, each has its own" {
	need_ch
	# each program stays a moment: ch-run --join fails ("join: no PID")
	# for a peer that arrives once the first rank's program has exited
	local run ns='echo "rank=$RANK mnt=$(ls -l /proc/self/ns/mnt | sed "s/.*-> //")"; sleep 2'
	run=$(make_run join "$WORK/img" charliecloud)
	# a job id of this run's own: ch-run keeps a join's state in
	# /dev/shm/ch-run_shm-TAG, and a killed earlier run may have left one
	SLURM_JOB_ID=$((900000 + $$)) SLURM_STEP_ID=0 run mpirun -x SLURM_JOB_ID -x SLURM_STEP_ID -np 2 \
		"$HPT" launch --run "$run" -- sh -c "$ns"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '^rank=')" -eq 2 ]
	[ "$(printf '%s\n' "$output" | sed -n 's/^rank=[01] mnt=//p' | sort -u | wc -l)" -eq 1 ]
	run mpirun -np 2 "$HPT" launch --run "$run" -- sh -c "$ns"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | sed -n 's/^rank=[01] mnt=//p' | sort -u | wc -l)" -eq 2 ]
}

@test "launch --supervise in a charliecloud image returns the program's own status" {
	need_ch
	local run
	run=$(make_run status "$WORK/img" charliecloud)
	run "$HPT" launch --supervise --run "$run" -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
}

@test "validate refuses a mount whose target a directory image lacks under charliecloud; under auto it warns" {
	local img=$BATS_TEST_TMPDIR/img
	cd "$BATS_TEST_TMPDIR"
	mkdir -p "$img/data" "$img/bin"
	printf 'version: 1\nname: t\ncommand: [true]\ncontainer: {image: %s, runtime: charliecloud, mounts: ["/tmp:/data", "/tmp:/scratch"]}\n' \
		"$img" >ch.yaml
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" validate ch.yaml
	[[ "$stderr" == *"container.mounts[1] '/tmp:/scratch': /scratch is not in the image $img, and charliecloud binds only onto what the image has; make it there (mkdir -p $img/scratch) or bind elsewhere"* ]]
	[[ "$stderr" != *"mounts[0]"* ]]
	sed 's/runtime: charliecloud/runtime: auto/' ch.yaml >auto.yaml
	run -0 --separate-stderr "$HPT" validate auto.yaml
	[[ "$stderr" == *"warning: container.mounts[1] '/tmp:/scratch'"* ]]
}

@test "validate lets a SquashFS image under charliecloud pass: launch mounts it" {
	need_squashfuse
	local sqfs
	sqfs=$(squash validate-sq)
	printf 'version: 1\nname: sqfs\ncommand: [sh]\ncontainer: {image: %s, runtime: charliecloud}\n' \
		"$sqfs" >"$WORK/sqfs-ch.yaml"
	run "$HPT" validate "$WORK/sqfs-ch.yaml"
	[ "$status" -eq 0 ]
}

@test "a charliecloud image without the run directory's mount point is refused, naming it" {
	need_ch
	local base run
	# outside /tmp, wherever the tree is: ch-run binds /tmp itself, so a
	# run under it needs no mount point in the image
	base=$(mktemp -d /var/tmp/hpctrain-nomount.XXXXXX)
	run=$base/nomount
	mkdir -m 700 "$run"
	printf 'version: 1\nname: nomount\ncommand: [sh]\ncode: false\ncontainer: {image: %s, runtime: charliecloud}\n' \
		"$WORK/img" >"$WORK/nomount.yaml"
	"$HPT" validate --print-resolved "$WORK/nomount.yaml" >"$run/resolved.yaml"
	run "$HPT" launch --run "$run" -- true
	rm -rf "$base"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "hpctrain launch: rank 0: the image $WORK/img has no directory $run to mount $run on; make it in the image (mkdir -p $WORK/img$run): ch-run cannot in a read-only image" ]
}

@test "launch without the runtime in PATH exits 127 with one line naming it" {
	need_ch
	local run
	run=$(make_run noruntime "$WORK/img")
	mkdir -p "$WORK/emptybin"
	PATH=$WORK/emptybin run -"$EX_NOTFOUND" "$HPT" launch --run "$run" -- true
	[ "$output" = "hpctrain launch: rank 0: no container runtime found in PATH (tried ch-run, apptainer, enroot, podman)" ]
}

@test "launch, validate and submit --dry-run exit 4 naming a missing image" {
	need_ch
	local run
	mkdir "$WORK/img-gone"
	run=$(make_run gone "$WORK/img-gone")
	rm -rf "$WORK/img-gone"
	run "$HPT" launch --run "$run" -- true
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$output" = "hpctrain launch: rank 0: container image $WORK/img-gone: No such file or directory" ]
	run "$HPT" validate "$WORK/gone.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$output" = "hpctrain validate: container image $WORK/img-gone: No such file or directory" ]
	run "$HPT" submit --dry-run "$WORK/gone.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$output" = "hpctrain submit: container image $WORK/img-gone: No such file or directory" ]
}

@test "changing the image changes the run hash; the same image keeps it" {
	need_ch
	local img=$WORK/img-hash h1 h2 h3
	cp -a "$WORK/img" "$img"
	printf 'version: 1\nname: h\ncommand: [sh]\ncontainer: {image: %s}\n' "$img" >"$WORK/h.yaml"
	h1=$("$HPT" validate "$WORK/h.yaml")
	h2=$("$HPT" validate "$WORK/h.yaml")
	[ "$h1" = "$h2" ]
	echo rebuilt >"$img/marker"
	h3=$("$HPT" validate "$WORK/h.yaml")
	[ "$h3" != "$h1" ]
	run "$HPT" validate --print-resolved "$WORK/h.yaml"
	[[ "$output" == *'digest: "sha256:'* ]]
}

@test "rerun refuses a run whose image changed, naming both digests, unless --image-changed-ok" {
	need_ch
	local img=$WORK/img-rerun run was now
	cp -a "$WORK/img" "$img"
	run=$(make_run rerun "$img")
	was=$(sed -n 's/^  digest: "\(.*\)"$/\1/p' "$run/resolved.yaml")
	echo rebuilt >"$img/marker"
	now=$("$HPT" validate --print-resolved "$WORK/rerun.yaml" | sed -n 's/^  digest: "\(.*\)"$/\1/p')
	[ -n "$was" ] && [ "$was" != "$now" ]
	SLURM_CONF=$WORK/no-slurm.conf run "$HPT" rerun "$run"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "hpctrain rerun: the image $img changed: the run has $was, the image now $now; submit the spec again for a new run, or pass --image-changed-ok" ]
	SLURM_CONF=$WORK/no-slurm.conf run "$HPT" rerun --image-changed-ok "$run"
	[ "$status" -ne "$EX_BAD_SPEC" ]
	[ "${lines[0]}" = "hpctrain rerun: warning: the image $img changed (the run has $was, the image now $now); running it anyway" ]
}

@test "a relative path that exists is refused as an image, not read as a reference" {
	mkdir -p "$BATS_TEST_TMPDIR/images/torch"
	printf 'version: 1\nname: rel\ncommand: [sh]\ncontainer: {image: images/torch}\n' \
		>"$BATS_TEST_TMPDIR/rel.yaml"
	cd "$BATS_TEST_TMPDIR"
	run "$HPT" validate rel.yaml
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "hpctrain validate: container.image images/torch names a file or directory here, but a path image must be absolute; a relative one is read as a reference" ]
}

@test "a reference without @sha256: is recorded as unpinned, with a warning" {
	printf 'version: 1\nname: r\ncommand: [sh]\ncontainer: {image: docker.io/library/debian:12}\n' \
		>"$BATS_TEST_TMPDIR/r.yaml"
	run --separate-stderr "$HPT" validate --print-resolved "$BATS_TEST_TMPDIR/r.yaml"
	[ "$status" -eq 0 ]
	[[ "$output" == *'digest: "unpinned"'* ]]
	[[ "$stderr" == *"warning: the image reference docker.io/library/debian:12 cannot be pinned"* ]]
}

@test "two ranks in a podman directory image under runc get the plan's cpuset and the run directory" {
	need_ch
	command -v podman >/dev/null && command -v runc >/dev/null || skip "no podman and runc"
	local run line r
	run=$(make_run pod "$WORK/img" podman)
	HPCTRAIN_PODMAN_RUNTIME=runc \
		HPCTRAIN_PODMAN_ULIMITS="nofile=$(ulimit -Hn):$(ulimit -Hn),nproc=4096:4096" \
		run mpirun -np 2 "$HPT" launch --run "$run" -- sh -c "$PROBE"
	[ "$status" -eq 0 ]
	for r in 0 1; do
		line=$(printf '%s\n' "$output" | grep "^rank=$r ")
		[ "$(field world "$line")" = 2 ]
		[ "$(field cpus "$line")" = "$(field slice "$line")" ]
		[ "$(field cwd "$line")" = "$run" ]
		[ "$(cat "$run/rank-$r.txt")" = "$r" ]
	done
}

@test "podman: two ranks in a SquashFS image share one squashfuse mount under a throw-away overlay; the last one out unmounts it" {
	need_podman
	need_squashfuse
	local run sqfs line r
	sqfs=$(squash pod-sq)
	run=$(make_run pod-sq "$sqfs" podman)
	run timeout 60 mpirun -np 2 "$HPT" launch --supervise --run "$run" -- sh -c "$PROBE"
	[ "$status" -eq 0 ]
	for r in 0 1; do
		line=$(printf '%s\n' "$output" | grep "^rank=$r ")
		[ "$(field world "$line")" = 2 ]
		[ "$(field cwd "$line")" = "$run" ]
		[ "$(cat "$run/rank-$r.txt")" = "$r" ]
	done
	no_mount_left
	[ -z "$(ls -A "${TMPDIR:-/tmp}/hpctrain-squash-$(id -u)")" ]
}

# Helpers for a supervised rank run in the background.
need_podman() {
	need_ch
	command -v podman >/dev/null && command -v runc >/dev/null || skip "no podman and runc"
	export HPCTRAIN_PODMAN_RUNTIME=runc
	export HPCTRAIN_PODMAN_ULIMITS="nofile=$(ulimit -Hn):$(ulimit -Hn),nproc=4096:4096"
}

need_squashfuse() {
	need_ch
	command -v mksquashfs >/dev/null && command -v squashfuse >/dev/null &&
		command -v fusermount >/dev/null || skip "no squashfs-tools, squashfuse and fuse3"
}

# squash NAME: $WORK/img (with every run's mount point made so far) as an
# uncompressed SquashFS file, which mksquashfs writes in a blink.
squash() {
	mksquashfs "$WORK/img" "$WORK/$1.sqfs" -noappend -quiet -noI -noD -noF -noX >/dev/null
	echo "$WORK/$1.sqfs"
}

# until_file FILE: waits (10 s at most) for FILE to exist.
until_file() {
	for _ in $(seq 100); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# field_of RUN KEY: KEY of RUN/ranks/rank-0.json (a number or a string).
field_of() {
	sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1/ranks/rank-0.json" | head -1
}

# supervised_then RUN SIGNAL PROGRAM...: launch --supervise PROGRAM for
# RUN in the background, once the program says it is ready (RUN/ready)
# send SIGNAL to the supervisor; sets status and output.
supervised_then() {
	local run=$1 sig=$2 pid sup
	shift 2
	timeout 60 "$HPT" launch --supervise --run "$run" -- "$@" >"$run/out" 2>&1 &
	pid=$!
	until_file "$run/ready" || { kill "$pid"; return 1; }
	sup=$(field_of "$run" supervisor_pid)
	kill -s "$sig" "$sup"
	status=0
	wait "$pid" || status=$?
	output=$(cat "$run/out")
}

no_mount_left() {
	! grep -q "hpctrain-squash-" /proc/mounts
}

no_container_left() {
	[ -z "$(podman ps -a --filter name=hpctrain- --format '{{.Names}}')" ]
}

@test "USR2 reaches a Python program in a charliecloud directory image: its handler checkpoints and launch exits 75" {
	need_ch
	local run
	run=$(make_run pre-dir "$WORK/img" charliecloud)
	supervised_then "$run" USR2 python3 /preempt.py
	[ "$status" -eq 75 ]
	[ "$(cat "$run/checkpointed")" = "by the program's handler" ]
}

@test "a SquashFS image under charliecloud is mounted by squashfuse; USR2 reaches the program, which exits 75, and the mount goes" {
	need_squashfuse
	local run sqfs
	run=$(make_run pre-sq "$WORK/img" charliecloud)
	sqfs=$(squash pre-sq)
	run=$(make_run pre-sq "$sqfs" charliecloud)
	supervised_then "$run" USR2 python3 /preempt.py
	[ "$status" -eq 75 ]
	[ "$(cat "$run/checkpointed")" = "by the program's handler" ]
	no_mount_left
}

@test "container.stage: after the stage step launch starts the image's node copy, with the cache inside" {
	need_squashfuse
	[ -x "${HPT%/*}/hpctrain-stage" ] || skip "no bin/hpctrain-stage"
	local run=$WORK/runs/st-img sqfs out
	mkdir -p "$run" "$WORK/img$run" "$WORK/img$WORK/stcache"
	chmod 700 "$WORK/runs" "$run"
	sqfs=$(squash st-img)
	printf 'version: 1\nname: st-img\ncommand: [sh]\ncode: false\ncontainer: {image: %s, runtime: charliecloud, stage: true}\ndata: {cache: {dir: %s}}\n' \
		"$sqfs" "$WORK/stcache" >"$WORK/st-img.yaml"
	"$HPT" validate --print-resolved "$WORK/st-img.yaml" >"$run/resolved.yaml"
	run -0 "$HPT" stage --run "$run"
	rm "$sqfs" # only the copy is left to start
	run -0 "$HPT" launch --supervise --run "$run" -- sh -c 'echo "data=$HPCTRAIN_DATA_IMAGE"; cat /marker; test -f "$HPCTRAIN_DATA_IMAGE" && echo seen'
	out=$(printf '%s\n' "$output" | sed -n 's/^data=//p')
	[[ "$out" == "$WORK/stcache/"*"/st-img.sqfs" ]]
	printf '%s\n' "$output" | grep -qx seen
	no_mount_left
}

@test "TERM to the supervisor of a SquashFS rank ends the program with 143 and leaves no mount and no process" {
	need_squashfuse
	local run sqfs prog
	run=$(make_run term-sq "$WORK/img" charliecloud)
	sqfs=$(squash term-sq)
	run=$(make_run term-sq "$sqfs" charliecloud)
	supervised_then "$run" TERM sh -c ': >ready; exec sleep 600'
	[ "$status" -eq 143 ]
	prog=$(field_of "$run" pid)
	[ ! -e "/proc/$prog" ] || [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$prog/status")" = Z ]
	no_mount_left
}

@test "squashfuse ignores the signals a step's processes all get: the program still reads its image after TERM and USR2 to it" {
	need_squashfuse
	local run sqfs fuse
	run=$(make_run sig-sq "$WORK/img" charliecloud)
	sqfs=$(squash sig-sq)
	run=$(make_run sig-sq "$sqfs" charliecloud)
	timeout 30 "$HPT" launch --supervise --run "$run" -- \
		sh -c ': >ready; while [ ! -e go ]; do sleep 0.1; done; cat /marker' >"$run/out" 2>&1 &
	until_file "$run/ready"
	fuse=$(pgrep -f "^squashfuse $sqfs ")
	[ -n "$fuse" ]
	kill -TERM "$fuse"
	kill -USR2 "$fuse"
	kill -HUP "$fuse"
	: >"$run/go"
	wait $!
	[ "$(cat "$run/out")" = inside ]
	no_mount_left
}

@test "two ranks share one squashfuse mount and the last one out unmounts it, though one's program was killed" {
	need_squashfuse
	local run sqfs
	run=$(make_run two-sq "$WORK/img" charliecloud)
	sqfs=$(squash two-sq)
	run=$(make_run two-sq "$sqfs" charliecloud)
	run timeout 60 mpirun -np 2 "$HPT" launch --supervise --run "$run" -- \
		sh -c 'echo "rank=$RANK root=$(sed -n "s/^squashfuse \/ .*/squashfuse/p" /proc/mounts)"
			[ "$RANK" = 0 ] && { : >rank0-said; exec sleep 600; }
			while [ ! -e rank0-said ]; do sleep 0.05; done
			kill -KILL $$'
	[ "$(printf '%s\n' "$output" | grep -c '^rank=[01] root=squashfuse$')" -eq 2 ]
	no_mount_left
	[ -z "$(ls -A "${TMPDIR:-/tmp}/hpctrain-squash-$(id -u)")" ]
}

@test "without --supervise the SquashFS mount stays for the next launch of the image, which unmounts it at its end" {
	need_squashfuse
	local run sqfs
	run=$(make_run keep-sq "$WORK/img" charliecloud)
	sqfs=$(squash keep-sq)
	run=$(make_run keep-sq "$sqfs" charliecloud)
	run timeout 30 "$HPT" launch --run "$run" -- sh -c 'cat /marker'
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
	grep -q "hpctrain-squash-" /proc/mounts
	run timeout 30 "$HPT" launch --supervise --run "$run" -- sh -c 'cat /marker'
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
	no_mount_left
}

@test "a SquashFS image replaced after validate is refused at launch, and a mount whose image changed is not reused for a genuine copy" {
	need_squashfuse
	local run sqfs
	run=$(make_run swap-sq "$WORK/img" charliecloud)
	sqfs=$(squash swap-sq)
	cp "$sqfs" "$WORK/swap-copy.sqfs"
	echo other >"$WORK/img/marker"
	mksquashfs "$WORK/img" "$WORK/swap-other.sqfs" -noappend -quiet -noI -noD -noF -noX >/dev/null
	echo inside >"$WORK/img/marker"
	run=$(make_run swap-sq "$sqfs" charliecloud)
	cp "$WORK/swap-other.sqfs" "$sqfs" # after validate: another image at the pinned path
	run timeout 30 "$HPT" launch --run "$run" -- sh -c 'cat /marker'
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$output" == *"(the image $sqfs is not the one pinned (pinned sha256:"* ]]
	no_mount_left
	# the genuine image, mounted and left there (no --supervise), then
	# rewritten in place under the live mount
	cp "$WORK/swap-copy.sqfs" "$sqfs"
	run timeout 30 "$HPT" launch --run "$run" -- sh -c 'cat /marker'
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
	grep -q "hpctrain-squash-" /proc/mounts
	cp "$WORK/swap-other.sqfs" "$sqfs"
	# a run pinned to a genuine copy (the same digest, the same mount
	# point) gets the image it pinned, not what the stale mount serves
	run=$(make_run swap-sq "$WORK/swap-copy.sqfs" charliecloud)
	run timeout 30 "$HPT" launch --supervise --run "$run" -- sh -c 'cat /marker'
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
	no_mount_left
}

@test "a directory image changed after validate is refused at launch under charliecloud and podman, and runs again once it is the pinned one" {
	need_ch
	local ch pod
	ch=$(make_run swap-dir "$WORK/img" charliecloud)
	pod=$(make_run swap-dir-pod "$WORK/img" podman)
	ch=$(make_run swap-dir "$WORK/img" charliecloud) # pinned after both mount points exist
	pod=$(make_run swap-dir-pod "$WORK/img" podman)
	echo changed >"$WORK/img/marker" # after validate: same path, other content
	run timeout 30 env -u USER "$HPT" launch --run "$ch" -- sh -c 'cat /marker'
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$output" == *"the image $WORK/img is not the one pinned (pinned sha256:"*"validate or submit it again"* ]]
	[[ $'\n'"$output"$'\n' != *$'\nchanged\n'* ]] # the program never ran
	if command -v podman >/dev/null; then
		run timeout 30 "$HPT" launch --run "$pod" -- sh -c 'cat /marker'
		[ "$status" -eq "$EX_BAD_SPEC" ]
		[[ "$output" == *"the image $WORK/img is not the one pinned"* ]]
		no_container_left
	fi
	echo inside >"$WORK/img/marker" # the pinned content again (times are not part of it)
	run timeout 30 env -u USER "$HPT" launch --run "$ch" -- sh -c 'cat /marker'
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
}

@test "a stalled Python program in a SquashFS image: the autopsy names its file:line inside the image, and no mount is left" {
	need_squashfuse
	local run sqfs
	run=$(make_run stall-sq "$WORK/img" charliecloud 2)
	sqfs=$(squash stall-sq)
	run=$(make_run stall-sq "$sqfs" charliecloud 2)
	run timeout 60 "$HPT" launch --supervise --run "$run" -- python3 /stall.py
	[ "$status" -eq 76 ]
	[[ "$output" == *"rank 0 in clock_nanosleep from stall.py:3 (time.sleep(3600))"* ]]
	grep -q '#0  wait_forever at /stall.py:3' "$run/autopsy.txt"
	no_mount_left
}

@test "a SquashFS image under charliecloud without squashfuse in PATH is refused, saying so" {
	need_squashfuse
	local run sqfs
	run=$(make_run nosqfuse "$WORK/img" charliecloud)
	sqfs=$(squash nosqfuse)
	run=$(make_run nosqfuse "$sqfs" charliecloud)
	mkdir -p "$WORK/chonly"
	ln -sf "$(command -v ch-run)" "$WORK/chonly/ch-run"
	PATH=$WORK/chonly run "$HPT" launch --run "$run" -- sh -c ': >started'
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "hpctrain launch: rank 0: refusing the SquashFS image $sqfs under charliecloud: ch-run would stay behind as its FUSE server, so signals and kills would not reach the program; unpack it into a directory (ch-convert) for now (no squashfuse (and fusermount) in PATH to mount it outside ch-run)" ]
	[ ! -e "$run/started" ]
}

@test "a SquashFS file squashfuse cannot mount is refused with squashfuse's reason, leaving no mount point" {
	need_squashfuse
	local run bad=$WORK/bad.sqfs
	# a whole superblock that says 1024 bytes, all of them there, but no file system
	{ printf hsqs; head -c 36 /dev/zero; printf '\0\4\0\0\0\0\0\0'; head -c 976 /dev/zero; } >"$bad"
	run=$(make_run badsq "$bad" charliecloud)
	run timeout 30 "$HPT" launch --run "$run" -- true
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$output" == "hpctrain launch: rank 0: refusing the SquashFS image $bad under charliecloud: "*"(squashfuse $bad ${TMPDIR:-/tmp}/hpctrain-squash-$(id -u)/"*" failed (exit status "*"): "?* ]]
	no_mount_left
	[ -z "$(ls -A "${TMPDIR:-/tmp}/hpctrain-squash-$(id -u)")" ]
}

@test "podman: USR2 reaches the program under conmon, its handler checkpoints, launch exits 75 and no container is left" {
	need_podman
	local run
	run=$(make_run pre-pod "$WORK/img" podman)
	supervised_then "$run" USR2 python3 /preempt.py
	[ "$status" -eq 75 ]
	[ "$(cat "$run/checkpointed")" = "by the program's handler" ]
	no_container_left
}

@test "podman: TERM to the supervisor ends the program with 143 and leaves no container and no process" {
	need_podman
	local run prog
	run=$(make_run term-pod "$WORK/img" podman)
	supervised_then "$run" TERM sh -c ': >ready; exec sleep 600'
	[ "$status" -eq 143 ]
	prog=$(field_of "$run" pid)
	[ ! -e "/proc/$prog" ] || [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$prog/status")" = Z ]
	no_container_left
}

@test "podman: a stall autopsy reads the program's stacks and CPU time, not podman's, and removes the container" {
	need_podman
	local run cpu
	run=$(make_run stall-pod "$WORK/img" podman 3)
	run timeout 60 "$HPT" launch --supervise --run "$run" -- python3 /stall.py
	[ "$status" -eq 76 ]
	[[ "$output" == *"rank 0 in clock_nanosleep from stall.py:3 (time.sleep(3600))"* ]]
	grep -q '#0  wait_forever at /stall.py:3' "$run/autopsy.txt"
	! grep -q podman "$run/autopsy.txt" || false
	cpu=$(field_of "$run" cpu_s)
	# the program spun for 1 s of its own CPU time before it stalled
	awk -v c="$cpu" 'BEGIN { exit !(c >= 0.9) }'
	no_container_left
}

@test "podman: a runtime that moves the program to other CPUs is caught by the contract inside" {
	need_podman
	local run real
	run=$(make_run cpuset "$WORK/img" podman)
	# a podman that overrides the plan's --cpuset-cpus, as a site's
	# wrapper or containers.conf might: every rank gets CPU 1
	mkdir -p "$WORK/cpuset-bin"
	real=$(command -v podman)
	printf '#!/bin/sh\nfor a; do shift; case $a in --cpuset-cpus=*) a=--cpuset-cpus=1 ;; esac; set -- "$@" "$a"; done\nexec %s "$@"\n' \
		"$real" >"$WORK/cpuset-bin/podman"
	chmod +x "$WORK/cpuset-bin/podman"
	PATH=$WORK/cpuset-bin:$PATH run timeout 60 mpirun -x PATH -np 2 "$HPT" launch --supervise \
		--run "$run" -- sh -c 'sleep 1'
	[ "$status" -eq 0 ]
	[[ "$output" == *"hpctrain launch: rank 0: inside the container: warning: the program runs on CPUs 1, not the planned 0 "* ]]
	[[ "$output" == *"hpctrain launch: rank 0: inside the container: warning: the runtime set the program's CPUs to 1 and it cannot be re-pinned to the planned 0: Invalid argument"* ]]
	grep -q '"contract_inside"' "$run/ranks/rank-0.json"
	grep -q "re-pinned to the planned 0" "$run/ranks/rank-0.json"
	no_container_left
}

@test "podman: with binding.contract: fail, a program the runtime keeps off its CPUs is ended and launch exits 7" {
	need_podman
	local run real
	run=$(make_run cpuset-fail "$WORK/img" podman 0 'binding: {contract: fail}')
	mkdir -p "$WORK/cpuset-bin"
	real=$(command -v podman)
	printf '#!/bin/sh\nfor a; do shift; case $a in --cpuset-cpus=*) a=--cpuset-cpus=1 ;; esac; set -- "$@" "$a"; done\nexec %s "$@"\n' \
		"$real" >"$WORK/cpuset-bin/podman"
	chmod +x "$WORK/cpuset-bin/podman"
	# rank 0 is planned on CPU 0 and moved to 1, which its cgroup keeps;
	# rank 1, planned on 1, is left alone and ends first, so that
	# mpirun kills no supervisor before it has removed its container
	PATH=$WORK/cpuset-bin:$PATH run timeout 60 mpirun -x PATH -np 2 "$HPT" launch --supervise \
		--run "$run" -- sh -c '[ "$RANK" = 1 ] || sleep 30; echo >ran-$RANK'
	[ "$status" -eq 7 ]
	[[ "$output" == *"hpctrain launch: rank 0: inside the container: error: the runtime set the program's CPUs to 1 and it cannot be re-pinned to the planned 0: Invalid argument"* ]]
	[[ "$output" == *"hpctrain launch: rank 0: the program broke its contract inside its runtime; ending it (exit status 7)"* ]]
	[ ! -e "$run/ran-0" ]
	[ -e "$run/ran-1" ]
	grep -q '"exit_status": 7' "$run/ranks/rank-0.json"
	no_container_left
}

# --- launch --dry-run: the runtime's command line, nothing started ---

# dry SPEC [ARGS]: launch --dry-run of SPEC as rank 0 of 1 on the
# 2-NUMA fixture (so the plan's variables are the same on any machine),
# with an environment of four variables, running `prog 'a b'`.
dry() {
	local spec=$1
	shift
	env -i PATH=/usr/bin:/bin USER=u HOME=/h TMPDIR="$BATS_TEST_TMPDIR/tmp" "$HPT" launch \
		--topology "$BATS_TEST_DIRNAME/../fixtures/24em64t-2n6c2t-pci.xml" --dry-run \
		--spec "$spec" "$@" -- prog 'a b'
}

# fake_squashfs FILE: a file with SquashFS's magic and a superblock whose
# bytes_used (le64 at 40) is the file's 100 bytes: all the kind check reads.
fake_squashfs() {
	{ printf hsqs; head -c 36 /dev/zero; printf '\144\0\0\0\0\0\0\0'; head -c 52 /dev/zero; } >"$1"
}

@test "launch --dry-run shows apptainer's and enroot's command lines where neither is installed" {
	local img=$BATS_TEST_TMPDIR/img.sqfs
	fake_squashfs "$img"
	mkdir "$BATS_TEST_TMPDIR/data"
	for rt in apptainer enroot; do
		printf 'version: 1\nname: t\ncontainer: {image: %s, runtime: %s, mounts: ["%s:/data"]}\nenv: {A: "1"}\n' \
			"$img" "$rt" "$BATS_TEST_TMPDIR/data" >"$BATS_TEST_TMPDIR/$rt.yaml"
	done
	run -0 dry "$BATS_TEST_TMPDIR/apptainer.yaml"
	[ "$(echo "$output" | jq -c .container_argv)" = \
		"[\"apptainer\",\"exec\",\"--bind=$BATS_TEST_TMPDIR/data:/data\",\"$img\",\"prog\",\"a b\"]" ]
	echo "$output" | jq -e '.program == ["prog", "a b"] and (has("container_mount") | not)' >/dev/null
	run -0 dry "$BATS_TEST_TMPDIR/enroot.yaml"
	# enroot passes no variable it is not told of: every name, the plan's too
	diff <(echo "$output" | jq -r '.container_argv[]' | sed "s|$BATS_TEST_TMPDIR|TMP|g") - <<-'EOF'
	enroot
	start
	--mount=TMP/data:/data
	--env=PATH
	--env=USER
	--env=HOME
	--env=TMPDIR
	--env=CUDA_VISIBLE_DEVICES
	--env=CUDA_DEVICE_ORDER
	--env=NCCL_IB_HCA
	--env=NCCL_NET
	--env=UCX_NET_DEVICES
	--env=OMP_NUM_THREADS
	--env=OMP_PLACES
	--env=OMP_PROC_BIND
	--env=RANK
	--env=LOCAL_RANK
	--env=WORLD_SIZE
	--env=LOCAL_WORLD_SIZE
	--env=NODE_RANK
	--env=GROUP_RANK
	--env=MASTER_ADDR
	--env=MASTER_PORT
	--env=HPCTRAIN_RANK
	--env=HPCTRAIN_LOCAL_RANK
	--env=HPCTRAIN_SLICE
	--env=HPCTRAIN_PREEMPT_SIGNAL
	--env=PYTHONPATH
	--env=A
	TMP/img.sqfs
	prog
	a b
	EOF
}

@test "validate refuses a 4-byte hsqs file and a SquashFS image cut short, naming what its superblock says" {
	local img=$BATS_TEST_TMPDIR/img.sqfs spec=$BATS_TEST_TMPDIR/cut.yaml
	printf 'version: 1\nname: t\ncommand: [sh]\ncontainer: {image: %s, runtime: apptainer}\n' \
		"$img" >"$spec"
	printf hsqs >"$img"
	run --separate-stderr "$HPT" validate "$spec"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$stderr" == *"container image $img is a truncated SquashFS image (4 bytes, less than its superblock)"* ]]
	fake_squashfs "$img" # says 100 bytes, has them
	head -c 99 "$img" >"$img.cut"
	mv "$img.cut" "$img"
	run --separate-stderr "$HPT" validate "$spec"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$stderr" == *"container image $img is a truncated SquashFS image: its superblock says it uses 100 bytes, the file has 99"* ]]
}

@test "launch --dry-run of a SquashFS image under charliecloud shows squashfuse and ch-run on the mount point, mounting nothing" {
	local img=$BATS_TEST_TMPDIR/img.sqfs dir
	fake_squashfs "$img"
	printf 'version: 1\nname: t\ncontainer: {image: %s, runtime: charliecloud}\n' "$img" >"$BATS_TEST_TMPDIR/j.yaml"
	run -0 dry "$BATS_TEST_TMPDIR/j.yaml"
	dir=$(echo "$output" | jq -r '.container_mount[2]')
	[[ "$dir" == "$BATS_TEST_TMPDIR/tmp/hpctrain-squash-$(id -u)/"*img.sqfs* ]]
	echo "$output" | jq -e --arg img "$img" --arg dir "$dir" '
		.container_mount == ["squashfuse", $img, $dir] and
		.container_argv == ["ch-run", "--unset-env=LD_PRELOAD", $dir, "--", "prog", "a b"]' >/dev/null
	[ ! -e "$BATS_TEST_TMPDIR/tmp" ]
}

@test "launch --dry-run and --report show podman's command line with the plan's CPUs, and create no container" {
	local rep=$BATS_TEST_TMPDIR/rep
	mkdir "$BATS_TEST_TMPDIR/img"
	printf 'version: 1\nname: t\ncontainer: {image: %s, runtime: podman}\n' "$BATS_TEST_TMPDIR/img" \
		>"$BATS_TEST_TMPDIR/j.yaml"
	run -0 "$HPT" launch --dry-run --report "$rep" --spec "$BATS_TEST_TMPDIR/j.yaml" -- prog
	echo "$output" | jq -e --arg img "$BATS_TEST_TMPDIR/img" --arg cpus "$(echo "$output" | jq -r .slice.cpus)" '
		.container_argv[0:2] == ["podman", "run"] and
		(.container_argv | index("--cpuset-cpus=" + $cpus)) != null and
		any(.container_argv[]; startswith("--name=hpctrain-local-r0-")) and
		.container_argv[-3:] == ["--rootfs", $img, "prog"]' >/dev/null
	[ "$(jq -c .container_argv "$rep/rank-00000.json")" = "$(echo "$output" | jq -c .container_argv)" ]
	if command -v podman >/dev/null; then no_container_left; fi
}

@test "launch --dry-run with runtime auto and none in PATH says so and exits 127, as a launch would" {
	mkdir "$BATS_TEST_TMPDIR/img" "$BATS_TEST_TMPDIR/bin"
	printf 'version: 1\nname: t\ncontainer: {image: %s}\n' "$BATS_TEST_TMPDIR/img" >"$BATS_TEST_TMPDIR/j.yaml"
	run -127 --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin" "$HPT" launch --dry-run \
		--spec "$BATS_TEST_TMPDIR/j.yaml" -- prog
	[ "$stderr" = "hpctrain launch: rank 0: no container runtime found in PATH (tried ch-run, apptainer, enroot, podman)" ]
	[ -z "$output" ]
}

# --- jobs on the local Slurm ---

# The Debian image with Open MPI and mpi4py (helpers/mkmpiimage.sh, about
# a minute once), cached under build/images; MPIIMG is a hard-linked copy
# for this test, so what a job does to it stays out of the cache.
need_mpi_image() {
	local cache=$ROOT/build/images/mpi rc=0
	sh "$BATS_TEST_DIRNAME/helpers/mpiimage.sh" "$cache" 2>"$BATS_TEST_TMPDIR/mk.err" || rc=$?
	[ "$rc" -ne 77 ] || skip "no MPI image: $(cat "$BATS_TEST_TMPDIR/mk.err")"
	[ "$rc" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/mk.err"; return 1; }
	MPIIMG=$WORK/mpi-$BATS_TEST_NUMBER
	cp -al "$cache" "$MPIIMG"
}

@test "an MPI program in a debootstrap image, started by srun --mpi=pmix through hpctrain, gets each rank over PMIx" {
	need_ch
	need_slurm
	need_mpi_image
	# writable: the run directory is under /tmp, which ch-run binds
	# itself, but launch wants its mount point in the image (made by
	# the job, not known before submit: the image's digest names it)
	write_spec job.yaml mpi 1 2 '[python3, -c, "from mpi4py import MPI; c=MPI.COMM_WORLD; print(c.Get_rank(), c.Get_size())"]' \
		"container: {image: $MPIIMG, runtime: charliecloud, writable: true}"
	submit_json job.yaml
	run -0 timeout 300 "$HPT" status --wait "$DIR"
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "0 2" ] || { cat "$DIR"/logs/*; false; }
	[ "$(grep -v warning "$DIR/logs/rank-1.out")" = "1 2" ]
}

@test "a job on a node without the runtime fails at the start with one line per rank naming it" {
	need_ch
	need_slurm
	local d
	# the node's PATH: everything the host has but ch-run (links made
	# by one cp a directory: a process a file took half a minute)
	mkdir nobin
	for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
		[ -d "$d" ] && cp -sn "$d"/* nobin/ 2>/dev/null || true
	done
	rm -f nobin/ch-run
	[ -e nobin/sh ] && [ ! -e nobin/ch-run ]
	write_spec job.yaml nort 1 2 '[sh, -c, "echo started"]' \
		"env: {PATH: $PWD/nobin}
container: {image: $WORK/img, runtime: charliecloud}"
	submit_json job.yaml
	run timeout 300 "$HPT" status --wait "$DIR"
	[ "$status" -ne 124 ]
	[[ "$output" == *"FAILED"*"127"* ]]
	[ "$(cat "$DIR/logs/rank-0.out")" = "hpctrain launch: rank 0: container runtime charliecloud: ch-run not found in PATH" ]
	[ "$(cat "$DIR/logs/rank-1.out")" = "hpctrain launch: rank 1: container runtime charliecloud: ch-run not found in PATH" ]
}
