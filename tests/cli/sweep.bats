#!/usr/bin/env bats
# sweep.bats - `hpctrain submit --sweep` as Slurm job arrays on a real local
# Slurm (tests/cluster, two slurmds, MaxArraySize=7): one array per resource
# shape and several past MaxArraySize, a run per point, the sweep record,
# status/logs/cancel/rerun/report of a sweep (of the trainer, and of a
# program of the user's own), and a preempted array task requeued alone.

load common
load slurm_cluster

setup_file() {
	MAX_ARRAY_SIZE=7 cluster_up multi 2
}

setup() {
	export OMP_NUM_THREADS=1 HPCTRAIN_OUTPUT_DIR=runs
}

# The one sweep record under runs/NAME.
record() { ls runs/"$1"/sweep-*.json; }

# Task ids of array JOB that ran at once: the most tasks that had started
# and not yet ended at any task's start (status --json times, in seconds).
most_at_once() {
	"$HPT" status --json "$1" | jq '[.jobs[] | select(.array_task_id != null)] as $t |
		[$t[] | .start_time as $s | [$t[] | select(.start_time <= $s and .end_time > $s)]
		 | length] | max'
}

@test "a malformed --sweep is a usage error, a key swept twice is refused naming both, and a huge one is quoted short" {
	cd "$BATS_TEST_TMPDIR"
	write_spec job.yaml bad 1 1 '[true]'
	for sw in x =1,2 env.N= env.N=1,,2 env.N=1,2, "env.N=[]" "env.N=[1," "a b=1"; do
		run -"$EX_USAGE" --separate-stderr "$HPT" submit --dry-run --sweep "$sw" job.yaml
		[[ "${stderr_lines[0]}" == "--sweep $sw:"* ]]
	done
	run -"$EX_USAGE" --separate-stderr "$HPT" submit --dry-run --sweep env.N=1,2 --sweep env.N=3 job.yaml
	[ "$stderr" = "--sweep env.N=3: env.N is swept twice, also by --sweep env.N=1,2: give one --sweep per key" ]
	run -"$EX_BAD_SPEC" --separate-stderr "$HPT" submit --dry-run --sweep "env.N=$(seq -s, 1 20000)" job.yaml
	[ "$stderr" = "--sweep env.N=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,... (108907 bytes): env.N: the sweep has more than 10000 points" ]
	[ ! -e runs ]
}

@test "a 2x3 grid of the fmnist template is one array of 6 tasks, 2 at a time, and status shows each point's test accuracy" {
	need_slurm
	run -0 --separate-stderr "$HPT" submit fmnist-cpu --set params.ranks=1 \
		--set params.epochs=1 --set train.max_steps=12 --set train.batch_per_rank=32 \
		--sweep train.optimizer.lr=0.01,0.05,0.1 --sweep train.seed=1,2 --max-parallel 2
	[ "${lines[0]}" = "submitted $(basename "$(record fmnist-cpu)" .json): 6 points in 1 array job" ]
	[[ "${lines[1]}" =~ ^"  job "([0-9]+)": --array=0-5%2"$ ]]
	job=${BASH_REMATCH[1]}
	rec=$(record fmnist-cpu)
	jq -e '(.points | length) == 6 and (.arrays | length) == 1 and .arrays[0].spec == "0-5%2"
		and .points[3].params == {"train.optimizer.lr": 0.05, "train.seed": 2}
		and ([.points[].task] == [0, 1, 2, 3, 4, 5])' "$rec"
	[ "$(ls -d runs/fmnist-cpu/[0-9a-f]*/resolved.yaml | wc -l)" -eq 6 ]
	# on a pipe, --wait says each change of states on a line of its own
	run -0 "$HPT" status --wait fmnist-cpu
	[[ "$output" == *"$(basename "$rec" .json): 6 COMPLETED  steps 72/72"* ]]
	run -0 "$HPT" status fmnist-cpu
	[ "${lines[0]}" = "$(basename "$rec" .json): 6 points" ]
	[ "$(grep -c ' COMPLETED ' <<<"$output")" -eq 6 ]
	for i in 0 1 2 3 4 5; do
		read -r point id state step acc loss sps values <<<"${lines[$((i + 2))]}"
		[ "$point $id $state $step" = "$i ${job}_$i COMPLETED 12/12" ]
		awk -v a="$acc" 'BEGIN { exit !(a > 0 && a <= 1) }'
	done
	[[ "${lines[5]}" == *"lr=0.05 seed=2" ]]
	[ "$(most_at_once "$job")" -le 2 ]
	# a point by its hash, the array by its id, a task as JOB_TASK
	run1=$(jq -r '.points[4].run' "$rec")
	run -0 "$HPT" status "fmnist-cpu/${run1:0:6}"
	[[ "${lines[1]}" == "${job}_4 "*" COMPLETED "* ]]
	run -0 "$HPT" status "${job}_4"
	[[ "${lines[1]}" == "${job}_4 "*"runs/fmnist-cpu/$run1" ]]
	run -0 "$HPT" logs fmnist-cpu
	[ "$(grep -c '^== point ' <<<"$output")" -eq 6 ]
	[ "$(grep -c 'test accuracy' <<<"$output")" -eq 6 ]
	# the sweep by its name in pictures: a final metric against each axis
	run -0 "$HPT" report fmnist-cpu
	[[ "${lines[0]}" == *"$rec: 6 points" ]]
	d=${rec%.json}-report
	for c in final_accuracy_train_optimizer_lr final_loss_train_seed loss; do
		[ -s "$d/$c.png" ]
		grep -q "($c.png)" "$d/report.md"
	done
	# every point completed: nothing to rerun
	run -0 --separate-stderr "$HPT" rerun fmnist-cpu
	[[ "$stderr" == *"nothing to rerun"* ]]
}

