#!/usr/bin/env bats
# plan.bats - hpctrain plan against a real Slurm of 3 nodes
# (tests/cluster MODE=multi), with a blocker job holding 2 of them for its
# 10-minute limit: a short job is planned on the 1 node free now, a long
# one on all 3 after the blocker; each predicted start is the one
# sbatch --test-only gives for the same shape.  The past runs plan fits
# to are recorded as submit and the trainer record them (resolved.yaml,
# metrics.jsonl) with known step times, so the choice does not depend on
# this machine's speed.  Then the plain failures: no past run (4), an
# unreachable controller (5), no shape Slurm would run (6), a deadline
# nothing meets (1), bad flags (2).

load common
load slurm_cluster

setup_file() {
	cluster_up multi 3
	[ -n "${SLURM_CONF:-}" ] || return 0
	# holds node1 and node2 until its time limit, as far as the
	# scheduler knows: it plans every later job around that end
	BLOCKER=$(sbatch --parsable --exclusive -N2 --time=10 -o /dev/null --wrap 'sleep 900')
	export BLOCKER
	for _ in $(seq 50); do
		[ "$(squeue -h -j "$BLOCKER" -o %T)" = RUNNING ] && break
		sleep 0.2
	done
}

teardown_file() {
	[ -z "${BLOCKER:-}" ] || scancel "$BLOCKER" 2>/dev/null || true
	cluster_down
}

# spec STEPS: the bundled trainer, 1 node of 1 rank, STEPS steps of 64.
spec() {
	cat >job.yaml <<SPEC
version: 1
name: plantest
resources: {nodes: 1, ranks_per_node: 1, time: "02:00:00"}
train: {max_steps: $1, batch_per_rank: 64}
output: {dir: runs}
SPEC
}

# past NODES STEP_MS COMM_MS: a past run of job.yaml on NODES nodes, as
# submit records it (its resolved form under runs/NAME/HASH12) and as the
# trainer logs it: 20 steps of STEP_MS, COMM_MS of them communication.
past() {
	local res hash dir i
	res=$("$HPT" submit --dry-run --json --set resources.nodes="$1" job.yaml)
	hash=$(jq -r .sha256 <<<"$res")
	dir=runs/$(sed -n 's/^name: //p' job.yaml)/${hash:0:12}
	mkdir -p "$dir/logs"
	jq -r .resolved <<<"$res" >"$dir/resolved.yaml"
	for i in $(seq 20); do
		printf '{"event":"step","step":%d,"epoch":0,"loss":1.0,"accuracy":0.5,"lr":0.1,"samples_per_s":600,"step_ms":%s,"compute_ms":%s,"comm_ms":%s}\n' \
			"$i" "$2" "$(awk -v s="$2" -v c="$3" 'BEGIN { print s - c }')" "$3"
	done >"$dir/metrics.jsonl"
	printf '{"event":"summary","steps":20,"ranks":%d}\n' "$1" >>"$dir/metrics.jsonl"
}

# test_only NODES: the start sbatch --test-only gives NODES nodes of 1
# task for 2 hours, in seconds since the epoch.
test_only() {
	local line
	line=$(sbatch --test-only -N"$1" --ntasks-per-node=1 --time=120 --wrap true 2>&1)
	date -d "$(sed -n 's/.* to start at \([0-9T:-]*\) .*/\1/p' <<<"$line")" +%s
}

