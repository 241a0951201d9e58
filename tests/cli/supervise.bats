#!/usr/bin/env bats
# supervise.bats - launch --supervise with real programs under a real
# local Slurm: hang autopsy of a PyTorch (gloo) job and of a C MPI job,
# preemption of the torch-ddp template (it checkpoints on USR2, is
# requeued and resumes) and of a program that ignores USR2, a rank
# killed by SIGSEGV; and, without Slurm, the status a supervised program
# leaves and the errors of hpctrain autopsy.  Short stall_timeout_s
# values and tiny programs keep it near three minutes.

load common
load slurm_cluster

H=$BATS_TEST_DIRNAME/helpers

# spec FILE NAME RANKS COMMAND [EXTRA YAML]: one node, no binding.
spec() {
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: 1, ranks_per_node: $3, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"}
command: $4
output: {dir: $BATS_TEST_TMPDIR/runs}
${5:-}
SPEC
}

@test "launch --supervise exits with the program's status, 128+N for signal N, 127 when not found" {
	run "$HPT" launch --supervise -- sh -c 'exit 3'
	[ "$status" -eq 3 ]
	run "$HPT" launch --supervise -- sh -c 'kill -SEGV $$'
	[ "$status" -eq 139 ]
	[[ "$output" == *"killed by signal 11 (SIGSEGV): exit status 139"* ]]
	run -127 "$HPT" launch --supervise -- no-such-program-here
	[[ "$output" == *"no-such-program-here: command not found"* ]]
}

@test "a program killed by the OOM killer is said to be, with the count in its record; a kill -9 is not" {
	cd "$BATS_TEST_TMPDIR"
	memcg
	mkdir oom killed
	spec oom/resolved.yaml oom 1 '[true]'
	spec killed/resolved.yaml killed 1 '[true]'
	# as Slurm's task/cgroup has it: the supervisor and its program in
	# the step's memory cgroup, which the program outgrows
	run "$HPT" launch --supervise --run oom -- sh -c 'echo $PPID >"$0/cgroup.procs" &&
		echo $$ >"$0/cgroup.procs" && exec python3 -c "
x = []
while True: x.append(bytearray(1 << 20))"' "$MEMCG"
	rmdir "$MEMCG"
	echo "$output"
	[ "$status" -eq 137 ]
	[[ "$output" == *"the program was killed by the kernel's OOM killer (SIGKILL; its memory cgroup counted 1 OOM kill): exit status 137"* ]]
	jq -e '.signal == 9 and .oom_kills == 1' oom/ranks/rank-0.json
	run "$HPT" launch --supervise --run killed -- sh -c 'kill -KILL $$'
	[ "$status" -eq 137 ]
	[[ "$output" == *"the program was killed by signal 9 (SIGKILL), not by the OOM killer: exit status 137"* ]]
	jq -e '.signal == 9 and .oom_kills == 0' killed/ranks/rank-0.json
}

@test "launch --supervise forwards TERM to the program and reports it as 143" {
	"$HPT" launch --supervise -- sh -c 'echo up; exec sleep 60' >"$BATS_TEST_TMPDIR/o" 2>&1 &
	local sup=$!
	wait_for "$BATS_TEST_TMPDIR/o" up
	kill -TERM "$sup"
	# Not `run wait`: run's subshell cannot wait for a child of this shell
	# that has not exited yet, and answers 127.
	local rc=0
	wait "$sup" || rc=$?
	[ "$rc" -eq 143 ]
}

@test "launch --supervise kills a program that shows no progress 2 s after TERM, as a rank stuck in a collective" {
	# the program ignores TERM and never touches its heartbeat, as a rank
	# blocked in MPI_Allreduce whose peer's node is gone
	"$HPT" launch --supervise -- sh -c 'trap "" TERM; echo up; exec sleep 60' \
		>"$BATS_TEST_TMPDIR/o" 2>&1 &
	local sup=$! rc=0
	wait_for "$BATS_TEST_TMPDIR/o" up
	kill -TERM "$sup"
	wait "$sup" || rc=$?
	[ "$rc" -eq 137 ] || { cat "$BATS_TEST_TMPDIR/o"; false; }
	grep -q "the step is ending (SIGTERM) and the program made no progress for 2 s: killing it" \
		"$BATS_TEST_TMPDIR/o"
}

