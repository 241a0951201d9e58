#!/usr/bin/env bats
# cancel.bats - `hpctrain cancel` against a real local Slurm (tests/cluster, one node).

load common
load slurm_cluster

# wait_running JOB: until Slurm says RUNNING (at most 20 s)
wait_running() {
	for _ in $(seq 100); do
		[ "$("$HPT" status --json "$1" | jq -r '.jobs[0].state')" = RUNNING ] && return 0
		sleep 0.2
	done
	return 1
}

@test "cancel of a running job's run ends it CANCELLED" {
	need_slurm
	write_spec job.yaml long 1 1 '[sleep, "300"]'
	submit_json job.yaml
	wait_running "$JOB"
	run -0 --separate-stderr "$HPT" cancel "$DIR"
	[ "$output" = "cancelled job $JOB" ]
	run -1 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "CANCELLED"' <<<"$output"
}

@test "cancel by job id ends a pending-or-running job CANCELLED" {
	need_slurm
	write_spec job.yaml long2 1 1 '[sleep, "300"]'
	submit_json job.yaml
	run -0 "$HPT" cancel "$JOB"
	[ "$output" = "cancelled job $JOB" ]
	run -1 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "CANCELLED"' <<<"$output"
}

@test "cancel of a job that already finished says so and succeeds" {
	need_slurm
	write_spec job.yaml quick 1 1 '[true]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	run -0 --separate-stderr "$HPT" cancel "$JOB"
	[ "$stderr" = "hpctrain cancel: job $JOB had already finished" ]
	[ -z "$output" ]
}

@test "cancel of a job Slurm does not know is 'no input'" {
	need_slurm
	run -4 --separate-stderr "$HPT" cancel 999999
	[ "$stderr" = "hpctrain cancel: cannot cancel job 999999: Invalid job id specified" ]
}

@test "cancel without an argument is a usage error" {
	run -2 --separate-stderr "$HPT" cancel
	[ "${stderr_lines[0]}" = "hpctrain cancel: no run, sweep or job id given" ]
}
