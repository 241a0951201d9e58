#!/usr/bin/env bats
# range_cluster.bats - resources.nodes as a range MIN-MAX, spares and
# the recovery from a lost node on a real three-node Slurm cluster
# (tests/cluster/up.sh MODE=netns, brought up once for the file): a 1-2
# job gets two nodes and records the size it was granted (nodes.json,
# status); its ranks see HPCTRAIN_ATTEMPT 1, HPCTRAIN_PREV_WORLD_SIZE 0
# and the run's checkpoint directory; the same run submitted again
# without node2 and node3 (as a lost node's resubmission is) comes back
# on node1 alone, and its ranks see attempt 2 and the world size before
# it.  Both attempts' logs and records stay.  A node that stops
# answering (its network cut: Slurm sets it DOWN and ends the step, not
# the job) or that the controller takes DOWN is left out of a new
# training step inside the same job, which goes on from the checkpoint
# on node1 alone (1-2, no spare) or on node1 and the spare node3 (2 and
# a spare); a fixed 2-node job without a spare cannot go on inside its
# allocation and is resubmitted without the node.  A node that fails
# its preflight (the spec's NCCL_SOCKET_IFNAME names an interface it
# lacks) is left out the same way before anything trains: a spare takes
# its place, or a range goes on with fewer nodes.  A rank killed by
# hand, or by the OOM killer (a memory cgroup's limit), is the
# program's failure and costs no node, and nothing starts again (the
# job ends with the killed rank's status) unless supervise.max_restarts
# asks for restarts; a rank that crashes before its first step is
# started again once.  The
# torch-ddp template loses a node too, with the batches and losses of
# an uninterrupted run.  Every wait is bounded.

load common
load slurm_cluster

unset SLURM_JOB_ID SLURM_STEP_ID SLURM_PROCID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK CUDA_VISIBLE_DEVICES

