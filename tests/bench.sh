#!/bin/sh
# bench.sh - run every benchmark (tests/bench/*.sh and DIR/bench_* programs
# listed by the Makefile) and print their figures.  Benchmarks compare
# against a peer run side by side in the same command; none is a test.
set -u
cd "$(dirname "$0")/.." || exit 70
status=0
for b in tests/bench/*.sh; do
	[ -f "$b" ] || continue
	echo "== ${b#tests/bench/}"
	sh "$b" || status=1
done
exit $status