@test "a short job goes on the node free now; a long one on 3 nodes after the blocker, each start as sbatch --test-only says" {
	need_slurm
	local t1 t3
	spec 600
	past 1 100 0
	past 2 110 10
	run --separate-stderr "$HPT" plan --max-nodes 3 --json job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output" | jq .
	[ "$(jq .pick <<<"$output")" = 0 ]
	[ "$(jq '.model.runs' <<<"$output")" = 2 ]
	[ "$(jq -r '.model.shapes' <<<"$output")" = "1x1 (1 run), 2x1 (1 run)" ]
	jq -e '.model.net_known and (.model.node_known | not) and (.model.compute_s - 0.1 | fabs) < 0.001 and (.model.net_s - 0.01 | fabs) < 0.001' <<<"$output"
	# 600 steps of 1 rank: 60 s; 200 steps of 3 ranks: 200 x 113.3 ms
	jq -e '.candidates[0].steps == 600 and (.candidates[0].run_s - 60 | fabs) < 0.5' <<<"$output"
	jq -e '.candidates[2].steps == 200 and (.candidates[2].run_s - 22.67 | fabs) < 0.5' <<<"$output"
	t1=$(test_only 1)
	t3=$(test_only 3)
	jq -e --argjson t "$t1" '(.candidates[0].start - $t | fabs) <= 5' <<<"$output"
	jq -e --argjson t "$t3" '(.candidates[2].start - $t | fabs) <= 5' <<<"$output"
	# the blocker holds 2 of 3 nodes for its 10 minutes
	jq -e --argjson t "$t1" '.candidates[2].start - $t >= 500' <<<"$output"
	# the same, long: 3 nodes after the blocker finish first
	spec 36000
	run --separate-stderr "$HPT" plan --max-nodes 3 job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output"
	[ "${lines[-1]}" = "pick: 3x1, the earliest finish" ]
	[[ "${lines[0]}" == "plan for plantest: 36000 steps of 1 rank (train.max_steps), 64 samples per rank a step" ]]
	[[ "$output" == *"3x1           3  "*"<- pick"* ]]
}

@test "with a deadline plan takes the fewest node-hours that meet it, or says none can" {
	need_slurm
	spec 36000
	past 1 100 0
	past 2 110 10
	# 1 node: done 60 minutes from now; after the blocker's 10, 2 nodes
	# take 33 minutes (1.10 node-hours), 3 nodes 22.7 (1.13)
	run --separate-stderr "$HPT" plan --max-nodes 3 --deadline +70m --json job.yaml
	[ "$status" -eq 0 ]
	[ "$(jq .pick <<<"$output")" = 0 ]
	run --separate-stderr "$HPT" plan --max-nodes 3 --deadline +45m --json job.yaml
	[ "$status" -eq 0 ]
	[ "$(jq .pick <<<"$output")" = 1 ]
	run --separate-stderr "$HPT" plan --max-nodes 3 --deadline +38m --json job.yaml
	[ "$status" -eq 0 ]
	[ "$(jq .pick <<<"$output")" = 2 ]
	run --separate-stderr "$HPT" plan --max-nodes 3 --deadline +20m job.yaml
	[ "$status" -eq 1 ]
	[[ "$stderr" == "hpctrain plan: no shape finishes by the deadline; the earliest finish is 3x1 at "* ]]
}

@test "plan says plainly when it has no past run, and fails 5 without a controller and 6 when no shape fits" {
	need_slurm
	spec 600
	run -4 --separate-stderr "$HPT" plan job.yaml
	[ "$stderr" = "hpctrain plan: no past run of plantest under runs/plantest logged its steps; run it once at any shape (a few hundred steps will do), then plan" ]
	past 1 100 0
	sed -e 's/^SlurmctldPort=.*/SlurmctldPort=1/' "$SLURM_CONF" >down.conf
	echo MessageTimeout=2 >>down.conf
	SLURM_CONF=$PWD/down.conf run -5 --separate-stderr "$HPT" plan job.yaml
	[[ "$stderr" == *"Unable to contact slurm controller"* ]]
	run -6 --separate-stderr "$HPT" plan --shapes 4x1,5x1 job.yaml
	[[ "$output" == *"4x1           4  cannot run: the partition "*" has 3 nodes"* ]]
	[ "${stderr_lines[-1]}" = "hpctrain plan: no shape fits: Slurm would run none of them" ]
}

