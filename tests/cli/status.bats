#!/usr/bin/env bats
# status.bats - `hpctrain status` against a real local Slurm (tests/cluster, one node).

load common
load slurm_cluster

@test "status --json of a run parses and says COMPLETED with exit code 0" {
	need_slurm
	write_spec job.yaml ok 1 2 '[true]'
	submit_json job.yaml
	run -0 "$HPT" status --wait --json "$DIR"
	jq -e --arg dir "$DIR" --argjson job "$JOB" '.jobs | length == 1 and .[0].job_id == $job and
		.[0].state == "COMPLETED" and .[0].exit_code == 0 and .[0].signal == 0 and
		.[0].finished and .[0].run == $dir and .[0].tasks == 2 and .[0].name == "ok" and
		(.[0].end_time | test("^[0-9-]+T[0-9:]+Z$"))' <<<"$output"
}

@test "status --wait on a terminal redraws one line with step/total, samples/s and ETA" {
	need_slurm
	command -v script >/dev/null || skip "no script(1) (bsdutils)"
	cat >job.yaml <<SPEC
version: 1
name: live
resources: {nodes: 1, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"}
train: {model: mlp, dataset: synthetic, epochs: 4, max_steps: 6000, batch_per_rank: 32}
output: {log_every_steps: 100}
SPEC
	submit_json job.yaml
	run -0 script -qfec "$HPT status --wait $DIR" /dev/null
	# each frame starts at the line's beginning and clears what a longer
	# one left; the last is wiped before the table is printed
	frame=$'\r''RUNNING  step [0-9]+/6000 \([0-9]+%\)  [0-9]+ samples/s per rank  ETA [0-9]+s'$'\e''\[K'
	grep -qE "$frame" <<<"$output"
	[[ "$output" == *$'\r\e[K'JOB* ]]
	[[ "$output" == *$'\n'"$JOB "*" COMPLETED "* ]]
}

@test "status by job id prints a table row with state, exit, node, name and run" {
	need_slurm
	write_spec job.yaml row 1 1 '[true]'
	submit_json job.yaml
	run -0 "$HPT" status --wait "$JOB"
	[ "${lines[0]}" = "$(printf '%-11s %-22s %-5s %-12s %-20s %s' JOB STATE EXIT NODES NAME RUN)" ]
	read -r id state ex nodes name rundir <<<"${lines[1]}"
	[ "$id $state $ex $name $rundir" = "$JOB COMPLETED 0 row $DIR" ]
}

@test "status escapes the control characters in what Slurm hands it, such as a job's name" {
	need_slurm
	job=$(sbatch --parsable -J $'evil\e[2J\a' -t 1 --wrap true)
	run -0 "$HPT" status "$job"
	[[ "${lines[1]}" == "$job "*' evil\x1b[2J\x07 '* ]]
	[[ "$output" != *$'\e'* ]]
}

@test "status --wait exits 1 for a job that FAILED and shows the program's exit code" {
	need_slurm
	write_spec job.yaml fails 1 1 '[sh, -c, "exit 3"]'
	submit_json job.yaml
	run -1 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "FAILED" and .jobs[0].exit_code == 3' <<<"$output"
}

# A slurmd a test stopped goes on, whatever became of the test.
teardown() {
	[ -z "${STOPPED:-}" ] || kill -CONT "$STOPPED" 2>/dev/null || true
}

@test "a job cancelled on a node whose slurmd is stopped is COMPLETING, not finished, until it has ended" {
	need_slurm
	local pidf
	JOB=$(sbatch --parsable -o /dev/null --wrap 'sleep 300')
	for _ in $(seq 100); do
		[ "$(squeue -h -j "$JOB" -o %T)" = RUNNING ] && break
		sleep 0.2
	done
	for pidf in "$CLUSTER_BASE"/run/slurmd-*.pid; do
		case $pidf in *.own.pid) continue ;; esac
		STOPPED=$(cat "$pidf")
	done
	kill -STOP "$STOPPED"
	scancel "$JOB"
	for _ in $(seq 50); do
		[ "$(squeue -h -j "$JOB" -o %T)" = COMPLETING ] && break
		sleep 0.2
	done
	[ "$(squeue -h -j "$JOB" -o %T)" = COMPLETING ]
	run -0 "$HPT" status --json "$JOB"
	jq -e '.jobs[0].state == "COMPLETING" and (.jobs[0].finished | not)' <<<"$output"
	run -0 "$HPT" status "$JOB"
	[[ "${lines[1]}" == "$JOB "*" COMPLETING "*" - "* ]] || { echo "$output"; false; }
	# --wait waits on it, and prints no end
	run timeout 3 "$HPT" status --wait "$JOB"
	[ "$status" -eq 124 ]
	[[ "$output" != *CANCELLED* && "$output" != *COMPLETED* ]]
	kill -CONT "$STOPPED"
	STOPPED=
	run -1 timeout 120 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "CANCELLED" and .jobs[0].finished' <<<"$output"
}

