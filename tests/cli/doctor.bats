#!/usr/bin/env bats
# doctor.bats - hpctrain doctor on recorded sysfs trees and on a local
# Slurm of three network-namespace nodes, with real faults: an interface
# name that only some nodes have, a node slowed by a cgroup CPU quota, a
# preflight that must keep a job off a failing node, and the ledger that
# remembers it for the next submit.

load common
load slurm_cluster

FIXTURE=$BATS_TEST_DIRNAME/../fixtures/sysfs/hca-down

setup_file() {
	if [ "$(id -u)" -eq 0 ] && ip netns add "hpt-probe-$$" 2>/dev/null; then
		ip netns del "hpt-probe-$$"
		cluster_up netns 3
	fi
}

setup() {
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/ledger/nodes.json
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	[ -z "${SHARED:-}" ] || rm -rf "$SHARED"
}

# as_nobody CMD...: CMD as another user, the attacker of a shared directory.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# An interface only the given nodes have (a bridge: no module needed).
add_ifname() { # NAME NODE...
	local name=$1 n
	shift
	for n in "$@"; do
		in_node_net "$n" link add "$name" type bridge
		in_node_net "$n" link set "$name" up
	done
}

del_ifname() {
	local name=$1 n
	shift
	for n in "$@"; do in_node_net "$n" link del "$name" 2>/dev/null || true; done
}

doctor_srun() { # NODES ARGS...
	local nodes=$1
	shift
	srun --mpi=pmix -w "$nodes" -N "$(sinfo -h -N -n "$nodes" -o %N | wc -l)" --ntasks-per-node=1 \
		"$HPT" doctor "$@"
}

@test "doctor --help and bad flags" {
	run -0 "$HPT" doctor --help
	[[ "$output" == *"--exclude-file FILE"* ]]
	run -$EX_USAGE "$HPT" doctor --timeout 0
	[[ "$output" == *"--timeout: expected a number 1..86400, got '0'"* ]]
	run -$EX_USAGE "$HPT" doctor --straggler 2
	run -$EX_USAGE "$HPT" doctor --spec a.yaml --preflight runs/x
	run -$EX_USAGE "$HPT" doctor stray
	run -$EX_NO_INPUT "$HPT" doctor --spec "$BATS_TEST_TMPDIR/none.yaml"
}

@test "a malformed SLURM_STEP_NUM_TASKS is a usage error naming it, not read as a count" {
	for v in 2x -2 " 2" ""; do
		SLURM_STEP_NUM_TASKS=$v run -"$EX_USAGE" --separate-stderr "$HPT" doctor --timeout 30
		[ "$stderr" = "hpctrain doctor: SLURM_STEP_NUM_TASKS: expected an integer 1..1073741824, got \"$v\"" ]
	done
	SLURM_STEP_NUM_TASKS=4 run -"$EX_USAGE" --separate-stderr "$HPT" doctor --timeout 30
	[ "$stderr" = "hpctrain doctor: 4 tasks but no MPI wire-up: run it as 'srun --mpi=pmix hpctrain doctor'" ]
}

@test "a CUDA_VISIBLE_DEVICES the plan cannot use fails the binding check with the reason" {
	CUDA_VISIBLE_DEVICES=garbage run -1 "$HPT" doctor --timeout 60
	[[ "$output" == *' binding   FAIL  CUDA_VISIBLE_DEVICES=garbage: "garbage" is neither a GPU index nor a GPU-/MIG- UUID'* ]]
}

@test "on a recorded tree: a DOWN port of a named HCA fails the node, with the reason and exit 1" {
	NCCL_IB_HCA=mlx5_1 run -1 --separate-stderr "$HPT" doctor --root "$FIXTURE" --no-ledger
	[[ "$output" == *"nics      FAIL  mlx5_1 port 1 is DOWN"* ]]
	[[ "$output" == *"exclude: "* ]]
	NCCL_IB_HCA=mlx5_1 run -1 --separate-stderr "$HPT" doctor --root "$FIXTURE" --json
	jq -e '.ok == false and (.nodes[0].checks.nics.grade == "FAIL") and (.failed | length == 1)' <<<"$output"
}

