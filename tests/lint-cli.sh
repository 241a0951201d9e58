#!/bin/sh
# lint-cli.sh - cli/ holds commands only, as git's builtin/ does: one
# cmd_<name>.c per command, main.c (the command table), the *_main.c
# entry points of the programs hpctrain execs, and builtin.h.  Logic
# that a unit test would want lives in the library folders, where the
# tests link it; a helper file in cli/ is where it would start to grow
# back, so any other source is refused, and so is a file over 450 lines
# (a command that long is doing a library's work).  Prints each offence
# and exits 1 when there is one.
#
# Usage: sh tests/lint-cli.sh [ROOT]   (ROOT defaults to .)
cd "${1:-.}" || exit 2
bad=0
for f in cli/*; do
	case ${f#cli/} in
	cmd_*.c | main.c | *_main.c | builtin.h | build.mk) ;;
	*)
		echo "$f: cli/ holds commands only (cmd_*.c, main.c, *_main.c): move it to a library folder"
		bad=1
		continue
		;;
	esac
	n=$(wc -l <"$f")
	if [ "$n" -gt 450 ]; then
		echo "$f: $n lines, over 450: move its logic to a library folder"
		bad=1
	fi
done
exit $bad