@test "submit --shape auto submits the shape plan picks, holding the work, with the prediction in submit.json" {
	need_slurm
	local job dir
	spec 36000
	past 1 100 0
	past 2 110 10
	run --separate-stderr "$HPT" submit --shape auto --json job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	job=$(jq -r .job_id <<<"$output")
	dir=$(jq -r .dir <<<"$output")
	scancel "$job"
	echo "$stderr"
	[[ "$stderr" == *"--shape auto: 3x1, predicted to run 1360 s (+-11%) from Slurm's start estimate"* ]]
	[[ "$stderr" == *"--shape auto: train.max_steps 12000, the spec's 36000 steps of 1 rank at 3"* ]]
	jq -e '.plan.nodes == 3 and .plan.ranks_per_node == 1 and .plan.steps == 12000 and .plan.model.runs == 2 and .plan.start > 0 and .plan.finish > .plan.start' "$dir/submit.json"
	grep -q "^#SBATCH --nodes=3$" "$dir/job.sbatch"
	grep -q "max_steps: 12000" "$dir/resolved.yaml"
	run -2 --separate-stderr "$HPT" submit --shape 2x2 job.yaml
	[[ "$stderr" == *"--shape: expected auto, got '2x2'"* ]]
}

@test "a planned run's status and plan --history put the prediction against what happened" {
	need_slurm
	local dir
	# a user's program this time: the same command makes the same program
	cat >job.yaml <<SPEC
version: 1
name: planuser
resources: {nodes: 1, ranks_per_node: 1, time: "00:10:00"}
command: [sh, -c, "echo '{\\"event\\":\\"step\\",\\"step\\":20,\\"step_ms\\":100}' >metrics.jsonl; sleep 1"]
code: false # it writes metrics.jsonl where it runs: the run directory
output: {dir: runs}
preflight: false
SPEC
	run -4 --separate-stderr "$HPT" plan --history job.yaml
	[ "$stderr" = "hpctrain plan: no run of planuser under runs/planuser was planned (submit --shape auto)" ]
	# the past run at another shape than the one picked (1 node, free
	# now), whose run directory it would be
	past 2 100 0
	run --separate-stderr "$HPT" submit --shape auto --json job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	dir=$(jq -r .dir <<<"$output")
	run timeout 120 "$HPT" status --wait "$dir"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$HPT" status "$dir"
	echo "$output"
	[[ "$output" == *"plan: 1x1, start predicted "*", was "*" s); run predicted 0:00:02 +-5%, took "*"%)"* ]]
	run "$HPT" status --json "$dir"
	jq -e '.plan.nodes == 1 and .plan.start_err_s != null and .plan.run_err != null' <<<"$output"
	# report says the same of the run
	run --separate-stderr "$HPT" report "$dir"
	[[ "$output" == *"  plan: 1x1, start predicted "*", took "* ]]
	run --separate-stderr "$HPT" report --json "$dir"
	jq -e '.plan.nodes == 1 and .plan.run_err != null' <<<"$output"
	run --separate-stderr "$HPT" plan --history job.yaml
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "${lines[0]}" == "runs/planuser/${dir##*/} (job "*"): plan: 1x1, start predicted "* ]]
	[[ "${lines[1]}" == "1 planned run: 1 started, the start off by "*" s on average; 1 ended, the run off by "*"% on average ("*"% mean)" ]]
	run --separate-stderr "$HPT" plan --history --json job.yaml
	jq -e '.started == 1 and .ended == 1 and .forgotten == 0 and (.runs | length) == 1' <<<"$output"
}

@test "plan --calibrate runs the trainer at each shape as one sweep, waits for it, and plans from it" {
	need_slurm
	cat >job.yaml <<SPEC
version: 1
name: cal
resources: {nodes: 1, ranks_per_node: 1, time: "00:10:00"}
train: {model: mlp, dataset: synthetic, max_steps: 5000, batch_per_rank: 32}
output: {dir: runs}
SPEC
	# the node the blocker leaves free: 1 and 2 ranks on it
	run --separate-stderr timeout 300 "$HPT" plan --calibrate 20 --shapes 1x1,1x2 --json job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[[ "$stderr" == *"submitted sweep-"*": 2 points in "* ]]
	[[ "$stderr" == *"2 COMPLETED"* ]]
	jq -e '.model.runs == 2 and .model.shapes == "1x1 (1 run), 1x2 (1 run)" and .model.node_known' <<<"$output"
	jq -e '[.candidates[] | .runnable] == [true, true] and .pick != null' <<<"$output"
	# each point ran 20 steps of the trainer
	[ "$(cat runs/cal/*/metrics.jsonl | jq -s '[.[] | select(.event == "summary") | .steps] | unique')" = "[
  20
]" ]
	# a user's program is not the trainer: nothing to calibrate with
	sed -i 's/^train: .*/command: [sleep, "1"]/' job.yaml
	run -3 --separate-stderr "$HPT" plan --calibrate 20 job.yaml
	[ "$stderr" = "hpctrain plan: --calibrate runs the bundled trainer; cal runs a program of its own: submit it at the shapes yourself, then plan" ]
}