@test "the ledger: empty, then forget of an unknown node is an error" {
	run -0 "$HPT" doctor --ledger
	[[ "$output" == *"the ledger is empty"* ]]
	run -$EX_NO_INPUT "$HPT" doctor --forget node9
	[[ "$output" == *"node9 is not in the ledger"* ]]
	run -0 "$HPT" doctor --ledger --json
	jq -e '.version == 1' <<<"$output"
}

@test "a corrupt ledger fails with its line and column; --forget and --reset repair it, keeping a backup" {
	mkdir ledger
	printf '{\n "version": 1,\n "clusters": {,\n' >"$HPCTRAIN_LEDGER"
	cp "$HPCTRAIN_LEDGER" corrupt.json
	run -$EX_IO "$HPT" doctor --ledger
	[[ "$output" == *"nodes.json:3:"*": not a node ledger: "* ]]
	run -$EX_IO "$HPT" doctor --ledger --json
	run -0 --separate-stderr "$HPT" doctor --forget node2
	[ "$output" = "forgot node2" ]
	local kept=(ledger/nodes.json.corrupt-*)
	[ "${#kept[@]}" -eq 1 ]
	[[ "$stderr" == *"nodes.json:3:"*"; kept it as "*"/${kept[0]}, and the ledger starts empty" ]]
	[ "$(stat -c %a "${kept[0]}")" = 600 ]
	cmp corrupt.json "${kept[0]}"
	run -0 "$HPT" doctor --ledger
	[[ "$output" == *"the ledger is empty"* ]]
	# --reset repairs the same way; of a whole ledger, it keeps a backup too
	echo garbage >"$HPCTRAIN_LEDGER"
	run -0 --separate-stderr "$HPT" doctor --reset
	[ "$output" = "the ledger $HPCTRAIN_LEDGER is empty" ]
	[[ "$stderr" == *"nodes.json:1:"*": not a node ledger: "*"; kept it as "*"nodes.json.corrupt-"* ]]
	printf '{"version": 1, "clusters": {"c": {"node1": {"failures": 1}}}}\n' >"$HPCTRAIN_LEDGER"
	run -0 --separate-stderr "$HPT" doctor --reset
	[[ "$stderr" == *"kept the ledger "*"nodes.json as "*"nodes.json.reset-"*", and it starts empty" ]]
	jq -e '.clusters.c.node1.failures == 1' ledger/nodes.json.reset-*
	jq -e '.clusters == {}' "$HPCTRAIN_LEDGER"
	run -$EX_USAGE "$HPT" doctor --reset --forget node1
}

@test "the ledger's table escapes control characters, and shows an until in 5138 as a week" {
	mkdir ledger
	jq -n '{version: 1, clusters: {c: {"node\u001b1": {failures: 3, cooldown_s: 99999999,
		until: 99999999999, reason: "nics: \u001b[2J\u001b]0;owned\u0007 \u009b1m down\n"}}}}' \
		>"$HPCTRAIN_LEDGER"
	run -0 "$HPT" doctor --ledger
	[[ "$output" != *$'\e'* && "$output" != *$'\a'* && "$output" != *$'\xc2\x9b'* ]]
	[[ "$output" == *'node\x1b1 '*'nics: \x1b[2J\x1b]0;owned\x07 \xc2\x9b1m down\n'* ]]
	[[ "$output" == *"(7d 0h left)"* || "$output" == *"(6d 23h left)"* ]]
}