@test "status with no argument lists the user's jobs" {
	need_slurm
	write_spec job.yaml listed 1 1 '[true]'
	submit_json job.yaml
	run -0 "$HPT" status --json
	jq -e --argjson job "$JOB" 'any(.jobs[]; .job_id == $job)' <<<"$output"
	"$HPT" status --wait "$JOB" >/dev/null
}

@test "status of a job Slurm does not know is 'no input' with Slurm's words" {
	need_slurm
	run -4 --separate-stderr "$HPT" status 999999
	[ "$stderr" = "hpctrain status: cannot load job 999999: Invalid job id specified" ]
}

@test "status and logs --follow of a run Slurm has forgotten tell its result from the run's own record" {
	need_slurm
	write_spec job.yaml forgotten 1 1 '[sh, -c, "exit 3"]'
	submit_json job.yaml
	run -1 "$HPT" status --wait "$JOB"
	jq -e --argjson job "$JOB" '.exit_status == 3 and .requeued == false and .job_id == $job' "$DIR/end.json"
	# as after MinJobAge without accounting: a job id the controller
	# does not know, in the run's records
	for f in submit.json end.json; do
		jq '.job_id = 999999' "$DIR/$f" >new && mv new "$DIR/$f"
	done
	run -0 "$HPT" status --json "$DIR"
	jq -e '.jobs[0] | .job_id == 999999 and .state == "FAILED" and .exit_code == 3 and
		.reason == "from the run'"'"'s record" and .finished' <<<"$output"
	run -1 "$HPT" status --wait "$DIR"
	[[ "$output" == *"FAILED(from the run's record)"* ]]
	# logs --follow ends there too, and says why
	run -0 --separate-stderr timeout 30 "$HPT" logs --follow "$DIR"
	[[ "$stderr" == *"job 999999: Slurm has no record of it; FAILED, exit 3 (from the run's record)"* ]]
	# without the record: what Slurm says, and why
	rm "$DIR/end.json"
	run -4 --separate-stderr "$HPT" status "$DIR"
	[[ "$stderr" == *"Slurm forgets finished jobs after MinJobAge"* ]]
}

@test "a name of several runs is its newest, said on stderr, in status, logs and autopsy" {
	need_slurm
	export HPCTRAIN_OUTPUT_DIR=$PWD/runs
	write_spec job.yaml twice 1 1 '[sh, -c, "echo first"]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	first=$DIR
	# the spec edited: another run of the same name
	write_spec job.yaml twice 1 1 '[sh, -c, "echo second"]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	[ "$DIR" != "$first" ]
	run -0 --separate-stderr "$HPT" status --json twice
	jq -e --argjson job "$JOB" '.jobs[0].job_id == $job' <<<"$output"
	[[ "$stderr" == "hpctrain status: twice names 2 runs; taking the newest, $DIR (submitted "*") (name another as twice/HASH)" ]]
	run -0 --separate-stderr "$HPT" logs twice
	[[ "$output" == *second* ]] && [[ "$output" != *first* ]]
	run -"$EX_NO_INPUT" --separate-stderr "$HPT" autopsy twice
	[[ "$stderr" == *"taking the newest, $DIR"* ]] && [[ "$stderr" == *"no stacks in"* ]]
}

@test "status of a directory that is not a run is 'no input'" {
	cd "$BATS_TEST_TMPDIR"
	run -4 --separate-stderr "$HPT" status "$BATS_TEST_TMPDIR"
	[ "$stderr" = "hpctrain status: no run at $BATS_TEST_TMPDIR (a run directory holds resolved.yaml)" ]
}

@test "status with the controller down is 'service unavailable'" {
	need_slurm
	sed -e 's/^SlurmctldPort=.*/SlurmctldPort=1/' "$SLURM_CONF" >down.conf
	echo MessageTimeout=2 >>down.conf
	SLURM_CONF=$PWD/down.conf run -5 --separate-stderr "$HPT" status 1
	[ "$stderr" = "hpctrain status: cannot load job 1: Slurm is unavailable: Unable to contact slurm controller (connect failure)" ]
}

@test "status rejects two arguments with the usage status" {
	run -2 --separate-stderr "$HPT" status 1 2
	[ "${stderr_lines[0]}" = "hpctrain status: one run, sweep or job id at a time" ]
}

@test "an empty name is a usage error, not a name that is not there, in every command" {
	for cmd in status logs cancel rerun report autopsy validate submit train "template show"; do
		# shellcheck disable=SC2086 # the words of "template show"
		run -2 --separate-stderr "$HPT" $cmd ''
		[ "${stderr_lines[0]}" = "hpctrain ${cmd% *}: an empty argument names nothing" ]
	done
	run -2 --separate-stderr "$HPT" cancel 1 ''
	[ "${stderr_lines[0]}" = "hpctrain cancel: an empty argument names nothing" ]
	for opt in "launch --run" "launch --spec" "topo --input" "report -o" "train --run"; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr "$HPT" ${opt} '' x
		[[ "${stderr_lines[0]}" == "hpctrain ${opt% *}: option '--"*"' needs a value, not an empty one" ]]
	done
}

