#!/usr/bin/env bats
# launch.bats - `hpctrain launch` under real mpirun, real srun and fixtures.

load common

FIX=$BATS_TEST_DIRNAME/../fixtures
HELP=$BATS_TEST_DIRNAME/helpers
DGXA100=$FIX/256amd64-8n16c2t-dgxa100.xml
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A launched rank must never inherit these from the test's own shell.
unset SLURM_JOB_ID SLURM_STEP_ID SLURM_PROCID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK CUDA_VISIBLE_DEVICES

setup_file() {
	mpicc -o "$BATS_FILE_TMPDIR/mpi_hello" "$BATS_TEST_DIRNAME/helpers/mpi_hello.c"
	[ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null || return 0
	# Two nodes with their own hostnames and IPs where namespaces can be
	# made; else two slurmd on this host (whose node names do not resolve).
	# Each try in a directory of a name no one can guess (mktemp): root's
	# cluster must not start where another user planted a link.
	for mode in netns multi; do
		CLUSTER=$(mktemp -d /tmp/hpctrain-launch-bats.XXXXXX)
		export CLUSTER
		if BASE=$CLUSTER MODE=$mode NODES=2 NGPUS=4 "$BATS_TEST_DIRNAME/../cluster/up.sh" \
			>>"$BATS_FILE_TMPDIR/cluster.log" 2>&1; then
			export SLURM_CONF=$CLUSTER/etc/slurm.conf CLUSTER_MODE=$mode
			return 0
		fi
		BASE=$CLUSTER "$BATS_TEST_DIRNAME/../cluster/down.sh" >/dev/null 2>&1 || true
		rmdir "$CLUSTER" 2>/dev/null || true
	done
	unset CLUSTER
}

teardown_file() {
	[ -n "${CLUSTER:-}" ] || return 0 # down.sh's default BASE is another cluster
	BASE=$CLUSTER "$BATS_TEST_DIRNAME/../cluster/down.sh" >/dev/null 2>&1 || true
	rmdir "$CLUSTER" 2>/dev/null || true
}

need_slurm() {
	[ -n "${SLURM_CONF:-}" ] || skip "no local Slurm cluster (needs root and slurm-wlm)"
}

# field NAME LINE: the value of NAME=value in a whoami.sh line.
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

@test "launch alone is rank 0 of 1, bound to the whole machine" {
	run "$HPT" launch -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "$(field rank "$output")" = 0 ]
	[ "$(field world "$output")" = 1 ]
	[ "$(field master "$output")" = "127.0.0.1:$(field master "$output" | cut -d: -f2)" ]
	[ "$(field cpus "$output")" = "$(field slice "$output")" ]
}

@test "under mpirun -np 2 each rank gets its own core and consistent variables" {
	run mpirun -np 2 "$HPT" launch -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	seen=""
	for l in "${lines[@]}"; do
		[ "$(field cpus "$l")" = "$(field slice "$l")" ]
		[ "$(field world "$l")" = 2 ]
		[ "$(field lws "$l")" = 2 ]
		[ "$(field omp "$l")" = 1 ]
		[ "$(field rank "$l")" = "$(field local "$l")" ]
		seen="$seen $(field cpus "$l")"
	done
	# Disjoint: the two ranks hold different single CPUs.
	[ "$(echo $seen | tr ' ' '\n' | sort -u | wc -l)" -eq 2 ]
	[ "$(field master "${lines[0]}")" = "$(field master "${lines[1]}")" ]
}

@test "under mpirun -np 4 --oversubscribe ranks share the node with --cpu node" {
	run mpirun -np 4 --oversubscribe "$HPT" launch --cpu node -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	for l in "${lines[@]}"; do
		[ "$(field cpus "$l")" = "$(field slice "$l")" ]
		[ "$(field world "$l")" = 4 ]
	done
	[ "$(printf '%s\n' "${lines[@]}" | sed 's/.*rank=\([0-9]*\) .*/\1/' | sort | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "more exclusive ranks than cores is refused before anything runs" {
	n=$(( $(nproc) + 1 ))
	run mpirun -np "$n" --oversubscribe "$HPT" launch -- /bin/echo PROGRAM-RAN
	[ "$status" -ne 0 ]
	[[ "$output" != *PROGRAM-RAN* ]]
	[[ "$output" == *"plan: ranks: "* ]]
}

@test "an MPI program initialises and reduces under mpirun through launch" {
	run mpirun -np 2 "$HPT" launch -v -- "$BATS_FILE_TMPDIR/mpi_hello"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'sum 3$')" -eq 2 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'from ompi on')" -eq 2 ]
}