@test "points that differ in node count are one array per shape" {
	need_slurm
	write_spec job.yaml shapes 1 1 '[hostname]'
	run -0 "$HPT" submit --sweep resources.nodes=1,2 --sweep env.TAG=a,b job.yaml
	[[ "${lines[0]}" == *": 4 points in 2 array jobs" ]]
	rec=$(record shapes)
	# the first axis outermost: nodes 1 for points 0 and 1
	jq -e '(.arrays | length) == 2 and .arrays[0].points == [0, 1] and .arrays[1].points == [2, 3]
		and ([.points[] | .task] == [0, 1, 0, 1])' "$rec"
	run -0 "$HPT" status --wait "$rec"
	[ "$(grep -c ' COMPLETED ' <<<"$output")" -eq 4 ]
	# the two-node points ran two ranks
	run -0 "$HPT" logs "$rec"
	[ "$(grep -c '^[01]: ' <<<"$output")" -eq 6 ]
	[ "$(grep -c '^1: ' <<<"$output")" -eq 2 ]
}

@test "3 concurrent submits of one sweep all succeed: each point's run gets 3 whole attempts, each array its own directory and a place in the record" {
	need_slurm
	write_spec job.yaml trio 1 1 '[sh, -c, "while [ ! -e go ]; do sleep 0.1; done"]'
	pids=()
	for i in 1 2 3; do
		"$HPT" submit --sweep env.TAG=a,b job.yaml >"out.$i" 2>"err.$i" &
		pids+=($!)
	done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	scancel --name trio || true
	[ "$fails" -eq 0 ] || { cat err.*; false; }
	for r in runs/trio/*/; do
		[ -f "$r/resolved.yaml" ] && [ "$(ls "$r/attempts" | sort -n | tr '\n' ' ')" = "2 3 " ]
	done
	[ "$(ls runs/trio/sweep-*.arrays/ | sort -n | tr '\n' ' ')" = "1 2 3 " ]
	# the record holds all three arrays: none wrote it over another's
	[ "$(jq '.arrays | length' "$(record trio)")" -eq 3 ]
	[ -z "$(find runs -name '.*.tmp-*')" ]
}

@test "a shape with more points than MaxArraySize is several arrays; a cluster without arrays refuses a sweep" {
	need_slurm
	write_spec job.yaml many 1 1 '[true]'
	run -0 --separate-stderr "$HPT" submit --dry-run --sweep env.N="$(seq -s, 1 9)" job.yaml
	[[ "$stderr" == *": at most 7 tasks to an array (the cluster's MaxArraySize)" ]]
	run -0 "$HPT" submit --sweep env.N="$(seq -s, 1 9)" --max-parallel 2 job.yaml
	[[ "${lines[0]}" == *": 9 points in 2 array jobs" ]]
	[[ "${lines[1]}" == *": --array=0-6%2" ]]
	[[ "${lines[2]}" == *": --array=0-1" ]]
	jq -e '.arrays[0].points == [0, 1, 2, 3, 4, 5, 6] and .arrays[1].points == [7, 8]
		and ([.points[] | .task] == [0, 1, 2, 3, 4, 5, 6, 0, 1])' "$(record many)"
	run -0 "$HPT" status --wait many
	[ "$(grep -c ' COMPLETED ' <<<"$output")" -eq 9 ]
	# MaxArraySize=0 turns arrays off: said, and nothing is written
	sed -i 's/^MaxArraySize=.*/MaxArraySize=0/' "$SLURM_CONF"
	scontrol reconfigure
	run --separate-stderr "$HPT" submit --sweep env.N=a,b job.yaml
	sed -i 's/^MaxArraySize=.*/MaxArraySize=7/' "$SLURM_CONF"
	scontrol reconfigure
	[ "$status" -eq 6 ]
	[[ "$stderr" == *"this cluster disables job arrays (MaxArraySize=0)"* ]]
	[ "$(ls -d runs/many/[0-9a-f]*/ | wc -l)" -eq 9 ]
}