@test "status of a run whose job staged its data says what the stage step read and hit, and how fast training read it" {
	need_slurm
	make_shards "$PWD/src"
	cat >job.yaml <<SPEC
version: 1
name: staged
resources: {nodes: 1, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"}
train: {model: mlp, dataset: "stage:ds", epochs: 1, batch_per_rank: 16}
data: {stage: [{name: ds, src: $PWD/src}], cache: {dir: $PWD/cache}}
SPEC
	submit_json job.yaml
	run -0 "$HPT" status --wait "$DIR"
	grep -Eqx 'stage: 1 node, [0-9.]+ kB read from the source, 0 B sent, 0/1 hits, slowest node [0-9.]+ s \(.+\)' <<<"$output"
	grep -Eqx "data read at [0-9.]+ [kMG]?B/s from $PWD/cache/[0-9a-f]{64} \(staged\): [0-9.]+ kB in [0-9.]+ s" <<<"$output"
	run -0 "$HPT" status --json "$DIR"
	jq -e '.stage.nodes == 1 and .stage.hits == 0 and .stage.entries == 1 and
		.stage.bytes_read > 0 and (.stage.slowest.seconds >= 0) and
		.jobs[0].progress.data_read.staged' <<<"$output"
}

@test "status of a run sums its nodes' stage records and shows the trainer's read rate" {
	need_slurm
	write_spec job.yaml summed 1 1 '[true]'
	submit_json job.yaml
	"$HPT" status --wait "$DIR" >/dev/null
	make_shards "$PWD/src"
	stage_records "$DIR" "$PWD/src" 3
	printf '{"event":"data","dataset":"stage:ds","path":"%s/c","staged":true,"bytes":8000000,"seconds":0.01}\n' \
		"$PWD" >"$DIR/metrics.jsonl"
	run -0 "$HPT" status "$DIR"
	grep -Eqx 'stage: 3 nodes, [0-9.]+ kB read from the source, [0-9.]+ kB sent, 0/3 hits, slowest node [0-9.]+ s \(n[012]\)' <<<"$output"
	[[ "$output" == *$'\n'"data read at 800.0 MB/s from $PWD/c (staged): 8.0 MB in 0.0100 s"* ]]
	run -0 "$HPT" status --json "$DIR"
	jq -e '.stage.nodes == 3 and ([.stage.per_node[].node] == ["n0", "n1", "n2"]) and
		.jobs[0].progress.data_read.staged and .jobs[0].progress.data_read.bytes_per_s == 8e8' \
		<<<"$output"
	# no records: no line, and null in JSON
	rm -r "$DIR/stage" "$DIR/metrics.jsonl"
	run -0 "$HPT" status "$DIR"
	[[ "$output" != *stage:* && "$output" != *"data read"* ]]
	run -0 "$HPT" status --json "$DIR"
	jq -e '.stage == null and .jobs[0].progress.data_read == null' <<<"$output"
}

@test "status names a slow rank from a program's logged rates, and the trainer's straggler record first" {
	need_slurm
	write_spec job.yaml slowrank 1 2 '[true]'
	submit_json job.yaml
	"$HPT" status --wait "$DIR" >/dev/null
	# 60 logged steps; rank 1 at 50 of 100 samples/s from step 6 on
	for s in $(seq 1 60); do
		r1=100
		[ "$s" -gt 5 ] && r1=50
		printf '{"event":"step","step":%d,"loss":1,"samples_per_s":100,"step_ms":5,"rank_samples_per_s":[100,%d]}\n' "$s" "$r1"
	done >"$DIR/metrics.jsonl"
	run -0 "$HPT" status "$DIR"
	[[ "$output" == *$'\n'"slow rank: rank 1 is 2.00x slower than the median over steps 6-55: its rate (20 ms a sample against 10 ms)"* ]]
	run -0 --separate-stderr "$HPT" status --json "$DIR"
	[ "$(jq -c '[.stragglers[] | [.rank, .from_step, .step, .cause]]' <<<"$output")" = '[[1,6,55,"rate"]]' ]
	printf '{"event":"straggler","step":30,"rank":0,"node":"n\\u001b1","from_step":11,"slower":1.5,"cause":"compute","compute_ms":15,"median_compute_ms":10,"comm_ms":0.1,"median_comm_ms":0.1,"threshold":1.2,"steps":20,"action":"warn"}\n' \
		>>"$DIR/metrics.jsonl"
	run -0 "$HPT" status "$DIR"
	[[ "$output" == *$'\n'"slow rank: rank 0 on n\\x1b1 is 1.50x slower than the median over steps 11-30: its compute (15 ms a step against 10 ms)"* ]]
	[[ "$output" != *"its rate"* ]]
}
