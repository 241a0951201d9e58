#!/usr/bin/env bats
# stage_cluster.bats - data.stage on a real three-node Slurm cluster
# (tests/cluster/up.sh MODE=netns, brought up once for the file), each
# node with its own node-local scratch at $BASE/local and the rest of the
# file system shared, jobs submitted with `hpctrain submit`.  Every
# node's copy equals the source, which is read once; the program finds
# the copy in HPCTRAIN_DATA_<NAME>; a second job hits every node's cache
# and reads nothing; two jobs at once and a sweep's array tasks copy
# each entry once per node; a stage step that crashed runs again;
# damage in one node's cache is fetched again by that node only; a
# source changed after submit fails the job promptly, naming the file; a
# full scratch fails that node's preflight with both sizes; a node whose
# copy fails verification twice fails the step and goes into the node
# ledger; container.stage starts each node's copy of the image; a
# script run through a relative link runs in each node's staged copy of
# the code snapshot (executables 0555, links as links, no bytecode
# written into it), which the run's second job (a rerun) finds cached; the
# bundled trainer reads dataset stage:NAME (a small sharded copy of
# Fashion-MNIST) from each node's copy.
#
# The issue speaks of ~300 MB; the data set here is 2000 files of
# 8-56 KB (~64 MB), which is as many files as makes the per-file costs
# show while keeping the file at about a minute or two on two cores.
# The image goes two ways: a tiny SquashFS staged beside the data set as
# a plain data.stage entry (a file source) in most tests, and, where
# ch-run and squashfuse are installed, container.stage of a small image
# (tests/cli/helpers/mkimage.sh) that each node starts from its own copy.
# Every wait is bounded.

load common
load slurm_cluster

unset SLURM_JOB_ID SLURM_STEP_ID SLURM_PROCID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK CUDA_VISIBLE_DEVICES

