#!/usr/bin/env bats
# submit.bats - `hpctrain submit` against a real local Slurm (tests/cluster,
# MODE=multi: two slurmd on this host), plus what needs no cluster:
# --dry-run, refused names and inert injection.

load common
load slurm_cluster

setup_file() {
	cluster_up multi 2
}

# Strings that would run something if a shell ever saw them unquoted.
# Each one, if executed, creates $PWNED.
hostile_spec() { # FILE PWNED
	local p=$2
	cat >"$1" <<SPEC
version: 1
name: inject
resources: {nodes: 1, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env:
  SUB: "\$(touch $p.sub)"
  TICK: "\`touch $p.tick\`"
  SEMI: "x; touch $p.semi"
  QUOTES: "a'b\"c'; touch $p.q; '"
  NL: "line1\\ntouch $p.nl\\n#SBATCH --nodes=2"
command: ["printf", "[%s]\\\\n", "\$(touch $p.c1)", "\`touch $p.c2\`", "; touch $p.c3", "it's \"q\"", "a\\nb #SBATCH --wrap=x", "\$SUB"]
preempt: {lead_s: 0}
SPEC
}

@test "submit --dry-run prints the same bytes twice and writes nothing" {
	cd "$BATS_TEST_TMPDIR"
	run -0 "$HPT" submit --dry-run "$TEMPLATES/fmnist-cpu.yaml"
	first=$output
	run -0 "$HPT" submit --dry-run "$TEMPLATES/fmnist-cpu.yaml"
	[ "$output" = "$first" ]
	[ ! -e runs ]
	printf '%s\n' "$first" | bash -n
	printf '%s\n' "$first" | grep -qx '#SBATCH --job-name=fmnist-cpu'
	printf '%s\n' "$first" | grep -qx '#SBATCH --signal=USR2@60'
}

@test "submit --dry-run --topology appends the binding plan as comments" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$HPT" submit --dry-run \
		--topology "$BATS_TEST_DIRNAME/../fixtures/24em64t-2n6c2t-pci.xml" \
		"$TEMPLATES/fmnist-cpu.yaml"
	printf '%s\n' "$output" | bash -n
	printf '%s\n' "$output" | grep -q '^# binding plan for each node, from .*24em64t-2n6c2t-pci.xml:$'
	run -0 "$HPT" submit --dry-run --json \
		--topology "$BATS_TEST_DIRNAME/../fixtures/24em64t-2n6c2t-pci.xml" \
		"$TEMPLATES/fmnist-cpu.yaml"
	jq -e '.plan and (.script | startswith("#!/bin/bash"))' <<<"$output"
}

@test "submit --dry-run --topology warns when bf16 is not native on the node's CPU, and always for fp16" {
	cd "$BATS_TEST_TMPDIR"
	icx=$BATS_TEST_DIRNAME/../fixtures/144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml
	run -0 --separate-stderr "$HPT" submit --dry-run --topology "$icx" \
		--set train.precision=bf16 "$TEMPLATES/fmnist-cpu.yaml"
	[ "$stderr" = "$icx: warning: train.precision: bf16 cannot be faster than fp32 on this node's CPU: it has no AVX512-BF16 or AMX-BF16, so the trainer emulates bf16 with fp32 arithmetic; precision: fp32 is the alternative" ]
	printf '%s\n' "$output" | bash -n
	printf '%s\n' "$output" | grep -q '^# binding plan for each node'
	run -0 --separate-stderr "$HPT" submit --dry-run --json --topology "$icx" \
		--set train.precision=fp16 --set train.device=cpu "$TEMPLATES/fmnist-cpu.yaml"
	[ "$stderr" = "$icx: warning: train.precision: fp16 cannot be faster than fp32 on any CPU: the trainer's oneDNN 2.6 has no fp16 CPU kernels (AVX512-FP16 and AMX-FP16 unused), so it emulates fp16 with fp32 arithmetic; precision: fp32 is the alternative (bf16 runs natively on CPUs with AVX512-BF16 or AMX-BF16)" ]
	jq -e .plan <<<"$output"
	# even where the CPU has AVX512-FP16
	spr=$BATS_TEST_DIRNAME/../fixtures/224em64t-2n56c2t-dgxh100-cpuflags.xml
	run -0 --separate-stderr "$HPT" submit --dry-run --topology "$spr" \
		--set train.precision=fp16 --set train.device=cpu "$TEMPLATES/fmnist-cpu.yaml"
	[[ "$stderr" == *"fp16 cannot be faster than fp32 on any CPU"*"precision: fp32 is the alternative"* ]]
	[ ! -e runs ]
}

