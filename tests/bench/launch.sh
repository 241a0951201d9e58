#!/bin/sh
# launch.sh - what `hpctrain launch` adds to starting a rank: mpirun -np 2
# of `hpctrain launch -- /bin/true`, and of `hpctrain launch --supervise
# -- /bin/true`, against bare /bin/true, interleaved in one run so all
# three see the same machine.  The two ranks start in parallel, so the
# difference in wall time is the cost each rank adds.  Goal: <= 15 ms per
# rank for each.  The first call warms the topology cache, as the first
# job after a node boots would.
set -eu
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
N=${LAUNCH_BENCH_RUNS:-25}
HPT=$PWD/bin/hpctrain

ms() { date +%s%N; }
mpirun -np 2 "$HPT" launch -- /bin/true
tmp=$(mktemp -d) # not /tmp/NAME.$$: a name another user could plant a link at
trap 'rm -rf "$tmp"' EXIT
bare=$tmp/bare launch=$tmp/launch sup=$tmp/sup
: >"$bare"; : >"$launch"; : >"$sup"
i=0
while [ $i -lt "$N" ]; do
	t0=$(ms); mpirun -np 2 /bin/true; t1=$(ms)
	mpirun -np 2 "$HPT" launch -- /bin/true; t2=$(ms)
	mpirun -np 2 "$HPT" launch --supervise -- /bin/true; t3=$(ms)
	echo $(( (t1 - t0) / 1000 )) >>"$bare"
	echo $(( (t2 - t1) / 1000 )) >>"$launch"
	echo $(( (t3 - t2) / 1000 )) >>"$sup"
	i=$((i + 1))
done
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
b=$(median "$bare") l=$(median "$launch") s=$(median "$sup")
rm -f "$bare" "$launch" "$sup"
awk -v b="$b" -v l="$l" -v s="$s" -v n="$N" 'BEGIN {
	d = (l - b) / 1000; e = (s - b) / 1000
	printf "mpirun -np 2 /bin/true                                  median %7.1f ms (%d runs)\n", b / 1000, n
	printf "mpirun -np 2 hpctrain launch -- /bin/true               median %7.1f ms\n", l / 1000
	printf "mpirun -np 2 hpctrain launch --supervise -- /bin/true   median %7.1f ms\n", s / 1000
	printf "added per rank, exec:      %.1f ms (goal <= 15 ms): %s\n", d, d <= 15 ? "ok" : "over"
	printf "added per rank, supervise: %.1f ms (goal <= 15 ms): %s\n", e, e <= 15 ? "ok" : "over"
}'