# user_spec: a user's program on 2 nodes of 2 ranks that holds a global
# batch of 64, as templates/torch-ddp.py does (gradient accumulation):
# each rank's share of a step shrinks as ranks grow.
user_spec() {
	cat >job.yaml <<SPEC
version: 1
name: planddp
resources: {nodes: 2, ranks_per_node: 2, time: "02:00:00"}
command: [/bin/sh, -c, "exit 0"]
output: {dir: runs}
SPEC
}

# user_run NODES RANKS_PER_NODE: a past run's directory as submit
# records it at that shape (its resolved.yaml), printed.
user_run() {
	local res hash dir
	res=$("$HPT" submit --dry-run --json --set resources.nodes="$1" \
		--set resources.ranks_per_node="$2" job.yaml)
	hash=$(jq -r .sha256 <<<"$res")
	dir=runs/planddp/${hash:0:12}
	mkdir -p "$dir/logs"
	jq -r .resolved <<<"$res" >"$dir/resolved.yaml"
	echo "$dir"
}

# user_steps WORLD STEP_MS ATTEMPT FIRST LAST: the program's step
# records (hpctrain-program(7), METRICS), one rank's samples_per_s; the
# last step numbers a long run's end, so the work is 20000 steps.
user_steps() {
	local i
	for i in $(seq "$4" "$5"); do
		printf '{"event":"step","step":%d,"total_steps":20000,"loss":1.0,"lr":0.1,"step_ms":%s,"samples_per_s":%s,"attempt":%d,"world_size":%d,"global_batch":64}\n' \
			"$i" "$2" "$(awk -v w="$1" -v s="$2" 'BEGIN { print 64 / w / (s / 1000) }')" "$3" "$1"
	done
}

@test "plan models a user's program that holds its global batch: 2x2 is faster than 1x1, and picked" {
	need_slurm
	user_spec
	# 400 ms of compute for the 64 samples on 1 rank; a quarter of it
	# on each of 4, plus 10 ms of allreduce
	user_steps 1 400 1 19981 20000 >"$(user_run 1 1)/metrics.jsonl"
	user_steps 4 110 1 19981 20000 >"$(user_run 2 2)/metrics.jsonl"
	run --separate-stderr "$HPT" plan --shapes 1x1,2x2 --json job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output" | jq .
	jq -e '.model.global_batch == 64 and .batch.global' <<<"$output"
	[ "$(jq -r .batch.says <<<"$output")" = "holds a global batch of 64 (global_batch in metrics.jsonl, the same at world sizes 1 and 4)" ]
	# 20000 steps either way: 8000 s on 1 rank, 2200 s on 4
	jq -e '.candidates[0].steps == 20000 and .candidates[1].steps == 20000' <<<"$output"
	jq -e '(.candidates[0].run_s - 8000 | fabs) < 1 and (.candidates[1].run_s - 2200 | fabs) < 1' <<<"$output"
	jq -e '.candidates[1].rel_err < 0.06' <<<"$output"
	[ "$(jq .pick <<<"$output")" = 1 ]
	run --separate-stderr "$HPT" plan --shapes 1x1,2x2 job.yaml
	[ "$status" -eq 0 ]
	echo "$output"
	[ "${lines[1]}" = "program: holds a global batch of 64 (global_batch in metrics.jsonl, the same at world sizes 1 and 4)" ]
	[[ "${lines[2]}" == "model: a step takes 400.00 ms of compute / (N x R) + 5.00 ms x 2(R-1)/R within a node of R ranks + 5.00 ms x 2(N-1)/N between N nodes (half each: measured together), +-5% (fitted to 2 runs: 1x1 (1 run), 2x2 (1 run))" ]]
	[ "${lines[-1]}" = "pick: 2x2, the earliest finish" ]
}

