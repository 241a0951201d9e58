#!/bin/sh
# demo.sh - the most complete real job this version can run: validate every
# bundled template and print its resolved form and identity.  Later
# versions submit it to Slurm and train.
set -eu
cd "$(dirname "$0")/.."
for t in templates/*.yaml; do
	name=${t##*/}
	echo "== ${name%.yaml}"
	bin/hpctrain validate --print-resolved "$t"
	bin/hpctrain validate "$t"
	echo
done
