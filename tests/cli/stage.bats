#!/usr/bin/env bats
# stage.bats - hpctrain stage with real mpirun ranks on this machine, each
# rank a simulated node (SLURMD_NODENAME=n<rank>) with its own cache
# (--cache DIR/%n): every node's copy equals the source, read once; a
# second run is all hits; a flipped byte and a truncated file are fetched
# again; a source that changes fails the step on every node, naming the
# file; two stagings into one cache copy once; --list, --clear and
# eviction keep an entry in use; --run stages a run's pinned entries.
# A data set of a few hundred small files (a few MB) keeps it short.

load common

setup() {
	W=$BATS_TEST_TMPDIR
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
	export XDG_CACHE_HOME=$W/xdg HPT
	command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
	make_set "$W/src" 300
	# the scan's cached hashes are trusted for files older than 2 s
	find "$W/src" -exec touch -d '-1 min' {} +
	SIZE=$(find "$W/src" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
	printf '#!/bin/sh\nSLURMD_NODENAME=n$OMPI_COMM_WORLD_RANK exec "$HPT" "$@"\n' >"$W/node.sh"
	chmod +x "$W/node.sh"
}

teardown() {
	[ -z "${HOLDER:-}" ] || kill "$HOLDER" 2>/dev/null || true
	[ -z "${WRITER:-}" ] || kill "$WRITER" 2>/dev/null || true
}

# make_set DIR N: N small files of random bytes in two levels, one empty
# file and one of 1 MB.
make_set() {
	local i
	mkdir -p "$1/sub/deeper"
	for i in $(seq "$2"); do
		head -c $((RANDOM % 16000 + 1)) /dev/urandom >"$1/sub/f$i"
	done
	: >"$1/empty"
	head -c 1000000 /dev/urandom >"$1/sub/deeper/big"
}

# stage3 ARGS...: hpctrain stage on three local ranks, node n<rank> caching
# in $W/c/n<rank> and recording in $W/rep-n<rank>.json.
stage3() {
	mpirun --oversubscribe --bind-to none -np 3 "$W/node.sh" stage --cache "$W/c/%n" \
		--report "$W/rep-%n.json" "$@"
}

# flip FILE OFFSET: inverts the byte at OFFSET, so the file surely changes
# (a fixed byte written into random data leaves it as it was 1 time in 256).
flip() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1")
	printf "\\$(printf %03o $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# rec NODE FILTER: jq FILTER of that node's record.
rec() { jq -r "$2" "$W/rep-$1.json"; }

# hold LOCK: a shared flock on LOCK, as a rank that uses the entry holds
# it, by a process ($HOLDER) that holds nothing else.
hold() {
	(exec 9<"$1" && flock -s 9 && exec sleep 60) &
	HOLDER=$!
}

hex() { "$HPT" stage --manifest "$1" | jq -r .hash | sed 's/^sha256://'; }

@test "stage copies a data set to every node from one read of the source" {
	local h n
	h=$(hex "$W/src") # what submit pins; it also fills the scan's cache
	run stage3 --entry ds="$W/src"
	[ "$status" -eq 0 ]
	for n in n0 n1 n2; do
		diff -r "$W/src" "$W/c/$n/$h"
		[ "$(rec $n '.entries[0].hit')" = false ]
		[ "$(rec $n '.entries[0].path')" = "$W/c/$n/$h" ]
	done
	# rank 0 read the data set once; the others only received it
	[ "$(rec n0 .bytes_read)" -le $((SIZE * 105 / 100)) ]
	[ "$(rec n0 .bytes_read)" -ge "$SIZE" ]
	[ "$(rec n1 .bytes_read)" -eq 0 ]
	[ "$(rec n2 .bytes_received)" -eq "$SIZE" ]
	[ "$(rec n2 .bytes_sent)" -eq 0 ]
	[[ "$output" == *"ds=$W/c/n0/$h"* ]]
	[ -z "$(find "$W/c" -name '.tmp-*')" ]
}

@test "a second run is all hits and reads nothing" {
	local n
	stage3 --entry ds="$W/src"
	run stage3 --entry ds="$W/src"
	[ "$status" -eq 0 ]
	for n in n0 n1 n2; do
		[ "$(rec $n '.entries[0].hit')" = true ]
		[ "$(rec $n .bytes_read)" -eq 0 ]
		[ "$(rec $n .bytes_received)" -eq 0 ]
	done
	[[ "$output" == *"hpctrain stage: n1: 1 entries, 1 hits, 0.0 MB read, 0.0 MB received"* ]]
}

@test "a flipped byte and a truncated file in a node's copy are fetched again" {
	local h f
	h=$(hex "$W/src")
	stage3 --entry ds="$W/src"
	f=$W/c/n1/$h/sub/deeper/big
	chmod u+w "$f" "$W/c/n2/$h/sub/f7"
	flip "$f" 1000
	: >"$W/c/n2/$h/sub/f7"
	run stage3 --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ds: the cached copy was damaged (sub/deeper/big does not match its sha256); fetching it again"* ]]
	[[ "$output" == *"ds: the cached copy was damaged (sub/f7 has 0 bytes, not "* ]]
	[ "$(rec n0 '.entries[0].hit')" = true ]
	[ "$(rec n1 '.entries[0].refetched')" -eq 1 ]
	[ "$(rec n2 '.entries[0].refetched')" -eq 1 ]
	# one read served both nodes
	[ "$(rec n0 .bytes_read)" -le $((SIZE * 105 / 100)) ]
	diff -r "$W/src" "$W/c/n1/$h"
	diff -r "$W/src" "$W/c/n2/$h"
}

@test "a source that changes while staged fails the step on every node naming the file" {
	local n
	head -c 30000000 /dev/zero >"$W/src/growing"
	(while :; do echo x >>"$W/src/growing"; done) &
	WRITER=$!
	run stage3 --entry ds="$W/src"
	kill "$WRITER"
	WRITER=
	[ "$status" -eq 1 ]
	for n in n0 n1 n2; do
		[[ "$output" == *"hpctrain stage: $n: data entry ds: $W/src/growing changed while it was"* ]]
	done
	[ -z "$(find "$W/c" -mindepth 2 -maxdepth 2 -name '[0-9a-f]*' -type d)" ]
	# once nothing writes it, the next step stages it: no stale hash is kept
	run stage3 --entry ds="$W/src"
	[ "$status" -eq 0 ]
}

@test "a node whose copy fails verification fetches it again, and fails the second time" {
	local h
	h=$(hex "$W/src")
	printf '#!/bin/sh\n[ "$OMPI_COMM_WORLD_RANK" != 1 ] || export HPCTRAIN_STAGE_DAMAGE=$DAMAGE\nexec "$W/node.sh" "$@"\n' >"$W/bad.sh"
	chmod +x "$W/bad.sh"
	export DAMAGE=1 W
	run mpirun --oversubscribe --bind-to none -np 3 "$W/bad.sh" stage --cache "$W/c/%n" \
		--report "$W/rep-%n.json" --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ds: the copy failed (the copy of "*" does not match the manifest (size or sha256)); fetching it again"* ]]
	[ "$(rec n1 '.entries[0].refetched')" -eq 1 ]
	[ "$(rec n2 '.entries[0].refetched')" -eq 0 ]
	diff -r "$W/src" "$W/c/n1/$h"
	rm -rf "$W/c"
	export DAMAGE=2
	run mpirun --oversubscribe --bind-to none -np 3 "$W/bad.sh" stage --cache "$W/c/%n" \
		--report "$W/rep-%n.json" --entry ds="$W/src"
	[ "$status" -eq 1 ]
	[[ "$output" == *"hpctrain stage: n1: data entry ds: the copy failed twice on this node: the copy of "* ]]
	[[ "$output" == *"hpctrain stage: n0: staging failed on another node (see its message)"* ]]
	[ ! -e "$W/c/n1/$h" ]
	[ -z "$(find "$W/c" -name '.tmp-*')" ]
}

@test "a file rewritten with its old size and mtime is hashed again by the scan, not taken from its cache" {
	local before h
	before=$(hex "$W/src") # the scan's cache now trusts every file
	# same size, same mtime, other bytes: its ctime (and only it) moved
	cp -p "$W/src/sub/deeper/big" "$W/ref"
	head -c 1000000 /dev/urandom >"$W/src/sub/deeper/big"
	touch -r "$W/ref" "$W/src/sub/deeper/big"
	h=$(hex "$W/src")
	[ "$h" != "$before" ]
	run stage3 --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[ "$(rec n2 '.entries[0].manifest')" = "sha256:$h" ]
	diff -r "$W/src" "$W/c/n2/$h"
}

@test "a source that changed since its manifest was pinned is refused with status 9" {
	local pin
	pin=$("$HPT" stage --manifest "$W/src" | jq -r .hash)
	echo more >>"$W/src/sub/f1"
	run stage3 --entry "ds=$W/src@$pin"
	[ "$status" -eq 9 ]
	[[ "$output" == *"hpctrain stage: n2: data entry ds: $W/src changed since its manifest was pinned"* ]]
}

@test "two stagings into one cache at once copy the entry once" {
	local h
	h=$(hex "$W/src")
	"$HPT" stage --cache "$W/one" --report "$W/r1.json" --entry ds="$W/src" 2>"$W/e1" &
	"$HPT" stage --cache "$W/one" --report "$W/r2.json" --entry ds="$W/src" 2>"$W/e2" &
	wait %1
	wait %2
	diff -r "$W/src" "$W/one/$h"
	[ "$(jq -s '[.[].entries[0].hit] | map(select(. == false)) | length' "$W/r1.json" "$W/r2.json")" -eq 1 ]
	[ "$(jq -s '[.[].bytes_read] | add' "$W/r1.json" "$W/r2.json")" -eq "$SIZE" ]
}

@test "--list and --clear show and remove entries, keeping one in use" {
	local h1 h2
	make_set "$W/other" 5
	h1=$(hex "$W/src")
	h2=$(hex "$W/other")
	"$HPT" stage --cache "$W/one" --entry ds="$W/src" --entry other="$W/other"
	run "$HPT" stage --list --cache "$W/one"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sha256:${h1:0:12}  ds "* ]]
	[[ "$output" == *"sha256:${h2:0:12}  other "* ]]
	hold "$W/one/$h1.lock"
	sleep 0.3
	[ "$("$HPT" stage --list --json --cache "$W/one" | jq -r '.entries[] | select(.name == "ds") | .in_use')" = true ]
	run "$HPT" stage --clear --cache "$W/one"
	[ "$status" -eq 1 ]
	[[ "$output" == *"kept sha256:$h1: in use"* ]]
	[[ "$output" == *"removed sha256:$h2"* ]]
	[ -d "$W/one/$h1" ]
	[ ! -e "$W/one/$h2" ]
	kill "$HOLDER"
	wait "$HOLDER" || true
	HOLDER=
	run "$HPT" stage --clear --cache "$W/one" "sha256:$h1"
	[ "$status" -eq 0 ]
	[ ! -e "$W/one/$h1" ]
}

@test "eviction above --max-gb removes the least recently used entry and keeps one in use" {
	local ha hb hc
	make_set "$W/a" 5
	make_set "$W/b" 5
	ha=$(hex "$W/src")
	hb=$(hex "$W/a")
	hc=$(hex "$W/b")
	"$HPT" stage --cache "$W/one" --entry ds="$W/src"
	"$HPT" stage --cache "$W/one" --entry a="$W/a"
	hold "$W/one/$ha.lock"
	sleep 0.3
	run "$HPT" stage --cache "$W/one" --max-gb 0.000001 --entry b="$W/b"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kept sha256:$ha (ds): in use"* ]]
	[[ "$output" == *"evicted sha256:$hb (a, "* ]]
	[ -d "$W/one/$ha" ]
	[ ! -e "$W/one/$hb" ]
	[ -d "$W/one/$hc" ]
}

@test "a file source is the one file of its entry, under each name it is staged as" {
	local h
	cp "$W/src/sub/deeper/big" "$W/one.bin"
	cp "$W/src/sub/deeper/big" "$W/two.bin"
	h=$(hex "$W/one.bin")
	[ "$h" = "$(hex "$W/two.bin")" ] # the name is no part of the content
	run "$HPT" stage --cache "$W/one" --entry a="$W/one.bin"
	[ "$status" -eq 0 ]
	[[ "$output" == *"a=$W/one/$h/one.bin"* ]]
	run "$HPT" stage --cache "$W/one" --report "$W/r.json" --entry b="$W/two.bin"
	[ "$status" -eq 0 ]
	[[ "$output" == *"b=$W/one/$h/two.bin"* ]]
	[ "$(jq -r '.entries[0].hit' "$W/r.json")" = true ]
	cmp "$W/two.bin" "$W/one/$h/two.bin"
}

@test "a cached file whose damage kept its size and mtime is caught by its ctime, and --verify hashes every file" {
	local h f
	h=$(hex "$W/src")
	"$HPT" stage --cache "$W/one" --entry ds="$W/src"
	f=$W/one/$h/sub/deeper/big
	touch -r "$f" "$W/when"
	chmod u+w "$f"
	flip "$f" 5
	touch -r "$W/when" "$f"
	run "$HPT" stage --cache "$W/one" --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ds: the cached copy was damaged (sub/deeper/big does not match its sha256)"* ]]
	diff -r "$W/src" "$W/one/$h"
	run "$HPT" stage --cache "$W/one" --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[[ "$output" != *damaged* ]]
	run "$HPT" stage --cache "$W/one" --verify --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[[ "$output" != *damaged* ]]
}

@test "a full node cache is an I/O error of that node (8), not a bad node: no second read, no ledger" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
	mkdir "$W/full"
	mount -t tmpfs -o size=1m tmpfs "$W/full" || skip "cannot mount a tmpfs"
	export HPCTRAIN_LEDGER=$W/ledger.json
	run "$HPT" stage --cache "$W/full/c" --report "$W/rep-full.json" --entry ds="$W/src"
	umount "$W/full"
	[ "$status" -eq "$EX_IO" ]
	[[ "$output" == *"data entry ds: cannot write its copy in the node cache $W/full/c: cannot "*" $W/full/c/.tmp-"*": No space left on device"* ]]
	[[ "$output" != *"fetching it again"* ]]
	[[ "$output" != *"failed twice"* ]]
	[[ "$output" != *"ledger"* ]]
	[ ! -e "$W/ledger.json" ]
	# the source was read once (the scan), not again for a second copy
	[ "$(jq -r '.entries[0].refetched' "$W/rep-full.json")" -eq 0 ]
}