@test "plan files an attempt that ran on fewer nodes under the shape it ran at, and a requeue's steps at theirs" {
	need_slurm
	local run
	user_spec
	user_steps 1 400 1 19981 20000 >"$(user_run 1 1)/metrics.jsonl"
	# a 2x2 run: 10 steps at 4 ranks, then a requeue on 1 node of the
	# 2 (world size 2) from step 9; attempt 2 on 1 node as well
	run=$(user_run 2 2)
	{ user_steps 4 110 1 1 10; user_steps 2 205 1 9 20; } >"$run/metrics.jsonl"
	mkdir -p "$run/attempts/2"
	cp "$run/resolved.yaml" "$run/attempts/2/"
	echo '{"nodes": 1, "world_size": 2, "restart": 0, "prev_world_size": 4}' >"$run/attempts/2/nodes.json"
	user_steps 2 205 2 21 40 >"$run/attempts/2/metrics.jsonl"
	run --separate-stderr "$HPT" plan --shapes 1x1,1x2,2x2 --json job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output" | jq .model
	[ "$(jq -r .model.shapes <<<"$output")" = "1x1 (1 run), 1x2 (2 runs), 2x2 (1 run)" ]
	# three shapes tell compute and both allreduces apart
	jq -e '.model.node_known and .model.net_known and (.model.compute_s - 0.4 | fabs) < 1e-6' <<<"$output"
	jq -e '(.model.node_s - 0.005 | fabs) < 1e-6 and (.model.net_s - 0.005 | fabs) < 1e-6' <<<"$output"
}

@test "plan skips a past run whose metrics.jsonl is a FIFO or a link to /dev/zero, saying so, instead of hanging" {
	need_slurm
	local fifo zero
	user_spec
	user_steps 1 400 1 19981 20000 >"$(user_run 1 1)/metrics.jsonl"
	fifo=$(user_run 2 2)/metrics.jsonl
	mkfifo "$fifo"
	zero=$(user_run 1 2)/metrics.jsonl
	ln -s /dev/zero "$zero"
	run --separate-stderr timeout 20 "$HPT" plan --shapes 1x1 job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[[ "$stderr" == *"hpctrain plan: skipped a past run: cannot read $fifo: it is a FIFO, not a regular file"* ]]
	[[ "$stderr" == *"hpctrain plan: skipped a past run: cannot read $zero: it is a character device, not a regular file"* ]]
	[[ "$output" == *"(fitted to 1 run: 1x1 (1 run))"* ]]
}

@test "plan neither fits, prints nor picks a past run that logged a step of 1e308 or 1e-300 ms" {
	need_slurm
	local huge tiny
	user_spec
	user_steps 1 400 1 19981 20000 >"$(user_run 1 1)/metrics.jsonl"
	huge=$(user_run 2 2)
	user_steps 4 1e308 1 19981 20000 >"$huge/metrics.jsonl"
	tiny=$(user_run 1 2)
	user_steps 2 1e-300 1 19981 20000 >"$tiny/metrics.jsonl"
	run --separate-stderr timeout 20 "$HPT" plan --shapes 1x1,1x2,2x2 job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output"
	[[ "$output" == *"(fitted to 1 run: 1x1 (1 run))"* ]]
	[[ "$output" != *inf* && "$output" != *nan* && "$output" != *:-* ]]
	# every run time a clock's, every node-hours figure short
	[ "$(grep -cE '^[0-9]+x[0-9]+ +[0-9]+  [^ ]+ +[0-9]+:[0-9]{2}:[0-9]{2} \+-[0-9]+% +[^ ]+ +[0-9]+\.[0-9]{2}( |$)' <<<"$output")" = 3 ]
	run --separate-stderr "$HPT" plan --shapes 1x1,1x2,2x2 --json job.yaml
	[ "$status" -eq 0 ]
	jq -e '.model.runs == 1 and ([.candidates[] | .run_s] | all(. < 1e7))' <<<"$output" ||
		{ echo "$output" | jq .; false; }
}

