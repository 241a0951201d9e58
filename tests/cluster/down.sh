#!/usr/bin/env bash
# down.sh - stop what tests/cluster/up.sh started under BASE, and remove BASE.
#
#   BASE=/tmp/hpctrain-cluster tests/cluster/down.sh
#
# Only what up.sh recorded is touched: daemons by the PIDs in $BASE/run,
# the namespaces and bridge named in $BASE/run, the slot link that points
# at BASE.  Jobs are cancelled first: slurmstepd and job tasks are not
# children of slurmd and would outlive it.  Safe to run twice, or on a
# half-started cluster.
set -uo pipefail
BASE=${BASE:-/tmp/hpctrain-cluster}
case $BASE in /*) ;; *) BASE=$PWD/$BASE ;; esac
SLOTS=/tmp/hpctrain-cluster-slots
say() { echo "[cluster-down] $*" >&2; }
[ -f "$BASE/.hpctrain-cluster" ] || { say "nothing to do: $BASE is not a cluster directory"; exit 0; }
export SLURM_CONF=$BASE/etc/slurm.conf

pid_of() { [ -f "$1" ] && cat "$1"; }
stop_pids() { # TERM all at once (each daemon takes ~2 s), wait up to 10 s, then KILL
	local live=() p any
	for p in "$@"; do kill -0 "$p" 2>/dev/null && live+=("$p"); done
	[ ${#live[@]} -eq 0 ] && return 0
	kill -TERM "${live[@]}" 2>/dev/null
	for _ in $(seq 100); do
		any=0
		for p in "${live[@]}"; do kill -0 "$p" 2>/dev/null && any=1; done
		[ $any = 0 ] && return 0
		sleep 0.1
	done
	say "SIGKILL ${live[*]}"
	kill -KILL "${live[@]}" 2>/dev/null
	return 0
}

# 1. jobs
ctld=$(pid_of "$BASE/run/slurmctld.pid")
if [ -n "$ctld" ] && kill -0 "$ctld" 2>/dev/null; then
	scancel --quiet --user="$(id -un)" 2>/dev/null
	for _ in $(seq 100); do
		[ -z "$(squeue -h -t PD,R,CG,S -o %i 2>/dev/null)" ] && break
		sleep 0.1
	done
fi
# 2. daemons: slurmds and slurmctld together, then our own munged (never a shared one)
pids=()
for f in "$BASE"/run/slurmd-*.pid "$BASE/run/slurmctld.pid"; do
	case $f in *.own.pid) continue ;; esac # written by the daemons themselves
	p=$(pid_of "$f") && [ -n "$p" ] && pids+=("$p")
done
[ ${#pids[@]} -gt 0 ] && stop_pids "${pids[@]}"
p=$(pid_of "$BASE/run/munged.pid") && [ -n "$p" ] && stop_pids "$p"
# 3. namespaces and bridge (MODE=netns)
# A process still in a node's namespace (a slurmstepd its slurmctld
# could not reach to cancel, say of a node a test cut off) is the
# cluster's and would keep the namespace alive: it goes too.
if [ -f "$BASE/run/netns" ]; then
	while read -r ns; do
		[ -n "$ns" ] || continue
		left=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
		[ -n "$left" ] && { say "SIGKILL $left(left in $ns)"; kill -KILL $left 2>/dev/null; }
		ip netns del "$ns" 2>/dev/null
	done <"$BASE/run/netns"
fi
# A node's namespace outlives its name while its sockets do (a node cut
# off by a test leaves TCP retrying for minutes), and with it the
# host's end of its veth pair: delete that end, so the next cluster in
# this slot can make it again.
slot=$(cat "$BASE/run/slot" 2>/dev/null)
if [ -n "$slot" ] && [ -f "$BASE/run/netns" ]; then
	for v in $(ip -o link show 2>/dev/null | sed -n "s/^[0-9]*: \(hpt${slot}v[0-9]*\)@.*/\1/p"); do
		ip link del "$v" 2>/dev/null
	done
fi
if [ -f "$BASE/run/bridge" ]; then
	br=$(cat "$BASE/run/bridge")
	ip link show "$br" >/dev/null 2>&1 && ip link del "$br"
fi
# 4. the slot, if it is still ours, and the directory
if [ -n "$slot" ] && [ "$(readlink "$SLOTS/$slot" 2>/dev/null)" = "$BASE" ]; then
	rm -f "$SLOTS/$slot"
fi
rm -rf "$BASE"
say "down: $BASE"
