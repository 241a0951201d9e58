#!/bin/sh
# mkimage.sh DIR - a tiny container image, offline, in about a second:
# the host's dash (as sh), a few coreutils, sed, taskset and python3.11
# (its standard library without tests, idlelib, tkinter, ensurepip and
# caches, for the supervisor's Python stacks inside) with the libraries
# ldd names, on Debian 12's merged /usr, plus the mount points and files
# ch-run and podman --rootfs expect.  The bats files make it through
# test_image (tests/cli/common.bash), which caches it under build/.
set -eu
dir=$1
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp/usr/bin" "$dir.tmp/usr/lib" "$dir.tmp/usr/lib64"
for d in bin lib lib64; do ln -s "usr/$d" "$dir.tmp/$d"; done
for d in dev proc sys tmp etc home mnt run root var/tmp; do mkdir -p "$dir.tmp/$d"; done
: >"$dir.tmp/etc/passwd"
: >"$dir.tmp/etc/group"
: >"$dir.tmp/etc/hosts"
: >"$dir.tmp/etc/resolv.conf"
for p in dash cat env pwd ls sleep true false echo sed taskset id hostname python3.11; do
	src=
	for d in /usr/bin /usr/sbin /bin /sbin; do
		[ -x "$d/$p" ] && { src=$(readlink -f "$d/$p"); break; }
	done
	[ -n "$src" ] || { echo "mkimage.sh: no $p on this host" >&2; exit 1; }
	cp "$src" "$dir.tmp/usr/bin/$p"
	ldd "$src" | awk '/=> \// { print $3 } /^[ \t]*\/lib/ { print $1 }' | while read -r lib; do
		real=$(readlink -f "$lib")
		dest=$dir.tmp$lib
		mkdir -p "${dest%/*}"
		[ -e "$dest" ] || cp "$real" "$dest"
	done
done
ln -s dash "$dir.tmp/usr/bin/sh"
ln -s python3.11 "$dir.tmp/usr/bin/python3"
(cd /usr/lib && tar cf - --exclude=test --exclude=tests --exclude=idlelib \
	--exclude=tkinter --exclude=ensurepip --exclude=__pycache__ \
	--exclude=site-packages --exclude=dist-packages python3.11) |
	(cd "$dir.tmp/usr/lib" && tar xf -)
rm -rf "$dir"
mv "$dir.tmp" "$dir"
