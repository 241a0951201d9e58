#!/bin/sh
# launch.sh - what `hpctrain launch` adds to starting a rank: mpirun -np 2
# of `hpctrain launch -- /bin/true`, and of `hpctrain launch --supervise
# -- /bin/true`, against bare /bin/true; then, for each container runtime
# installed, `hpctrain launch --supervise --spec JOB -- /bin/true` of a
# job whose container.image and container.runtime name it, against the
# runtime alone, given the same command line launch builds for it
# (launcher/container/container_argv.c).  The runtimes: ch-run on a
# directory image; a SquashFS image, which hpctrain mounts once per node
# with squashfuse outside ch-run, against the same done by hand and
# against ch-run's own SquashFS path (it forks and stays as the FUSE
# server); podman --rootfs under runc (HPCTRAIN_PODMAN_RUNTIME, runc
# unless set: crun cannot start containers on the test machines), also
# launched without --supervise, whose podman inspect and podman rm are
# podman's own cost, not the runtime's.  All
# variants are interleaved in one run, so all see the same machine.  The
# two ranks start in parallel, so the difference in wall time is the
# cost each rank adds.  Goal: <= 15 ms per rank for each.  Each variant
# runs once before the timing: the first call warms the topology cache,
# as the first job after a node boots would, and podman its storage.
# The image is helpers/mkimage.sh's, cached under build/ as
# container.bats caches it; the timed runs use a copy.
# LAUNCH_BENCH_RUNS: the number of timed rounds (25).
set -eu
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
N=${LAUNCH_BENCH_RUNS:-25}
HPT=$PWD/bin/hpctrain
[ -n "${USER:-}" ] || USER=$(id -un) # ch-run needs it; launch sets it alike
export USER
export HPCTRAIN_PODMAN_RUNTIME="${HPCTRAIN_PODMAN_RUNTIME:-runc}"
export HPCTRAIN_PODMAN_ULIMITS="${HPCTRAIN_PODMAN_ULIMITS:-nofile=$(ulimit -Hn):$(ulimit -Hn),nproc=4096:4096}"