@test "submit --dry-run --topology is quiet where the precision is native or not on this CPU" {
	cd "$BATS_TEST_TMPDIR"
	icx=$BATS_TEST_DIRNAME/../fixtures/144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml
	spr=$BATS_TEST_DIRNAME/../fixtures/224em64t-2n56c2t-dgxh100-cpuflags.xml
	h100=$BATS_TEST_DIRNAME/../fixtures/224em64t-2n56c2t-dgxh100.xml
	while read -r topo sets; do
		run -0 --separate-stderr "$HPT" submit --dry-run --topology "$topo" $sets \
			"$TEMPLATES/fmnist-cpu.yaml"
		[ -z "$stderr" ] || { echo "$topo $sets: $stderr"; false; }
	done <<CASES
$spr --set train.precision=bf16
$icx --set train.precision=fp32
$icx --set train.precision=bf16 --set train.device=cuda
$h100 --set train.precision=bf16 --set resources.gpus_per_node=8 --set binding.gpu=auto
CASES
	# a user's own program: train is not used, so neither is its precision
	run -0 --separate-stderr "$HPT" submit --dry-run --topology "$icx" \
		--set train.precision=bf16 --set 'command=[true]' "$TEMPLATES/fmnist-cpu.yaml"
	[[ "$stderr" != *"train.precision"* ]]
}

@test "submit --dry-run --topology says it cannot tell when the XML records no CPU flags" {
	cd "$BATS_TEST_TMPDIR"
	xml=$BATS_TEST_DIRNAME/../fixtures/144em64t-4n18c2t-snc2-cpuonly.xml
	run -0 --separate-stderr "$HPT" submit --dry-run --topology "$xml" \
		--set train.precision=bf16 "$TEMPLATES/fmnist-cpu.yaml"
	[ "$stderr" = "$xml: warning: train.precision: cannot tell whether this node's CPU has AVX512-BF16 or AMX-BF16 for bf16: the topology records no CPU flags (hpctrain topo --export-xml on the node saves them)" ]
}

@test "submit --dry-run says what would be staged, and the run's hash follows the data" {
	cd "$BATS_TEST_TMPDIR"
	export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
	mkdir -p data/sub
	printf 'abc' >data/a
	printf 'defg' >data/sub/b
	# code: false: with the code on, its snapshot would be one more entry
	printf 'version: 1\nname: staged\ncommand: [true]\ncode: false\ndata: {stage: [{name: fm, src: %s}]}\n' \
		"$PWD/data" >job.yaml
	run -0 --separate-stderr "$HPT" submit --dry-run job.yaml
	printf '%s\n' "$output" | bash -n
	printf '%s\n' "$output" | grep -qF '"$HPT" stage --run "$RUN" || status=$?'
	printf '%s\n' "$output" | grep -q '^# staged to each node.s cache before training:$'
	printf '%s\n' "$output" | grep -qE "^#   fm  $PWD/data  2 files, 7 bytes  sha256:[0-9a-f]{64}\$"
	run -0 "$HPT" submit --dry-run --json job.yaml
	jq -e --arg src "$PWD/data" '.stage == [.stage[0]] and .stage[0].name == "fm" and
		.stage[0].src == $src and .stage[0].files == 2 and .stage[0].bytes == 7 and
		(.stage[0].manifest | test("^sha256:[0-9a-f]{64}$")) and .stage[0].is_file == false' <<<"$output"
	h1=$(jq -r .sha256 <<<"$output")
	run -0 "$HPT" submit --dry-run --json job.yaml
	[ "$(jq -r .sha256 <<<"$output")" = "$h1" ]
	printf 'abd' >data/a
	run -0 "$HPT" submit --dry-run --json job.yaml
	[ "$(jq -r .sha256 <<<"$output")" != "$h1" ]
	rm -r data
	run "$HPT" submit --dry-run job.yaml
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "${lines[0]}" == "hpctrain submit: data.stage fm: "*"$PWD/data"* ]]
}

@test "submit refuses --topology without --dry-run with the usage status" {
	run -2 --separate-stderr "$HPT" submit --topology x.xml "$TEMPLATES/fmnist-cpu.yaml"
	[ "${stderr_lines[0]}" = "hpctrain submit: --topology needs --dry-run" ]
}