@test "a sweep of a program of the user's own that writes metrics.jsonl is charted like the trainer's" {
	need_slurm
	write_spec job.yaml fit 1 1 "[python3, \"$BATS_TEST_DIRNAME/helpers/fit_line.py\"]"
	run -0 "$HPT" submit --sweep env.LR=0.002,0.02,0.2 job.yaml
	run -0 "$HPT" status --wait fit
	[[ "$output" == *": 3 COMPLETED  steps 144/144"* ]]
	[[ "${lines[-1]}" =~ ^"2 ".*" COMPLETED "+"48/48 "+"0.98".*" LR=0.2"$ ]]
	run -0 --separate-stderr "$HPT" report --json fit
	# the larger the step, the closer the fit within its 48 steps
	jq -e '[.points[] | .finished] == [true, true, true] and
		([.points[] | .test_loss] | . == (sort | reverse)) and .points[2].test_loss < 0.05 and
		([.charts[] | select(.file != null) | .name] | index("final_loss_env_LR") != null)' <<<"$output"
	run0=$(jq -r '.points[0].run' "$(record fit)")
	run -0 --separate-stderr "$HPT" report --json "fit/${run0:0:8}"
	jq -e '.logged_steps == 48 and .epochs == 3 and .finished and
		([.charts[] | select(.file != null) | .name] == ["loss", "accuracy", "throughput", "lr"]) and
		(.charts[] | select(.name == "comm") | .not_drawn | test("single-rank"))' <<<"$output"
}