ms() { date +%s%N; }
has() { command -v "$1" >/dev/null 2>&1; }
tmp=$(mktemp -d) # not /tmp/NAME.$$: a name another user could plant a link at
cleanup() {
	grep -q " $tmp/mnt " /proc/mounts 2>/dev/null && fusermount -u "$tmp/mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Each variant is a function v_NAME; VARIANTS lists those that run, and
# PAIRS "HPCTRAIN_VARIANT PEER_VARIANT what" the figures reported.
v_bare() { mpirun -np 2 /bin/true; }
v_launch() { mpirun -np 2 "$HPT" launch -- /bin/true; }
v_sup() { mpirun -np 2 "$HPT" launch --supervise -- /bin/true; }
VARIANTS="bare launch sup"
label_bare='mpirun -np 2 /bin/true'
label_launch='mpirun -np 2 hpctrain launch -- /bin/true'
label_sup='mpirun -np 2 hpctrain launch --supervise -- /bin/true'
PAIRS="launch:bare:exec sup:bare:supervise"
v_launch >/dev/null # the topology cache
config=
skipped=

# spec NAME IMAGE RUNTIME: a job spec running in IMAGE under RUNTIME.
spec() {
	printf 'version: 1\nname: bench-%s\ncommand: [true]\ncontainer: {image: %s, runtime: %s}\n' \
		"$1" "$2" "$3" >"$tmp/$1.yaml"
}

# add NAME LABEL: runs v_NAME once (the warm-up); adds it when it works,
# else returns 1 with its output in $tmp/why.
add() {
	if "v_$1" >"$tmp/why" 2>&1; then
		VARIANTS="$VARIANTS $1"
		eval "label_$1=\$2"
		return 0
	fi
	return 1
}
why() { sed -n '/./{s/^/    /;p;}' "$tmp/why" | head -3; }
skip() { skipped="$skipped$1
"; }
note() { config="$config$1
"; }

img= cache=build/test-image/img
if [ ! -d "$cache" ] || [ tests/cli/helpers/mkimage.sh -nt "$cache" ]; then
	mkdir -p build/test-image
	sh tests/cli/helpers/mkimage.sh "$cache" >"$tmp/why" 2>&1 || :
fi
if [ -d "$cache" ]; then
	img=$tmp/img
	cp -a "$cache" "$img"
else
	skip "containers: skipped: no image: $(cat "$tmp/why")"
fi

if [ -n "$img" ] && ! has ch-run; then
	skip "charliecloud and SquashFS: skipped: no ch-run in PATH (charliecloud-runtime)"
elif [ -n "$img" ]; then
	v_ch() { mpirun -np 2 ch-run --unset-env=LD_PRELOAD "$img" -- /bin/true; }
	v_hch() { mpirun -np 2 "$HPT" launch --supervise --spec "$tmp/ch.yaml" -- /bin/true; }
	spec ch "$img" charliecloud
	if add ch "mpirun -np 2 ch-run IMAGE-DIR -- /bin/true" &&
		add hch "mpirun -np 2 hpctrain launch --supervise (charliecloud, dir)"; then
		PAIRS="$PAIRS hch:ch:charliecloud_(dir)_over_ch-run"
		note "charliecloud: ch-run $(ch-run --version 2>&1), directory image of $(du -sm "$img" | cut -f1) MB (tests/cli/helpers/mkimage.sh)"
	else
		skip "charliecloud, directory image: skipped: it does not start here:
$(why)"
	fi

	if ! has mksquashfs || ! has squashfuse || ! has fusermount; then
		skip "SquashFS: skipped: no mksquashfs, squashfuse and fusermount in PATH (squashfs-tools, squashfuse, fuse3)"
	else
		sqfs=$tmp/img.sqfs
		mkdir "$tmp/mnt"
		mksquashfs "$img" "$sqfs" -noappend -quiet -noI -noD -noF -noX >/dev/null
		v_chsq() { mpirun -np 2 ch-run --unset-env=LD_PRELOAD "$sqfs" -- /bin/true; }
		# launch mounts once per node, its ranks share the mount, the
		# last one out unmounts: the same by hand
		v_fusech() {
			squashfuse "$sqfs" "$tmp/mnt"
			mpirun -np 2 ch-run --unset-env=LD_PRELOAD "$tmp/mnt" -- /bin/true
			fusermount -u "$tmp/mnt"
		}
		v_hsq() { mpirun -np 2 "$HPT" launch --supervise --spec "$tmp/sq.yaml" -- /bin/true; }
		spec sq "$sqfs" charliecloud
		if add fusech "squashfuse; mpirun -np 2 ch-run MNT; fusermount -u" &&
			add hsq "mpirun -np 2 hpctrain launch --supervise (charliecloud, SquashFS)"; then
			PAIRS="$PAIRS hsq:fusech:SquashFS_over_squashfuse+ch-run"
			note "SquashFS: $(squashfuse --version 2>&1 | sed -n '1s/ (c).*//p'), $(fusermount --version 2>&1), uncompressed image of $(du -sm "$sqfs" | cut -f1) MB (mksquashfs -noI -noD -noF -noX)"
			if add chsq "mpirun -np 2 ch-run IMAGE.sqfs -- /bin/true"; then
				PAIRS="$PAIRS hsq:chsq:SquashFS_over_ch-run's_own_FUSE"
			else
				skip "SquashFS, ch-run's own path: skipped: ch-run cannot run the file (built without libsquashfuse?):
$(why)"
			fi
		else
			skip "SquashFS: skipped: squashfuse and ch-run do not start it here:
$(why)"
		fi
	fi
fi

if [ -n "$img" ]; then
	if ! has podman || ! has "$HPCTRAIN_PODMAN_RUNTIME"; then
		skip "podman: skipped: no podman and $HPCTRAIN_PODMAN_RUNTIME in PATH"
	else
		cpus=$(cat /sys/devices/system/cpu/online)
		# launch gives each rank its slice's cpuset; the peer all CPUs
		v_pod() {
			set -- podman --runtime="$HPCTRAIN_PODMAN_RUNTIME" run --rm --env-host --network=host --ipc=host --pid=host
			old=$IFS IFS=,
			for u in $HPCTRAIN_PODMAN_ULIMITS; do set -- "$@" --ulimit="$u"; done
			IFS=$old
			mpirun -np 2 "$@" --read-only --volume=/tmp:/tmp --cpuset-cpus="$cpus" --rootfs "$img" /bin/true
		}
		v_hpod() { mpirun -np 2 "$HPT" launch --supervise --spec "$tmp/pod.yaml" -- /bin/true; }
		# without the supervisor, which asks podman inspect for the
		# program's PID and podman rm's the container at the end
		v_xpod() { mpirun -np 2 "$HPT" launch --spec "$tmp/pod.yaml" -- /bin/true; }
		spec pod "$img" podman
		if add pod "mpirun -np 2 podman run --rootfs IMAGE-DIR /bin/true" &&
			add hpod "mpirun -np 2 hpctrain launch --supervise (podman, dir)" &&
			add xpod "mpirun -np 2 hpctrain launch (podman, dir), no supervisor"; then
			PAIRS="$PAIRS hpod:pod:podman_(dir)_over_podman_run xpod:pod:podman,_no_supervisor"
			note "podman: $(podman --version | sed 's/ version//'), $HPCTRAIN_PODMAN_RUNTIME $("$HPCTRAIN_PODMAN_RUNTIME" --version | sed -n '1s/.*version //p'), $(podman info --format 'cgroups {{.Host.CgroupsVersion}} ({{.Host.CgroupManager}}), storage {{.Store.GraphDriverName}}' 2>/dev/null), ulimits $HPCTRAIN_PODMAN_ULIMITS"
		else
			skip "podman: skipped: it does not start a container here:
$(why)"
		fi
	fi
fi

for v in $VARIANTS; do : >"$tmp/t-$v"; done
i=0
while [ $i -lt "$N" ]; do
	for v in $VARIANTS; do
		t0=$(ms)
		"v_$v" >/dev/null
		t1=$(ms)
		echo $(( (t1 - t0) / 1000 )) >>"$tmp/t-$v"
	done
	i=$((i + 1))
done
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "$(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) CPUs (load average $(cut -d' ' -f1-3 /proc/loadavg)); $N interleaved runs, medians"
printf '%s' "$config"
for v in $VARIANTS; do
	eval "l=\$label_$v"
	printf '%-66s median %7.1f ms\n' "$l" "$(median "$tmp/t-$v" | awk '{print $1 / 1000}')"
done
for p in $PAIRS; do
	h=${p%%:*} rest=${p#*:}
	peer=${rest%%:*} what=$(echo "${rest#*:}" | tr _ ' ')
	awk -v h="$(median "$tmp/t-$h")" -v b="$(median "$tmp/t-$peer")" -v w="$what" 'BEGIN {
		d = (h - b) / 1000
		printf "added per rank, %-38s %6.1f ms (goal <= 15 ms): %s\n", w ":", d, d <= 15 ? "ok" : "over"
	}'
done
printf '%s' "$skipped"