@test "submit refuses names that cannot be a Slurm job name or a path component" {
	cd "$BATS_TEST_TMPDIR"
	while IFS='|' read -r name why; do
		run -3 --separate-stderr "$HPT" submit --dry-run --set "name=$name" "$TEMPLATES/fmnist-cpu.yaml"
		[ "$stderr" = "--set name=$name: name: \"$name\" $why" ]
	done <<'CASES'
../x|must start with a letter or digit
.hidden|must start with a letter or digit
$(id)|must start with a letter or digit
a b|may hold only letters, digits, '.', '_' and '-'
x;y|may hold only letters, digits, '.', '_' and '-'
CASES
	[ ! -e runs ]
}

@test "submit refuses a partition that smuggles an #SBATCH line" {
	run -3 --separate-stderr "$HPT" submit --dry-run \
		--set $'resources.partition="debug\n#SBATCH --uid=0"' "$TEMPLATES/fmnist-cpu.yaml"
	[[ "$stderr" == *': resources.partition: "debug #SBATCH --uid=0" may hold only letters, digits,'* ]]
}

@test "injection in env and command is inert: bash -n, then the script runs and executes none of it" {
	cd "$BATS_TEST_TMPDIR"
	hostile_spec job.yaml "$BATS_TEST_TMPDIR/pwned"
	run -0 --separate-stderr "$HPT" submit --dry-run job.yaml
	printf '%s\n' "$output" >job.sbatch
	bash -n job.sbatch
	# sbatch would read only the #SBATCH lines before the first command
	[ "$(awk '!/^#/ && !/^$/ {exit} /^#SBATCH/' job.sbatch | grep -c -- '--nodes=')" -eq 1 ]
	# Run it outside Slurm: a stub srun records the argv it gets.
	mkdir bin
	printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\0" "$a"; done >"%s/argv"\n' \
		"$BATS_TEST_TMPDIR" >bin/srun
	chmod +x bin/srun
	mkdir run && (cd run && PATH=$BATS_TEST_TMPDIR/bin:$PATH bash ../job.sbatch)
	[ -z "$(ls "$BATS_TEST_TMPDIR" | grep pwned)" ]
	# the program's arguments arrive byte for byte
	tr '\0' '\n' <argv | grep -qx '$(touch '"$BATS_TEST_TMPDIR"'/pwned.c1)'
	tr '\0' '\n' <argv | grep -qx "it's \"q\""
	tr '\0' '\n' <argv | grep -qx '$SUB'
}