@test "with only a PMIx server to ask, ranks come from PMIx" {
	run mpirun -np 2 env -u OMPI_COMM_WORLD_RANK "$HPT" launch -v -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'from pmix on')" -eq 2 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep '^rank=' | sed 's/ .*//' | sort | tr '\n' ' ')" = "rank=0 rank=1 " ]
	for l in $(printf '%s\n' "${lines[@]}" | grep '^rank=' | tr ' ' '#'); do
		l=$(echo "$l" | tr '#' ' ')
		[ "$(field world "$l")" = 2 ]
		[ "$(field cpus "$l")" = "$(field slice "$l")" ]
	done
}

@test "a PyTorch-style program meets its peers through MASTER_ADDR and MASTER_PORT" {
	run mpirun -np 2 "$HPT" launch -- python3 "$HELP/rendezvous.py"
	[ "$status" -eq 0 ]
	[[ "$output" == *"rendezvous ok 2"* ]]
}

@test "the DGX A100 fixture gives local ranks 0..7 their GPU, HCA rail and cores" {
	want=("0 =mlx5_0 48-55,176-183" "1 =mlx5_1 56-63,184-191" "2 =mlx5_2 16-23,144-151"
	      "3 =mlx5_3 24-31,152-159" "4 =mlx5_6 112-119,240-247" "5 =mlx5_7 120-127,248-255"
	      "6 =mlx5_8 80-87,208-215" "7 =mlx5_9 88-95,216-223")
	for r in 0 1 2 3 4 5 6 7; do
		run env SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=$r SLURM_LOCALID=$r SLURM_NODEID=0 \
			SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=8 SLURM_STEP_TASKS_PER_NODE=8 \
			SLURM_STEP_NODELIST=dgx01 "$HPT" launch --topology "$DGXA100" --dry-run -- prog
		[ "$status" -eq 0 ]
		got=$(echo "$output" | jq -r '[.env.CUDA_VISIBLE_DEVICES, .env.NCCL_IB_HCA, .slice.cpus] | join(" ")')
		[ "$got" = "${want[$r]}" ]
		[ "$(echo "$output" | jq -r .env.UCX_NET_DEVICES)" = "$(echo "${want[$r]}" | cut -d' ' -f2 | tr -d =):1" ]
	done
}

@test "a saved topology's binding is reported, not applied, where this machine lacks it" {
	tmp=$(mktemp -d)
	run env SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=7 SLURM_LOCALID=7 SLURM_NODEID=0 \
		SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=8 SLURM_STEP_TASKS_PER_NODE=8 \
		SLURM_STEP_NODELIST=dgx01 "$HPT" launch --topology "$DGXA100" --report "$tmp" -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "$(field slice "$output")" = "88-95,216-223" ]
	[ "$(field cpus "$output")" != "88-95,216-223" ]
	jq -e '.applied.cpu == false and (.applied.cpu_note | startswith("not applied: CPUs 88-95,216-223"))' \
		"$tmp/rank-00007.json" >/dev/null
	jq -e '.source == "slurm" and .rank == 7 and .env.CUDA_VISIBLE_DEVICES == "7"' "$tmp/rank-00007.json" >/dev/null
	rm -rf "$tmp"
}

@test "the spec's binding and env apply, and the spec's env wins" {
	tmp=$(mktemp -d)
	printf 'version: 1\nname: t\nbinding: {cpu: none}\nenv: {OMP_NUM_THREADS: "7", X: "a b"}\n' >"$tmp/j.yaml"
	run "$HPT" launch --spec "$tmp/j.yaml" --dry-run -- prog
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.env.OMP_NUM_THREADS == "7" and .env.X == "a b" and (.policy | contains("cpu=none"))' >/dev/null
	run "$HPT" launch --spec "$tmp/j.yaml" --cpu exclusive --dry-run -- prog
	echo "$output" | jq -e '.policy | contains("cpu=exclusive")' >/dev/null
	rm -rf "$tmp"
}