@test "a file name that is not UTF-8 is refused with status 4, naming it escaped, not dropped from the manifest" {
	: >"$W/src/sub/caf"$'\xe9'
	run "$HPT" stage --cache "$W/one" --entry ds="$W/src"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"data entry ds: cannot stage $W/src/sub/caf\\xe9: its name is not UTF-8 (bytes shown as \\xHH); rename it"* ]]
	run "$HPT" stage --manifest "$W/src"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"cannot stage $W/src/sub/caf\\xe9: its name is not UTF-8"* ]]
	# validate (and submit, through the same pin) refuses it before any job
	printf 'version: 1\nname: s\ncommand: [true]\ndata: {stage: [{name: ds, src: %s}]}\n' \
		"$W/src" >"$W/s.yaml"
	run "$HPT" validate "$W/s.yaml"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"data.stage ds: cannot stage $W/src/sub/caf\\xe9: its name is not UTF-8"* ]]
	mkdir "$W/caf"$'\xe9'
	run "$HPT" stage --cache "$W/one" --entry ds="$W/caf"$'\xe9'
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"cannot stage $W/caf\\xe9: its path is not UTF-8"* ]]
}

@test "the copy a killed step left in the cache is removed by the next step on that cache" {
	local h
	h=$(hex "$W/src")
	mkdir -p "$W/one/.tmp-$h-Kd9x2Q/sub" # as a step killed mid-copy leaves it
	head -c 5000 /dev/zero >"$W/one/.tmp-$h-Kd9x2Q/sub/f1"
	chmod 700 "$W/one"
	run "$HPT" stage --cache "$W/one" --entry ds="$W/src"
	[ "$status" -eq 0 ]
	[[ "$output" == *"removed the abandoned copy $W/one/.tmp-$h-Kd9x2Q"* ]]
	[ -z "$(find "$W/one" -name '.tmp-*')" ]
	diff -r "$W/src" "$W/one/$h"
}

