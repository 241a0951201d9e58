#!/usr/bin/env bats
# container_cluster.bats - jobs of 2 nodes x 2 ranks submitted with
# `hpctrain submit` in a container, on the network-namespace cluster
# (tests/cluster/up.sh MODE=netns, brought up once for the file): in a
# Charliecloud directory image, and in a SquashFS image that squashfuse
# mounts on each node.  For each: every rank's CPUs and NUMA memory inside
# equal the plan, its rank variables and cwd are right; scancel leaves no
# process and no mount behind on either node.  In the SquashFS image,
# whose mount must also outlive a requeue: USR2 leads to a checkpoint,
# exit 75, a requeue and a resume; a stall autopsy names the rank and the
# file:line inside the image.  (The directory image runs the same launch
# path without the mount; test_container checks both command lines.)
# Every wait is bounded.

load common
load slurm_cluster

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
unset SLURM_JOB_ID SLURM_STEP_ID SLURM_PROCID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK CUDA_VISIBLE_DEVICES

setup_file() {
	local cache=$ROOT/build/test-image
	netns_cluster 2 ch-run squashfuse mksquashfs fusermount
	[ -z "$SKIP_WHY" ] || return 0
	forget_joins
	test_image "$cache/img"
	# Under /tmp: ch-run binds the host's /tmp, so the run directories
	# (named by the image's digest, so unknown when it is made) need no
	# mount point in the image; every node sees the same /tmp.
	WORK=$(mktemp -d /tmp/hpt-container-cluster.XXXXXX)
	# a ledger of the file's own, and no preflight (see spec): doctor's
	# munge check reads one credential on both nodes, which share munged
	export WORK XDG_CACHE_HOME=$WORK/cache HPCTRAIN_LEDGER=$WORK/ledger/nodes.json
	cp -a "$cache/img" "$WORK/img"
	echo inside >"$WORK/img/marker"
	# What a rank got, next to what launch planned for it.
	cat >"$WORK/img/probe.py" <<-'EOF'
	import json, os, time
	st = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
	s = json.loads(os.environ["HPCTRAIN_SLICE"])
	e = os.environ
	print("rank=%s world=%s local=%s node=%s lws=%s cpus=%s plan_cpus=%s mems=%s plan_mems=%s cwd=%s host=%s marker=%s" % (
	    e["RANK"], e["WORLD_SIZE"], e["LOCAL_RANK"], e["NODE_RANK"], e["LOCAL_WORLD_SIZE"],
	    st["Cpus_allowed_list"].strip(), s["cpus"], st["Mems_allowed_list"].strip(), s["numa"],
	    os.getcwd(), os.uname().nodename, open("/marker").read().strip()), flush=True)
	# a node's ranks join the first one's namespaces (ch-run --join),
	# which fails if that one is gone already: stay a moment
	time.sleep(2)
	EOF
	# Counts steps, checkpoints on USR2 and exits 75; resumes from it.
	cat >"$WORK/img/ckpt.py" <<-'EOF'
	import os, signal, sys, time
	r = os.environ["RANK"]
	ckpt = "ckpt-%s.txt" % r
	step = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
	if step:
	    print("rank %s resumed from step %d" % (r, step), flush=True)
	stop = False
	def on_usr2(signum, frame):
	    global stop
	    stop = True
	signal.signal(signal.SIGUSR2, on_usr2)
	while step < 30:
	    if stop:
	        open(ckpt + ".tmp", "w").write(str(step))
	        os.replace(ckpt + ".tmp", ckpt)
	        print("rank %s checkpointed at step %d" % (r, step), flush=True)
	        sys.exit(75)
	    step += 1
	    print("rank %s step %d" % (r, step), flush=True)
	    time.sleep(0.1 if os.path.exists(ckpt) else 0.5)
	print("rank %s done" % r, flush=True)
	EOF
	# Rank 2 (on node2) stalls; the others work a moment, then wait for
	# it, as in a collective it never joins.  (A job whose other ranks
	# keep printing is not stalled: hpctrain-job(5).)
	cat >"$WORK/img/stall.py" <<-'EOF'
	import os, time
	def wait_forever():
	    time.sleep(3600)
	if os.environ["RANK"] == "2":
	    wait_forever()
	for _ in range(5):
	    print("alive", flush=True)
	    time.sleep(0.2)
	time.sleep(3600)
	EOF
	cat >"$WORK/img/hold.py" <<-'EOF'
	import os, time
	open("ready-%s" % os.environ["RANK"], "w").close()
	time.sleep(600)
	EOF
	mksquashfs "$WORK/img" "$WORK/img.sqfs" -noappend -quiet -noI -noD -noF -noX >/dev/null
}

