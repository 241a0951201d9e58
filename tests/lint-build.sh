#!/bin/sh
# lint-build.sh - the build's rule of the tree, checked.  Every .c of a
# folder goes into that folder's archive (see the Makefile), so no
# build.mk lists objects by hand.  What stays out of the archives must
# be built by some rule: each program's entry point (main.c, *_main.c),
# each benchmark (bench_*.c) and each file a build.mk adds to
# NOT_IN_LIB is named, as its object $(OBJ)/<file>.o, in the build.mk of
# its folder (or of the nearest folder above that has one:
# trainer/kernels/ is trainer's).  A build.mk names no source that does
# not exist, and no source that an archive already holds.  Prints each
# offence and exits 1 when there is one.
#
# Usage: sh tests/lint-build.sh [ROOT]   (ROOT defaults to .)
cd "${1:-.}" || exit 2
bad=0
roots="cli common launcher topology trainer"

# build_mk FILE: the build.mk that describes FILE's folder.
build_mk() {
	dir=${1%/*}
	while [ ! -f "$dir/build.mk" ] && [ "${dir%/*}" != "$dir" ]; do
		dir=${dir%/*}
	done
	echo "$dir/build.mk"
}

# Sources a build.mk keeps out of the archives by name.
not_in_lib=$(find $roots -name build.mk -exec grep -h '^NOT_IN_LIB' {} + |
	grep -oE '[a-z][a-z0-9_/]*\.c' | sort -u)

for f in $(find $roots -name '*.c' | sort); do
	base=${f##*/}
	case $base in
	main.c | *_main.c | bench_*.c) ;;
	*) printf '%s\n' "$not_in_lib" | grep -qx "$f" || continue ;;
	esac
	mk=$(build_mk "$f")
	if ! grep -qF "\$(OBJ)/${f%.c}.o" "$mk" 2>/dev/null; then
		echo "$f: out of the archives, and $mk builds no \$(OBJ)/${f%.c}.o"
		bad=1
	fi
done
for mk in $(find $roots -name build.mk | sort); do
	for src in $(grep -v '^[[:space:]]*#' "$mk" | grep -oE '(^|[ =,])[a-z][a-z0-9_/]*\.(c|cu)( |\\|\)|$)' |
		     tr -d ' =,)\\' | grep -E '^(cli|common|launcher|topology|trainer)/' | sort -u); do
		if [ ! -f "$src" ]; then
			echo "$mk: names $src, which does not exist"
			bad=1
			continue
		fi
		case $src in
		*.cu | */main.c | *_main.c | */bench_*.c) continue ;;
		esac
		printf '%s\n' "$not_in_lib" | grep -qx "$src" && continue
		echo "$mk: names $src, which its folder's archive holds: link the archives instead"
		bad=1
	done
done
exit $bad