@test "stage --run stages a run's pinned data.stage entries where launch looks for them" {
	mkdir -m 700 "$W/run"
	printf 'version: 1\nname: s\ncommand: [true]\ncode: false\nbinding: {cpu: none}\ndata: {stage: [{name: ds, src: %s}], cache: {dir: %s}}\n' \
		"$W/src" "$W/cache" >"$W/s.yaml"
	"$HPT" validate --print-resolved "$W/s.yaml" >"$W/run/resolved.yaml"
	run "$HPT" stage --run "$W/run"
	[ "$status" -eq 0 ]
	h=$(sed -n 's/^    manifest: "sha256:\(.*\)"$/\1/p' "$W/run/resolved.yaml")
	diff -r "$W/src" "$W/cache/$h"
	jq -e --arg p "$W/cache/$h" '.entries[0].name == "ds" and .entries[0].path == $p' "$W/run/stage/"*.json
	run --separate-stderr "$HPT" launch --run "$W/run" --dry-run -- prog
	jq -e --arg p "$W/cache/$h" '.env.HPCTRAIN_DATA_DS == $p' <<<"$output"
}

@test "a launched rank holds its staged copy: --clear keeps it while the program runs, exec'd or supervised" {
	local h mode
	mkdir -m 700 "$W/run"
	printf 'version: 1\nname: s\ncommand: [true]\ncode: false\nbinding: {cpu: none, memory: none}\ndata: {stage: [{name: ds, src: %s}], cache: {dir: %s}}\n' \
		"$W/src" "$W/cache" >"$W/s.yaml"
	"$HPT" validate --print-resolved "$W/s.yaml" >"$W/run/resolved.yaml"
	h=$(sed -n 's/^    manifest: "sha256:\(.*\)"$/\1/p' "$W/run/resolved.yaml")
	for mode in "" --supervise; do
		run -0 "$HPT" stage --run "$W/run"
		# the program says it started once it runs, then stays
		"$HPT" launch $mode --run "$W/run" -- sh -c 'touch "$0"; exec sleep 30' "$W/started" &
		HOLDER=$!
		for _ in $(seq 100); do [ -e "$W/started" ] && break; sleep 0.1; done
		run "$HPT" stage --clear --cache "$W/cache"
		[ "$status" -eq 1 ]
		[[ "$output" == *"kept sha256:$h: in use"* ]]
		[ -d "$W/cache/$h" ]
		kill "$HOLDER"
		wait "$HOLDER" || true
		HOLDER=
		rm -f "$W/started"
		run -0 "$HPT" stage --clear --cache "$W/cache"
		[ ! -e "$W/cache/$h" ]
	done
}

