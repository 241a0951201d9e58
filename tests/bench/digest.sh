#!/bin/sh
# digest.sh - what pinning a SquashFS image by its content costs:
# `hpctrain validate` of a job whose container.image is a 5 GiB file
# computes the file's SHA-256 (launcher/container/container_digest.c,
# OpenSSL, 1 MiB reads) and caches it under the file's stat fingerprint
# in $XDG_CACHE_HOME/hpctrain/image-digests.json; validate is the
# cheapest command that does (submit --dry-run does the same and more).
# Timed: validate with no cache (cold), validate again (cached), and
# validate of the same job without an image; the peers, how fast this
# machine hashes the same file: sha256sum and openssl dgst -sha256.
# The digest does not parse the file: it is "hsqs" and bytes_used (the
# superblock fields container_image_kind reads) and random bytes, written for real (no
# holes, which would read without the disk), under build/ (not /tmp,
# which may be in memory).  It is just written, so each reader finds it
# in the page cache alike where memory holds it.  A smaller file when
# the disk lacks room, said so; deleted at the end.
# DIGEST_BENCH_GB: the size in GiB (5); DIGEST_BENCH_RUNS: rounds (1).
set -eu
cd "$(dirname "$0")/../.."
GB=${DIGEST_BENCH_GB:-5}
N=${DIGEST_BENCH_RUNS:-1}
HPT=$PWD/bin/hpctrain

ms() { date +%s%N; }
mkdir -p build
tmp=$(mktemp -d "$PWD/build/digest-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
export XDG_CACHE_HOME=$tmp/cache

# Room for the file, a 64 MiB piece and 1 GiB to spare.
avail_gb=$(df -Pk "$tmp" | awk 'NR == 2 { print int($4 / 1048576) }')
if [ $((GB + 2)) -gt "$avail_gb" ]; then
	if [ "$avail_gb" -lt 3 ]; then
		echo "digest: skipped: ${avail_gb} GiB free under build/, too little for a 1 GiB file"
		exit 0
	fi
	echo "note: ${avail_gb} GiB free under build/: a $((avail_gb - 2)) GiB file instead of ${GB} GiB"
	GB=$((avail_gb - 2))
fi
img=$tmp/image.sqfs
t0=$(ms)
head -c 67108864 /dev/urandom >"$tmp/piece"
# le64 N: N as 8 little-endian bytes (a superblock's bytes_used)
le64() {
	for k in 0 1 2 3 4 5 6 7; do
		printf "\\$(printf %03o $(($1 >> (8 * k) & 255)))"
	done
}
{
	# validate checks the superblock: the magic, and bytes_used (le64
	# at 40) no more than the file's size, which it is here
	printf hsqs
	head -c 36 /dev/zero
	le64 $((GB * 16 * 67108864))
	tail -c +49 "$tmp/piece"
	i=1
	while [ $i -lt $((GB * 16)) ]; do
		cat "$tmp/piece"
		i=$((i + 1))
	done
} >"$img"
rm -f "$tmp/piece"
t1=$(ms)
gen=$(( (t1 - t0) / 1000 ))
bytes=$(stat -c %s "$img")
printf 'version: 1\nname: digest-bench\ncommand: [true]\ncontainer: {image: %s, runtime: charliecloud}\n' \
	"$img" >"$tmp/image.yaml"
printf 'version: 1\nname: digest-bench\ncommand: [true]\n' >"$tmp/none.yaml"

: >"$tmp/cold"; : >"$tmp/cached"; : >"$tmp/none"; : >"$tmp/sha"; : >"$tmp/ossl"
has_ossl=false
command -v openssl >/dev/null && has_ossl=true
r=0
while [ $r -lt "$N" ]; do
	rm -rf "$XDG_CACHE_HOME"
	t0=$(ms); "$HPT" validate "$tmp/image.yaml" >/dev/null
	t1=$(ms); sha=$(sha256sum "$img")
	t2=$(ms)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/cold"
	echo $(( (t2 - t1) / 1000 )) >>"$tmp/sha"
	for _ in 1 2 3 4 5; do # a few ms each: more samples
		t0=$(ms); "$HPT" validate "$tmp/image.yaml" >/dev/null
		t1=$(ms); "$HPT" validate "$tmp/none.yaml" >/dev/null
		t2=$(ms)
		echo $(( (t1 - t0) / 1000 )) >>"$tmp/cached"
		echo $(( (t2 - t1) / 1000 )) >>"$tmp/none"
	done
	if $has_ossl; then
		t0=$(ms); openssl dgst -sha256 "$img" >/dev/null; t1=$(ms)
		echo $(( (t1 - t0) / 1000 )) >>"$tmp/ossl"
	fi
	r=$((r + 1))
done
# The digest validate cached is the file's SHA-256.
cached=$(sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p' "$XDG_CACHE_HOME/hpctrain/image-digests.json")
if [ "$cached" != "${sha%% *}" ]; then
	echo "digest: the cached digest '$cached' is not sha256sum's ${sha%% *}" >&2
	exit 1
fi

median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ossl=
$has_ossl && ossl=$(median "$tmp/ossl")
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) CPUs (load average $load), SHA extensions: $(grep -q -w sha_ni /proc/cpuinfo && echo yes || echo no); $(sha256sum --version | head -1), $($has_ossl && openssl version | cut -d' ' -f1,2 || echo 'no openssl')"
awk -v bytes="$bytes" -v gen="$gen" -v n="$N" \
	-v mem="$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo)" 'BEGIN {
	pc = bytes < mem ? "in the page cache (memory holds it)" : "larger than available memory: read from the disk"
	printf "a %.2f GiB file of random bytes (not sparse, written in %.1f s), %d run%s, medians; %s\n",
	       bytes / 2^30, gen / 1e6, n, n == 1 ? "" : "s", pc
}'
awk -v bytes="$bytes" -v cold="$(median "$tmp/cold")" -v sha="$(median "$tmp/sha")" \
	-v ossl="$ossl" -v cached="$(median "$tmp/cached")" -v none="$(median "$tmp/none")" 'BEGIN {
	gb = bytes / 1e9
	printf "hpctrain validate, digest computed (no cache)  %9.1f ms  %5.2f GB/s\n", cold / 1000, gb / (cold / 1e6)
	printf "sha256sum                                      %9.1f ms  %5.2f GB/s\n", sha / 1000, gb / (sha / 1e6)
	if (ossl != "")
		printf "openssl dgst -sha256                           %9.1f ms  %5.2f GB/s\n", ossl / 1000, gb / (ossl / 1e6)
	printf "hpctrain validate, digest cached               %9.1f ms\n", cached / 1000
	printf "hpctrain validate, the job without an image    %9.1f ms\n", none / 1000
	printf "the cold digest takes %.2fx the time of sha256sum", cold / sha
	if (ossl != "")
		printf ", %.2fx that of openssl dgst", cold / ossl
	printf "\n"
	printf "the cache: %.1f ms over validate without an image\n", (cached - none) / 1000
}'