@test "each staged entry is HPCTRAIN_DATA_NAME: its copy in the node's cache, else its source with one warning" {
	tmp=$(mktemp -d)
	hex=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	mkdir "$tmp/src"
	printf 'version: 1\nname: t\nbinding: {cpu: none}\ndata:\n  stage:\n  - {name: fm-x, src: %s, manifest: "sha256:%s", bytes: 3, is_file: false}\n  - {name: w, src: /no/w.bin, manifest: "sha256:%s", bytes: 3, is_file: true}\n  cache: {dir: %s}\n' \
		"$tmp/src" "$hex" "$hex" "$tmp/cache" >"$tmp/j.yaml"
	run --separate-stderr "$HPT" launch --spec "$tmp/j.yaml" --dry-run -- prog
	[ "$status" -eq 0 ]
	[ "$stderr" = "hpctrain launch: rank 0: warning: not staged on this node (no stage step ran?): fm-x, w; reading the source on the shared file system" ]
	jq -e --arg src "$tmp/src" '.env.HPCTRAIN_DATA_FM_X == $src and .env.HPCTRAIN_DATA_W == "/no/w.bin"' <<<"$output"
	mkdir -p "$tmp/cache/$hex"
	echo x >"$tmp/cache/$hex/w.bin"
	run --separate-stderr "$HPT" launch --spec "$tmp/j.yaml" --dry-run --verbose -- prog
	[ "$status" -eq 0 ]
	jq -e --arg c "$tmp/cache/$hex" '.env.HPCTRAIN_DATA_FM_X == $c and .env.HPCTRAIN_DATA_W == ($c + "/w.bin")' <<<"$output"
	[[ "$stderr" == *"hpctrain launch: rank 0: data HPCTRAIN_DATA_FM_X=$tmp/cache/$hex (staged)"* ]]
	[[ "$stderr" != *warning* ]]
	# data.to auto: under $TMPDIR, in hpctrain-cache-UID
	sed -i '/cache:/d' "$tmp/j.yaml"
	mkdir -p "$tmp/t/hpctrain-cache-$(id -u)/$hex"
	TMPDIR=$tmp/t run --separate-stderr "$HPT" launch --spec "$tmp/j.yaml" --dry-run -- prog
	jq -e --arg c "$tmp/t/hpctrain-cache-$(id -u)/$hex" '.env.HPCTRAIN_DATA_FM_X == $c' <<<"$output"
	rm -rf "$tmp"
}

@test "after hpctrain stage --run, launch names the node's copy and warns of nothing" {
	[ -x "${HPT%/*}/hpctrain-stage" ] || skip "no bin/hpctrain-stage"
	tmp=$(mktemp -d)
	export XDG_CACHE_HOME=$tmp/xdg
	mkdir -p "$tmp/src/sub" "$tmp/runs/r"
	chmod 700 "$tmp/runs" "$tmp/runs/r"
	printf 'abc' >"$tmp/src/a"
	printf 'de' >"$tmp/src/sub/b"
	printf 'version: 1\nname: r\ncommand: [true]\ncode: false\nbinding: {cpu: none}\ndata: {stage: [{name: fm, src: %s}], cache: {dir: %s}}\n' \
		"$tmp/src" "$tmp/cache" >"$tmp/r.yaml"
	"$HPT" validate --print-resolved "$tmp/r.yaml" >"$tmp/runs/r/resolved.yaml"
	run -0 "$HPT" stage --run "$tmp/runs/r"
	run -0 --separate-stderr "$HPT" launch --run "$tmp/runs/r" --dry-run -- prog
	[ -z "$stderr" ]
	path=$(jq -r .env.HPCTRAIN_DATA_FM <<<"$output")
	[[ "$path" == "$tmp/cache/"* ]]
	[ "$(cat "$path/a")" = abc ] && [ "$(cat "$path/sub/b")" = de ]
	rm -rf "$tmp"
}

@test "a launch as planned has no contract warning; an HCA the node lacks is named" {
	run -0 "$HPT" launch -- true
	[[ "$output" != *warning:* ]]
	tmp=$(mktemp -d)
	printf 'version: 1\nname: t\nenv: {NCCL_IB_HCA: "=mlx5_77", NCCL_SOCKET_IFNAME: "^docker"}\n' >"$tmp/j.yaml"
	run -0 "$HPT" launch --spec "$tmp/j.yaml" -- true
	[[ "$output" == *"hpctrain launch: rank 0: warning: NCCL_IB_HCA==mlx5_77 names mlx5_77, which is no InfiniBand/RoCE device of this node (it has "* ]]
	[[ "$output" != *NCCL_SOCKET_IFNAME* ]]
	rm -rf "$tmp"
}

