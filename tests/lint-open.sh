#!/bin/sh
# lint-open.sh - every file a command reads from a run, a cache or an
# output directory goes through common/fileio.c (fileio_open_regular,
# fileio_read*, fileio_open_append), which refuses a FIFO, a device or a
# directory without blocking and bounds what it reads: a bare fopen(3)
# of a past run's metrics.jsonl hung `plan` on a FIFO planted there.
# So an open(2), openat(2), fopen(3), freopen(3), gzopen or
# json_load_file outside common/fileio.c is an offence, unless the call
# says why it may bypass the opener in an `open-ok: <reason>` comment on
# its line or the line above (/proc, /sys, a device, a lock or a file
# this code creates itself).  An open of a directory (O_DIRECTORY,
# O_PATH) reads no file and needs no reason.  Prints each offence and
# exits 1 when there is one.
#
# Usage: sh tests/lint-open.sh [ROOT]   (ROOT defaults to .)
cd "${1:-.}" || exit 2
find cli common launcher topology trainer \( -name '*.c' -o -name '*.cu' \) ! -path common/fileio.c |
	sort | xargs awk '
	FNR == 1 { prev = "" }
	{
		line = $0
		call = line ~ /(^|[^A-Za-z0-9_])(fopen|open|openat|freopen|gzopen|json_load_file)[[:space:]]*\(/
		comment = line ~ /^[[:space:]]*(\*|\/\*|\/\/)/
		dir = line ~ /O_DIRECTORY|O_PATH/
		ok = line ~ /open-ok: *[^ *]/ || prev ~ /open-ok: *[^ *]/
		if (call && !comment && !dir && !ok) {
			printf "%s:%d: opens a file past common/fileio.c: use fileio_open_regular or " \
			       "fileio_read, or say why not in an open-ok: comment\n", FILENAME, FNR
			bad = 1
		}
		prev = line
	}
	END { exit bad }' || exit 1