@test "plan skips, saying so, a past run directory another user owns or others may write" {
	need_slurm
	[ "$(id -u)" -eq 0 ] || skip "needs root, to give a run to nobody"
	local theirs open
	user_spec
	user_steps 1 400 1 19981 20000 >"$(user_run 1 1)/metrics.jsonl"
	# planted: a fast 2x2 that would move the fit
	theirs=$(user_run 2 2)
	user_steps 4 50 1 19981 20000 >"$theirs/metrics.jsonl"
	chown -R nobody "$theirs"
	open=$(user_run 1 2)
	user_steps 2 60 1 19981 20000 >"$open/metrics.jsonl"
	chmod 777 "$open"
	run --separate-stderr timeout 20 "$HPT" plan --shapes 1x1 job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[[ "$stderr" == *"hpctrain plan: skipped a past run: refusing $theirs: it belongs to uid $(id -u nobody), not to uid 0"* ]]
	[[ "$stderr" == *"hpctrain plan: skipped a past run: refusing $open: group or others may write it (mode 0777)"* ]]
	[[ "$output" == *"(fitted to 1 run: 1x1 (1 run))"* ]]
}

@test "plan --history takes a forgotten job's end from the run's end.json, marked as from the record" {
	need_slurm
	local dir
	user_spec
	# a planned run whose job the controller no longer knows, and one
	# with no record of its end
	dir=$(user_run 2 2)
	echo '{"job_id": 999991, "plan": {"nodes": 2, "ranks_per_node": 2, "start": 1, "run_s": 60, "rel_err": 0.05}}' >"$dir/submit.json"
	echo '{"exit_status": 0, "requeued": false, "job_id": 999991, "restart": 0}' >"$dir/end.json"
	mkdir -p "$dir/attempts/2"
	echo '{"job_id": 999992, "plan": {"nodes": 1, "ranks_per_node": 2, "start": 1, "run_s": 60, "rel_err": 0.05}}' >"$dir/attempts/2/submit.json"
	run --separate-stderr "$HPT" plan --history job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output"
	[[ "$output" == *"$dir (job 999991): plan: 2x2, start predicted "*"; ended COMPLETED (exit 0), from the record: Slurm forgot the job"* ]]
	[[ "$output" == *"$dir/attempts/2 (job 999992): plan: 1x2, start predicted "*"; forgotten by Slurm, with no record of its end"* ]]
	[[ "${lines[-1]}" == "2 planned runs: 0 started"*"; 2 forgotten by Slurm" ]]
	run --separate-stderr "$HPT" plan --history --json job.yaml
	jq -e '.forgotten == 2 and ([.runs[] | select(.job_id == 999991) | .result] == [{"state": "COMPLETED", "exit_code": 0, "from_record": true}]) and ([.runs[] | select(.job_id == 999992) | .result] == [null])' <<<"$output"
}

@test "plan refuses bad flags with status 2, naming them" {
	cd "$BATS_TEST_TMPDIR"
	spec 600
	run -2 --separate-stderr "$HPT" plan --shapes 2y4 job.yaml
	[[ "$stderr" == *"--shapes: expected NODESxRANKS (e.g. 2x4), got '2y4'"* ]]
	run -2 --separate-stderr "$HPT" plan --deadline tomorrow job.yaml
	[[ "$stderr" == *"--deadline: expected +90m, +2h, +1d or YYYY-MM-DDTHH:MM[:SS], got 'tomorrow'"* ]]
	# a date mktime would move (to March 2) is refused, not normalised
	run -2 --separate-stderr "$HPT" plan --deadline 2026-02-30T10:00 job.yaml
	[[ "$stderr" == *"--deadline: '2026-02-30T10:00' is no such local date and time"* ]]
	run -2 --separate-stderr "$HPT" plan --shapes 1x1 --max-nodes 2 job.yaml
	[[ "$stderr" == *"--shapes and --max-nodes exclude each other"* ]]
	run -2 --separate-stderr "$HPT" plan
	[[ "$stderr" == *"no job spec given"* ]]
}