@test "the contract names a GPU the spec's env moved, and a supervised run keeps it for status --ranks" {
	tmp=$(mktemp -d)
	mkdir "$tmp/run"
	printf 'version: 1\nname: t\nenv: {CUDA_VISIBLE_DEVICES: "3"}\n' >"$tmp/run/resolved.yaml"
	run -0 env SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=7 SLURM_LOCALID=7 SLURM_NODEID=0 \
		SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=8 SLURM_STEP_TASKS_PER_NODE=8 \
		SLURM_STEP_NODELIST=dgx01 "$HPT" launch --topology "$DGXA100" --supervise --run "$tmp/run" -- true
	[[ "$output" == *"rank 7: warning: CUDA_VISIBLE_DEVICES=7 was planned (GPU "*", but the program gets 3"* ]]
	run -0 "$HPT" status --ranks "$tmp/run"
	[[ "$output" == *"warning: rank 7: CUDA_VISIBLE_DEVICES=7 was planned"* ]]
	run -0 "$HPT" status --ranks --json "$tmp/run"
	echo "$output" | jq -e '.ranks[0].contract.planned.env.CUDA_VISIBLE_DEVICES == "7"
		and .ranks[0].contract.got.env.CUDA_VISIBLE_DEVICES == "3"
		and (.ranks[0].contract.warnings | length) == 1' >/dev/null
	rm -rf "$tmp"
}

@test "binding.contract: fail ends a rank whose env moved its GPU with status 7, before the program" {
	tmp=$(mktemp -d)
	printf 'version: 1\nname: t\nbinding: {contract: fail}\nenv: {CUDA_VISIBLE_DEVICES: "3"}\n' >"$tmp/j.yaml"
	run -7 --separate-stderr env SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=7 SLURM_LOCALID=7 \
		SLURM_NODEID=0 SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=8 SLURM_STEP_TASKS_PER_NODE=8 \
		SLURM_STEP_NODELIST=dgx01 "$HPT" launch --topology "$DGXA100" --spec "$tmp/j.yaml" -- touch "$tmp/ran"
	[[ "${stderr_lines[0]}" == "hpctrain launch: rank 7: error: CUDA_VISIBLE_DEVICES=7 was planned (GPU "*", but the program gets 3" ]]
	[ "${stderr_lines[1]}" = "hpctrain launch: rank 7: binding.contract is fail: the program is not started" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ ! -e "$tmp/ran" ]
	rm -rf "$tmp"
}

# in_cpuset0 CMD...: CMD in a new cpuset cgroup (v1) of CPU 0 alone, for
# a narrowing hwloc is told to ignore (HWLOC_ALLOW=all, as a site's
# hwloc that cannot read its cgroup would); skips where none can be made.
in_cpuset0() {
	local cg=/sys/fs/cgroup/cpuset/hpctrain-bats-$$-$BATS_TEST_NUMBER rc=0
	[ "$(nproc)" -ge 2 ] || skip "one CPU: nothing to narrow"
	mkdir "$cg" 2>/dev/null || skip "cannot make a cpuset cgroup (needs root and cgroup v1)"
	echo 0 >"$cg/cpuset.cpus" && echo 0 >"$cg/cpuset.mems" || { rmdir "$cg"; skip "cannot set a cpuset"; }
	sh -c 'echo $$ >"$1/tasks" && shift && exec "$@"' sh "$cg" env HPCTRAIN_TOPO_CACHE=off HWLOC_ALLOW=all "$@" || rc=$?
	rmdir "$cg"
	return "$rc"
}

@test "binding.contract: fail ends a rank its cgroup keeps off the planned CPUs; warn runs it and says so" {
	tmp=$(mktemp -d)
	printf 'version: 1\nname: t\nbinding: {contract: fail}\n' >"$tmp/fail.yaml"
	printf 'version: 1\nname: t\n' >"$tmp/warn.yaml"
	run -7 --separate-stderr in_cpuset0 "$HPT" launch --spec "$tmp/fail.yaml" -- touch "$tmp/ran"
	[[ "${stderr_lines[0]}" == "hpctrain launch: rank 0: error: the program runs on CPUs 0, not the planned 0-"* ]]
	[ "${stderr_lines[1]}" = "hpctrain launch: rank 0: binding.contract is fail: the program is not started" ]
	[ ! -e "$tmp/ran" ]
	run -0 --separate-stderr in_cpuset0 "$HPT" launch --spec "$tmp/warn.yaml" -- touch "$tmp/ran"
	[[ "$stderr" == "hpctrain launch: rank 0: warning: the program runs on CPUs 0, not the planned 0-"* ]]
	[ -e "$tmp/ran" ]
	rm -rf "$tmp"
}

