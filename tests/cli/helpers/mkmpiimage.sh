#!/bin/sh
# mkmpiimage.sh DIR - a Debian 12 directory image with Open MPI and
# mpi4py, for the MPI-over-PMIx test in container.bats: debootstrap
# --variant=minbase from the mirror apt already uses (about a minute),
# then apt-get install inside it.  Built in DIR.tmp and moved into place
# only when whole, so an interrupted build is never taken for an image.
# Exits 77 (skip) with a line on stderr when debootstrap cannot run here.
set -eu
dir=$1
command -v debootstrap >/dev/null 2>&1 || { echo "mkmpiimage.sh: no debootstrap" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "mkmpiimage.sh: debootstrap needs root" >&2; exit 77; }
# The first deb URI apt uses (deb822 .sources or one-line .list).
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }')
[ -n "$mirror" ] || mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
	awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }')
[ -n "$mirror" ] || { echo "mkmpiimage.sh: no apt mirror found" >&2; exit 77; }
rm -rf "$dir.tmp"
mkdir -p "${dir%/*}"
debootstrap --variant=minbase bookworm "$dir.tmp" "$mirror" >"$dir.log" 2>&1 ||
	{ echo "mkmpiimage.sh: debootstrap failed, see $dir.log" >&2; exit 77; }
cp /etc/resolv.conf "$dir.tmp/etc/resolv.conf" 2>/dev/null || :
DEBIAN_FRONTEND=noninteractive chroot "$dir.tmp" apt-get install -y -qq --no-install-recommends \
	openmpi-bin python3-mpi4py >>"$dir.log" 2>&1 ||
	{ echo "mkmpiimage.sh: apt-get install in the image failed, see $dir.log" >&2; exit 1; }
chroot "$dir.tmp" apt-get clean >/dev/null 2>&1 || :
rm -rf "$dir"
mv "$dir.tmp" "$dir"
