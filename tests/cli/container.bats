#!/usr/bin/env bats
# container.bats - jobs in a container: `hpctrain launch` through the real
# Charliecloud (and Podman under runc, where it can start), the refusals,
# and the image's digest in the run's identity (validate, rerun); on a
# one-node local Slurm, an MPI program in a debootstrap image started by
# srun --mpi=pmix, and a job on a node without the runtime.
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
	if [ ! -d "$cache/img" ] || [ "$BATS_TEST_DIRNAME/helpers/mkimage.sh" -nt "$cache/img" ]; then
		mkdir -p "$cache"
		sh "$BATS_TEST_DIRNAME/helpers/mkimage.sh" "$cache/img"
	fi
	# Outside /tmp, which ch-run binds by itself: the run directory
	# must reach the program through launch's own mounts.
	WORK=$(mktemp -d "$ROOT/build/container-bats.XXXXXX")
	export WORK XDG_CACHE_HOME=$WORK/cache
	cp -a "$cache/img" "$WORK/img"
	echo inside >"$WORK/img/marker"
}

teardown_file() {
	cluster_down
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

need_ch() {
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
}

# make_run NAME IMAGE [RUNTIME]: a run directory with the resolved spec of
# a job in IMAGE, and its path as a mount point inside the image.
make_run() {
	local run=$WORK/runs/$1
	mkdir -p "$run" "$WORK/img$run"
	chmod 700 "$WORK/runs" "$run"
	printf 'version: 1\nname: %s\ncommand: [sh]\ncontainer: {image: %s, runtime: %s}\n' \
		"$1" "$2" "${3:-auto}" >"$WORK/$1.yaml"
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
	local run ns='echo "rank=$RANK mnt=$(ls -l /proc/self/ns/mnt | sed "s/.*-> //")"'
	run=$(make_run join "$WORK/img" charliecloud)
	SLURM_JOB_ID=4242 SLURM_STEP_ID=0 run mpirun -x SLURM_JOB_ID -x SLURM_STEP_ID -np 2 \
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

@test "a SquashFS image under charliecloud is refused by launch before anything starts, and by validate when named" {
	need_ch
	command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools)"
	local run sqfs=$WORK/img.sqfs
	[ -e "$sqfs" ] || mksquashfs "$WORK/img" "$sqfs" -noappend -quiet >/dev/null
	# auto: ch-run is the first runtime found, so launch must refuse;
	# validate cannot know the compute node's runtime and lets it pass
	run=$(make_run sqfs "$sqfs")
	run "$HPT" launch --run "$run" -- sh -c 'echo started >started'
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "hpctrain launch: rank 0: refusing the SquashFS image $sqfs under charliecloud: ch-run would stay behind as its FUSE server, so signals and kills would not reach the program; unpack it into a directory (ch-convert) for now" ]
	[ ! -e "$run/started" ]
	printf 'version: 1\nname: sqfs\ncommand: [sh]\ncontainer: {image: %s, runtime: charliecloud}\n' \
		"$sqfs" >"$WORK/sqfs-ch.yaml"
	run "$HPT" validate "$WORK/sqfs-ch.yaml"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$output" == "hpctrain validate: refusing the SquashFS image $sqfs under charliecloud: "* ]]
}

@test "a charliecloud image without the run directory's mount point is refused, naming it" {
	need_ch
	local run
	run=$(make_run nomount "$WORK/img" charliecloud)
	rmdir "$WORK/img$run"
	run "$HPT" launch --run "$run" -- true
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

# --- jobs on the local Slurm ---

# The Debian image with Open MPI and mpi4py (helpers/mkmpiimage.sh, about
# a minute once), cached under build/images; MPIIMG is a hard-linked copy
# for this test, so what a job does to it stays out of the cache.
need_mpi_image() {
	local cache=$ROOT/build/images/mpi rc=0
	if [ ! -d "$cache" ] || [ "$BATS_TEST_DIRNAME/helpers/mkmpiimage.sh" -nt "$cache" ]; then
		timeout 900 sh "$BATS_TEST_DIRNAME/helpers/mkmpiimage.sh" "$cache" 2>"$BATS_TEST_TMPDIR/mk.err" || rc=$?
		[ "$rc" -ne 77 ] || skip "no MPI image: $(cat "$BATS_TEST_TMPDIR/mk.err")"
		[ "$rc" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/mk.err"; return 1; }
	fi
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
	local d f
	# the node's PATH: everything the host has but ch-run
	mkdir nobin
	for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
		for f in "$d"/*; do
			[ "${f##*/}" = ch-run ] || [ -e "nobin/${f##*/}" ] || ln -s "$f" "nobin/${f##*/}"
		done
	done
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