@test "stage --run refuses an entry that submit did not pin" {
	mkdir -m 700 "$W/run"
	printf 'version: 1\nname: s\ncommand: [true]\ndata: {stage: [{name: ds, src: %s}]}\n' "$W/src" \
		>"$W/run/resolved.yaml"
	run "$HPT" stage --run "$W/run"
	[ "$status" -eq "$EX_BAD_SPEC" ]
	[[ "$output" == *"data.stage ds: no pinned manifest; run the job through hpctrain submit"* ]]
}

@test "stage refuses a missing source, a link inside one, and a bad --entry" {
	ln -s /etc/passwd "$W/src/sub/link"
	run "$HPT" stage --cache "$W/one" --entry ds="$W/src"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"data entry ds: cannot stage $W/src/sub/link: it is a symbolic link"* ]]
	run "$HPT" stage --cache "$W/one" --entry ds="$W/nothing"
	[ "$status" -eq "$EX_NO_INPUT" ]
	[[ "$output" == *"data entry ds: cannot stage $W/nothing: No such file or directory"* ]]
	run "$HPT" stage --entry ds=relative
	[ "$status" -eq "$EX_USAGE" ]
	[[ "$output" == *"hpctrain stage: --entry ds: the source is an absolute path, got 'relative'"* ]]
	run "$HPT" stage --cache "$W/one"
	[ "$status" -eq "$EX_USAGE" ]
	[[ "$output" == *"give one of --run, --entry, --list, --clear and --manifest"* ]]
}

