#!/bin/sh
# mktrainimage.sh DIR [BINDIR] - a directory image holding this host's
# build of the bundled trainer, for templates/fmnist-container.yaml (run
# as `make train-image IMAGE=DIR`; template.bats makes one under build/).
#
# The batch script starts the trainer inside the image by its path on
# the host ("$HPT" train ...), so BINDIR's hpctrain and hpctrain-train
# (default: bin/ of this tree) go in at their absolute host path, with
# every library ldd names.  Open MPI and PMIx load their components with
# dlopen, which ldd cannot see: their plugin folders (openmpi, pmix2,
# hwloc) and help and configuration files are copied whole, with the
# libraries those need.  The Fashion-MNIST files go in at the path the
# trainer reads (/usr/share/datasets/fashion-mnist).  Plus a shell and a
# few coreutils, and the mount points ch-run and podman --rootfs expect.
# Built in DIR.tmp and moved into place only when whole.
set -eu
dir=$1
bindir=$(cd "${2:-$(dirname "$0")/../../../bin}" && pwd -P)
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
for p in hpctrain hpctrain-train; do
	[ -x "$bindir/$p" ] || { echo "mktrainimage.sh: no $bindir/$p: run make first" >&2; exit 1; }
done
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp/usr/bin" "$dir.tmp/usr/lib" "$dir.tmp/usr/lib64"
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$dir.tmp/$d"; done
mkdir -p "$dir.tmp/usr/sbin"
for d in dev proc sys tmp etc home mnt run root var/tmp; do mkdir -p "$dir.tmp/$d"; done
for f in passwd group hosts resolv.conf; do : >"$dir.tmp/etc/$f"; done

# copy_libs FILE: the libraries ldd names for FILE, at their paths.
copy_libs() {
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^[ \t]*\/lib/ { print $1 }' |
	while read -r lib; do
		dest=$dir.tmp$lib
		[ -e "$dest" ] && continue
		mkdir -p "${dest%/*}"
		cp "$(readlink -f "$lib")" "$dest"
	done
}

# copy_file SRC: SRC at its own path (its target when a link).
copy_file() {
	mkdir -p "$dir.tmp${1%/*}"
	cp "$(readlink -f "$1")" "$dir.tmp$1"
	chmod u+w "$dir.tmp$1"
	copy_libs "$1"
}

for p in dash cat env ls sleep true echo sed id; do
	for d in /usr/bin /bin; do
		[ -x "$d/$p" ] && { mkdir -p "$dir.tmp/usr/bin"; cp "$(readlink -f "$d/$p")" "$dir.tmp/usr/bin/$p"; copy_libs "$d/$p"; break; }
	done
done
ln -s dash "$dir.tmp/usr/bin/sh"
for p in hpctrain hpctrain-train; do
	copy_file "$bindir/$p"
done
for d in "/usr/lib/$arch/openmpi" "/usr/lib/$arch/pmix2" "/usr/lib/$arch/hwloc" \
	/usr/share/openmpi /etc/openmpi /usr/share/datasets/fashion-mnist; do
	[ -d "$d" ] || continue
	mkdir -p "$dir.tmp${d%/*}"
	cp -a "$d" "$dir.tmp$d"
	find "$d" -name '*.so*' -type f | while read -r so; do copy_libs "$so"; done
done
rm -rf "$dir.tmp/usr/lib/$arch/openmpi/include" "$dir.tmp/usr/lib/$arch/pmix2/include"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
