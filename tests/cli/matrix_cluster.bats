#!/usr/bin/env bats
# matrix_cluster.bats - a user's own program (not the template: a short
# DDP program on `import hpctrain`) submitted as users do, with the
# preflight and staging on, at every shape of nodes x ranks per node in
# {1x1, 1x2, 2x1, 2x2, 3x2}, plainly and in a Charliecloud image, on the
# network-namespace cluster (3 nodes, brought up once for the file).
# Each job: COMPLETED; the preflight ran one task on each of its nodes
# and passed them all; the stage step one task on each node; every rank
# trained, with the rank, local rank and node Slurm's block layout gives
# it, read the node's staged copy, and imported the module its attempt
# was submitted with (RUN/python), inside the image too.  The plain 3x2
# job trains with torch (gloo DDP across the 3 nodes); the others, and
# the image, which has no torch, run the same program's pure-Python path
# (a torch start is 2 s of CPU a rank, and the suite's time is short).
# All ten jobs are submitted at once and share the nodes (8 CPUs each),
# so the file costs little more than one job's time.  The nodes share this machine's cores with each other and
# with the other suites, so the preflight's GEMM comparison is noise
# here: preflight.straggler 0 makes a slow node a warning.  Every wait is
# bounded.

load common
load slurm_cluster

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
unset SLURM_JOB_ID SLURM_STEP_ID SLURM_PROCID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK CUDA_VISIBLE_DEVICES

setup_file() {
	netns_cluster 3 python3
	[ -z "$SKIP_WHY" ] || return 0
	# Under /tmp, which every node shares and ch-run binds; the data
	# cache under $BASE/local, which each node has of its own.
	WORK=$(mktemp -d /tmp/hpt-matrix-cluster.XXXXXX)
	export WORK XDG_CACHE_HOME=$WORK/xdg HPCTRAIN_LEDGER=$WORK/ledger/nodes.json
	export CACHE=$CLUSTER_BASE/local/cache
	mkdir -p "$WORK/ds"
	for i in 1 2 3 4 5 6 7 8; do head -c 65536 /dev/urandom >"$WORK/ds/part$i"; done
	echo staged >"$WORK/ds/marker"
	# the scan trusts cached hashes only of files older than 2 s
	touch -d '-1 min' "$WORK"/ds/*
	if command -v ch-run >/dev/null; then
		test_image "$ROOT/build/test-image/img"
		cp -a "$ROOT/build/test-image/img" "$WORK/img"
	fi
	cat >"$WORK/user.py" <<-'PY'
	# A user's DDP program on import hpctrain: 10 steps of a global batch
	# of 64 at any world size, then what the rank got, in one line.
	import os, socket
	import hpctrain
	e = hpctrain.env()
	marker = open(os.path.join(e.data["DS"], "marker")).read().strip()
	batches, metrics = hpctrain.GlobalBatches(4096, 64, seed=5), hpctrain.Metrics()
	torch = None
	if os.environ.get("MATRIX_TORCH"):
	    import torch
	    import torch.distributed as dist
	if torch:
	    torch.set_num_threads(1)
	    dist.init_process_group("gloo")
	    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
	    opt = torch.optim.SGD(model.parameters(), lr=0.05)
	    x = torch.randn(4096, 8, generator=torch.Generator().manual_seed(0))
	    y = x.sum(1, keepdim=True)
	    for step in range(10):
	        opt.zero_grad()
	        pieces = [torch.tensor(p) for p in batches.micro_batches(step, e.rank, e.world_size, 16)]
	        loss = torch.tensor([hpctrain.accumulate(model, pieces, lambda i: torch.nn.functional.mse_loss(
	            model(x[i]), y[i], reduction="sum"), 64, e.world_size)])
	        opt.step()
	        dist.all_reduce(loss)
	        metrics.step(step + 1, loss.item(), 1.0, 64, 10)
	else:
	    w = 0.0
	    for step in range(10):
	        w += sum(i % 7 for i in batches.shard(step, e.rank, e.world_size)) * 1e-6
	        metrics.step(step + 1, w, 1.0, 64, 10)
	hpctrain.save({"step": 10, "world_size": e.world_size})
	print("rank=%d world=%d local=%d lws=%d host=%s data=%s with=%s module=%s steps=10" % (
	    e.rank, e.world_size, e.local_rank, e.local_world_size, socket.gethostname(), marker,
	    "torch" if torch else "python", os.path.dirname(os.path.dirname(hpctrain.__file__))), flush=True)
	if torch:
	    dist.destroy_process_group()
	PY
}

teardown_file() {
	cluster_down
	rm -f /dev/shm/ch-run_shm-*.node[123] /dev/shm/sem.ch-run_sem-*.node[123]
	[ -n "${WORK:-}" ] && [ -z "${HPT_KEEP:-}" ] && rm -rf "$WORK"
	return 0
}

# spec FILE KIND NODES RANKS: the user's program at that shape, KIND
# plain (the host's python3, with torch) or ch (in the image).
spec() {
	local python=/usr/bin/python3 ctr= torch=
	[ "$2-$3x$4" != plain-3x2 ] || torch=', MATRIX_TORCH: "1"'
	if [ "$2" = ch ]; then
		python=python3
		ctr="container: {image: $WORK/img, runtime: charliecloud}"
	fi
	cat >"$1" <<SPEC
version: 1
name: m-$2-$3x$4
resources: {nodes: $3, ranks_per_node: $4, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"$torch}
command: [$python, $WORK/user.py]
output: {dir: $WORK/runs}
preempt: {lead_s: 0}
preflight: {enabled: true, straggler: 0}
data:
  stage: [{name: ds, src: $WORK/ds}]
  cache: {dir: $CACHE}
$ctr
SPEC
}

logs() { tail -n +1 "$1"/logs/* "$1"/preflight.json 2>/dev/null | head -150; }

# check KIND NODES RANKS DIR JOB: the job's steps and ranks as the header says.
check() {
	local kind=$1 n=$2 l=$3 dir=$4 job=$5 r line host world=$(($2 * $3))
	run timeout 240 "$HPT" status --wait --json "$job"
	[ "$status" -ne 124 ] || { echo "$kind ${n}x$l: job $job did not end in 240 s"; logs "$dir"; return 1; }
	[ "$(jq -r '.jobs[0].state' <<<"$output")" = COMPLETED ] ||
		{ echo "$kind ${n}x$l: $output"; logs "$dir"; return 1; }
	# the preflight: one task on each node, every node passed
	jq -e --argjson n "$n" '.ok and (.nodes | length == $n) and
		(.nodes | map(.node) | unique | length == $n)' "$dir/preflight.json" >/dev/null ||
		{ echo "$kind ${n}x$l: preflight"; jq -c . "$dir/preflight.json"; return 1; }
	# the stage step: one record a node
	[ "$(ls "$dir/stage" | grep -c '\.json$')" -eq "$n" ] || { ls "$dir/stage"; return 1; }
	if grep -q "can't honor" "$dir"/logs/batch-*.out; then cat "$dir"/logs/batch-*.out; return 1; fi
	for ((r = 0; r < world; r++)); do
		line=$(grep "^rank=$r " "$dir/logs/rank-$r.out") || { echo "$kind ${n}x$l: rank $r"; logs "$dir"; return 1; }
		[[ "$line" == *" world=$world local=$((r % l)) lws=$l "* ]] || { echo "$line"; return 1; }
		[[ "$line" == *" data=staged with=$([ "$kind-${n}x$l" = plain-3x2 ] && echo torch || echo python) module=$dir/python steps=10" ]] ||
			{ echo "$kind ${n}x$l: $line"; return 1; }
		host=$(sed 's/.* host=\([^ ]*\) .*/\1/' <<<"$line")
		echo "$((r / l)) $host"
	done | sort -u >"$BATS_TEST_TMPDIR/hosts.$kind.$n.$l"
	# block layout: each node holds RANKS consecutive ranks, and N nodes
	[ "$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/hosts.$kind.$n.$l" | uniq | wc -l)" -eq "$n" ]
	[ "$(cut -d' ' -f2 "$BATS_TEST_TMPDIR/hosts.$kind.$n.$l" | sort -u | wc -l)" -eq "$n" ]
	jq -se 'map(select(.event == "step")) | length == 10' "$dir/metrics.jsonl" >/dev/null
}