@test "scancel --signal=USR2 of one array task requeues that task alone, and its resumed losses equal an uninterrupted run" {
	need_slurm
	preempt_spec job.yaml pre 1 500
	cat >>job.yaml <<'SPEC'
sweep:
  train.optimizer.lr: [0.05, 0.02]
SPEC
	run -0 "$HPT" submit job.yaml
	[[ "${lines[1]}" =~ ^"  job "([0-9]+)": --array=0-1"$ ]]
	job=${BASH_REMATCH[1]}
	rec=$(record pre)
	d0=runs/pre/$(jq -r '.points[0].run' "$rec") d1=runs/pre/$(jq -r '.points[1].run' "$rec")
	wait_steps "$d0" 20
	scancel --signal=USR2 "${job}_0"
	run -0 "$HPT" status --wait --json "$rec"
	jq -e '[.points[].state] == ["COMPLETED", "COMPLETED"]' <<<"$output"
	run -0 "$HPT" status --json "${job}_0"
	jq -e '.jobs[0].restarts == 1' <<<"$output"
	run -0 "$HPT" status --json "${job}_1"
	jq -e '.jobs[0].restarts == 0' <<<"$output"
	grep -q 'preempted (SIGUSR2)' "$d0"/logs/*
	run grep -q 'preempted' "$d1"/logs/*
	[ "$status" -eq 1 ]
	# the same point, uninterrupted, outside Slurm
	"$HPT" train -q --run "$BATS_TEST_TMPDIR/ref" "$d0/resolved.yaml"
	diff <(jq -r 'select(.event == "step") | "\(.step) \(.loss)"' "$BATS_TEST_TMPDIR/ref/metrics.jsonl") \
		<(jq -r 'select(.event == "step") | "\(.step) \(.loss)"' "$d0/metrics.jsonl")
}

@test "cancel of a sweep cancels every point's task, and rerun runs the unfinished points again as an array" {
	need_slurm
	write_spec job.yaml long 1 1 '[sleep, "300"]'
	run -0 "$HPT" submit --sweep env.N=1,2,3 --max-parallel 1 job.yaml
	[[ "${lines[1]}" =~ ^"  job "([0-9]+)": --array=0-2%1"$ ]]
	job=${BASH_REMATCH[1]}
	run -0 "$HPT" cancel long
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "cancelled job ${job}_0: point 0" ]
	run -1 "$HPT" status --wait long
	[ "$(grep -c ' CANCELLED ' <<<"$output")" -eq 3 ]
	run -0 --separate-stderr "$HPT" rerun long
	[ -z "$stderr" ]
	[[ "${lines[0]}" == *": 3 points in 1 array job" ]]
	[[ "${lines[1]}" =~ ^"  job "([0-9]+)": --array=0-2%1"$ ]]
	again=${BASH_REMATCH[1]}
	jq -e --argjson j "$again" '(.arrays | length) == 2 and .arrays[1].job_id == $j and
		(.points | all(.dir | test("/attempts/2$")))' "$(record long)"
	run -0 "$HPT" cancel long
	[ "${lines[0]}" = "cancelled job ${again}_0: point 0" ]
	"$HPT" status --wait long >/dev/null || true
}

@test "a bad sweep is refused at FILE:LINE:COL and submits nothing" {
	need_slurm
	cat >job.yaml <<'SPEC'
version: 1
name: bad
resources: {nodes: 1, ranks_per_node: 1, time: "00:05:00"}
command: [true]
sweep:
  resources.ranks_per_nod: [1, 2]
  resources.nodes: [1, 0]
  env.X: []
SPEC
	run -3 --separate-stderr "$HPT" submit job.yaml
	[[ "$stderr" == *"job.yaml:8:10: env.X: an empty list: a sweep axis needs at least one value"* ]]
	sed -i '/env.X/d' job.yaml
	run -3 --separate-stderr "$HPT" submit job.yaml
	[[ "$stderr" == *"job.yaml:6:3: resources: unknown key \"ranks_per_nod\"; did you mean \"ranks_per_node\"?"* ]]
	[[ "$stderr" == *"job.yaml:7:24: resources.nodes: "* ]]
	[[ "$stderr" == *"a point of the sweep is invalid; nothing was submitted" ]]
	[ ! -e runs ]
	run -2 --separate-stderr "$HPT" submit --sweep train.seed=1 --max-parallel x job.yaml
	[ "${stderr_lines[0]}" = "hpctrain submit: --max-parallel: expected an integer 0..10000, got 'x'" ]
	run -2 --separate-stderr "$HPT" submit --sweep resources.nodes=1,2 --set resources.nodes=2 job.yaml
	[[ "$stderr" == *"the sweep varies resources.nodes; set it in one place" ]]
	run -3 --separate-stderr "$HPT" submit --sweep 'name=a,b' job.yaml
	[[ "$stderr" == *"--sweep name=a,b: sweep: a sweep cannot vary name"* ]]
	squeue -h -n bad | grep . && return 1
	[ ! -e runs ]
}

@test "a name that fits a sweep and a run lists both; a name that fits nothing is 'no input'" {
	need_slurm
	write_spec job.yaml both 1 1 '[true]'
	run -0 "$HPT" submit job.yaml
	run -0 "$HPT" submit --sweep env.K=1,2 job.yaml
	run -2 --separate-stderr "$HPT" status both
	[ "${stderr_lines[0]}" = "hpctrain status: both names 3 runs and 1 sweep; say which:" ]
	[[ "${stderr_lines[1]}" == *"runs/both/sweep-"*".json  (sweep of 2 points, submitted "* ]]
	run -4 --separate-stderr "$HPT" logs nothing-here
	[[ "$stderr" == *"no run, sweep or job nothing-here"* ]]
	"$HPT" status --wait "$(record both)" >/dev/null
}
