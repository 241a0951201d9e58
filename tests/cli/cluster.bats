#!/usr/bin/env bats
# cluster.bats - tests/cluster/up.sh and down.sh themselves: nodes in
# network namespaces with their own hostnames, a 2-node hpctrain job across
# them, idempotence, and a teardown that leaves nothing behind.

load common
load slurm_cluster

setup_file() {
	# namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN: probe first
	if [ "$(id -u)" -eq 0 ] && ip netns add "hpt-probe-$$" 2>/dev/null; then
		ip netns del "hpt-probe-$$"
		cluster_up netns 2
	fi
}

@test "up.sh with MODE=netns gives two idle nodes with their own hostnames" {
	need_slurm
	run -0 sinfo -h -N -o '%N %T'
	[ "$output" = "$(printf 'node1 idle\nnode2 idle')" ]
	run -0 srun -N2 -n2 hostname
	[ "$(sort <<<"$output")" = "$(printf 'node1\nnode2')" ]
}

@test "a 2-node hpctrain job spans both namespace nodes" {
	need_slurm
	write_spec job.yaml span 2 1 '[sh, -c, "echo $(hostname) $RANK $WORLD_SIZE"]'
	submit_json job.yaml
	run -0 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].nodes == "node[1-2]"' <<<"$output"
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "node1 0 2" ]
	[ "$(grep -v warning "$DIR/logs/rank-1.out")" = "node2 1 2" ]
}

@test "up.sh on a running cluster is a no-op that says so" {
	need_slurm
	pids=$(cat "$CLUSTER_BASE"/run/*.pid | sort)
	run -0 --separate-stderr env BASE="$CLUSTER_BASE" MODE=netns "$CLUSTER_SCRIPTS/up.sh"
	[ "$output" = "export SLURM_CONF=$CLUSTER_BASE/etc/slurm.conf" ]
	[[ "$stderr" == *"already up"* ]]
	[ "$(cat "$CLUSTER_BASE"/run/*.pid | sort)" = "$pids" ]
}

@test "down.sh stops every daemon it started and removes namespaces, bridge and state" {
	need_slurm
	pids=$(cat "$CLUSTER_BASE"/run/*.pid)
	nss=$(cat "$CLUSTER_BASE/run/netns")
	br=$(cat "$CLUSTER_BASE/run/bridge")
	BASE=$CLUSTER_BASE "$CLUSTER_SCRIPTS/down.sh" 2>/dev/null
	for p in $pids; do run ! kill -0 "$p"; done
	run -0 ip netns list
	for ns in $nss; do [[ " $(echo $output) " != *" $ns "* ]]; done
	run ! ip link show "$br"
	[ ! -e "$CLUSTER_BASE" ]
	# and a second down.sh has nothing to do
	run -0 env BASE="$CLUSTER_BASE" "$CLUSTER_SCRIPTS/down.sh"
}
