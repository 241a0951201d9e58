#!/bin/sh
# code_snapshot.sh - what pinning a program's code costs: `hpctrain
# validate` of a job whose code: tree holds FILES files (default 10,000)
# of BYTES bytes in all (default 200 MB) in 100 directories, a git work
# tree with every file committed.  validate lists the tree (git
# ls-files), hashes every file and keeps the hashes under each file's
# stat fingerprint in $XDG_CACHE_HOME (launcher/job/code_scan.c); submit
# does the same, asks git status for the record's dirty state (beside
# the scan, not after it), then stores the snapshot once.  Timed: validate with no
# cache (cold), validate again (cached: a stat a file; goal <= 0.3 s),
# and the same job with code: false.  The peers, what a user would
# script to fingerprint the same tree: `git ls-files -z | xargs -0
# sha256sum` and `tar c . | sha256sum`.  The files are random bytes,
# just written, so every reader finds them in the page cache alike.
# Not a test: it asserts nothing about time.
set -eu
cd "$(dirname "$0")/../.."
FILES=${FILES:-10000} BYTES=${BYTES:-200000000}
HPT=$PWD/bin/hpctrain
[ -x "$HPT" ] || { echo "code_snapshot: skipped: no bin/hpctrain"; exit 0; }
command -v git >/dev/null || { echo "code_snapshot: skipped: no git"; exit 0; }
mkdir -p build
W=$(mktemp -d "$PWD/build/code-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME=$W/cache

ms() { date +%s%N | cut -c1-13; }
per=$((BYTES / FILES))
mkdir -p "$W/tree"
# one stream of random bytes cut into the files
head -c "$BYTES" /dev/urandom | split -a 5 -d -b "$per" - "$W/tree/f"
(cd "$W/tree" && for i in $(seq 0 99); do mkdir "d$i"; done &&
	ls f* | awk '{ printf "%s d%d/%s\n", $1, NR % 100, $1 }' | xargs -n 2 mv &&
	printf 'print("train")\n' >train.py && git init -q . &&
	git -c user.email=b@b -c user.name=b add -A &&
	git -c user.email=b@b -c user.name=b commit -qm tree)
n=$(cd "$W/tree" && git ls-files | wc -l)
for code in "" "code: false"; do
	cat >"$W/job${code:+-off}.yaml" <<YAML
version: 1
name: codebench
resources: {nodes: 1, ranks_per_node: 1}
command: [python3, $W/tree/train.py]
output: {dir: $W/runs}
$code
YAML
done
t() { # LABEL CMD...: runs CMD, prints its milliseconds
	local t0 t1
	t0=$(ms)
	"$@" >/dev/null 2>"$W/err" || { echo "$1 failed: $(tail -1 "$W/err")" >&2; exit 1; }
	t1=$(ms)
	echo $((t1 - t0))
}
cold=$(t "$HPT" validate "$W/job.yaml")
cached=$(t "$HPT" validate "$W/job.yaml")
off=$(t "$HPT" validate "$W/job-off.yaml")
gitsum=$(cd "$W/tree" && t sh -c 'git ls-files -z | xargs -0 sha256sum')
tarsum=$(cd "$W/tree" && t sh -c 'tar c . | sha256sum')
echo "code snapshot of $n files, $((BYTES / 1000000)) MB (validate; ms)"
printf '  %-36s %8s\n' "hpctrain validate, no cache" "$cold" \
	"hpctrain validate, cached" "$cached" \
	"hpctrain validate, code: false" "$off" \
	"git ls-files | xargs sha256sum" "$gitsum" \
	"tar c | sha256sum" "$tarsum"
awk -v c="$cold" -v k="$cached" -v o="$off" -v g="$gitsum" 'BEGIN {
	printf "  cold against git+sha256sum: %.2fx its time; cached snapshot cost: %d ms (goal <= 300)\n",
		c / g, k - o }'