@test "injection is inert under Slurm too: the job prints every string literally" {
	need_slurm
	hostile_spec job.yaml "$BATS_TEST_TMPDIR/pwned"
	submit_json job.yaml
	run "$HPT" status --wait "$JOB"
	[ "$status" -eq 0 ] || { cat "$DIR"/logs/*; false; }
	[ -z "$(ls "$BATS_TEST_TMPDIR" | grep pwned)" ]
	grep -qxF "[\$(touch $BATS_TEST_TMPDIR/pwned.c1)]" "$DIR/logs/rank-0.out"
	grep -qxF "[; touch $BATS_TEST_TMPDIR/pwned.c3]" "$DIR/logs/rank-0.out"
	grep -qxF "[it's \"q\"]" "$DIR/logs/rank-0.out"
	grep -qxF '[$SUB]' "$DIR/logs/rank-0.out"
}

@test "submit runs a job to COMPLETED with one log per rank in a private run directory" {
	need_slurm
	write_spec job.yaml hello 1 2 '[sh, -c, "echo hello from rank $SLURM_PROCID"]'
	submit_json job.yaml
	hash=$(jq -r .sha256 <<<"$output")
	[ "$DIR" = "$BATS_TEST_TMPDIR/runs/hello/${hash:0:12}" ]
	jq -e '.job_id > 0 and .attempt == 1 and (.cluster | startswith("hpttest")) and .user == "root"' \
		"$DIR/submit.json"
	run -0 "$HPT" status --wait "$DIR"
	[ "$(cat "$DIR/logs/rank-0.out" | grep -v warning)" = "hello from rank 0" ]
	[ "$(cat "$DIR/logs/rank-1.out" | grep -v warning)" = "hello from rank 1" ]
	[ "$(stat -c %a "$DIR")" = 700 ]
	[ "$(stat -c %a "$DIR/resolved.yaml")" = 600 ]
	[ "$(stat -c %a "$DIR/job.sbatch")" = 600 ]
	"$HPT" validate -q "$DIR/resolved.yaml"
}

@test "submit records the script it submitted, byte for byte as --dry-run prints it" {
	need_slurm
	write_spec job.yaml same 1 1 '[true]'
	run -0 "$HPT" submit --dry-run job.yaml
	printf '%s\n' "$output" >dry.sbatch
	submit_json job.yaml
	cmp dry.sbatch "$DIR/job.sbatch"
	"$HPT" status --wait "$JOB" >/dev/null
}

@test "submit of the same spec again makes attempt 2 and leaves attempt 1 alone" {
	need_slurm
	# attempt 1 still running: a second submission is a second attempt
	write_spec job.yaml again 1 1 '[sh, -c, "while [ ! -e go ]; do sleep 0.1; done"]'
	submit_json job.yaml
	first=$DIR job1=$JOB
	sum=$(cat "$first"/{resolved.yaml,job.sbatch,submit.json} | sha256sum)
	submit_json job.yaml
	[ "$DIR" = "$first/attempts/2" ]
	jq -e '.attempt == 2' "$DIR/submit.json"
	[ "$(cat "$first"/{resolved.yaml,job.sbatch,submit.json} | sha256sum)" = "$sum" ]
	cmp "$first/resolved.yaml" "$DIR/resolved.yaml"
	touch "$first/go" "$DIR/go"
	"$HPT" status --wait "$job1" >/dev/null
	"$HPT" status --wait "$JOB" >/dev/null
}

@test "20 concurrent submits of one spec all succeed, each with its own whole attempt" {
	need_slurm
	# still pending or running when the next one looks: each is a new attempt
	write_spec job.yaml many 1 1 '[sh, -c, "while [ ! -e go ]; do sleep 0.1; done"]'
	pids=()
	for i in $(seq 20); do
		"$HPT" submit job.yaml >"out.$i" 2>"err.$i" &
		pids+=($!)
	done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	scancel --name many || true
	[ "$fails" -eq 0 ] || { cat err.*; false; }
	run=(runs/many/*/)
	[ "${#run[@]}" -eq 1 ]
	[ "$(ls "${run[0]}attempts" | sort -n | tr '\n' ' ')" = "$(seq 2 20 | tr '\n' ' ')" ]
	for d in "${run[0]}" "${run[0]}"attempts/*/; do
		[ -f "$d/submit.json" ] && cmp "${run[0]}resolved.yaml" "$d/resolved.yaml"
	done
	# no temporaries left beside the runs
	[ -z "$(find runs -name '.*.tmp-*')" ]
}

@test "a completed run submitted again asks for --fresh or --resume, and each does what it says" {
	need_slurm
	write_spec job.yaml done 1 1 '[sh, -c, "echo ckpt=$HPCTRAIN_CHECKPOINT_DIR prev=$HPCTRAIN_PREV_WORLD_SIZE"]'
	submit_json job.yaml
	first=$DIR
	"$HPT" status --wait "$JOB" >/dev/null
	run -"$EX_USAGE" --separate-stderr "$HPT" submit job.yaml
	[ "$stderr" = "hpctrain submit: $first completed (attempt 1, job $JOB): submit --fresh trains it again from step 0 into new checkpoints, submit --resume goes on from its last checkpoint" ]
	[ ! -e "$first/attempts" ]
	submit_json job.yaml --fresh
	[ "$DIR" = "$first/attempts/2" ] && [ ! -L "$DIR/checkpoints" ]
	"$HPT" status --wait "$JOB" >/dev/null
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "ckpt=$DIR/checkpoints prev=0" ]
	submit_json job.yaml --resume
	[ "$DIR" = "$first/attempts/3" ] && [ -L "$DIR/checkpoints" ]
	"$HPT" status --wait "$JOB" >/dev/null
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "ckpt=$first/checkpoints prev=1" ]
	run -"$EX_USAGE" "$HPT" submit --fresh --resume job.yaml
	[[ "$output" == *"--fresh and --resume: one or the other"* ]]
}

@test "a 2-node job runs one rank on each of the two slurmd" {
	need_slurm
	write_spec job.yaml two 2 1 '[sh, -c, "echo $SLURMD_NODENAME $SLURM_PROCID"]'
	submit_json job.yaml
	run -0 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "COMPLETED" and .jobs[0].nodes == "n[1-2]"' <<<"$output"
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "n1 0" ]
	[ "$(grep -v warning "$DIR/logs/rank-1.out")" = "n2 1" ]
}

@test "a job asking for GPUs gets them from Slurm's gres (fake devices)" {
	need_slurm
	write_spec job.yaml gpus 1 1 '[sh, -c, "echo gpus=$SLURM_JOB_GPUS"]'
	submit_json --set resources.gpus_per_node=2 job.yaml
	run -0 "$HPT" status --wait "$JOB"
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "gpus=0,1" ]
}

@test "an unknown partition is Slurm's rejection, with its reason, and leaves no run behind" {
	need_slurm
	write_spec job.yaml badpart 1 1 '[true]'
	run -6 --separate-stderr "$HPT" submit --set resources.partition=nope job.yaml
	[ "${stderr_lines[-1]}" = "hpctrain submit: Slurm rejected the job: Invalid partition name specified" ]
	[ -z "$(ls runs/badpart)" ]
}

@test "more GPUs than a node has is Slurm's rejection with its reason" {
	need_slurm
	write_spec job.yaml toomany 1 1 '[true]'
	run -6 --separate-stderr "$HPT" submit --set resources.gpus_per_node=8 job.yaml
	[ "${stderr_lines[-1]}" = "hpctrain submit: Slurm rejected the job: Requested node configuration is not available" ]
}

@test "an unreachable controller is 'service unavailable' (status 5), not a crash" {
	need_slurm
	write_spec job.yaml down 1 1 '[true]'
	# the same cluster's configuration, with a controller port nobody listens on
	sed -e 's/^SlurmctldPort=.*/SlurmctldPort=1/' "$SLURM_CONF" >down.conf
	echo MessageTimeout=2 >>down.conf
	SLURM_CONF=$PWD/down.conf run -5 --separate-stderr "$HPT" submit job.yaml
	[ "${stderr_lines[-1]}" = "hpctrain submit: cannot submit the job: Slurm is unavailable: Unable to contact slurm controller (connect failure)" ]
	[ -z "$(ls runs/down)" ]
}

