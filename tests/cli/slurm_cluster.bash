# slurm_cluster.bash - one throw-away Slurm cluster per bats file, from
# tests/cluster/up.sh (load it after common).  The setup_file here starts
# a one-node cluster and teardown_file stops it; a file that needs more
# defines its own setup_file, calling cluster_up MODE [NODES].  Tests
# call need_slurm first, which skips them where no cluster could start
# (not root, or no slurm-wlm).
CLUSTER_SCRIPTS=$BATS_TEST_DIRNAME/../cluster

cluster_up() {
	local mode=$1 nodes=${2:-2}
	[ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null || return 0
	# a name no one can guess: root's cluster must not start in a
	# directory another user planted under a predictable name
	CLUSTER_BASE=$(mktemp -d "/tmp/hpt-bats-$(basename "$BATS_TEST_FILENAME" .bats).XXXXXX")
	export CLUSTER_BASE
	if BASE=$CLUSTER_BASE MODE=$mode NODES=$nodes "$CLUSTER_SCRIPTS/up.sh" \
		>"$BATS_FILE_TMPDIR/cluster-up.log" 2>&1; then
		export SLURM_CONF=$CLUSTER_BASE/etc/slurm.conf CLUSTER_MODE=$mode
	else
		echo "# cluster MODE=$mode did not start:" >&3
		sed 's/^/#   /' "$BATS_FILE_TMPDIR/cluster-up.log" >&3
		cluster_down
	fi
}

cluster_down() {
	[ -n "${CLUSTER_BASE:-}" ] || return 0
	BASE=$CLUSTER_BASE "$CLUSTER_SCRIPTS/down.sh" >/dev/null 2>&1 || true
	rmdir "$CLUSTER_BASE" 2>/dev/null || true # up.sh never got to make it a cluster
}

setup_file() {
	cluster_up single
}

teardown_file() {
	cluster_down
}

need_slurm() {
	[ -n "${SLURM_CONF:-}" ] || skip "no local Slurm cluster (needs root and slurm-wlm)"
	cd "$BATS_TEST_TMPDIR"
}

# submit_json ARGS...: hpctrain submit --json; sets JOB and DIR.
submit_json() {
	run --separate-stderr "$HPT" submit --json "$@"
	[ "$status" -eq 0 ] || { echo "submit failed ($status): $stderr"; return 1; }
	JOB=$(jq -r .job_id <<<"$output")
	DIR=$(jq -r .dir <<<"$output")
}

# A spec running PROGRAM (a YAML flow list) on NODES x RANKS, printing to
# the rank logs; the job needs only hpctrain launch, not the trainer.
# code: false: the programs are shell lines run in the run directory,
# and the tests write into the submit directory between submits (a
# snapshot of it would make each submit another run); code.bats tests
# the snapshot, with specs of its own.  The nodes of this cluster share
# the machine's cores, so the preflight's GEMM comparison across them is
# noise: preflight.straggler 0 makes a slow node a warning (unless EXTRA
# says otherwise).
write_spec() { # FILE NAME NODES RANKS COMMAND [EXTRA YAML]
	local preflight='preflight: {straggler: 0}'
	[[ "${6:-}" != *preflight:* ]] || preflight=
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: $3, ranks_per_node: $4, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: $5
code: false
preempt: {lead_s: 0}
$preflight
${6:-}
SPEC
}

# A training spec that Slurm requeues when preempted: the CNN on
# synthetic data, one thread a rank, a step logged per line, SIGUSR2
# with no lead time, at most 2 requeues; output.dir OUT when given.
preempt_spec() { # FILE NAME RANKS MAX_STEPS [OUT]
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: 1, ranks_per_node: $3, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"}
train:
  model: cnn
  dataset: synthetic
  epochs: 1
  max_steps: $4
  batch_per_rank: 32
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
preempt: {lead_s: 0, requeue: true, max_requeues: 2}
output: {${5:+dir: $5, }log_every_steps: 1}
SPEC
}

# netns_cluster NODES [TOOL...]: the body of setup_file for a file whose
# tests need NODES nodes in network namespaces (cluster_up netns).
# SKIP_WHY says why there is none, "" when it is up: not root, no
# slurm-wlm, one of the TOOLs missing, no namespaces here, or up.sh
# failed.  up.sh's variables (SLURMD_TIMEOUT, ...) pass through.
netns_cluster() {
	local nodes=$1 why= t
	shift
	if [ "$(id -u)" -ne 0 ]; then
		why="not root: network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN"
	elif ! command -v slurmctld >/dev/null; then
		why="no slurm-wlm"
	fi
	for t in "$@"; do
		if [ -z "$why" ] && [ -z "$(command -v "$t")" ]; then
			why="no $t"
		fi
	done
	if [ -n "$why" ]; then
		:
	elif ip netns add "hpt-probe-$$" 2>/dev/null; then
		ip netns del "hpt-probe-$$"
		cluster_up netns "$nodes"
		[ -n "${SLURM_CONF:-}" ] || why="the netns cluster did not start (see the lines above)"
	else
		why="cannot make a network namespace (ip netns add failed)"
	fi
	export SKIP_WHY=$why
}

# need_cluster: skips a test of a netns_cluster file without its cluster.
need_cluster() {
	[ -z "$SKIP_WHY" ] || skip "$SKIP_WHY"
	cd "$BATS_TEST_TMPDIR"
}

# in_node_net N CMD...: CMD in node N's network namespace (a netns
# cluster's, or the node namespaces doctor.bats makes in its slot).
in_node_net() {
	local n=$1
	shift
	ip -n "hpt$(cat "$CLUSTER_BASE/run/slot")n$n" "$@"
}

# in_node_mnt NODE CMD...: CMD in NODE's mount namespace (that of its
# slurmd), where its node-local directories are.
in_node_mnt() {
	local pid
	pid=$(cat "$CLUSTER_BASE/run/slurmd-$1.pid")
	shift
	nsenter -t "$pid" -m "$@"
}