@test "a symlinked ledger stays a link; another user's lock link or ledger is refused" {
	[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null || skip "needs root and setpriv"
	mkdir real ledger
	printf '{"version": 1, "clusters": {"c": {"node2": {"failures": 1}}}}\n' >real/nodes.json
	ln -s "$PWD/real/nodes.json" "$HPCTRAIN_LEDGER"
	run -0 "$HPT" doctor --forget node2
	[ -L "$HPCTRAIN_LEDGER" ]
	jq -e '.clusters == {}' real/nodes.json
	# a directory another user can write: nobody plants a link where the lock goes
	SHARED=$(mktemp -d /tmp/hpt-shared.XXXXXX)
	chmod 0777 "$SHARED"
	as_nobody ln -s "$BATS_TEST_TMPDIR/victim" "$SHARED/nodes.json.lock"
	HPCTRAIN_LEDGER=$SHARED/nodes.json run -$EX_IO "$HPT" doctor --forget node2
	[[ "$output" == *"nodes.json.lock is a symbolic link: refusing to follow it"* ]]
	HPCTRAIN_LEDGER=$SHARED/nodes.json run -$EX_IO "$HPT" doctor --ledger
	[ ! -e victim ]
	rm "$SHARED/nodes.json.lock"
	# ... or a ledger of their own making
	as_nobody sh -c "echo '{\"version\": 1, \"clusters\": {}}' >'$SHARED/nodes.json'"
	HPCTRAIN_LEDGER=$SHARED/nodes.json run -$EX_IO "$HPT" doctor --ledger
	[[ "$output" == *"nodes.json: it belongs to uid $(id -u nobody), not to uid 0"* ]]
}

@test "a healthy allocation passes every check, and records both nodes in the ledger" {
	need_slurm
	local t0=$SECONDS line
	# The namespace nodes share this machine's cores: work elsewhere on
	# the machine can slow one node's GEMM or one link to a warning, so
	# the bar for failing is low and a warning is let pass; the
	# straggler tests below slow a node on purpose.
	run -0 --separate-stderr doctor_srun 'node[1-2]' --verbose --straggler 0.1
	line=$(grep '^node1  compute ' <<<"$output")
	[[ "$line" == "node1  compute   ok "*"of the fastest node"* ||
		"$line" == "node1  compute   warn "*"of the fastest node"* ]]
	line=$(grep '^node2  network ' <<<"$output")
	[[ "$line" == "node2  network   ok    ring:"* || "$line" == "node2  network   warn  link "* ]]
	[[ "$output" == *"node2  services  ok    munge credential made and read back"* ]]
	[[ "$output" != *FAIL* ]]
	echo "# doctor on 2 healthy nodes, srun included: $((SECONDS - t0)) s" >&3
	jq -e '.clusters[] | (.node1.checks == 1 and .node2.checks == 1 and (.node2 | has("until") | not))' \
		"$HPCTRAIN_LEDGER"
}

@test "NCCL_SOCKET_IFNAME that only node1 has: node2 fails and is the exclude list" {
	need_slurm
	add_ifname ibx0 1
	NCCL_SOCKET_IFNAME=ibx0 run -1 --separate-stderr doctor_srun 'node[1-2]' --exclude-file excl
	del_ifname ibx0 1
	[[ "$output" == *"node1  skip      ok"* ]]
	[[ "$output" == *"node2  nics      FAIL  NCCL_SOCKET_IFNAME=ibx0 names ibx0, which is no network interface of this node (it has lo, eth0)"* ]]
	[ "$(cat excl)" = node2 ]
	run -0 "$HPT" doctor --ledger
	[[ "$output" == *"node2  1         1"*"cooling until"*"nics: NCCL_SOCKET_IFNAME=ibx0"* ]]
	run -0 "$HPT" doctor --forget node2
	run -0 "$HPT" doctor --ledger
	[[ "$output" != *node2* ]]
}

# Move every process of cgroup $1 back to its parent, then remove it. Not
# only slurmd is in it: the slurmstepds it forked may still be exiting, and a
# cgroup with a process left in it cannot be removed (EBUSY).
release_cgroup() {
	local cg=$1 p
	for _ in $(seq 100); do
		while read -r p; do
			echo "$p" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null || true
		done <"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# cgroup $cg still holds: $(tr '\n' ' ' <"$cg/cgroup.procs")" >&3
	return 1
}

@test "a node slowed by a cgroup CPU quota is flagged as a straggler" {
	need_slurm
	local cg pid
	pid=$(cat "$CLUSTER_BASE/run/slurmd-node2.pid")
	# cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us): 10% of one CPU for
	# node2's slurmd and its steps, below half of node1's share even when
	# other suites keep both cores busy (a load of 8 gives node1 a quarter)
	if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
		cg=/sys/fs/cgroup/hpt-slow-$$
		mkdir "$cg" && echo "10000 100000" >"$cg/cpu.max"
	elif [ -d /sys/fs/cgroup/cpu ] && mkdir /sys/fs/cgroup/cpu/hpt-slow-$$ 2>/dev/null; then
		cg=/sys/fs/cgroup/cpu/hpt-slow-$$
		echo 10000 >"$cg/cpu.cfs_quota_us"
	else
		skip "no writable cgroup CPU controller"
	fi
	echo "$pid" >"$cg/cgroup.procs"
	run -1 --separate-stderr doctor_srun 'node[1-2]' --no-ledger
	release_cgroup "$cg"
	[[ "$output" == *"node2  compute   FAIL"*"of the fastest node (node1): a straggler"* ]]
	[[ "$output" == *"exclude: node2"* ]]
}

@test "preflight keeps a job off a failing node: it resubmits without it, the ledger keeps it, the next submit leaves it out" {
	need_slurm
	add_ifname ibx0 1 3
	write_spec job.yaml pf 2 1 '[sh, -c, "echo trained on $(hostname)"]' 'env: {NCCL_SOCKET_IFNAME: ibx0}'
	submit_json job.yaml
	local run=$DIR
	# attempt 1 fails its preflight on node2 and submits attempt 2 without it
	for _ in $(seq 300); do [ -s "$run/attempts/2/logs/rank-1.out" ] && break; sleep 0.2; done
	run -0 "$HPT" status --wait --json "$run"
	del_ifname ibx0 1 3
	[[ "$(cat "$run"/logs/batch-*.out)" == *"node2  nics      FAIL"* ]]
	[[ "$(cat "$run"/logs/batch-*.out)" == *"nothing was trained"* ]]
	[ ! -e "$run/logs/rank-0.out" ]
	jq -e '.ok == false and .exclude == "node2"' "$run/preflight.json"
	jq -e '.exclude == "node2" and .attempt == 2' "$run/attempts/2/submit.json"
	grep -qx '#SBATCH --exclude=node2' "$run/attempts/2/job.sbatch"
	[ "$(cat "$run"/attempts/2/logs/rank-*.out | sort)" = "$(printf 'trained on node1\ntrained on node3')" ]
	jq -e '.ok == true' "$run/attempts/2/preflight.json"
	jq -e '.clusters[].node2.failures == 1' "$HPCTRAIN_LEDGER"
	# the ledger's cooldown reaches the next submission, which says so
	run -0 --separate-stderr "$HPT" submit --json --set name=pf2 job.yaml
	[[ "$stderr" == *"excluding node2: it failed doctor 1 time(s), last: nics: NCCL_SOCKET_IFNAME=ibx0"* ]]
	jq -e '.exclude == "node2"' <<<"$output"
	"$HPT" cancel "$(jq -r .job_id <<<"$output")" >/dev/null
	run -0 --separate-stderr "$HPT" submit --dry-run --no-ledger job.yaml
	[[ "$output" != *"#SBATCH --exclude"* ]]
}

@test "a ledger node the cluster does not have is not excluded: submit warns and succeeds" {
	need_slurm
	local cluster
	cluster=$(scontrol show config | awk '$1 == "ClusterName" { print $3 }')
	mkdir -p ledger
	jq -n --arg c "$cluster" '{version: 1, clusters: {($c): {
		ghost9: {failures: 1, cooldown_s: 3600, until: 99999999999, reason: "gone"},
		node2: {failures: 2, cooldown_s: 7200, until: 99999999999, reason: "nics: down"}}}}' \
		>"$HPCTRAIN_LEDGER"
	write_spec job.yaml ghost 1 1 '[true]'
	run -0 --separate-stderr "$HPT" submit --json job.yaml
	[[ "$stderr" == *"hpctrain submit: warning: not excluding ghost9, which the node ledger holds but cluster $cluster has no node of that name ('hpctrain doctor --forget ghost9' clears it)"* ]]
	# an until in the year 5138 is a week
	[[ "$stderr" == *"hpctrain submit: excluding node2: it failed doctor 2 time(s), last: nics: down; cooling down for 10080 min more"* ]]
	jq -e '.exclude == "node2"' <<<"$output"
	"$HPT" cancel "$(jq -r .job_id <<<"$output")" >/dev/null
}

