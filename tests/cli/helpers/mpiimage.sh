#!/bin/sh
# mpiimage.sh DIR - the MPI test image (mkmpiimage.sh) in DIR, made
# when it is missing or older than mkmpiimage.sh, under DIR.lock: the
# test that needs it (container.bats) and run-tests.sh, which starts it
# beside the lanes, make it once between them.  Exits as mkmpiimage.sh
# does (77: it cannot be made here).
set -eu
dir=$1
here=$(dirname "$0")
mkdir -p "${dir%/*}"
exec 9>"$dir.lock"
flock 9
if [ ! -d "$dir" ] || [ "$here/mkmpiimage.sh" -nt "$dir" ]; then
	exec timeout 900 sh "$here/mkmpiimage.sh" "$dir"
fi
