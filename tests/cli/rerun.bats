#!/usr/bin/env bats
# rerun.bats - `hpctrain rerun` against a real local Slurm (tests/cluster, one node).

load common
load slurm_cluster

@test "rerun of a completed run asks for --fresh or --resume; --fresh is attempts/2 with checkpoints of its own" {
	need_slurm
	write_spec job.yaml again 1 1 '[sh, -c, "echo attempt $HPCTRAIN_ATTEMPT ckpt=$HPCTRAIN_CHECKPOINT_DIR prev=$HPCTRAIN_PREV_WORLD_SIZE"]'
	submit_json job.yaml
	first=$JOB run=$DIR
	"$HPT" status --wait "$first" >/dev/null
	jq -e '.exit_status == 0 and .requeued == false' "$run/end.json"
	cd /
	run -"$EX_USAGE" --separate-stderr "$HPT" rerun "$run"
	[ "$stderr" = "hpctrain rerun: $run completed (attempt 1, job $first): rerun --fresh trains it again from step 0 into new checkpoints, rerun --resume goes on from its last checkpoint" ]
	[ ! -e "$run/attempts/2" ]
	run -0 --separate-stderr "$HPT" rerun --fresh --json "$run"
	# resolved.yaml always writes train: of a command job it is no warning
	[ -z "$stderr" ]
	jq -e --arg run "$run" '.attempt == 2 and .run == $run and .dir == ($run + "/attempts/2")' <<<"$output"
	second=$(jq -r .job_id <<<"$output")
	[ "$second" != "$first" ]
	cmp "$run/resolved.yaml" "$run/attempts/2/resolved.yaml"
	cmp "$run/job.sbatch" "$run/attempts/2/job.sbatch"
	run -0 "$HPT" status --wait --json "$run"
	jq -e --argjson j "$second" '.jobs[0].job_id == $j and .jobs[0].state == "COMPLETED"' <<<"$output"
	[ "$(grep -v warning "$run/logs/rank-0.out")" = "attempt 1 ckpt=$run/checkpoints prev=0" ]
	[ "$(grep -v warning "$run/attempts/2/logs/rank-0.out")" = "attempt 2 ckpt=$run/attempts/2/checkpoints prev=0" ]
	# --resume: the run's own checkpoints, and the world size before
	run -0 --separate-stderr "$HPT" rerun --resume --json "$run"
	"$HPT" status --wait "$(jq -r .job_id <<<"$output")" >/dev/null
	[ "$(grep -v warning "$run/attempts/3/logs/rank-0.out")" = "attempt 3 ckpt=$run/checkpoints prev=1" ]
	run -"$EX_USAGE" "$HPT" rerun --fresh --resume "$run"
	[[ "$output" == *"--fresh and --resume: one or the other"* ]]
}

@test "rerun refuses a run whose staged data changed, naming both manifests, unless --data-changed-ok" {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	local dir=$BATS_TEST_TMPDIR run was now
	mkdir -p "$dir/data" "$dir/runs/r"
	chmod 700 "$dir/runs" "$dir/runs/r"
	printf 'one' >"$dir/data/a"
	# code: false: with the code on, its snapshot would be one more manifest
	printf 'version: 1\nname: r\ncommand: [true]\ncode: false\ndata: {stage: [{name: fm, src: %s}]}\n' \
		"$dir/data" >"$dir/r.yaml"
	"$HPT" validate --print-resolved "$dir/r.yaml" >"$dir/runs/r/resolved.yaml"
	run="$dir/runs/r"
	was=$(sed -n 's/^    manifest: "\(.*\)"$/\1/p' "$run/resolved.yaml")
	printf 'two' >"$dir/data/a"
	now=$("$HPT" validate --print-resolved "$dir/r.yaml" | sed -n 's/^    manifest: "\(.*\)"$/\1/p')
	[ -n "$was" ] && [ -n "$now" ] && [ "$was" != "$now" ]
	SLURM_CONF=$dir/no-slurm.conf run "$HPT" rerun "$run"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[ "$output" = "hpctrain rerun: the data fm ($dir/data) changed: the run has $was, the data now $now; submit the spec again for a new run, or pass --data-changed-ok" ]
	SLURM_CONF=$dir/no-slurm.conf run "$HPT" rerun --data-changed-ok "$run"
	[ "$status" -ne "$EX_BAD_SPEC" ]
	[ "${lines[0]}" = "hpctrain rerun: warning: the data fm ($dir/data) changed (the run has $was, the data now $now); running it anyway" ]
}

@test "rerun refuses a run whose venv's packages changed since, naming the venv and both digests" {
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	local dir=$BATS_TEST_TMPDIR run was now meta
	meta=$dir/v/lib/python3.11/site-packages/numpy.dist-info/METADATA
	mkdir -p "$(dirname "$meta")" "$dir/runs/r"
	chmod 700 "$dir/runs" "$dir/runs/r"
	printf 'Name: numpy\nVersion: 1.24.2\n' >"$meta"
	printf 'version: 1\nname: r\ncommand: [true]\ncode: false\nenvironment: {venv: %s}\n' \
		"$dir/v" >"$dir/r.yaml"
	"$HPT" validate --print-resolved "$dir/r.yaml" >"$dir/runs/r/resolved.yaml"
	run="$dir/runs/r"
	was=$(sed -n 's/^  venv_digest: "\(.*\)"$/\1/p' "$run/resolved.yaml")
	printf 'Name: numpy\nVersion: 1.24.3\n' >"$meta"
	now=$("$HPT" validate --print-resolved "$dir/r.yaml" | sed -n 's/^  venv_digest: "\(.*\)"$/\1/p')
	[ -n "$was" ] && [ -n "$now" ] && [ "$was" != "$now" ]
	SLURM_CONF=$dir/no-slurm.conf run -4 --separate-stderr "$HPT" rerun "$run"
	[ "$stderr" = "hpctrain rerun: the packages installed in environment.venv $dir/v have changed since the run was submitted ($was, now $now); submit the spec again for a new run" ]
}

@test "rerun refuses a run whose resolved.yaml was edited" {
	need_slurm
	write_spec job.yaml edited 1 1 '[true]'
	submit_json job.yaml
	"$HPT" status --wait "$JOB" >/dev/null
	chmod u+w "$DIR/resolved.yaml"
	sed -i 's/^  nodes: 1$/  nodes:    1/' "$DIR/resolved.yaml"
	run -3 --separate-stderr "$HPT" rerun "$DIR"
	[ "${stderr_lines[-1]}" = "hpctrain rerun: $DIR/resolved.yaml no longer resolves to itself (edited, or from another hpctrain version); submit the spec again instead" ]
	[ ! -e "$DIR/attempts" ]
}

@test "rerun of something that is not a run is 'no input'" {
	cd "$BATS_TEST_TMPDIR"
	run -4 --separate-stderr "$HPT" rerun "$BATS_TEST_TMPDIR"
	[ "$stderr" = "hpctrain rerun: no run at $BATS_TEST_TMPDIR (a run directory holds resolved.yaml)" ]
}