@test "two doctor runs at once lose no ledger entry" {
	need_slurm
	doctor_srun node1 --no-ledger >/dev/null # warm up
	doctor_srun node1 >o1 2>&1 &
	local a=$!
	doctor_srun node3 >o3 2>&1 &
	local b=$!
	wait "$a"
	wait "$b"
	jq -e '.clusters[] | (.node1.checks == 1 and .node3.checks == 1)' "$HPCTRAIN_LEDGER"
}

@test "submit and rerun refuse an --exclude that is no hostlist" {
	write_spec job.yaml x 1 1 '[true]'
	run -$EX_USAGE "$HPT" submit --exclude 'node1;rm' job.yaml
	[[ "$output" == *"--exclude: 'node1;rm' is not a Slurm hostlist"* ]]
	run -$EX_USAGE "$HPT" rerun --exclude 'node1 node2' runs/x
	run -0 "$HPT" submit --dry-run --exclude 'node[1,3]' job.yaml
	[[ "$output" == *"#SBATCH --exclude=node[1,3]"* ]]
}

# --- the container cell: the job's image on this node ---

# container_spec FILE IMAGE [RUNTIME]: a spec whose ranks run in IMAGE.
container_spec() {
	printf 'version: 1\nname: ctr\ncommand: [sh]\ncontainer: {image: %s, runtime: %s}\n' \
		"$2" "${3:-charliecloud}" >"$1"
}