@test "a controller that accepts and never answers (stopped, hung) is 'service unavailable' (5) too" {
	need_slurm
	write_spec job.yaml hung 1 1 '[true]'
	# a port that takes connections and never answers, as a SIGSTOPped
	# slurmctld does; MessageTimeout=2 keeps libslurm's wait short
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(16)
print(s.getsockname()[1], flush=True); time.sleep(120)' >port &
	LISTENER=$!
	wait_for port '[0-9]'
	sed -e "s/^SlurmctldPort=.*/SlurmctldPort=$(cat port)/" "$SLURM_CONF" >hung.conf
	echo MessageTimeout=2 >>hung.conf
	SLURM_CONF=$PWD/hung.conf run --separate-stderr "$HPT" submit job.yaml
	local submit=$status last=${stderr_lines[-1]}
	SLURM_CONF=$PWD/hung.conf run --separate-stderr "$HPT" cancel 1
	kill "$LISTENER"
	echo "$last"
	[ "$submit" -eq 5 ]
	[ "$last" = "hpctrain submit: cannot submit the job: Slurm is unavailable: Socket timed out on send/recv operation" ]
	echo "$stderr"
	[ "$status" -eq 5 ]
	[[ "$stderr" == *"Slurm is unavailable: Socket timed out on send/recv operation"* ]]
}

@test "no Slurm configuration at all is 'service unavailable' too" {
	cd "$BATS_TEST_TMPDIR"
	SLURM_CONF=/nonexistent/slurm.conf run -5 --separate-stderr "$HPT" submit "$TEMPLATES/fmnist-cpu.yaml"
	[ "$stderr" = "hpctrain submit: no Slurm configuration: cannot read /nonexistent/slurm.conf (from SLURM_CONF): No such file or directory" ]
	[ ! -e runs ]
}

@test "a preempted step (exit 75) is requeued by the script and the job then completes" {
	need_slurm
	# $${...}: a literal ${...} in a spec (plain ${...} is a template parameter)
	write_spec job.yaml pre 1 1 '[sh, -c, "echo try $${SLURM_RESTART_COUNT:-0}; [ $${SLURM_RESTART_COUNT:-0} -ge 1 ] || exit 75"]'
	sed -i 's/^preempt: .*/preempt: {lead_s: 0, requeue: true, max_requeues: 2}/' job.yaml
	submit_json job.yaml
	run -0 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "COMPLETED" and .jobs[0].restarts == 1' <<<"$output"
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "$(printf 'try 0\ntry 1')" ]
	grep -q 'hpctrain: preempted; requeueing job .* (restart 1 of 2)' "$DIR"/logs/batch-*.out
}

@test "a preempted step with no requeues left ends the job FAILED with status 75" {
	need_slurm
	write_spec job.yaml giveup 1 1 '[sh, -c, "exit 75"]'
	sed -i 's/^preempt: .*/preempt: {lead_s: 0, requeue: true, max_requeues: 0}/' job.yaml
	submit_json job.yaml
	run -1 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "FAILED" and .jobs[0].exit_code == 75 and .jobs[0].restarts == 0' <<<"$output"
	grep -q 'hpctrain: preempted, and already requeued 0 times; giving up' "$DIR"/logs/batch-*.out
}
