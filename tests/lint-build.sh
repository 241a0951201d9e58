#!/bin/sh
# lint-build.sh - each folder's build.mk lists that folder's sources: every
# .c and .cu file is named in the build.mk of its own folder (or of the
# nearest folder above that has one: trainer/kernels/ is trainer's), and
# every source of the tree a build.mk names exists.  Prints each offence and exits 1
# when there is one.
#
# Usage: sh tests/lint-build.sh [ROOT]   (ROOT defaults to .)
cd "${1:-.}" || exit 2
bad=0
for f in $(find cli common launcher topology trainer -name '*.c' -o -name '*.cu' | sort); do
	dir=${f%/*}
	while [ ! -f "$dir/build.mk" ] && [ "${dir%/*}" != "$dir" ]; do
		dir=${dir%/*}
	done
	# as a source (SRC = dir/x.c, $(call obj,dir/x.c)) or as its object
	if ! grep -qE "(^|[ =,])$f( |\\\\|\\)|$)|\\\$\\(OBJ\\)/${f%.*}\\.o" "$dir/build.mk" 2>/dev/null; then
		echo "$f: not listed in $dir/build.mk"
		bad=1
	fi
done
for mk in $(find cli common launcher topology trainer -name build.mk | sort); do
	for src in $(grep -v '^[[:space:]]*#' "$mk" | grep -oE '(^|[ =,])[a-z][a-z0-9_/]*\.(c|cu)( |\\|\)|$)' |
		     tr -d ' =,)\\' | grep -E '^(cli|common|launcher|topology|trainer)/' | sort -u); do
		[ -f "$src" ] || { echo "$mk: names $src, which does not exist"; bad=1; }
	done
done
exit $bad