SHAPES="1x1 1x2 2x1 2x2 3x2"

# submit_row KIND: the five shapes of KIND submitted, each "SHAPE DIR
# JOB" on a line of $BATS_FILE_TMPDIR/row.KIND.
submit_row() {
	local kind=$1 shape
	for shape in $SHAPES; do
		spec "job-$kind-$shape.yaml" "$kind" "${shape%x*}" "${shape#*x}"
		submit_json "job-$kind-$shape.yaml"
		echo "$shape $DIR $JOB" >>"$BATS_FILE_TMPDIR/row.$kind"
	done
}

# check_row KIND: each job of the row as check says; the ledger without
# a failure.
check_row() {
	local shape dir job
	[ -s "$BATS_FILE_TMPDIR/row.$1" ] || submit_row "$1"
	while read -r shape dir job; do
		check "$1" "${shape%x*}" "${shape#*x}" "$dir" "$job" || return 1
	done <"$BATS_FILE_TMPDIR/row.$1"
	# no node failed a check: the ledger holds only passes
	[ ! -s "$HPCTRAIN_LEDGER" ] ||
		jq -e '[.clusters[][] | select((.failures // 0) > 0)] | length == 0' "$HPCTRAIN_LEDGER" >/dev/null ||
		{ cat "$HPCTRAIN_LEDGER"; return 1; }
}

@test "a user's program at 1x1, 1x2, 2x1, 2x2 and 3x2 with the preflight and staging: every step and rank as asked, every job completes" {
	need_cluster
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || skip "no torch for /usr/bin/python3"
	# both rows at once: ten jobs share the nodes, and the second
	# test finds its row running or done
	submit_row plain
	if command -v ch-run >/dev/null; then submit_row ch; fi
	check_row plain
}

@test "the same in a Charliecloud image: the module the attempt carries is imported inside" {
	need_cluster
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
	check_row ch
}