# The test image of container.bats (helpers/mkimage.sh), cached under build/.
need_image() {
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
	local cache=$BATS_TEST_DIRNAME/../../build/test-image
	test_image "$cache/img"
	IMG=$(cd "$cache/img" && pwd)
	export USER=${USER:-root}
}

@test "doctor without container.image skips the container cell" {
	run -0 "$HPT" doctor --no-ledger --verbose --timeout 60
	[[ "$output" == *"node  gpus      nics      binding   compute   network   files     services  container"* ]]
	[[ "$output" == *"  container  skip  no container.image in the spec"* ]]
}

@test "a good charliecloud image passes the container cell, PMIx's directory seen inside" {
	need_image
	container_spec job.yaml "$IMG"
	PMIX_RANK=0 PMIX_SERVER_TMPDIR=$BATS_TEST_TMPDIR run -0 timeout 120 \
		"$HPT" doctor --spec job.yaml --no-ledger --verbose --timeout 60
	[[ "$output" == *"  container  ok    ch-run started /bin/sh in $IMG; 0 device(s) and PMIx visible inside"* ]]
}

@test "a PMIx directory the image cannot see fails the container cell, naming it" {
	need_image
	mkdir -p /var/tmp/hpt-pmix-$$
	container_spec job.yaml "$IMG"
	PMIX_SERVER_TMPDIR=/var/tmp/hpt-pmix-$$ run -1 timeout 120 \
		"$HPT" doctor --spec job.yaml --no-ledger --timeout 60
	rmdir /var/tmp/hpt-pmix-$$
	[[ "$output" == *"  container  FAIL  not visible inside: PMIx rendezvous directory /var/tmp/hpt-pmix-$$ (bind it: container.mounts)"* ]]
	[[ "$output" == *"exclude: "* ]]
}