setup_file() {
	netns_cluster 3 mksquashfs python3
	[ -z "$SKIP_WHY" ] || return 0
	# Under /tmp, which every node shares; the cache under $BASE/local,
	# which each node has of its own.  A ledger of the file's own.
	WORK=$(mktemp -d /tmp/hpt-stage-cluster.XXXXXX)
	export WORK XDG_CACHE_HOME=$WORK/xdg HPCTRAIN_LEDGER=$WORK/ledger/nodes.json
	export CACHE=$CLUSTER_BASE/local/cache
	make_set "$WORK/ds" 2000
	mkdir -p "$WORK/imgdir/etc"
	echo tiny >"$WORK/imgdir/etc/os-release"
	mksquashfs "$WORK/imgdir" "$WORK/img.sqfs" -noappend -quiet >/dev/null
	# the scan trusts cached hashes only of files older than 2 s
	find "$WORK/ds" "$WORK/img.sqfs" -exec touch -d '-1 min' {} +
	SIZE=$(find "$WORK/ds" "$WORK/img.sqfs" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
	export SIZE
	# What a rank got: its data variables, and a file read through them.
	cat >"$WORK/probe.sh" <<-'PROBE'
	host=$(hostname)
	echo "host=$host ds=$HPCTRAIN_DATA_DS img=$HPCTRAIN_DATA_IMG marker=$(cat "$HPCTRAIN_DATA_DS/marker")"
	cmp "$HPCTRAIN_DATA_IMG" "$IMG_SRC" && echo "img ok on $host"
	PROBE
}

teardown_file() {
	local n
	for n in node1 node2 node3; do
		[ -n "${CLUSTER_BASE:-}" ] || break
		in_node_mnt "$n" umount "$CLUSTER_BASE/local/small" 2>/dev/null || true
	done
	cluster_down
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

# make_set DIR N: N files of 8-56 KB of random bytes in 20 folders, and
# a marker the job's program reads.
make_set() {
	python3 - "$1" "$2" <<-'PY'
	import os, random, sys
	d, n = sys.argv[1], int(sys.argv[2])
	r = random.Random(28)
	for i in range(n):
	    sub = os.path.join(d, "d%02d" % (i % 20))
	    os.makedirs(sub, exist_ok=True)
	    with open(os.path.join(sub, "f%04d" % i), "wb") as f:
	        f.write(os.urandom(r.randint(8, 56) * 1024))
	open(os.path.join(d, "marker"), "w").write("staged\n")
	PY
}

# spec FILE NAME NODES [EXTRA YAML]: NODES x 1 rank running probe.sh
# on the data set and the image, cached in CACHE (node-local).  code:
# false: a snapshot of each test's directory (another spec file each
# time) would be one more entry, fetched by every job; the code's own
# staging has a test of its own.
spec() {
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: $3, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: [sh, $WORK/probe.sh]
code: false
env: {IMG_SRC: $WORK/img.sqfs}
output: {dir: $WORK/runs}
preempt: {lead_s: 0}
preflight: false
data:
  stage: [{name: ds, src: $WORK/ds}, {name: img, src: $WORK/img.sqfs}]
  cache: {dir: ${CACHE_DIR:-$CACHE}}
${4:-}
SPEC
}

# finish JOB [TIMEOUT]: waits for the job (bounded); sets output.
finish() {
	run timeout "${2:-120}" "$HPT" status --wait --json "$1"
	[ "$status" -ne 124 ] || { echo "job $1 did not end in ${2:-120} s"; return 1; }
}

# state: the job's state from finish's output.
state() { jq -r '.jobs[0].state' <<<"$output"; }

# rec RUN NODE FILTER: jq FILTER of that node's stage record.
rec() { jq -r "$3" "$1/stage/$2.json"; }

# copy NODE [CACHE]: where NODE keeps the data set's cached copy.
copy_of() {
	local rel=${CACHE_DIR:-$CACHE}
	rel=${rel#"$CLUSTER_BASE/local"}
	echo "$CLUSTER_BASE/nodes/$1/local$rel/$(hex "$WORK/ds")"
}

hex() { "$HPT" stage --manifest "$1" | jq -r .hash | sed 's/^sha256://'; }

# fuse_probe FILE: a Python program printing its host, HPCTRAIN_DATA_IMAGE
# and the image's /marker, then which image file each squashfuse on the
# node serves: ch-run keeps the host's PID namespace, so the rank sees
# them (the nodes' copies share one path).
fuse_probe() {
	cat >"$1" <<-'PY'
	import glob, os
	seen = set()
	for p in glob.glob("/proc/[0-9]*/cmdline"):
	    try:
	        a = open(p, "rb").read().split(b"\0")
	    except OSError:
	        continue
	    if a[0].endswith(b"squashfuse"):
	        seen.update(x.decode() for x in a if x.endswith(b".sqfs"))
	print("host=%s image=%s marker=%s" % (os.uname().nodename, os.environ["HPCTRAIN_DATA_IMAGE"],
	                                      open("/marker").read().strip()))
	for s in sorted(seen):
	    print("squashfuse: " + s)
	PY
}

logs() { tail -n +1 "$1"/logs/* "$1"/stage/*.json 2>/dev/null | head -200; }

@test "a 3-node job stages the data set and image to every node from one read; the program reads the node's copy" {
	local n read=0 r io
	need_cluster
	spec job.yaml first 3
	submit_json job.yaml
	FIRST=$DIR
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	for n in node1 node2 node3; do
		diff -r "$WORK/ds" "$(copy_of "$n")"
		[ "$(rec "$DIR" $n '.entries[] | select(.name == "ds") | .hit')" = false ]
		[ "$(rec "$DIR" $n '.entries[] | select(.name == "img") | .hit')" = false ]
		cmp "$WORK/img.sqfs" "$(dirname "$(copy_of "$n")")/$(hex "$WORK/img.sqfs")/img.sqfs"
		read=$((read + $(rec "$DIR" $n .bytes_read)))
	done
	echo "read $read of $SIZE bytes"
	[ "$read" -ge "$SIZE" ]
	[ "$read" -le $((SIZE * 105 / 100)) ]
	# The kernel's count agrees (rchar of /proc/PID/io: all a process
	# read, files and sockets): less what came over MPI, the nodes read
	# the data set once in all, plus ~0.4 MB each of configuration,
	# sysfs and manifests.
	io=0
	for n in node1 node2 node3; do
		io=$((io + $(rec "$DIR" $n .proc_rchar) - $(rec "$DIR" $n .bytes_received)))
	done
	echo "rchar less received: $io of $SIZE bytes"
	[ "$io" -ge "$SIZE" ]
	[ "$io" -le $((SIZE * 105 / 100)) ]
	# every rank read its own node's copy, through the variables
	for r in 0 1 2; do
		n=node$((r + 1))
		grep -q "^host=$n ds=$CACHE/$(hex "$WORK/ds") img=$CACHE/$(hex "$WORK/img.sqfs")/img.sqfs marker=staged$" "$DIR/logs/rank-$r.out" ||
			{ logs "$DIR"; false; }
		grep -q "^img ok on $n$" "$DIR/logs/rank-$r.out"
	done
	echo "$DIR" >"$WORK/first-run"
}

@test "a second job with the same data hits every node's cache and reads nothing" {
	local n first second cheap=0
	need_cluster
	[ -s "$WORK/first-run" ] || skip "the first job did not run"
	spec job.yaml second 3
	submit_json job.yaml
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	for n in node1 node2 node3; do
		[ "$(rec "$DIR" $n '[.entries[].hit] | all')" = true ]
		[ "$(rec "$DIR" $n .bytes_read)" -eq 0 ]
		[ "$(rec "$DIR" $n .bytes_received)" -eq 0 ]
		[ "$(rec "$DIR" $n .proc_rchar)" -lt $((SIZE / 20)) ] # nor, says the kernel, the copy
		# The entry's own seconds, not the step's: the step's include
		# the manifests' exchange and MPI's collectives over TCP between
		# namespaces, 0.3-0.6 s here whatever the data, which next to
		# the 1.5-3 s this 64 MB set takes is 15-30%, while a hit
		# itself costs 1-4% (a 300 MB set would bring the step's ratio
		# down too).  The three nodes share two cores, and the suite's
		# other lane the same two: one node's hit once took 19% while
		# the others took 1-2%.  So two of the three must come under
		# 10%; that a hit reads nothing is proc_rchar's to say, above.
		# (Tests assert no time elsewhere; the issue asks for this one.)
		first=$(rec "$(cat "$WORK/first-run")" $n '.entries[] | select(.name == "ds") | .seconds')
		second=$(rec "$DIR" $n '.entries[] | select(.name == "ds") | .seconds')
		echo "# $n: ds $first s then $second s; step $(rec "$(cat "$WORK/first-run")" $n .seconds) then $(rec "$DIR" $n .seconds)" >&3
		awk -v a="$first" -v b="$second" 'BEGIN { exit !(b < 0.10 * a) }' && cheap=$((cheap + 1))
	done
	[ "$cheap" -ge 2 ]
}

@test "a script run through a relative link runs in each node's staged copy of the code snapshot, whose imports leave it as it was; a rerun finds it cached" {
	local r n snap hex att copy
	need_cluster
	mkdir -p proj/bin
	printf 'import os, sys, util\nprint("host=%%s cwd=%%s code=%%s %%s" %% (os.uname().nodename, os.getcwd(),\n    os.environ["HPCTRAIN_CODE_DIR"], util.read()))\nprint("pyc", util.__cached__.startswith(sys.pycache_prefix + "/"), os.path.isfile(util.__cached__))\n' >proj/train.py
	printf 'def read():\n    return open("data.txt").read().strip()\n' >proj/util.py
	printf '#!/bin/sh\nexec python3 train.py\n' >proj/bin/run.sh
	chmod 755 proj/bin/run.sh
	ln -s bin/run.sh proj/run.sh
	printf 'submitted\n' >proj/data.txt
	# the spec outside the tree; bytecode written where the job may
	unset PYTHONDONTWRITEBYTECODE
	cat >job.yaml <<SPEC
version: 1
name: code-staged
resources: {nodes: 3, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: [./run.sh]
output: {dir: $WORK/runs}
preempt: {lead_s: 0}
preflight: false
data:
  stage: [{name: img, src: $WORK/img.sqfs}]
  cache: {dir: $CACHE}
SPEC
	cd proj
	submit_json ../job.yaml
	printf 'edited\n' >data.txt # the job runs what was submitted
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	snap=$(jq -r .snapshot "$DIR/code.json")
	hex=$(rec "$DIR" node1 '.entries[] | select(.name == "code") | .manifest')
	hex=${hex#sha256:}
	for r in 0 1 2; do
		n=node$((r + 1))
		grep -qx "host=$n cwd=$CACHE/$hex code=$CACHE/$hex submitted" "$DIR/logs/rank-$r.out" ||
			{ logs "$DIR"; false; }
		grep -qx "pyc True True" "$DIR/logs/rank-$r.out"
		[ "$(rec "$DIR" $n '.entries[] | select(.name == "code") | .hit')" = false ]
		copy=$CLUSTER_BASE/nodes/$n/local/cache/$hex
		[ "$(readlink "$copy/run.sh")" = bin/run.sh ]
		[ "$(stat -c %a "$copy/bin/run.sh") $(stat -c %a "$copy/train.py")" = "555 444" ]
	done
	# a second job of the run, from its resolved form with the entry
	# "code" in it: every node finds the copy in its cache
	run -0 --separate-stderr "$HPT" rerun --fresh --json "$DIR"
	finish "$(jq -r .job_id <<<"$output")"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR/attempts/2"; false; }
	att=$DIR/attempts/2
	for r in 0 1 2; do
		n=node$((r + 1))
		grep -qx "host=$n cwd=$CACHE/$hex code=$CACHE/$hex submitted" "$att/logs/rank-$r.out" ||
			{ logs "$att"; false; }
		[ "$(rec "$att" $n '.entries[] | select(.name == "code") | .hit')" = true ]
		# two jobs imported util.py there: the copy is as submitted
		code_tree_is_listed "$CLUSTER_BASE/nodes/$n/local/cache/$hex" "$DIR/code.json"
	done
	code_tree_is_listed "$snap" "$DIR/code.json"
}

# fetched_once RUN...: for every node and entry, exactly one of the runs'
# records says it fetched (hit false); the source was read once by each
# run that fetched anything.  Jobs at once on the same nodes can split
# the fetches between them (each claims the entries it reaches first, on
# whichever node), and each such job's reader then reads the source once
# for its own chain: the nodes still copy each entry once.
fetched_once() {
	local n e misses read=0 r fetchers=0
	for n in node1 node2 node3; do
		for e in ds img; do
			misses=0
			for r in "$@"; do
				[ "$(rec "$r" $n ".entries[] | select(.name == \"$e\") | .hit")" = false ] &&
					misses=$((misses + 1))
			done
			echo "$n $e: fetched by $misses of $# jobs"
			[ "$misses" -eq 1 ]
		done
		for r in "$@"; do read=$((read + $(rec "$r" $n .bytes_read))); done
	done
	for r in "$@"; do
		for n in node1 node2 node3; do
			if [ "$(rec "$r" $n '[.entries[] | select(.hit == false)] | length')" -gt 0 ]; then
				fetchers=$((fetchers + 1))
				break
			fi
		done
	done
	echo "read $read of $SIZE bytes, by $fetchers of the $# jobs that fetched"
	[ "$read" -le $((SIZE * 105 / 100 * fetchers)) ]
}

@test "two jobs at once on the same nodes copy each entry once per node" {
	local a b a_end b_start
	need_cluster
	export CACHE_DIR=$CLUSTER_BASE/local/two
	spec a.yaml two-a 3
	spec b.yaml two-b 3
	# each job's ranks wait (60 s at most) until the other job's have
	# started, so a cannot end before b begins however Slurm orders them
	mkdir -p "$WORK/meet"
	cat >"$WORK/meet.sh" <<-'MEET'
	touch "$MEET_DIR/$1"
	for _ in $(seq 600); do [ -e "$MEET_DIR/$2" ] && break; sleep 0.1; done
	exec sh "$3"
	MEET
	sed -i "s|^command: .*|command: [sh, $WORK/meet.sh, a, b, $WORK/probe.sh]|" a.yaml
	sed -i "s|^command: .*|command: [sh, $WORK/meet.sh, b, a, $WORK/probe.sh]|" b.yaml
	sed -i "s|^env: {|env: {MEET_DIR: $WORK/meet, |" a.yaml b.yaml
	submit_json a.yaml
	a=$JOB A=$DIR
	submit_json b.yaml
	b=$JOB B=$DIR
	finish "$a"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$A"; false; }
	finish "$b"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$B"; false; }
	fetched_once "$A" "$B"
	for n in node1 node2 node3; do diff -r "$WORK/ds" "$(copy_of $n)"; done
	# they did run at once: b started before a ended (seconds, as Slurm
	# keeps them; ISO times compare as strings)
	a_end=$(scontrol show job -o "$a" | grep -o 'EndTime=[^ ]*' | cut -d= -f2)
	b_start=$(scontrol show job -o "$b" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
	echo "a ended $a_end, b started $b_start"
	[[ ! "$b_start" > "$a_end" ]]
}

@test "a sweep's array tasks on the same nodes share one copy per node" {
	local rec runs
	need_cluster
	export CACHE_DIR=$CLUSTER_BASE/local/sweep
	spec job.yaml sweep 3
	run --separate-stderr "$HPT" submit --json --sweep env.POINT=1,2,3 job.yaml
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	rec=$(ls "$WORK"/runs/sweep/sweep-*.json)
	run timeout 180 "$HPT" status --wait "$rec"
	[ "$status" -ne 124 ]
	mapfile -t runs < <(jq -r '.points[].run' "$rec" | sed "s|^|$(dirname "$rec")/|")
	[ "${#runs[@]}" -eq 3 ]
	for r in "${runs[@]}"; do
		grep -q '^img ok on node1$' "$r/logs/rank-0.out" || { logs "$r"; false; }
	done
	fetched_once "${runs[@]}"
}

@test "a stage step that ends by a signal runs again, and the job runs on its copies" {
	need_cluster
	export CACHE_DIR=$CLUSTER_BASE/local/crash
	spec job.yaml crash 3
	# the first task of the first try crashes after MPI_Init (/tmp is shared)
	cc -shared -fPIC -o "$BATS_TEST_TMPDIR/crash_once.so" "$BATS_TEST_DIRNAME/helpers/crash_once.c" -ldl
	sed -i "s|^env: {|env: {LD_PRELOAD: $BATS_TEST_TMPDIR/crash_once.so, CRASH_ONCE_FILE: $BATS_TEST_TMPDIR/crashed, |" job.yaml
	submit_json job.yaml
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	[ -e "$BATS_TEST_TMPDIR/crashed" ]
	grep -q '^crash_once: crashing as asked' "$DIR"/logs/batch-*.out
	grep -qE 'hpctrain: the stage step ended by a signal \(status 1[3-4][0-9]\); running it again$' \
		"$DIR"/logs/batch-*.out
	run ! grep -q 'staging failed' "$DIR"/logs/batch-*.out
	grep -q '^img ok on node1$' "$DIR/logs/rank-0.out"
	for n in node1 node2 node3; do diff -r "$WORK/ds" "$(copy_of $n)"; done
}

# damage FILE: its first byte flipped, in place (its mtime moves).
flip() {
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); b = f.read(1); f.seek(0); f.write(bytes([b[0] ^ 1]))' "$1"
}

@test "a flipped byte and a truncated file in one node's copy are fetched again by that node only" {
	local c
	need_cluster
	[ -s "$WORK/first-run" ] || skip "the first job did not run"
	c=$(copy_of node2)
	chmod u+w "$c/d03/f0003" "$c/d04/f0004"
	flip "$c/d03/f0003"
	truncate -s 100 "$c/d04/f0004"
	run ! diff -r -q "$WORK/ds" "$c"
	spec job.yaml damaged 3
	submit_json job.yaml
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	diff -r "$WORK/ds" "$c"
	[ "$(rec "$DIR" node2 '.entries[] | select(.name == "ds") | .hit')" = false ]
	[ "$(rec "$DIR" node2 '.entries[] | select(.name == "img") | .hit')" = true ]
	for n in node1 node3; do
		[ "$(rec "$DIR" $n '[.entries[].hit] | all')" = true ]
		[ "$(rec "$DIR" $n .bytes_received)" -eq 0 ]
	done
	[ "$(rec "$DIR" node2 .bytes_received)" -gt 0 ]
	# node1 read the source once, for node2 alone
	[ "$(rec "$DIR" node1 .bytes_read)" -le $((SIZE * 105 / 100)) ]
	grep -q 'damaged' "$DIR"/logs/batch-*.out || { logs "$DIR"; false; }
}
@test "a source changed after submit fails the stage step naming the file, and the job ends FAILED promptly" {
	need_cluster
	mkdir -p "$WORK/small/a"
	for i in 1 2 3; do head -c 5000 /dev/urandom >"$WORK/small/a/f$i"; done
	find "$WORK/small" -exec touch -d '-1 min' {} +
	cat >job.yaml <<SPEC
version: 1
name: changed
resources: {nodes: 3, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: [sh, -c, 'echo trained']
output: {dir: $WORK/runs}
preempt: {lead_s: 0}
preflight: false
data:
  stage: [{name: small, src: $WORK/small}]
  cache: {dir: $CLUSTER_BASE/local/changed}
SPEC
	submit_json job.yaml
	head -c 5000 /dev/urandom >"$WORK/small/a/f2"
	finish "$JOB" 60
	[ "$(state)" = FAILED ] || { echo "$output"; logs "$DIR"; false; }
	cat "$DIR"/logs/batch-*.out
	grep -q 'hpctrain: staging failed (status 9): nothing was trained' "$DIR"/logs/batch-*.out
	grep -q "changed since its manifest was pinned (pinned sha256:[0-9a-f]*\.\.\., now sha256:[0-9a-f]*\.\.\.): $WORK/small/a/f2 (changed); submit the job again" "$DIR"/logs/batch-*.out
	run ! grep -qs trained "$DIR"/logs/rank-*.out
}

@test "a full scratch fails that node's preflight, naming the bytes needed and free" {
	local dir=$CLUSTER_BASE/local/small
	need_cluster
	# node2's cache on an 8 MiB tmpfs, in node2's own mount namespace;
	# node1's is a plain directory on the disk
	for n in node1 node2; do in_node_mnt $n mkdir -p "$dir"; done
	in_node_mnt node2 mount -t tmpfs -o size=8m,mode=0700 hpt-small "$dir"
	export CACHE_DIR=$dir HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/ledger.json
	# two nodes, as the scratch is prepared on them; straggler 0: the
	# nodes share this machine's cores, so a GEMM compared across them
	# measures the other suites' load, not the node
	spec job.yaml full 2 'preflight: {enabled: true, max_resubmits: 0, straggler: 0}'
	sed -i '/^preflight: false$/d' job.yaml
	# node1 and node2, the nodes prepared above, whichever Slurm would pick
	submit_json --exclude node3 job.yaml
	finish "$JOB" 150
	in_node_mnt node2 umount "$dir"
	[ "$(state)" = FAILED ] || { echo "$output"; logs "$DIR"; false; }
	jq . "$DIR/preflight.json"
	jq -e '.ok == false and .exclude == "node2"' "$DIR/preflight.json"
	jq -r '.nodes[] | select(.node == "node2") | .checks.files.reason' "$DIR/preflight.json" |
		grep -E "needs 0\.07 GB for data\.stage, 0\.01 GB free in $dir"
	jq -r '.nodes[] | select(.node == "node1") | .checks.files.reason' "$DIR/preflight.json" |
		grep -E "data\.stage needs 0\.07 GB of the [0-9.]+ GB free in $dir"
	grep -q 'hpctrain: preflight failed on this allocation' "$DIR"/logs/batch-*.out
	[ ! -d "$DIR/stage" ]
}

@test "a node whose copy fails verification twice fails the step and goes into the node ledger" {
	need_cluster
	[ -s "$WORK/first-run" ] || skip "the first job did not run"
	# node3 alone lacks the data set, and damages every copy it writes
	rm -rf "$(copy_of node3)" "$(copy_of node3).json"
	export HPCTRAIN_LEDGER=$BATS_TEST_TMPDIR/ledger.json
	spec job.yaml twice 3
	sed -i "s|^env: {|env: {HPCTRAIN_STAGE_DAMAGE: \"2\", HPCTRAIN_LEDGER: $HPCTRAIN_LEDGER, |" job.yaml
	submit_json job.yaml
	finish "$JOB" 90
	[ "$(state)" = FAILED ] || { echo "$output"; logs "$DIR"; false; }
	cat "$DIR"/logs/batch-*.out
	grep -q 'hpctrain stage: node3: data entry ds: the copy failed twice on this node' "$DIR"/logs/batch-*.out
	grep -q 'hpctrain stage: node3: recorded in the node ledger' "$DIR"/logs/batch-*.out
	grep -q 'hpctrain: staging failed (status 1): nothing was trained' "$DIR"/logs/batch-*.out
	jq . "$HPCTRAIN_LEDGER"
	jq -e '[.clusters[] | keys[]] == ["node3"]' "$HPCTRAIN_LEDGER"
	jq -e '.clusters[].node3 | .failures == 1 and (.reason | startswith("stage: data entry ds: the copy failed twice"))' "$HPCTRAIN_LEDGER"
	# and the next submission leaves node3 out while it cools down
	spec one.yaml after 1
	run --separate-stderr "$HPT" submit --json one.yaml
	[ "$status" -eq 0 ]
	scancel "$(jq -r .job_id <<<"$output")"
	echo "$stderr"
	[[ "$stderr" == *"excluding node3: it failed doctor 1 time(s), last: stage: data entry ds"* ]]
}

@test "container.stage: every node starts the image from its own node copy, staged once" {
	local cache=$CLUSTER_BASE/local/ctr r n img
	need_cluster
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
	[ -n "$(command -v squashfuse)" ] && [ -n "$(command -v fusermount)" ] || skip "no squashfuse and fuse3"
	sh "$BATS_TEST_DIRNAME/helpers/mkimage.sh" "$WORK/rootfs"
	echo "inside the image" >"$WORK/rootfs/marker"
	mksquashfs "$WORK/rootfs" "$WORK/rootfs.sqfs" -noappend -quiet >/dev/null
	touch -d '-1 min' "$WORK/rootfs.sqfs"
	fuse_probe "$WORK/fuse.py"
	cat >job.yaml <<SPEC
version: 1
name: ctr
resources: {nodes: 3, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: [python3, $WORK/fuse.py]
output: {dir: $WORK/runs}
preempt: {lead_s: 0}
preflight: false
container: {image: $WORK/rootfs.sqfs, runtime: charliecloud, stage: true}
data: {cache: {dir: $cache}}
SPEC
	submit_json job.yaml
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	img=$cache/$(hex "$WORK/rootfs.sqfs")/rootfs.sqfs
	for r in 0 1 2; do
		n=node$((r + 1))
		grep -qx "host=$n image=$img marker=inside the image" "$DIR/logs/rank-$r.out" ||
			{ logs "$DIR"; false; }
		grep -qx "squashfuse: $img" "$DIR/logs/rank-$r.out"
		run ! grep -q "squashfuse: $WORK/rootfs.sqfs" "$DIR/logs/rank-$r.out"
		[ "$(rec "$DIR" $n '.entries[] | select(.name == "image") | .hit')" = false ]
		cmp "$WORK/rootfs.sqfs" "$CLUSTER_BASE/nodes/$n/local/ctr/$(hex "$WORK/rootfs.sqfs")/rootfs.sqfs"
	done
	[ "$(rec "$DIR" node1 .bytes_read)" -le $(($(stat -c %s "$WORK/rootfs.sqfs") * 105 / 100)) ]
	[ "$(rec "$DIR" node2 .bytes_read)" -eq 0 ]
	[ "$(rec "$DIR" node3 .bytes_read)" -eq 0 ]
}

@test "the bundled trainer on 3 nodes reads dataset stage:NAME from each node's copy" {
	local fm=/usr/share/datasets/fashion-mnist cache=$CLUSTER_BASE/local/fm n
	need_cluster
	[ -f "$fm/train-images-idx3-ubyte.gz" ] || skip "no Fashion-MNIST at $fm"
	# a small IDX copy (2000 training and 500 test images) as shards
	python3 - "$fm" "$WORK/idx" <<-'PY'
	import gzip, os, struct, sys
	src, out = sys.argv[1], sys.argv[2]
	os.makedirs(out, exist_ok=True)
	for split, n in (("train", 2000), ("t10k", 500)):
	    for kind, per in (("images-idx3", 784), ("labels-idx1", 1)):
	        b = gzip.open("%s/%s-%s-ubyte.gz" % (src, split, kind)).read()
	        head = 16 if per > 1 else 8
	        h = bytearray(b[:head])
	        h[4:8] = struct.pack(">I", n)
	        open("%s/%s-%s-ubyte" % (out, split, kind), "wb").write(bytes(h) + b[head:head + n * per])
	PY
	"$HPT" data convert --shards 3 -o "$WORK/fm" "$WORK/idx/train-images-idx3-ubyte" "$WORK/idx/train-labels-idx1-ubyte"
	"$HPT" data convert --split test -o "$WORK/fm" "$WORK/idx/t10k-images-idx3-ubyte" "$WORK/idx/t10k-labels-idx1-ubyte"
	find "$WORK/fm" -exec touch -d '-1 min' {} +
	cat >job.yaml <<SPEC
version: 1
name: fm
resources: {nodes: 3, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"}
train:
  model: cnn
  dataset: "stage:fm"
  epochs: 1
  max_steps: 3
  batch_per_rank: 32
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $WORK/runs, log_every_steps: 1}
preempt: {lead_s: 0}
preflight: false
data: {stage: [{name: fm, src: $WORK/fm}], cache: {dir: $cache}}
SPEC
	submit_json job.yaml
	finish "$JOB" 150
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	for n in node1 node2 node3; do
		[ "$(rec "$DIR" $n '.entries[0].hit')" = false ]
		diff -r "$WORK/fm" "$CLUSTER_BASE/nodes/$n/local/fm/$(hex "$WORK/fm")"
	done
	# launch named each node's copy, so no rank fell back to the source
	run ! grep -rs 'HPCTRAIN_DATA_FM is not set' "$DIR/logs"
	grep -q '^step 3/3 epoch 1 loss ' "$DIR/logs/rank-0.out" || { logs "$DIR"; false; }
}

@test "container.stage of a directory image: packed once by submit, staged from one read, started from each node's copy" {
	local cache=$CLUSTER_BASE/local/ctrdir r n pack img ino
	need_cluster
	command -v ch-run >/dev/null || skip "no ch-run (charliecloud-runtime)"
	[ -n "$(command -v squashfuse)" ] && [ -n "$(command -v fusermount)" ] || skip "no squashfuse and fuse3"
	# a directory image holds symbolic links, which a data set may not
	sh "$BATS_TEST_DIRNAME/helpers/mkimage.sh" "$WORK/dirimg"
	echo "inside the directory image" >"$WORK/dirimg/marker"
	[ -n "$(find "$WORK/dirimg" -type l | head -1)" ]
	fuse_probe "$WORK/fuse.py"
	cat >job.yaml <<SPEC
version: 1
name: ctrdir
resources: {nodes: 3, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
command: [python3, $WORK/fuse.py]
output: {dir: $WORK/runs}
preempt: {lead_s: 0}
preflight: false
container: {image: $WORK/dirimg, runtime: charliecloud, stage: true}
data: {cache: {dir: $cache}}
SPEC
	submit_json job.yaml
	[[ "$stderr" == *"packed the directory image $WORK/dirimg into $WORK/runs/.images/"*.sqfs* ]]
	pack=$(echo "$WORK"/runs/.images/*.sqfs)
	[ -f "$pack" ]
	grep -q "packed: \"$pack\"" "$DIR/resolved.yaml"
	# the next submit of the same tree reuses the pack: nothing is packed
	ino=$(stat -c %i.%Y "$pack")
	run --separate-stderr "$HPT" submit --json job.yaml
	[ "$status" -eq 0 ]
	scancel "$(jq -r .job_id <<<"$output")"
	[[ "$stderr" != *packed* ]]
	[ "$(stat -c %i.%Y "$pack")" = "$ino" ]
	finish "$JOB"
	[ "$(state)" = COMPLETED ] || { echo "$output"; logs "$DIR"; false; }
	img=$cache/$(hex "$pack")/${pack##*/}
	for r in 0 1 2; do
		n=node$((r + 1))
		grep -qx "host=$n image=$img marker=inside the directory image" "$DIR/logs/rank-$r.out" ||
			{ logs "$DIR"; false; }
		grep -qx "squashfuse: $img" "$DIR/logs/rank-$r.out"
		cmp "$pack" "$CLUSTER_BASE/nodes/$n/local/ctrdir/$(hex "$pack")/${pack##*/}"
	done
	[ "$(rec "$DIR" node1 .bytes_read)" -le $(($(stat -c %s "$pack") * 105 / 100)) ]
	[ "$(rec "$DIR" node2 .bytes_read)" -eq 0 ]
}