@test "the program's exit status and arguments pass through unchanged" {
	run "$HPT" launch -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	run "$HPT" launch -- printf '%s|' --cpu 'a b' '$(x)'
	[ "$output" = '--cpu|a b|$(x)|' ]
}

@test "a missing program exits 127 and a non-executable one 126" {
	run -127 --separate-stderr "$HPT" launch -- /nonexistent/prog
	[ "$stderr" = "hpctrain launch: /nonexistent/prog: command not found" ]
	tmp=$(mktemp)
	run -126 --separate-stderr "$HPT" launch -- "$tmp"
	[ "$stderr" = "hpctrain launch: cannot execute $tmp: Permission denied" ]
	rm -f "$tmp"
}

@test "launch without a program, or with a bad policy, is a usage error" {
	run --separate-stderr "$HPT" launch
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain launch: no program given" ]
	run --separate-stderr "$HPT" launch --nic rial -- true
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain launch: --nic: unknown policy 'rial'" ]
}

@test "a CUDA_VISIBLE_DEVICES the plan cannot use is refused; one it can is planned over exactly" {
	H100=$FIX/224em64t-2n56c2t-dgxh100.xml
	slurm=(SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_LOCALID=1 SLURM_NODEID=0
	       SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=2 SLURM_STEP_TASKS_PER_NODE=2)
	run -7 --separate-stderr env "${slurm[@]}" CUDA_VISIBLE_DEVICES=garbage \
		"$HPT" launch --topology "$DGXA100" --dry-run -- prog
	[ "$stderr" = 'hpctrain launch: CUDA_VISIBLE_DEVICES=garbage: "garbage" is neither a GPU index nor a GPU-/MIG- UUID' ]
	[ -z "$output" ]
	run -7 --separate-stderr env "${slurm[@]}" CUDA_VISIBLE_DEVICES=99,100 \
		"$HPT" launch --topology "$DGXA100" --dry-run -- prog
	[ "$stderr" = "hpctrain launch: CUDA_VISIBLE_DEVICES=99,100: GPU 99 is not on this node, which has 8 (0-7)" ]
	# UUIDs: the A100 fixture records none, the H100 one has other GPUs
	uuid=GPU-0badc0de-0000-0000-0000-000000000000
	run -7 --separate-stderr env "${slurm[@]}" CUDA_VISIBLE_DEVICES=$uuid \
		"$HPT" launch --topology "$DGXA100" --dry-run -- prog
	[ "$stderr" = "hpctrain launch: CUDA_VISIBLE_DEVICES=$uuid: $uuid cannot be placed: the topology records no GPU UUIDs" ]
	run -7 --separate-stderr env "${slurm[@]}" CUDA_VISIBLE_DEVICES=$uuid \
		"$HPT" launch --topology "$H100" --dry-run -- prog
	[[ "$stderr" == *"$uuid is not the UUID (or a unique prefix of one) of any of this node's 8 GPUs" ]]
	# the H100's own UUIDs: rank 1 gets the second one and that GPU's cores
	run -0 --separate-stderr env "${slurm[@]}" \
		CUDA_VISIBLE_DEVICES=GPU-5eed0006-1f2e-4d3c-8b4a-000100000006,GPU-5eed0007 \
		"$HPT" launch --topology "$H100" --dry-run -- prog
	echo "$output" | jq -e '.env.CUDA_VISIBLE_DEVICES == "GPU-5eed0007" and .slice.gpu == 7' >/dev/null
	want=$(CUDA_VISIBLE_DEVICES=6,7 env "${slurm[@]}" "$HPT" launch --topology "$H100" --dry-run -- prog |
		jq -r .slice.cpus)
	[ "$(echo "$output" | jq -r .slice.cpus)" = "$want" ]
	# --gpu none leaves the variable alone, as documented
	run -0 env "${slurm[@]}" CUDA_VISIBLE_DEVICES=garbage "$HPT" launch --gpu none \
		--topology "$DGXA100" --dry-run -- prog
}