setup_file() {
	# node2 silent for 12 s is DOWN: the stopped-answering test waits that long
	SLURMD_TIMEOUT=12 netns_cluster 3
	[ -z "$SKIP_WHY" ] || return 0
	WORK=$(mktemp -d /tmp/hpt-range-cluster.XXXXXX)
	export WORK XDG_CACHE_HOME=$WORK/xdg HPCTRAIN_LEDGER=$WORK/ledger/nodes.json
	cat >"$WORK/probe.sh" <<-'PROBE'
	echo "host=$(hostname) attempt=$HPCTRAIN_ATTEMPT prev=$HPCTRAIN_PREV_WORLD_SIZE world=$WORLD_SIZE ckpt=$HPCTRAIN_CHECKPOINT_DIR"
	PROBE
	cat >"$WORK/job.yaml" <<-SPEC
	version: 1
	name: range
	resources: {nodes: 1-2, ranks_per_node: 1, time: "00:05:00"}
	binding: {gpu: none, cpu: none, memory: none, nic: none}
	command: [sh, $WORK/probe.sh]
	output: {dir: $WORK/runs}
	preempt: {lead_s: 0}
	preflight: false
	SPEC
	# attempt 1 runs until node2's rank is killed; later attempts end at once
	cat >"$WORK/work.sh" <<-'WORK'
	echo "host=$(hostname) attempt=$HPCTRAIN_ATTEMPT prev=$HPCTRAIN_PREV_WORLD_SIZE world=$WORLD_SIZE"
	[ "$HPCTRAIN_ATTEMPT" = 1 ] || exit 0
	i=0
	while [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	WORK
	sed -e 's/^name: range$/name: lost/' -e "s|probe.sh|work.sh|" "$WORK/job.yaml" >"$WORK/lost.yaml"
	# the bundled trainer, a checkpoint every step: slow enough steps to
	# kill a rank mid-run, few enough to keep the file short
	cat >"$WORK/train.yaml" <<-SPEC
	version: 1
	name: train
	resources: {nodes: 1-2, ranks_per_node: 1, time: "00:05:00"}
	binding: {gpu: none, cpu: none, memory: none, nic: none}
	env: {OMP_NUM_THREADS: "1"}
	train:
	  model: cnn
	  dataset: synthetic
	  epochs: 1
	  max_steps: 40
	  batch_per_rank: 32
	  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
	  checkpoint: {every_steps: 1, keep: 2}
	output: {dir: $WORK/runs, log_every_steps: 1}
	preempt: {lead_s: 0}
	preflight: false
	SPEC
}

teardown_file() {
	cluster_down
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

# second_attempt RUN: waits (30 s at most) for the attempt doctor
# --lost submitted, RUN/attempts/2; fails with the logs without one.
second_attempt() {
	for _ in $(seq 1 60); do
		[ -f "$1/attempts/2/submit.json" ] && return 0
		sleep 0.5
	done
	echo "no second attempt"
	cat "$1"/logs/*
	return 1
}

# finish JOB: waits for the job (bounded); sets output.
finish() {
	run timeout 120 "$HPT" status --wait --json "$1"
	[ "$status" -ne 124 ] || { echo "job $1 did not end in 120 s"; return 1; }
}

@test "a 1-2 job gets two nodes, records them, and a rerun without node2 and node3 shrinks to node1" {
	need_cluster
	submit_json "$WORK/job.yaml"
	# both nodes idle: the range asks for both
	grep -qx '#SBATCH --nodes=2' "$DIR/job.sbatch"
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] || { echo "$output"; cat "$DIR"/logs/*; false; }
	[ "$(jq -c . "$DIR/nodes.json")" = '{"nodes":2,"prev_world_size":0,"restart":0,"world_size":2}' ] ||
		{ ls -la "$DIR"; cat "$DIR"/nodes.json "$DIR"/logs/*; false; }
	run -0 "$HPT" status --json "$DIR"
	[ "$(jq -c .size <<<"$output")" = '{"nodes":2,"world_size":2}' ]
	run -0 "$HPT" status "$DIR"
	[[ "$output" == *"size: 2 nodes granted, world size 2"* ]]
	grep -q "host=node1 attempt=1 prev=0 world=2 ckpt=$DIR/checkpoints" "$DIR"/logs/*
	grep -q "host=node2 attempt=1 prev=0 world=2 ckpt=$DIR/checkpoints" "$DIR"/logs/*

	# node2 and node3 left out, as a lost node's resubmission leaves them out
	run -0 --separate-stderr "$HPT" rerun --json --resume --exclude 'node[2-3]' "$DIR"
	local job2 dir2
	job2=$(jq -r .job_id <<<"$output")
	dir2=$(jq -r .dir <<<"$output")
	[ "$dir2" = "$DIR/attempts/2" ]
	grep -qx '#SBATCH --nodes=1-2' "$dir2/job.sbatch"
	finish "$job2"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] || { echo "$output"; cat "$dir2"/logs/*; false; }
	[ "$(jq -c . "$dir2/nodes.json")" = '{"nodes":1,"prev_world_size":0,"restart":0,"world_size":1}' ]
	grep -q "host=node1 attempt=2 prev=2 world=1 ckpt=$DIR/checkpoints" "$dir2"/logs/*
	run ! grep -q node2 "$dir2"/logs/*
	# the first attempt's records are kept
	[ "$(jq -c . "$DIR/nodes.json")" = '{"nodes":2,"prev_world_size":0,"restart":0,"world_size":2}' ]
	grep -q "attempt=1" "$DIR"/logs/*
}

# rank_pid RUN RANK: the running program's PID, once its record says so
# (30 s at most); fails with the logs.
rank_pid() {
	local i pid
	for i in $(seq 1 60); do
		pid=$(jq -r 'select(.state == "running") | .pid' "$1/ranks/rank-$2.json" 2>/dev/null) &&
			[ -n "$pid" ] && { echo "$pid"; return 0; }
		sleep 0.5
	done
	echo "rank $2 never ran" >&2
	cat "$1"/logs/* >&2
	return 1
}

# take_down NODE: the controller holds it DOWN, as a health check or an
# administrator would set it; teardown returns it.
take_down() {
	scontrol update nodename="$1" state=down reason="hpctrain test: taken away"
}

# back to idle (10 s at most) for the next test's range to get it
teardown() {
	[ -n "${CLUSTER_BASE:-}" ] || return 0
	[ "$(sinfo -h -n node2 -o %t)" = idle ] && return 0
	scontrol update nodename=node2 state=resume 2>/dev/null || true
	for _ in $(seq 100); do
		[ "$(sinfo -h -n node2 -o %t)" = idle ] && return 0
		sleep 0.1
	done
}

@test "a rank SIGKILLed by hand is the program's failure: the job fails, no node is recorded, nothing starts again" {
	need_cluster
	local pid
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	sed 's/^name: lost$/name: killed/' "$WORK/lost.yaml" >killed.yaml
	submit_json killed.yaml
	pid=$(rank_pid "$DIR" 1)
	[ "$(jq -r .node "$DIR/ranks/rank-1.json")" = node2 ]
	kill -KILL "$pid"
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = FAILED ]
	# the job ends with the program's status (its supervisor's 128 + 9)
	[ "$(jq -r .exit_status "$DIR/end.json")" = 137 ] || { cat "$DIR/end.json"; false; }
	grep -q "the program's failure, not a node's: rank 1 on node2 killed by signal 9, not by the OOM killer" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/*; false; }
	[ ! -e "$DIR/lost.json" ] && [ ! -e "$DIR/attempts/2" ]
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" != *node2* ]]
}

@test "a rank the OOM killer ends (its memory cgroup's limit) is the program's failure: no node is recorded, nothing is resubmitted" {
	need_cluster
	memcg
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	# rank 1 (on node2) and its supervisor join a 64 MiB memory cgroup,
	# as Slurm's task/cgroup would put a step, and outgrow it
	cat >oom.sh <<-'OOM'
	if [ "$RANK" = 1 ]; then
		echo $PPID >"$1/cgroup.procs" && echo $$ >"$1/cgroup.procs" &&
			exec /usr/bin/python3 -c "
	x = []
	while True: x.append(bytearray(1 << 20))"
	fi
	sleep 60
	OOM
	sed -e 's/^name: lost$/name: oom/' -e "s|command: .*|command: [sh, $PWD/oom.sh, $MEMCG]|" \
		"$WORK/lost.yaml" >oom.yaml
	submit_json oom.yaml
	finish "$JOB"
	rmdir "$MEMCG" 2>/dev/null || true
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = FAILED ]
	grep -q "the program's failure, not a node's: rank 1 on node2 killed by the OOM killer (signal 9)" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/*; false; }
	jq -e '.oom_kills >= 1' "$DIR/ranks/rank-1.json"
	[ ! -e "$DIR/lost.json" ] && [ ! -e "$DIR/attempts/2" ]
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" != *node2* ]]
}

@test "a 2-node job without a spare whose node2 the controller takes DOWN cannot go on in its allocation: it is resubmitted without node2" {
	need_cluster
	local dir2 job2
	sed -e 's/^name: lost$/name: fixed/' -e 's/nodes: 1-2,/nodes: 2,/' "$WORK/lost.yaml" >fixed.yaml
	submit_json fixed.yaml
	rank_pid "$DIR" 1 >/dev/null
	[ "$(jq -r .node "$DIR/ranks/rank-1.json")" = node2 ]
	# node2's rank has said where it ran before node2 goes (a running
	# rank may not have printed yet)
	for _ in $(seq 300); do grep -qs "host=node2 attempt=1" "$DIR"/logs/* && break; sleep 0.1; done
	grep -qs "host=node2 attempt=1" "$DIR"/logs/*
	take_down node2
	finish "$JOB"
	second_attempt "$DIR"
	grep -q "lost node: node2 is down (Slurm: DOWN: hpctrain test: taken away)" "$DIR"/logs/batch-*.out ||
		{ cat "$DIR"/logs/batch-*.out; false; }
	grep -q "this allocation cannot go on: 1 node left, resources.nodes needs at least 2" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/batch-*.out; false; }
	[ "$(jq -c .nodes "$DIR/lost.json")" = '["node2"]' ]
	dir2=$DIR/attempts/2
	job2=$(jq -r .job_id "$dir2/submit.json")
	[ "$job2" != "$JOB" ]
	grep -qx '#SBATCH --exclude=node2' "$dir2/job.sbatch"
	finish "$job2"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] || { echo "$output"; cat "$dir2"/logs/*; false; }
	[ "$(jq -c . "$dir2/nodes.json")" = '{"nodes":2,"prev_world_size":0,"restart":0,"world_size":2}' ]
	grep -q "host=node1 attempt=2 prev=2 world=2" "$dir2"/logs/*
	grep -q "host=node3 attempt=2 prev=2 world=2" "$dir2"/logs/*
	# the ledger holds node2; both attempts' logs are there
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" == *node2* ]]
	grep -q "host=node2 attempt=1" "$DIR"/logs/*
}

# node_ns NODE: the network namespace the cluster runs NODE in
node_ns() {
	sed -n "${1#node}p" "$CLUSTER_BASE/run/netns"
}

# in_place_attempt RUN [SECONDS]: waits (90 s at most) for the attempt
# the batch script started inside its job, RUN/attempts/2; fails with
# the logs without one.
in_place_attempt() {
	for _ in $(seq 1 "$((${2:-90} * 2))"); do
		[ -f "$1/attempts/2/submit.json" ] && return 0
		sleep 0.5
	done
	echo "no second attempt"
	cat "$1"/logs/*
	return 1
}

@test "a 1-2 job whose node2 stops answering goes on inside its job on node1 alone, from the checkpoint" {
	need_cluster
	local ns dir2
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	# a run of its own: the test before resubmitted train.yaml's; 200
	# steps, and node2's rank stopped before the cut, so that the run
	# cannot end before the cut however fast its steps are
	sed -e 's/^name: train$/name: cut/' -e 's/max_steps: 40$/max_steps: 200/' \
		"$WORK/train.yaml" >cut.yaml
	submit_json cut.yaml
	grep -qx '#SBATCH --no-kill' "$DIR/job.sbatch"
	wait_steps "$DIR" 5 || { cat "$DIR"/logs/*; false; }
	[ "$(jq -r .node "$DIR/ranks/rank-1.json")" = node2 ]
	ns=$(node_ns node2)
	[ -n "$ns" ]
	kill -STOP "$(rank_pid "$DIR" 1)"
	# node2 stops answering: no rank dies, its slurmd and its rank go
	# silent; Slurm sets it DOWN after SlurmdTimeout and ends the step
	ip -n "$ns" link set eth0 down
	run in_place_attempt "$DIR"
	local started=$status
	ip -n "$ns" link set eth0 up
	scontrol update nodename=node2 state=resume 2>/dev/null || true
	# node2's rank was cut off, never killed: end it.  Its processes
	# only: "--run $DIR" ends there, where attempt 2's go on with
	# /attempts/2.
	pkill -KILL -f -- "--run $DIR( |\$)" || true
	[ "$started" -eq 0 ] || { echo "$output"; false; }
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$output"; cat "$DIR"/logs/batch-*.out "$DIR"/attempts/2/logs/*; false; }
	# (once in a full run the batch log held srun's "Node failure" alone:
	# say what Slurm made of the job, should it come back)
	grep -q "lost node: node2 is down (Slurm: DOWN\*: Not responding)" "$DIR"/logs/batch-*.out ||
		{ cat "$DIR"/logs/batch-*.out; scontrol show job "$JOB" | head -12; false; }
	[ "$(jq -c .nodes "$DIR/lost.json")" = '["node2"]' ]
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" == *node2* ]]
	# the same job: attempt 2 made inside it, on node1 alone
	dir2=$DIR/attempts/2
	[ "$(jq -r '"\(.job_id) \(.in_allocation.why) \(.in_allocation.nodes)"' "$dir2/submit.json")" = "$JOB lost node 1" ]
	[ ! -e "$dir2/job.sbatch" ] && [ ! -e "$DIR/attempts/3" ]
	[ "$(jq -c '{nodes, world_size}' "$dir2/nodes.json")" = '{"nodes":1,"world_size":1}' ]
	grep -q "resuming a 2-rank checkpoint (global batch 64) on 1 rank: 2 accumulation steps of 32" \
		"$dir2"/logs/* || { cat "$dir2"/logs/*; false; }
	# every step trained once or more; a step trained again (after the
	# checkpoint, before the cut) saw the same samples at both sizes
	run -0 jq -s -r '[.[] | select(.step != null)] | group_by(.step) |
		(length == 200 and all(.[]; map(.batch_hash) | unique | length == 1))' \
		"$DIR/metrics.jsonl" "$dir2/metrics.jsonl"
	[ "$output" = true ]
}

@test "a 2-node job with a spare whose node2 the controller takes DOWN goes on inside its job on node1 and node3, with the batches of an uninterrupted run" {
	need_cluster
	local dir2
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	# 200 steps, and node2's rank stopped before node2 is taken down, so
	# that attempt 1 cannot end (nor leave attempt 2 no step to train,
	# and no first step to time) however fast its steps are
	sed -e 's/^name: train$/name: spare/' -e 's/nodes: 1-2,/nodes: 2, spares: 1,/' \
		-e 's/max_steps: 40$/max_steps: 200/' "$WORK/train.yaml" >spare.yaml
	submit_json spare.yaml
	grep -qx '#SBATCH --nodes=3' "$DIR/job.sbatch"
	wait_steps "$DIR" 5 || { cat "$DIR"/logs/*; false; }
	[ "$(jq -r .node "$DIR/ranks/rank-1.json")" = node2 ]
	kill -STOP "$(rank_pid "$DIR" 1)"
	take_down node2
	in_place_attempt "$DIR" 60
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$output"; cat "$DIR"/logs/batch-*.out "$DIR"/attempts/2/logs/*; false; }
	grep -q "lost node: node2 is down (Slurm: DOWN: hpctrain test: taken away)" "$DIR"/logs/batch-*.out
	grep -q "lost node: training again in job $JOB, attempt 2, on 2 nodes without node2" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/batch-*.out; false; }
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" == *node2* ]]
	# two attempts, one job; the spare trains in node2's place
	dir2=$DIR/attempts/2
	[ "$(jq -r .job_id "$dir2/submit.json")" = "$JOB" ] && [ ! -e "$DIR/attempts/3" ]
	[ "$(jq -r .node "$dir2/ranks/rank-1.json")" = node3 ]
	[ "$(jq -c '{nodes, world_size}' "$dir2/nodes.json")" = '{"nodes":2,"world_size":2}' ]
	jq -e '.in_allocation | .step_ended_at >= .failed_at and .restarted_at >= .step_ended_at and
		.last_step >= 5 and .from_attempt == 1' \
		"$dir2/submit.json"
	# the same world size: each step's batch is the same in both attempts
	run -0 jq -s -r '[.[] | select(.step != null)] | group_by(.step) |
		(length == 200 and all(.[]; map(.batch_hash) | unique | length == 1))' \
		"$DIR/metrics.jsonl" "$dir2/metrics.jsonl"
	[ "$output" = true ]
	run -0 "$HPT" status "$DIR"
	[[ "$output" == *"attempt 2, in job $JOB after a lost node: node2 is down"* ]] || { echo "$output"; false; }
	[[ "$output" == *"; the checkpoint loaded in "*" s; the first step "*" s after the new attempt was made; "*" lost"* ]] ||
		{ echo "$output"; false; }
	# the recovery's figures: the trainer's checkpoint load, rank 0's
	# first step, the steps logged after the checkpoint resumed from
	run -0 "$HPT" status --json "$DIR"
	jq -e '.in_allocation | (.checkpoint_load_s >= 0) and (.first_step_s > 0) and
		.first_step_at >= .restarted_at and .lost_steps >= 0 and
		.first_step == .last_step - .lost_steps + 1' <<<"$output" || { echo "$output"; false; }
	run -0 "$HPT" report --json --output "$BATS_TEST_TMPDIR/report" "$DIR"
	jq -e '.attempts == 2 and .attempt_ends[0].in_allocation == null and
		.attempt_ends[1].in_allocation.why == "lost node" and
		(.attempt_ends[1].in_allocation.lost_steps | type) == "number"' <<<"$output" || { echo "$output"; false; }
}

@test "a 2-node job with a spare whose node2 fails its preflight trains inside its job on node1 and node3: the ledger holds node2, nothing is resubmitted" {
	need_cluster
	local dir2 n
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	# an interface only node1 and node3 have: node2's preflight fails
	for n in 1 3; do
		in_node_net "$n" link add ibx0 type bridge && in_node_net "$n" link set ibx0 up
	done
	write_spec pf.yaml pfspare 2 1 "[sh, $WORK/probe.sh]" "output: {dir: $WORK/runs}
env: {NCCL_SOCKET_IFNAME: ibx0}"
	sed -i 's/nodes: 2,/nodes: 2, spares: 1,/' pf.yaml
	submit_json pf.yaml
	grep -qx '#SBATCH --nodes=3' "$DIR/job.sbatch"
	finish "$JOB"
	for n in 1 3; do in_node_net "$n" link del ibx0 2>/dev/null || true; done
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$output"; cat "$DIR"/logs/batch-*.out; false; }
	grep -q "failed preflight: node2: nics: NCCL_SOCKET_IFNAME=ibx0 names ibx0" "$DIR"/logs/batch-*.out ||
		{ cat "$DIR"/logs/batch-*.out; false; }
	grep -q "failed preflight: training again in job $JOB, attempt 2, on 2 nodes without node2" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/batch-*.out; false; }
	jq -e '.ok == false and .exclude == "node2"' "$DIR/preflight.json"
	# nothing trained in attempt 1; attempt 2, in the same job, on node1 and the spare
	[ ! -e "$DIR/nodes.json" ]
	dir2=$DIR/attempts/2
	[ "$(jq -r '"\(.job_id) \(.in_allocation.why) \(.in_allocation.nodes) \(.exclude)"' "$dir2/submit.json")" = \
		"$JOB failed preflight 2 node2" ]
	[ ! -e "$dir2/job.sbatch" ] && [ ! -e "$DIR/attempts/3" ]
	[ "$(cat "$dir2"/logs/rank-*.out | sed 's/ ckpt=.*//' | sort)" = \
		"$(printf 'host=node1 attempt=2 prev=0 world=2\nhost=node3 attempt=2 prev=0 world=2')" ] ||
		{ cat "$dir2"/logs/*; false; }
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" == *node2* ]]
	run -0 "$HPT" status "$DIR"
	[[ "$output" == *"attempt 2, in job $JOB after a failed preflight: node2: nics:"* ]] || { echo "$output"; false; }
}

@test "a 1-2 job whose node2 fails its preflight trains inside its job on node1 alone" {
	need_cluster
	local dir2
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	in_node_net 1 link add ibx0 type bridge && in_node_net 1 link set ibx0 up
	write_spec pf.yaml pfrange 1-2 1 "[sh, $WORK/probe.sh]" "output: {dir: $WORK/runs}
env: {NCCL_SOCKET_IFNAME: ibx0}
preflight: {enabled: true, straggler: 0}"
	submit_json pf.yaml
	finish "$JOB"
	in_node_net 1 link del ibx0 2>/dev/null || true
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$output"; cat "$DIR"/logs/batch-*.out; false; }
	# granted node1 and node2 (both idle): node2 left out, no spare, MIN 1
	jq -e '.exclude == "node2"' "$DIR/preflight.json"
	grep -q "failed preflight: training again in job $JOB, attempt 2, on 1 node without node2" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/batch-*.out; false; }
	dir2=$DIR/attempts/2
	[ "$(jq -r '"\(.job_id) \(.in_allocation.why) \(.in_allocation.nodes)"' "$dir2/submit.json")" = \
		"$JOB failed preflight 1" ]
	[ "$(cat "$dir2"/logs/rank-*.out | sed 's/ ckpt=.*//')" = "host=node1 attempt=2 prev=0 world=1" ] ||
		{ cat "$dir2"/logs/*; false; }
	[ ! -e "$DIR/attempts/3" ]
}

@test "a rank SIGKILLed with supervise.max_restarts 1 is started again once in its job, then the job ends with the program's status" {
	need_cluster
	local pid dir2
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	sed -e 's/^name: lost$/name: again/' -e 's/^preflight: false$/preflight: false\nsupervise: {max_restarts: 1}/' \
		"$WORK/lost.yaml" >again.yaml
	# every attempt runs until killed (work.sh ends later attempts at once)
	sed -i "s|work.sh|forever.sh|" again.yaml
	cat >"$WORK/forever.sh" <<-'FOREVER'
	echo "host=$(hostname) attempt=$HPCTRAIN_ATTEMPT"
	i=0
	while [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	FOREVER
	submit_json again.yaml
	pid=$(rank_pid "$DIR" 1)
	kill -KILL "$pid"
	in_place_attempt "$DIR" 60
	dir2=$DIR/attempts/2
	pid=$(rank_pid "$dir2" 1)
	kill -KILL "$pid"
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = FAILED ]
	[ "$(jq -r .exit_status "$dir2/end.json")" = 137 ] || { cat "$dir2/end.json"; false; }
	grep -q "program failure: training again in job $JOB, attempt 2, on 2 nodes" "$DIR"/logs/batch-*.out ||
		{ cat "$DIR"/logs/batch-*.out; false; }
	grep -q "the step was started again 1 time after a program's failure; not again (supervise.max_restarts is 1)" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/batch-*.out; false; }
	[ "$(jq -r '"\(.job_id) \(.in_allocation.why)"' "$dir2/submit.json")" = "$JOB program failure" ]
	jq -e '.in_allocation.detail | startswith("rank 1 on node2 killed by signal 9")' "$dir2/submit.json"
	[ ! -e "$DIR/lost.json" ] && [ ! -e "$DIR/attempts/3" ]
	run -0 "$HPT" doctor --ledger --json
	[[ "$output" != *node2* ]]
}

@test "a rank that exits 3 with supervise.max_restarts 1 is started again in its job, and the job completes" {
	need_cluster
	cat >fail.sh <<-'FAIL'
	echo "attempt $HPCTRAIN_ATTEMPT rank $RANK"
	[ "$HPCTRAIN_ATTEMPT" = 1 ] && [ "$RANK" = 1 ] && exit 3
	exit 0
	FAIL
	write_spec fail.yaml fail 2 1 "[sh, $PWD/fail.sh]" "output: {dir: $WORK/runs}
supervise: {max_restarts: 1}
preflight: false"
	submit_json fail.yaml
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$output"; cat "$DIR"/logs/*; false; }
	grep -q "the program's failure, not a node's: rank 1 on node[0-9] exited 3" "$DIR"/logs/batch-*.out ||
		{ cat "$DIR"/logs/batch-*.out; false; }
	[ "$(jq -r '"\(.job_id) \(.in_allocation.why)"' "$DIR/attempts/2/submit.json")" = "$JOB program failure" ]
	[ "$(jq -r .exit_status "$DIR/attempts/2/end.json")" = 0 ] && [ ! -e "$DIR/attempts/3" ]
}

@test "a step that crashes before its first step is started again once in its job, and the job completes" {
	need_cluster
	cat >crash.sh <<-'CRASH'
	echo "attempt $HPCTRAIN_ATTEMPT"
	[ "$HPCTRAIN_ATTEMPT" = 1 ] && kill -SEGV $$
	exit 0
	CRASH
	write_spec crash.yaml crash 1 1 "[sh, $PWD/crash.sh]" "output: {dir: $WORK/runs}
preflight: false"
	submit_json crash.yaml
	finish "$JOB"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$output"; cat "$DIR"/logs/*; false; }
	grep -q "the step crashed while starting, before its first step: rank 0 on node[0-9] killed by signal 11 (SIGSEGV)" \
		"$DIR"/logs/batch-*.out || { cat "$DIR"/logs/batch-*.out; false; }
	grep -q "start-up crash: training again in job $JOB, attempt 2, on 1 node" "$DIR"/logs/batch-*.out
	[ "$(jq -r .in_allocation.why "$DIR/attempts/2/submit.json")" = "start-up crash" ]
	grep -q "attempt 2" "$DIR"/attempts/2/logs/*
	[ ! -e "$DIR/attempts/3" ]
}

@test "the torch-ddp template loses node2 (the controller takes it DOWN) and resumes on node1 with the same batches and losses" {
	need_cluster
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || skip "no torch for /usr/bin/python3"
	local ddp=$BATS_TEST_DIRNAME/../../templates/torch-ddp.py dir2 job2
	local args="--steps, 16, --checkpoint-every, 2, --micro-batch, 32"
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/nodes.json
	submit_json torch-ddp --set resources.nodes=1-2 --set params.ranks=1 \
		--set output.dir="$WORK/runs" --set binding.cpu=none --set binding.memory=none \
		--set "command=[/usr/bin/python3, $ddp, $args, --step-sleep, 0.3]" --set preempt.lead_s=0
	wait_steps "$DIR" 5 || { cat "$DIR"/logs/*; false; }
	[ "$(jq -r .node "$DIR/ranks/rank-1.json")" = node2 ]
	take_down node2
	finish "$JOB"
	second_attempt "$DIR"
	dir2=$DIR/attempts/2
	job2=$(jq -r .job_id "$dir2/submit.json")
	finish "$job2"
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] || { echo "$output"; cat "$dir2"/logs/*; false; }
	grep -q 'torch-ddp: attempt 2, 1 ranks (was 2), step [1-9][0-9]* of 16; 2 micro-batches' \
		"$dir2"/logs/* || { cat "$dir2"/logs/*; false; }
	grep -q '^torch-ddp: done, 16 steps' "$dir2"/logs/*
	# report draws both attempts as one timeline, the new attempt and the
	# resize (2 ranks to 1) marked where attempt 2 went on
	run -0 "$HPT" report --json --output "$BATS_TEST_TMPDIR/report" "$DIR"
	jq -e '.attempts == 2 and .resizes == 1 and
		(.events | map(.kind) | index("attempt") != null and index("resize") != null) and
		(.events[] | select(.kind == "resize") | .from_world_size == 2 and .world_size == 1)' <<<"$output" ||
		{ echo "$output"; false; }
	# the same program uninterrupted on one process: the same batches
	# step by step, and the same losses up to the order of the sums
	mkdir ref && (cd ref && PYTHONPATH=$BATS_TEST_DIRNAME/../../launcher/python RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29500 + RANDOM % 1000)) \
		HPCTRAIN_CHECKPOINT_DIR=$PWD/ckpt timeout 120 /usr/bin/python3 "$ddp" --steps 16 \
		--checkpoint-every 2 --micro-batch 32 >out 2>&1) || { cat ref/out; false; }
	run -0 jq -n -r --slurpfile a "$DIR/metrics.jsonl" --slurpfile b "$dir2/metrics.jsonl" \
		--slurpfile r ref/metrics.jsonl '
		def steps(s): [s[] | select(.event == "step")] | map({key: (.step | tostring), value: .}) | from_entries;
		(steps($r)) as $ref | ($a + $b | map(select(.event == "step"))) as $run |
		($run | map(.step) | unique | length == 16) and
		all($run[]; .batch_hash == $ref[.step | tostring].batch_hash and
			((.loss - $ref[.step | tostring].loss) | fabs) <= 1e-5 * (1 + ($ref[.step | tostring].loss | fabs)))'
	[ "$output" = true ] || { cat "$DIR/metrics.jsonl" "$dir2/metrics.jsonl" ref/metrics.jsonl; false; }
}