@test "a missing runtime or image, or a file that is no image, fails the container cell with the reason" {
	need_image
	container_spec job.yaml "$IMG"
	run -1 /usr/bin/timeout 120 env PATH=/nonexistent "$HPT" doctor --spec job.yaml --no-ledger \
		--timeout 60
	[[ "$output" == *"  container  FAIL  container runtime charliecloud: ch-run not found in PATH"* ]]
	container_spec job.yaml "$BATS_TEST_TMPDIR/no-such-image"
	run -1 timeout 120 "$HPT" doctor --spec job.yaml --no-ledger --timeout 60
	[[ "$output" == *"  container  FAIL  container image $BATS_TEST_TMPDIR/no-such-image: No such file or directory"* ]]
	echo 'not an image' >notimg
	container_spec job.yaml "$BATS_TEST_TMPDIR/notimg"
	run -1 timeout 120 "$HPT" doctor --spec job.yaml --no-ledger --timeout 60
	[[ "$output" == *"  container  FAIL  container image $BATS_TEST_TMPDIR/notimg is neither a directory, a SquashFS"* ]]
}

# hang_image DIR: the test image whose /bin/sh never returns; HANG is
# its sleep's command line, this test's own, for pgrep.
hang_image() {
	HANG="sleep 600.$$"
	cp -a "$IMG" "$1"
	rm "$1/usr/bin/sh"
	printf '#!/usr/bin/dash\nexec %s\n' "$HANG" >"$1/usr/bin/sh"
	chmod 755 "$1/usr/bin/sh"
}

@test "a program that hangs in the image is killed at --timeout and fails the cell" {
	need_image
	hang_image hang
	container_spec job.yaml "$BATS_TEST_TMPDIR/hang"
	run -1 timeout 120 "$HPT" doctor --spec job.yaml --no-ledger --timeout 2
	[[ "$output" == *"  container  FAIL  ch-run did not finish /bin/sh in $BATS_TEST_TMPDIR/hang within 2 s: killed at --timeout"* ]]
	run -1 pgrep -f -x "$HANG"
}

@test "on a Slurm node PMIx reaches inside the image; a hanging image fails the node into the ledger" {
	need_slurm
	need_image
	container_spec job.yaml "$IMG"
	run -0 --separate-stderr doctor_srun node1 --spec job.yaml --no-ledger --verbose
	[[ "$output" == *"node1  container  ok    ch-run started /bin/sh in $IMG; 0 device(s) and PMIx visible inside"* ]]
	hang_image hang
	container_spec job.yaml "$BATS_TEST_TMPDIR/hang"
	run -1 --separate-stderr doctor_srun node1 --spec job.yaml --timeout 2
	[[ "$output" == *"node1  container  FAIL  ch-run did not finish /bin/sh in $BATS_TEST_TMPDIR/hang within 2 s"* ]]
	[[ "$output" == *"exclude: node1"* ]]
	jq -e '.clusters[] | (.node1 | has("until"))' "$HPCTRAIN_LEDGER"
}

@test "under podman (runc) a good image passes, and a hanging one is cut at --timeout with its container removed" {
	need_image
	command -v podman >/dev/null && command -v runc >/dev/null || skip "no podman and runc"
	export HPCTRAIN_PODMAN_RUNTIME=runc
	export HPCTRAIN_PODMAN_ULIMITS="nofile=$(ulimit -Hn):$(ulimit -Hn),nproc=4096:4096"
	container_spec job.yaml "$IMG" podman
	PMIX_RANK=0 run -0 timeout 120 "$HPT" doctor --spec job.yaml --no-ledger --verbose --timeout 60
	[[ "$output" == *"  container  ok    podman started /bin/sh in $IMG; 0 device(s) and PMIx visible inside"* ]]
	hang_image hang
	container_spec job.yaml "$BATS_TEST_TMPDIR/hang" podman
	run -1 timeout 120 "$HPT" doctor --spec job.yaml --no-ledger --timeout 3
	[[ "$output" == *"  container  FAIL  podman did not finish /bin/sh in $BATS_TEST_TMPDIR/hang within 3 s: killed at --timeout"* ]]
	[ -z "$(podman ps -q --filter "ancestor=$BATS_TEST_TMPDIR/hang")" ]
	run -1 pgrep -f -x "$HANG"
}