# ch-run --join's state, in /dev/shm, which the namespace nodes share;
# a join that failed leaves it for the next cluster's job of that id.
forget_joins() {
	rm -f /dev/shm/ch-run_shm-*.node[12] /dev/shm/sem.ch-run_sem-*.node[12]
}

teardown_file() {
	cluster_down
	forget_joins
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

# spec FILE NAME IMAGE COMMAND [EXTRA YAML]: 2 nodes x 2 ranks in IMAGE
# under charliecloud, each rank on its own core with local memory.  The
# programs are the image's own and write into their working directory,
# the run directory: no code snapshot (code: false).
spec() {
	local extra=${5:-}
	[ -n "$extra" ] || extra='preempt: {lead_s: 0}'
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: 2, ranks_per_node: 2, time: "00:05:00"}
binding: {gpu: none, cpu: exclusive, memory: local, nic: none}
env: {OMP_NUM_THREADS: "1"}
command: $4
output: {dir: $WORK/runs}
container: {image: $3, runtime: charliecloud}
preflight: false
code: false
$extra
SPEC
}

field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

image_of() {
	case $1 in dir) echo "$WORK/img" ;; sqfs) echo "$WORK/img.sqfs" ;; esac
}

check_plan() { # KIND
	local line r
	spec job.yaml "plan-$1" "$(image_of "$1")" '[python3, /probe.py]'
	submit_json job.yaml
	run timeout 120 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "COMPLETED" and .jobs[0].nodes == "node[1-2]"' <<<"$output" ||
		{ echo "$output"; tail -n +1 "$DIR"/logs/*; false; }
	for r in 0 1 2 3; do
		line=$(grep "^rank=$r " "$DIR/logs/rank-$r.out") || { cat "$DIR"/logs/*; false; }
		echo "$line"
		[ "$(field world "$line")" = 4 ]
		[ "$(field lws "$line")" = 2 ]
		[ "$(field local "$line")" = $((r % 2)) ]
		[ "$(field node "$line")" = $((r / 2)) ]
		[ "$(field host "$line")" = "node$((r / 2 + 1))" ]
		[ -n "$(field plan_cpus "$line")" ]
		[ "$(field cpus "$line")" = "$(field plan_cpus "$line")" ]
		[ "$(field mems "$line")" = "$(field plan_mems "$line")" ]
		[ "$(field cwd "$line")" = "$DIR" ]
		[ "$(field marker "$line")" = inside ]
	done
	# the two ranks of a node got different CPUs
	[ "$(grep -h '^rank=[01] ' "$DIR"/logs/rank-[01].out | sed 's/.* cpus=\([^ ]*\) .*/\1/' | sort -u | wc -l)" -eq 2 ]
}

check_preempt() { # KIND
	local r
	spec job.yaml "pre-$1" "$(image_of "$1")" '[python3, /ckpt.py]' \
		'preempt: {lead_s: 0, requeue: true, max_requeues: 2}'
	submit_json job.yaml
	for r in 0 1 2 3; do wait_for "$DIR/logs/rank-$r.out" "rank $r step 2"; done
	scancel --signal=USR2 "$JOB"
	run timeout 120 "$HPT" status --wait --json "$JOB"
	[ "$status" -eq 0 ] && jq -e '.jobs[0].state == "COMPLETED" and .jobs[0].restarts == 1' <<<"$output" ||
		{ echo "status $status: $output"; tail -n +1 "$DIR"/logs/*; false; }
	grep -q 'hpctrain: preempted; requeueing job' "$DIR"/logs/batch-*.out
	for r in 0 1 2 3; do
		grep -q "rank $r checkpointed at step" "$DIR/logs/rank-$r.out"
		grep -q "rank $r resumed from step" "$DIR/logs/rank-$r.out"
		grep -q "rank $r done" "$DIR/logs/rank-$r.out"
	done
}

check_stall() { # KIND
	spec job.yaml "stall-$1" "$(image_of "$1")" '[python3, /stall.py]' \
		$'preempt: {lead_s: 0}\nsupervise: {stall_timeout_s: 3}'
	submit_json job.yaml
	run timeout 120 "$HPT" status --wait --json "$JOB"
	[ "$status" -ne 124 ] || {
		echo "job $JOB did not end in 120 s"; tail -n 30 "$DIR"/logs/*
		tail -n +1 "$DIR"/ranks/*.json; false
	}
	jq -e '.jobs[0].state == "FAILED"' <<<"$output" || { cat "$DIR"/logs/*; false; }
	run -0 cat "$DIR/autopsy.txt"
	echo "$output"
	[[ "$output" == *"rank 2 in clock_nanosleep from stall.py:3 (time.sleep(3600))"* ]]
	[[ "$output" == *"ranks 0,1,3 in clock_nanosleep from stall.py:9 (time.sleep(3600))"* ]]
	[[ "$output" == *"outlier: rank 2"* ]]
	# the supervisor's abort leaves no core file behind
	[ ! -e "$DIR/core" ] && [ -z "$(ls "$DIR" | grep '^core')" ]
}

# nothing_left: no process of the job on the host or either node (they
# share its PIDs), and no squashfuse mount in either node's mount table.
nothing_left() {
	local n pid
	[ -z "$(pgrep -f '/hold\.py')" ] || { ps -ef | grep '[h]old\.py'; return 1; }
	[ -z "$(pgrep -f "$DIR")" ] || { pgrep -af "$DIR"; return 1; }
	[ -z "$(pgrep -f "squashfuse $WORK/img.sqfs")" ] || return 1
	[ -z "$(pgrep -f "ch-run .*$WORK/img")" ] || return 1
	for n in node1 node2; do
		pid=$(cat "$CLUSTER_BASE/run/slurmd-$n.pid")
		if grep hpctrain-squash- "/proc/$pid/mounts"; then return 1; fi
	done
}

check_scancel() { # KIND
	local r
	spec job.yaml "cancel-$1" "$(image_of "$1")" '[python3, /hold.py]'
	submit_json job.yaml
	for r in 0 1 2 3; do
		for _ in $(seq 600); do [ -e "$DIR/ready-$r" ] && break; sleep 0.1; done
		[ -e "$DIR/ready-$r" ] || { cat "$DIR"/logs/*; false; }
	done
	pgrep -f '/hold\.py' >/dev/null
	scancel "$JOB"
	run timeout 60 "$HPT" status --wait --json "$JOB"
	[ "$status" -ne 124 ]
	# slurmd may reap the step a moment after the job is recorded ended
	for _ in $(seq 100); do nothing_left 2>/dev/null && break; sleep 0.1; done
	nothing_left
}

@test "dir image, 2 nodes x 2 ranks: each rank's CPUs and memory inside are the plan; rank variables and cwd are right" {
	need_cluster
	check_plan dir
}

@test "SquashFS image (squashfuse per node), 2 nodes x 2 ranks: each rank's CPUs and memory inside are the plan; rank variables and cwd are right" {
	need_cluster
	check_plan sqfs
}

@test "SquashFS image: scancel --signal=USR2 checkpoints every rank, exits 75, the script requeues and the run resumes" {
	need_cluster
	check_preempt sqfs
}

@test "SquashFS image: a stall autopsy names the stalled rank on node2 and its file:line inside the image" {
	need_cluster
	check_stall sqfs
}

@test "dir image: scancel leaves no program, launch or ch-run behind on either node" {
	need_cluster
	check_scancel dir
}

@test "SquashFS image: scancel leaves no program, ch-run, squashfuse or mount behind on either node" {
	need_cluster
	check_scancel sqfs
}