@test "under mpirun, a rank slow to checkpoint on USR2 is not killed by the first one's exit 75" {
	cd "$BATS_TEST_TMPDIR"
	mkdir run
	spec run/resolved.yaml late 2 '[true]' 'preempt: {lead_s: 0}'
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 D=$PWD
	# rank 1 takes a second longer to write its checkpoint than rank 0
	mpirun -np 2 "$HPT" launch --supervise --run run -- sh -c '
		trap "[ \$RANK = 1 ] && sleep 1; : >\"\$D/ckpt-\$RANK\"; exit 75" USR2
		: >"$D/ready-$RANK"
		while :; do sleep 0.1; done' >out 2>&1 &
	local mpi=$! rc=0
	for _ in $(seq 600); do [ -e ready-0 ] && [ -e ready-1 ] && break; sleep 0.1; done
	kill -USR2 "$mpi"
	wait "$mpi" || rc=$?
	[ "$rc" -eq 75 ] || { cat out; false; }
	[ -e ckpt-0 ] && [ -e ckpt-1 ] || { cat out; ls; false; }
}

@test "a job whose ranks never reach a first step ends with 77 after supervise.startup_timeout_s, naming the ranks that never launched" {
	cd "$BATS_TEST_TMPDIR"
	mkdir trainer beats cmd
	# the bundled trainer's spec (no command): only a heartbeat is a step,
	# what it prints before is not; rank 0 of 3, ranks 1 and 2 never launched
	printf 'version: 1\nname: x\nsupervise: {startup_timeout_s: 2}\n' >trainer/resolved.yaml
	cp trainer/resolved.yaml beats/resolved.yaml
	spec cmd/resolved.yaml cmd 1 '[sh]' 'supervise: {startup_timeout_s: 2}'
	# a step reached in time, by a heartbeat or by a command's output
	"$HPT" launch --supervise --run beats -- sh -c 'touch "$HPCTRAIN_HEARTBEAT"; sleep 4' &
	local beats=$!
	"$HPT" launch --supervise --run cmd -- sh -c 'echo up; sleep 4' >/dev/null &
	local cmd=$!
	OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1 run "$HPT" launch --supervise --run trainer -- \
		sh -c 'echo loading; exec sleep 60'
	echo "$output"
	[ "$status" -eq 77 ]
	[[ "$output" == *"rank 0: no rank reached its first step (a heartbeat) within 2 s (supervise.startup_timeout_s): no record from ranks 1,2; starting: 0 on $(hostname); recording stacks and ending the step (exit status 77)"* ]]
	jq -e '.state == "unstarted" and .signal == 9' trainer/ranks/rank-0.json
	grep -q 'reached no first step' trainer/autopsy.txt
	wait "$beats"
	wait "$cmd"
	# the first step's time stays in the record (a recovery's figure)
	jq -e '.first_heartbeat > 0 and .first_heartbeat <= .last_heartbeat' beats/ranks/rank-0.json
	jq -e '.first_heartbeat == null' trainer/ranks/rank-0.json
}

@test "autopsy: a run without stacks is an error (4), and a missing run too" {
	cd "$BATS_TEST_TMPDIR"
	mkdir run && printf 'version: 1\nname: x\n' >run/resolved.yaml
	run "$HPT" autopsy run
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"no stacks in"* ]]
	run "$HPT" autopsy nowhere
	[ "$status" -eq "$EX_NO_INPUT" ]
	run "$HPT" autopsy
	[ "$status" -eq "$EX_USAGE" ]
}

@test "a PyTorch job where rank 1 never reaches the all_reduce: the autopsy names every rank's line, the job ends with 76" {
	need_slurm
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || skip "no torch for /usr/bin/python3"
	# 12 s: the program says it is starting while it imports torch
	spec job.yaml stall 3 "[/usr/bin/python3, $H/stall.py]" 'supervise: {stall_timeout_s: 12}'
	submit_json job.yaml
	local t0=$SECONDS
	run "$HPT" status --wait --json "$JOB"
	echo "ended after $((SECONDS - t0)) s"
	# the start (torch imported by three ranks), 12 s of stall, the autopsy
	[ $((SECONDS - t0)) -le 90 ]
	jq -e '.jobs[0].exit_code == 76' <<<"$output"
	# a stall is not a crash at start-up: the step is not started again
	[ ! -e "$DIR/attempts/2" ]
	run -0 cat "$DIR/autopsy.txt"
	echo "$output"
	[[ "$output" == *"ranks 0,2 in "*" from stall.py:28 (dist.all_reduce(x))"* ]]
	[[ "$output" == *"rank 1 in clock_nanosleep from stall.py:27 (time.sleep(3600))"* ]]
	[[ "$output" == *"outlier: rank 1"* ]]
	[[ "$output" == *" c10d::Work::wait(std::chrono::duration<"* ]] # demangled
	run -0 "$HPT" autopsy "$DIR"
	[[ "$output" == *"outlier: rank 1"* ]]
	run -0 "$HPT" logs "$DIR"
	[[ "$output" == *"== autopsy ("*"outlier: rank 1"* ]]
	run -0 "$HPT" status --ranks "$DIR"
	[[ "$output" == *stalled* ]]
}

