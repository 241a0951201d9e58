#!/usr/bin/env bats
# logs.bats - `hpctrain logs` on runs of a real local Slurm (tests/cluster, one node).

load common
load slurm_cluster

@test "logs prints every rank's lines in rank order, labelled" {
	need_slurm
	write_spec job.yaml three 1 3 '[sh, -c, "echo a$SLURM_PROCID; echo b$SLURM_PROCID"]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	run -0 --separate-stderr "$HPT" logs "$DIR"
	[ "$(grep -v warning <<<"$output")" = "$(printf '0: a0\n0: b0\n1: a1\n1: b1\n2: a2\n2: b2')" ]
}

@test "logs --rank N prints that rank only, unlabelled" {
	need_slurm
	write_spec job.yaml two 1 2 '[sh, -c, "echo r$SLURM_PROCID"]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	run -0 "$HPT" logs --rank 1 "$DIR"
	[ "$(grep -v warning <<<"$output")" = "r1" ]
	run -4 --separate-stderr "$HPT" logs --rank 7 "$DIR"
	[ "$stderr" = "hpctrain logs: no log of rank 7 in $DIR/logs" ]
}

@test "logs reads srun's labelled single log when per_rank_logs is false" {
	need_slurm
	write_spec job.yaml merged 1 2 '[sh, -c, "echo m$SLURM_PROCID"]' \
		'output: {per_rank_logs: false}'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	[ -f "$DIR/logs/ranks.out" ]
	run -0 "$HPT" logs --rank 1 "$DIR"
	[ "$(grep -v warning <<<"$output")" = "m1" ]
	run -0 "$HPT" logs "$DIR"
	grep -qx '0: m0' <<<"$output"
}

@test "logs --follow prints lines as they come and stops when the job ends" {
	need_slurm
	write_spec job.yaml slow 1 1 '[sh, -c, "echo first; sleep 2; echo second"]'
	submit_json job.yaml
	run -0 timeout 60 "$HPT" logs --follow "$DIR"
	[ "$(grep -v warning <<<"$output")" = "$(printf '0: first\n0: second')" ]
}

@test "logs of something that is not a run is 'no input'" {
	cd "$BATS_TEST_TMPDIR"
	run -4 --separate-stderr "$HPT" logs nothing-here
	[ "$stderr" = "hpctrain logs: no run, sweep or job nothing-here (not a run directory, a sweep record, a job id, or a job name in runs/)" ]
	run -2 --separate-stderr "$HPT" logs --rank x nothing-here
	[ "${stderr_lines[0]}" = "hpctrain logs: --rank: expected a rank number, got 'x'" ]
}