@test "submit packs a directory image for container.stage once, reuses the pack, remakes a damaged one, and says so without mksquashfs" {
	local pack size
	command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools)"
	mkdir -p "$W/img/bin" "$W/img/etc"
	echo image >"$W/img/etc/os-release"
	ln -s ../etc/os-release "$W/img/bin/link"
	cd "$W"
	cat >job.yaml <<SPEC
version: 1
name: packed
command: [sh, -c, "true"]
code: false
container: {image: $W/img, runtime: charliecloud, stage: true}
SPEC
	run --separate-stderr "$HPT" submit --dry-run --json job.yaml
	[ "$status" -eq 0 ]
	[[ "$stderr" == "hpctrain submit: packed the directory image $W/img into $W/runs/.images/"*.sqfs ]]
	pack=$(jq -r '.stage[0].packed' <<<"$output")
	[ "$pack" = "$(echo "$W"/runs/.images/*.sqfs)" ]
	[ "$(jq -r '.stage[0].is_file' <<<"$output")" = true ]
	[ "$(jq -r '.stage[0].manifest' <<<"$output")" = "sha256:$(hex "$pack")" ]
	[[ "$(jq -r .resolved <<<"$output")" == *"packed: \"$pack\""* ]]
	[ "$(stat -c %a "$W/runs/.images")" = 700 ]
	# the same tree again: the pack is reused
	run --separate-stderr "$HPT" submit --dry-run job.yaml
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# cut short, it is made again, to the same bytes
	size=$(stat -c %s "$pack")
	truncate -s 100 "$pack"
	run --separate-stderr "$HPT" submit --dry-run job.yaml
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"packed the directory image"* ]]
	[ "$(stat -c %s "$pack")" -eq "$size" ]
	# without mksquashfs in PATH: status 4, naming the image and the tool
	rm -f "$pack"
	mkdir "$W/nobin"
	run --separate-stderr env PATH="$W/nobin" "$HPT" submit --dry-run job.yaml
	[ "$status" -eq 4 ]
	[ "$stderr" = "hpctrain submit: container.stage: packing the directory image $W/img needs mksquashfs (squashfs-tools), which is not in PATH" ]
	[ ! -e "$pack" ]
}