@test "a C MPI job where rank 1 sleeps before MPI_Allreduce: the autopsy names rank 1 in sleep and its line" {
	need_slurm
	mpicc -g -O0 -o stall_mpi "$H/stall_mpi.c"
	spec job.yaml stallmpi 3 "[$PWD/stall_mpi]" 'supervise: {stall_timeout_s: 6}'
	submit_json job.yaml
	local t0=$SECONDS
	run "$HPT" status --wait --json "$JOB"
	echo "ended after $((SECONDS - t0)) s"
	[ $((SECONDS - t0)) -le 36 ]
	jq -e '.jobs[0].exit_code == 76' <<<"$output"
	run -0 cat "$DIR/autopsy.txt"
	echo "$output"
	[[ "$output" == *"ranks 0,2 in "*"Allreduce from stall_mpi.c:17"* ]]
	[[ "$output" == *"rank 1 in sleep from stall_mpi.c:16"* ]]
	[[ "$output" == *"outlier: rank 1"* ]]
}

@test "the torch-ddp template trains 2 ranks, checkpoints on USR2, is requeued, resumes and completes" {
	need_slurm
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || skip "no torch for /usr/bin/python3"
	local ddp=$BATS_TEST_DIRNAME/../../templates/torch-ddp.py
	submit_json torch-ddp --set params.ranks=2 --set output.dir="$BATS_TEST_TMPDIR/runs" \
		--set "command=[/usr/bin/python3, $ddp, --steps, 40, --step-sleep, 0.1]" \
		--set preempt.lead_s=0
	wait_for "$DIR/metrics.jsonl" '"step": 5,'
	scancel --signal=USR2 "$JOB"
	run -0 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "COMPLETED" and .jobs[0].restarts == 1' <<<"$output"
	grep -q 'torch-ddp: preempted; checkpointed at step' "$DIR/logs/rank-0.out"
	grep -q 'torch-ddp: attempt .*, 2 ranks (was 2), step [1-9][0-9]* of 40' "$DIR/logs/rank-0.out"
	grep -q '^torch-ddp: done, 40 steps' "$DIR/logs/rank-0.out"
	jq -se 'map(select(.event == "summary")) | .[-1].steps == 40' "$DIR/metrics.jsonl"
	[ -f "$DIR/checkpoints/ckpt.pt" ]
}

@test "a program that ignores USR2 has its stacks recorded, is stopped before the end, and is requeued per the spec" {
	need_slurm
	spec job.yaml ignore 1 "[/usr/bin/python3, $H/ignore_usr2.py]" \
		'preempt: {lead_s: 8, requeue: true, max_requeues: 1, after_signal: requeue}'
	submit_json job.yaml
	wait_for "$DIR/logs/rank-0.out" 'ignoring USR2'
	scancel --signal=USR2 "$JOB"
	run -0 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "COMPLETED" and .jobs[0].restarts == 1' <<<"$output"
	grep -q 'ignored the preemption signal for 6 s; recording its stacks' "$DIR/logs/rank-0.out"
	grep -q 'exiting 75 to requeue' "$DIR/logs/rank-0.out"
	grep -q '^restarted' "$DIR/logs/rank-0.out"
	run -0 cat "$DIR/autopsy.txt"
	[[ "$output" == *"rank 0 in "*" from ignore_usr2.py:14 (time.sleep(0.2))"* ]]
	[[ "$output" == *"ignored the preemption signal"* ]]
}

@test "a rank killed by SIGSEGV ends the job, and the rank and its status are reported" {
	need_slurm
	spec job.yaml segv 2 "[/usr/bin/python3, -c, \"import os, signal, time; r = os.environ['RANK']; print('up', flush=True); time.sleep(1); (r == '1' and os.kill(os.getpid(), signal.SIGSEGV)); time.sleep(600)\"]"
	submit_json job.yaml
	run "$HPT" status --wait --json "$JOB"
	[ "$status" -eq 1 ]
	jq -e '.jobs[0].state == "FAILED"' <<<"$output"
	grep -q 'rank 1: the program was killed by signal 11 (SIGSEGV): exit status 139' "$DIR/logs/rank-1.out"
	run -0 "$HPT" status --ranks "$DIR"
	echo "$output"
	[[ "$output" == *"exited 139 (SIGSEGV)"* ]]
	run -0 "$HPT" status --ranks --json "$DIR"
	jq -e '.ranks[1].exit_status == 139 and .ranks[1].signal == 11' <<<"$output"
}