@test "a malformed rank variable is a usage error naming it, its value and the command" {
	run --separate-stderr env SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=abc \
		SLURM_LOCALID=-1 SLURM_NODEID=0 SLURM_NNODES=1 SLURM_TASKS_PER_NODE=2 \
		"$HPT" launch --dry-run -- prog
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = 'hpctrain launch: SLURM_NTASKS: expected an integer 1..1073741824, got "abc"' ]
	[ "${stderr_lines[1]}" = 'hpctrain launch: SLURM_LOCALID: expected an integer 0..1073741824, got "-1"' ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	# SLURM_NTASKS set and valid: the complaint is about SLURM_PROCID's value
	run --separate-stderr env SLURM_STEP_ID=0 SLURM_PROCID=9 SLURM_NTASKS=8 "$HPT" launch -- true
	[ "$status" -eq "$EX_USAGE" ]
	[ "$stderr" = "hpctrain launch: SLURM_PROCID: 9 is not below SLURM_NTASKS (8)" ]
}

@test "under srun --mpi=pmix ranks come from the step across two slurmd" {
	need_slurm
	run srun --mpi=pmix -N2 -n4 --ntasks-per-node=2 "$HPT" launch --verbose -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c '^rank=')" -eq 4 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'from slurm on')" -eq 4 ]
	for l in $(printf '%s\n' "${lines[@]}" | grep '^rank=' | tr ' ' '#'); do
		l=$(echo "$l" | tr '#' ' ')
		[ "$(field world "$l")" = 4 ]
		[ "$(field lws "$l")" = 2 ]
		[ "$(field cpus "$l")" = "$(field slice "$l")" ]
		[ "$(field node "$l")" = $(( $(field rank "$l") / 2 )) ]
	done
	[ "$(printf '%s\n' "${lines[@]}" | grep '^rank=' | sed 's/.*master=\([^ ]*\).*/\1/' | sort -u | wc -l)" -eq 1 ]
}

@test "under srun --mpi=pmix an MPI program initialises through launch" {
	need_slurm
	# Two slurmd on one host share /dev/shm segment names: TCP only there.
	[ "$CLUSTER_MODE" = netns ] || export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo
	run srun --mpi=pmix -N2 -n2 "$HPT" launch -- "$BATS_FILE_TMPDIR/mpi_hello"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'sum 3$')" -eq 2 ]
}

@test "under srun with Slurm's GPUs each rank gets one of them, never more" {
	need_slurm
	run srun --mpi=pmix -N1 -n4 --gpus-per-node=4 "$HPT" launch --cpu node -- "$HELP/whoami.sh"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | sed -n 's/.*cvd=\([^ ]*\).*/\1/p' | sort -u | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "under srun a PyTorch-style program meets its peers on another node" {
	need_slurm
	[ "$CLUSTER_MODE" = netns ] || skip "node names resolve only with network namespaces"
	run srun --mpi=pmix -N2 -n4 --ntasks-per-node=2 "$HPT" launch -- python3 "$HELP/rendezvous.py"
	[ "$status" -eq 0 ]
	[[ "$output" == *"rendezvous ok 4"* ]]
}

@test "a program argument and a topology path that are not UTF-8 are carried escaped in the rank's report, and the program gets the bytes" {
	tmp=$(mktemp -d)
	topo=$tmp/node-$'\xff'.xml
	cp "$DGXA100" "$topo"
	run env SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0 \
		SLURM_STEP_NUM_NODES=1 SLURM_STEP_NUM_TASKS=8 SLURM_STEP_TASKS_PER_NODE=8 \
		SLURM_STEP_NODELIST=dgx01 "$HPT" launch --topology "$topo" --report "$tmp" -- \
		sh -c 'printf %s "$1" >"$2"' sh $'arg-\xfe-end' "$tmp/got"
	[ "$status" -eq 0 ]
	[ "$(cat "$tmp/got")" = $'arg-\xfe-end' ]
	# once json_string's NULL for such bytes left the argument out of the
	# list, and the path took the whole report with it (exit 70, no word)
	jq -e '.program == ["sh", "-c", "printf %s \"$1\" >\"$2\"", "sh", "arg-\\xfe-end", "'"$tmp"'/got"]' \
		"$tmp/rank-00000.json" >/dev/null
	jq -e '.topology == "'"$tmp"'/node-\\xff.xml"' "$tmp/rank-00000.json" >/dev/null
	rm -rf "$tmp"
}
